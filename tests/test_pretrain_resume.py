"""kill -9 during training and during a checkpoint save: the rerun resumes from
the last complete checkpoint and ends with the same weights as an uninterrupted run."""

import os
import signal
import subprocess
import sys

import pytest
import torch
from pretrain_cli import RESUMABLE, TINY, pretrain_cli
from safetensors.torch import load_file
from stopped_run import shell_status, stop_after_a_checkpoint

from zhbert.training.checkpoints import checkpoint_step
from zhbert.training.stop_signals import Terminated, terminate_as_interrupt


@pytest.fixture(scope="module")
def corpus_file(pd_corpus_file):
    return pd_corpus_file


def _run(corpus, out, env_extra=None):
    return pretrain_cli("--corpus", corpus, "--output", out, *RESUMABLE, env_extra=env_extra)


@pytest.fixture(scope="module")
def reference(corpus_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("ref")
    r = _run(corpus_file, out)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (out / "loss_curve.png").stat().st_size > 1000 and (out / "loss_log.jsonl").is_file()
    return load_file(str(out / "final" / "model.safetensors"))


def _assert_same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=1e-5, atol=1e-6, msg=k)


def test_kill_during_training_then_resume(corpus_file, tmp_path, reference):
    r = _run(corpus_file, tmp_path, {"ZHBERT_FAULT_AT_STEP": "6"})
    assert r.returncode == -9  # killed by SIGKILL
    assert (tmp_path / "checkpoint-4" / "zhbert_complete.json").is_file()
    assert not (tmp_path / "final").exists()
    r = _run(corpus_file, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "resuming from" in r.stderr and "checkpoint-4" in r.stderr
    assert "resumes with" not in r.stderr  # the same thread count: nothing to say
    _assert_same(reference, load_file(str(tmp_path / "final" / "model.safetensors")))


def test_a_resume_with_other_settings_is_refused_and_the_runs_own_resume_it(corpus_file, tmp_path, reference):
    """Resumed with another batch size, masking or corpus, the run would end as a mix of two trainings: refused,
    naming each change, before the corpus is read. Checkpoints without a record (a run begun by an earlier zhbert)
    resume with the settings given; --max-steps may change, said in one line."""
    r = _run(corpus_file, tmp_path, {"ZHBERT_FAULT_AT_STEP": "6"})
    assert r.returncode == -9 and (tmp_path / "zhbert_run.json").is_file()
    gone = tmp_path / "moved-corpus.txt"  # never read: the refusal comes first
    r = pretrain_cli("--corpus", gone, "--output", tmp_path, *RESUMABLE, "--batch-size", "4", "--masking", "char")
    assert r.returncode == 1 and "file not found" not in r.stderr, r.stderr[-3000:]
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith(f"zhbert: error: {tmp_path}: its checkpoints are from a different run (")
    for change in ("--batch-size: 8 then, 4 now", '--masking: "wwm" then, "char" now', "--corpus: [", "moved-corpus.txt"):
        assert change in line, change
    assert (tmp_path / "checkpoint-4" / "zhbert_complete.json").is_file() and not (tmp_path / "final").exists()

    (tmp_path / "zhbert_run.json").unlink()
    r = _run(corpus_file, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "checkpoints without a zhbert_run.json (a run begun by an earlier zhbert)" in r.stderr and "checkpoint-4" in r.stderr
    _assert_same(reference, load_file(str(tmp_path / "final" / "model.safetensors")))

    r = pretrain_cli("--corpus", corpus_file, "--output", tmp_path, *RESUMABLE, "--max-steps", "14")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "resumed with another --max-steps: 12 then, 14 now" in r.stderr and (tmp_path / "checkpoint-14").is_dir()
    r = pretrain_cli("--corpus", corpus_file, "--output", tmp_path, *RESUMABLE, "--max-steps", "14")
    assert "resumed with another" not in r.stderr and "nothing left to train" in r.stderr  # the record holds 14 now


def test_a_folder_holding_files_zhbert_did_not_write_is_refused_and_left_as_it_was(corpus_file, tmp_path):
    """A Hugging Face Trainer's output folder: its checkpoint-500/ would have been removed as an interrupted save,
    and its loss_log.jsonl appended to (then read by the loss plot)."""
    out = tmp_path / "hf-run"
    theirs = {
        out / "checkpoint-500" / "model.safetensors": b"weights",
        out / "loss_log.jsonl": b'{"step": 1, "train_loss": 9.5}\n',
        out / "notes.txt": "我的笔记\n".encode(),
    }
    for path, data in theirs.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    r = _run(corpus_file, out)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1] == (
        f"zhbert: error: {out}: holds checkpoint-500/, loss_log.jsonl, notes.txt, which zhbert did not write: a run there "
        "would write among them and remove checkpoint folders it cannot tell from its own; give --output-dir a new or empty folder"
    )
    assert {p: p.read_bytes() for p in theirs} == theirs
    assert sorted(p.name for p in out.iterdir()) == ["checkpoint-500", "loss_log.jsonl", "notes.txt"]  # nothing added, the lock gone


def test_a_fine_tuning_checkpoint_folder_of_someone_elses_is_refused_untouched(tmp_path):
    from zhbert.training.run_record import resume_checkpoint

    theirs = tmp_path / "checkpoints" / "checkpoint-3" / "optimizer.pt"
    theirs.parent.mkdir(parents=True)
    theirs.write_bytes(b"state")
    with pytest.raises(ValueError, match=r"checkpoints: holds checkpoint-3/, which zhbert did not write"):
        resume_checkpoint(tmp_path / "checkpoints", {"examples": 3})
    assert theirs.read_bytes() == b"state" and not (tmp_path / "checkpoints" / "zhbert_run.json").exists()
    assert resume_checkpoint(tmp_path / "empty", {"examples": 3}) is None  # a new folder: a fresh start, recorded
    assert (tmp_path / "empty" / "zhbert_run.json").is_file()


def test_held_out_evaluation_scores_the_run_and_leaves_its_weights_bit_for_bit(corpus_file, pd_heldout_file, tmp_path, reference):
    from transformers import AutoTokenizer

    from zhbert.training.heldout import EVAL_LOG, heldout_scores, read_heldout
    from zhbert.training.mlm_model import SparseBertForMaskedLM
    from zhbert.training.pretrain import read_loss_log

    r = pretrain_cli("--corpus", corpus_file, "--output", tmp_path, *RESUMABLE, "--eval-corpus", pd_heldout_file, "--eval-chars", "1500")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "held-out text: 1,500 characters of" in r.stderr and "(cut at --eval-chars 1,500)" in r.stderr
    _assert_same(reference, load_file(str(tmp_path / "final" / "model.safetensors")))  # evaluating draws none of the run's randomness
    rows = read_loss_log(tmp_path / EVAL_LOG)
    assert [row["step"] for row in rows] == [0, 4, 8, 12]  # the start, every checkpoint, the end
    assert len({row["eval_char_blanks"] for row in rows}) == 1 and rows[0]["eval_char_blanks"] > 150  # the same blanks each time
    assert rows[-1]["eval_char_perplexity"] < rows[0]["eval_char_perplexity"]  # 12 steps from scratch: at least past uniform
    # the checkpoint of the lowest held-out perplexity survives the rotation beside the last one
    best = min(rows[1:], key=lambda row: row["eval_char_perplexity"])["step"]
    assert {checkpoint_step(c) for c in tmp_path.glob("checkpoint-*")} == ({best, 12} if best != 12 else {8, 12})
    # the last row is the saved model's own score on that text, recomputed in this process
    model = SparseBertForMaskedLM.from_pretrained(tmp_path / "final")
    heldout = read_heldout([str(pd_heldout_file)], 1500)
    again = heldout_scores(model, AutoTokenizer.from_pretrained(tmp_path / "final"), heldout, max_length=64)
    assert again["char_blanks"] == rows[-1]["eval_char_blanks"]
    assert abs(again["char_perplexity"] - rows[-1]["eval_char_perplexity"]) < 1e-3 * rows[-1]["eval_char_perplexity"]
    assert again["word_accuracy"] == pytest.approx(rows[-1]["eval_word_accuracy"], abs=1e-5)


def test_a_resume_with_another_thread_count_says_it_is_not_bit_for_bit(corpus_file, tmp_path):
    r = _run(corpus_file, tmp_path, {"ZHBERT_FAULT_AT_STEP": "6", "OMP_NUM_THREADS": "1"})
    assert r.returncode == -9
    r = _run(corpus_file, tmp_path, {"OMP_NUM_THREADS": "2"})
    assert r.returncode == 0, r.stderr[-3000:]
    assert "this run used 1 thread and resumes with 2: it goes on correctly, but not bit for bit" in r.stderr
    assert "OMP_NUM_THREADS=1 for that" in r.stderr


def test_kill_during_checkpoint_save_then_resume(corpus_file, tmp_path, reference):
    r = _run(corpus_file, tmp_path, {"ZHBERT_FAULT_DURING_SAVE": "8"})
    assert r.returncode == -9
    assert (tmp_path / "checkpoint-8").is_dir() and not (tmp_path / "checkpoint-8" / "zhbert_complete.json").exists()
    r = _run(corpus_file, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "removing incomplete checkpoint" in r.stderr and "checkpoint-4" in r.stderr
    _assert_same(reference, load_file(str(tmp_path / "final" / "model.safetensors")))


def test_result_loads_in_plain_transformers_and_continues(tmp_path, corpus_file):
    from transformers import AutoModelForMaskedLM, BertConfig, BertForMaskedLM

    # a checkpoint written by plain transformers continues pretraining with zhbert
    init = tmp_path / "plain"
    BertForMaskedLM(
        BertConfig(vocab_size=21128, hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128)
    ).save_pretrained(init)
    out = tmp_path / "continued"
    args = ["--init", init, "--max-steps", "3", "--save-steps", "3", "--batch-size", "4", "--num-proc", "1", "--max-length", "64"]
    r = pretrain_cli("--corpus", corpus_file, "--output", out, *args)
    assert r.returncode == 0, r.stderr[-3000:]
    model = AutoModelForMaskedLM.from_pretrained(str(out / "final"))
    assert type(model).__name__ == "BertForMaskedLM" and model.config.hidden_size == 64
    plain = BertForMaskedLM.from_pretrained(str(init)).bert.embeddings
    assert not torch.equal(plain.word_embeddings.weight, model.bert.embeddings.word_embeddings.weight)  # it trained
    # --position-init auto keeps a checkpoint's own position embeddings (3 small steps away from them)
    moved = (model.bert.embeddings.position_embeddings.weight - plain.position_embeddings.weight).norm(dim=1)
    assert moved.max() < 0.2 * plain.position_embeddings.weight.norm(dim=1).min()


def test_a_continued_run_keeps_the_masking_its_init_was_pretrained_with(tmp_path, corpus_file, tiny_encoder):
    import json

    from zhbert.training.pretrain import PretrainConfig, _continued_masking

    def masking_of(folder):
        return json.loads((folder / "final" / "zhbert_pretrain.json").read_text())["masking"]

    assert _continued_masking(str(tiny_encoder)) == "wwm"  # plain transformers' folder: nothing recorded
    args = ["--max-steps", "1", "--save-steps", "1", "--batch-size", "2", "--num-proc", "1", "--max-length", "64"]
    r = pretrain_cli("--corpus", corpus_file, "--output", tmp_path / "a", "--init", tiny_encoder, "--masking", "char", *args)
    assert r.returncode == 0 and masking_of(tmp_path / "a") == "char", r.stderr[-3000:]
    r = pretrain_cli("--corpus", corpus_file, "--output", tmp_path / "b", "--init", tmp_path / "a" / "final", *args)
    assert r.returncode == 0 and masking_of(tmp_path / "b") == "char", r.stderr[-3000:]
    assert f"--masking char: the masking {tmp_path / 'a' / 'final'} was pretrained with" in r.stderr
    assert _continued_masking("zhbert/pretrained/base") == "mixed"  # what the bundled base was trained with
    with pytest.raises(ValueError, match="unknown masking 'whole-word'"):
        PretrainConfig(corpus=["x"], masking="whole-word")


def test_from_scratch_starts_from_sinusoidal_positions(reference):
    from zhbert.training.positions import sinusoidal_table

    pos = reference["bert.embeddings.position_embeddings.weight"]
    cos = torch.nn.functional.cosine_similarity(pos, sinusoidal_table(*pos.shape), dim=1)
    assert cos.min() > 0.95  # 12 steps of training move them only a little


def _damage_optimizer(ckpt):
    data = (ckpt / "optimizer.pt").read_bytes()
    (ckpt / "optimizer.pt").write_bytes(data[: len(data) // 2])


def _zero_weights(ckpt):
    with open(ckpt / "model.safetensors", "r+b") as f:
        f.seek(20000)
        f.write(b"\0" * 4096)


@pytest.mark.parametrize(
    "damage",
    [_damage_optimizer, lambda c: (c / "rng_state.pth").unlink(), _zero_weights],
    ids=["truncated-optimizer", "deleted-rng-state", "zeroed-weights"],
)
def test_a_damaged_complete_checkpoint_falls_back_to_the_previous_one(corpus_file, tmp_path, reference, damage):
    r = _run(corpus_file, tmp_path, {"ZHBERT_FAULT_AT_STEP": "10"})
    assert r.returncode == -9 and (tmp_path / "checkpoint-8" / "zhbert_complete.json").is_file()
    damage(tmp_path / "checkpoint-8")
    r = _run(corpus_file, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    said = [line for line in r.stderr.splitlines() if "checkpoint-8" in line and "not resuming from it" in line]
    assert len(said) == 1, r.stderr[-3000:]
    assert "resuming from" in r.stderr and "checkpoint-4" in r.stderr
    assert (tmp_path / "damaged-checkpoint-8").is_dir()  # kept for inspection, out of the resume path
    _assert_same(reference, load_file(str(tmp_path / "final" / "model.safetensors")))


def test_rerunning_a_finished_run_takes_no_extra_step(corpus_file, tmp_path, reference):
    assert _run(corpus_file, tmp_path).returncode == 0
    r = _run(corpus_file, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert not (tmp_path / "checkpoint-13").exists() and (tmp_path / "checkpoint-12").is_dir()
    assert "nothing left to train" in r.stderr
    _assert_same(reference, load_file(str(tmp_path / "final" / "model.safetensors")))


def _chained_disk_full() -> RuntimeError:
    """What torch raises on a full disk: its own error, with the OSError only in the chain."""
    outer = RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 2880 vs 2774")
    outer.__context__ = OSError(28, "No space left on device")
    return outer


@pytest.mark.parametrize(
    "error, cause",
    [
        (OSError(30, "Read-only file system"), "read-only"),
        (OSError(28, "No space left on device"), "no space left"),
        (_chained_disk_full(), "no space left"),
        (
            RuntimeError(
                "[enforce fail at inline_container.cc:626] . PytorchStreamWriter failed writing file data/0: "
                "file write failed / basic_ios::clear: iostream error"
            ),
            "no space left",
        ),
    ],
)
def test_storage_failures_end_in_one_line(corpus_file, tmp_path, monkeypatch, error, cause):
    """A read-only or full output folder: one line naming the folder, the cause and the last complete checkpoint."""
    from transformers import Trainer

    from zhbert.errors import StorageError
    from zhbert.training.pretrain import PretrainConfig, pretrain

    calls = {"n": 0}
    real = Trainer._save_checkpoint

    def failing_save(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 1:  # the first checkpoint is written; the second save fails
            raise error
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Trainer, "_save_checkpoint", failing_save)
    cfg = PretrainConfig(
        corpus=[str(corpus_file)], output=str(tmp_path), size="tiny", max_steps=8, save_steps=4, batch_size=8, num_proc=1, max_length=64
    )
    with pytest.raises(StorageError) as info:
        pretrain(cfg)
    msg = str(info.value)
    assert "\n" not in msg and str(tmp_path) in msg and cause in msg and "checkpoint-4" in msg


@pytest.fixture
def small_tmpfs(tmp_path):
    """A real 20 MB tmpfs (CI runs as root); skipped where the machine refuses the mount."""
    folder = tmp_path / "tmpfs"
    folder.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(folder)]
    if os.geteuid() != 0 or subprocess.run(mount, capture_output=True).returncode:
        pytest.skip("mounting a tmpfs needs root and a machine that allows it")
    yield folder
    subprocess.run(["umount", str(folder)], check=False)


def test_a_real_full_disk_ends_in_one_line(corpus_file, small_tmpfs):
    """pretrain into a 20 MB tmpfs: the first checkpoint (about 40 MB with the optimiser) fills it, and the
    run ends in one line saying so, not in torch's 175-line 'unexpected pos' traceback."""
    out = small_tmpfs / "run"
    r = pretrain_cli("--corpus", corpus_file, "--output-dir", out, *TINY, "--max-steps", "4", "--save-steps", "2")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
    assert f"\nzhbert: error: {out}: cannot save: no space left on the device" in r.stderr  # on a line of its own
    assert "last complete checkpoint: none yet" in r.stderr


def test_a_folder_made_read_only_mid_run_ends_in_one_line(corpus_file, bind_mount, monkeypatch):
    """The folder turns read-only between two checkpoints: the run's one-line error is the one raised,
    not the lock's failed clean-up (which used to replace it with a 119-line traceback)."""
    from transformers import Trainer

    from zhbert.errors import StorageError
    from zhbert.training.pretrain import PretrainConfig, pretrain

    real, calls = Trainer._save_checkpoint, {"n": 0}

    def save_then_turn_read_only(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            ro = subprocess.run(["mount", "-o", "remount,bind,ro", str(bind_mount)], capture_output=True)
            if ro.returncode:
                pytest.skip("this machine does not remount read-only")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Trainer, "_save_checkpoint", save_then_turn_read_only)
    out = bind_mount / "run"
    cfg = PretrainConfig(
        corpus=[str(corpus_file)], output=str(out), size="tiny", max_steps=8, save_steps=4, batch_size=8, num_proc=1, max_length=64
    )
    with pytest.raises(StorageError) as info:
        pretrain(cfg)
    msg = str(info.value)
    assert "\n" not in msg and str(out) in msg and "read-only" in msg and "checkpoint-4" in msg
    # and every rerun says the same in one line (the lock cannot even be written now)
    with pytest.raises(StorageError) as again:
        pretrain(cfg)
    assert "\n" not in str(again.value) and "read-only" in str(again.value) and "checkpoint-4" in str(again.value)


def test_rerunning_on_a_still_full_disk_is_one_line_and_leaves_no_lock(corpus_file, small_tmpfs):
    out = small_tmpfs / "run"
    out.mkdir()
    with open(small_tmpfs / "filler", "wb", buffering=0) as f:  # fill the device to the last byte
        try:
            while True:
                f.write(b"\0" * (1 << 20))
                f.flush()
        except OSError:
            pass
        try:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
        except OSError:
            pass
    for _ in range(2):
        r = pretrain_cli("--corpus", corpus_file, "--output-dir", out, *TINY, "--max-steps", "4", "--save-steps", "2")
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
        assert f"zhbert: error: {out}: cannot save: no space left on the device" in r.stderr
        assert not (out / ".zhbert.lock").exists()


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"])
def test_a_stop_says_the_step_and_where_the_rerun_resumes(corpus_file, tmp_path, signum, status):
    """Ctrl-C, or SIGTERM (kill, a scheduler's time limit, a shutdown): one line with the step and the
    checkpoint a rerun resumes from, and the shell's status for that signal."""
    cmd = [sys.executable, "-m", "zhbert", "pretrain", "--corpus", str(corpus_file), "--output", str(tmp_path), "--size", "tiny",
           "--max-steps", "900", "--save-steps", "4", "--batch-size", "8", "--logging-steps", "2", "--num-proc", "1",
           "--masking", "wwm", "--max-length", "64"]  # fmt: skip
    code, err = stop_after_a_checkpoint(cmd, dict(os.environ), tmp_path, signum)
    assert shell_status(code) == status, err[-3000:]
    (last,) = [line for line in err.splitlines() if line.startswith("zhbert: error:")]  # one line (a progress bar may follow)
    assert last.startswith(f"zhbert: error: {tmp_path}: interrupted at step ") and "of 900" in last, err[-3000:]
    assert "resumes from" in last and "checkpoint-" in last and "Traceback" not in err


@pytest.mark.parametrize("stop", [KeyboardInterrupt, Terminated], ids=["ctrl-c", "sigterm"])
def test_a_stop_that_lands_while_a_class_is_created_is_still_a_stop(stop):
    """Python 3.11 wraps what ``__set_name__`` raises in a RuntimeError. A stop that lands while an import creates
    a class (PIL loads its image plugins at the first saved loss plot: a clean-clone run ended in that traceback,
    status 1) must come out as the stop itself, so the run reports its step and where a rerun resumes."""

    class StopsWhileNamed:
        def __set_name__(self, owner, name):
            raise stop()

    with pytest.raises(stop) as caught, terminate_as_interrupt():
        type("ImagePlugin", (), {"is_animated": StopsWhileNamed()})
    assert type(caught.value) is stop
    with pytest.raises(RuntimeError, match="not a stop"), terminate_as_interrupt():  # other errors pass unchanged
        raise RuntimeError("not a stop") from ValueError("cause")
