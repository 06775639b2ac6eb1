"""Commands that write a model folder never delete what zhbert did not make: export and soup into
a folder holding a user's files, into the source's own parent, beside a user folder named like a
staging folder, onto a file, into a read-only folder; and the lock of a pretraining run on a
read-only or full disk."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from zhbert.destination import check_destination, staged_folder


def _zhbert(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "zhbert", *map(str, args)], capture_output=True, text=True, timeout=timeout)


def _one_line_error(r, *needles):
    assert r.returncode == 1, r.stderr[-2000:]
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zhbert: error: "), r.stderr[-2000:]
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.fixture
def project(tiny_encoder, tmp_path):
    """A user's project: a model folder and their own files beside it."""
    import shutil

    proj = tmp_path / "proj"
    shutil.copytree(tiny_encoder, proj / "model")
    (proj / "train.log").write_text("step 1 loss 9.9\n", encoding="utf-8")
    return proj


def _snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_export_into_the_sources_own_parent_is_refused_and_nothing_is_deleted(project):
    before = _snapshot(project)
    r = _zhbert("export", project / "model", project)
    _one_line_error(r, str(project), "contains the source")
    assert _snapshot(project) == before
    r = _zhbert("export", project / "model", project / "model" / "inner")
    _one_line_error(r, "lies inside the source")
    assert _snapshot(project) == before


def test_export_into_a_folder_of_the_users_files_is_refused_even_with_overwrite(project, tmp_path):
    mywork = tmp_path / "mywork"
    mywork.mkdir()
    (mywork / "thesis.tex").write_text("\\documentclass{article}\n", encoding="utf-8")
    for extra in ([], ["--overwrite"]):
        r = _zhbert("export", project / "model", mywork, *extra)
        _one_line_error(r, str(mywork), "thesis.tex", "not a model folder")
    assert [p.name for p in mywork.iterdir()] == ["thesis.tex"]


def test_a_user_folder_named_like_a_staging_folder_is_left_alone(project, tmp_path):
    user = tmp_path / "ship.tmp"
    user.mkdir()
    (user / "keep.txt").write_text("mine\n", encoding="utf-8")
    r = _zhbert("export", project / "model", tmp_path / "ship")
    assert r.returncode == 0, r.stderr[-2000:]
    assert (user / "keep.txt").read_text(encoding="utf-8") == "mine\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".ship.")]  # no staging folder left behind


def test_an_existing_export_is_replaced_only_with_overwrite(project, tmp_path):
    dest = tmp_path / "ship"
    assert _zhbert("export", project / "model", dest).returncode == 0
    r = _zhbert("export", project / "model", dest)
    _one_line_error(r, "a model folder is already there; pass --overwrite")
    r = _zhbert("export", project / "model", dest, "--overwrite")
    assert r.returncode == 0, r.stderr[-2000:]
    umask = os.umask(0)
    os.umask(umask)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in [dest, *dest.iterdir()]}
    assert modes["ship"] == 0o777 & ~umask
    assert {m for name, m in modes.items() if name != "ship"} == {0o666 & ~umask}  # model.safetensors too


def test_export_onto_a_file_or_into_a_read_only_folder_is_one_line_and_leaves_nothing(project, tmp_path):
    target = tmp_path / "a_file"
    target.write_text("not a folder\n", encoding="utf-8")
    _one_line_error(_zhbert("export", project / "model", target), str(target), "not a folder")
    assert target.read_text(encoding="utf-8") == "not a folder\n"
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders; the read-only mount test covers it")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        _one_line_error(_zhbert("export", project / "model", locked / "ship"), str(locked))
        assert list(locked.iterdir()) == []
    finally:
        locked.chmod(0o755)


@pytest.fixture
def read_only_mount(bind_mount):
    """A read-only bind mount; skipped where the machine refuses it."""
    if subprocess.run(["mount", "-o", "remount,bind,ro", str(bind_mount)], capture_output=True).returncode:
        pytest.skip("this machine does not remount read-only")
    return bind_mount


def test_export_into_a_read_only_mount_is_one_line(project, read_only_mount):
    r = _zhbert("export", project / "model", read_only_mount / "ship")
    _one_line_error(r, str(read_only_mount))
    assert "Errno" not in r.stderr and list(read_only_mount.iterdir()) == []


def test_staging_is_removed_and_the_first_error_wins(tmp_path):
    dest = tmp_path / "out"
    with pytest.raises(KeyError, match="the real problem"):
        with staged_folder(dest) as staging:
            (staging / "config.json").write_text("{}", encoding="utf-8")
            raise KeyError("the real problem")
    assert list(tmp_path.iterdir()) == []


def test_check_destination_rules(tmp_path):
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")
    (model / "model.safetensors").write_bytes(b"x")
    check_destination(tmp_path / "new")  # a new folder
    (tmp_path / "empty").mkdir()
    check_destination(tmp_path / "empty")  # an empty one
    with pytest.raises(ValueError, match="pass --overwrite"):
        check_destination(model)
    assert check_destination(model, overwrite=True) == model
    (model / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ValueError, match="notes.txt"):
        check_destination(model, overwrite=True)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "empty")
    with pytest.raises(ValueError, match="not a folder"):
        check_destination(link)


@pytest.mark.parametrize(
    "theirs, reason",
    [
        ({"metrics.json": '{"accuracy": 0.9}\n'}, "metrics.json: not scores zhbert train wrote"),
        ({"model/config.json": '{"model_type": "bert"}\n', "model/model.safetensors": "weights"}, "its config.json has no zhbert_head"),
        ({"model/notes.md": "我的笔记\n"}, "model: not a model zhbert train saved (it holds notes.md)"),
    ],
)
def test_train_into_a_folder_holding_the_users_model_or_scores_is_refused_before_training(resume_conll, tmp_path, theirs, reason):
    proj = tmp_path / "proj"
    for name, text in theirs.items():
        (proj / name).parent.mkdir(parents=True, exist_ok=True)
        (proj / name).write_text(text, encoding="utf-8")
    before = sorted(p.relative_to(proj) for p in proj.rglob("*"))
    r = _zhbert("train", "ner", "--train-file", resume_conll, "--preset", "tiny", "--max-steps", "2", "--output-dir", proj)
    assert r.returncode == 1, r.stderr[-2000:]
    line = r.stderr.strip().splitlines()[-1]
    assert reason in line and str(proj) in line and line.endswith("a run would write over it: choose another --output-dir"), line
    assert "Epoch" not in r.stderr  # refused before training
    assert sorted(p.relative_to(proj) for p in proj.rglob("*")) == before
    assert all((proj / name).read_text(encoding="utf-8") == text for name, text in theirs.items())


def test_a_recipe_rerun_into_its_own_folder_replaces_its_model_and_scores(resume_conll, tmp_path):
    from zhbert.recipes.output_folder import check_output_folder

    proj = tmp_path / "runs" / "ner"
    args = ("train", "ner", "--train-file", resume_conll, "--preset", "tiny", "--max-steps", "2", "--output-dir", proj)
    assert _zhbert(*args).returncode == 0
    (proj / "notes.txt").write_text("mine\n", encoding="utf-8")  # a file of the user's beside the run: left alone
    r = _zhbert(*args, "--seed", "3")
    assert r.returncode == 0, r.stderr[-2000:]
    assert '"seed": 3' in (proj / "metrics.json").read_text(encoding="utf-8") and (proj / "notes.txt").read_text() == "mine\n"
    # scoring only writes metrics.json: a model folder of someone else's beside it is no obstacle
    (tmp_path / "other" / "model").mkdir(parents=True)
    (tmp_path / "other" / "model" / "config.json").write_text("{}", encoding="utf-8")
    check_output_folder(tmp_path / "other", saves_model=False)
    with pytest.raises(ValueError, match="exists and is not a folder"):
        check_output_folder(proj / "notes.txt", saves_model=True)


def test_a_study_or_probe_refuses_a_report_of_someone_elses_before_it_runs(tmp_path):
    from zhbert.destination import check_report_folder

    theirs = tmp_path / "mine" / "probe.md"
    theirs.parent.mkdir()
    theirs.write_text("# 我的探针结果\n", encoding="utf-8")
    r = _zhbert("probe", "cws-fast", "--output-dir", theirs.parent, "--sentences", "20")
    _one_line_error(r, f"{theirs}: already there, and not beside a probe report zhbert wrote")
    assert theirs.read_text(encoding="utf-8") == "# 我的探针结果\n" and [p.name for p in theirs.parent.iterdir()] == ["probe.md"]
    r = _zhbert("study", "words", "--output-dir", theirs, "--preset", "tiny")
    _one_line_error(r, f"{theirs}: exists and is not a folder")
    # its own report is rewritten by a rerun; a JSON that is not JSON is not its own
    (tmp_path / "study" / "modes.json").parent.mkdir()
    (tmp_path / "study" / "modes.json").write_text('{"meta": {}, "rows": []}', encoding="utf-8")
    (tmp_path / "study" / "modes.md").write_text("| task |", encoding="utf-8")
    assert check_report_folder(tmp_path / "study", "modes") == tmp_path / "study"
    (tmp_path / "study" / "modes.json").write_text("my notes", encoding="utf-8")
    with pytest.raises(ValueError, match="modes.json: already there"):
        check_report_folder(tmp_path / "study", "modes")
