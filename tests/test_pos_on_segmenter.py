"""POS tags over a segmenter's words (zhbert/pos_on_segmenter.py): trained, saved, reloaded and used
through zhbert.load on real People's Daily sentences."""

from __future__ import annotations

import json
import shutil

import pytest

import zhbert
from zhbert.errors import ModelLoadError

SENTENCES = [
    "江泽民主席在北京会见了美国总统克林顿。",
    "迈向充满希望的新世纪——一九九八年新年讲话",
    "国务院总理李鹏在人民大会堂会见了日本首相桥本龙太郎。",
]


@pytest.fixture(scope="module")
def trained(tmp_path_factory, shared):
    """A head trained for a few steps over the bundled cws's features (seconds: the encoder is frozen)."""
    from zhbert.pos_on_segmenter import train

    out = tmp_path_factory.mktemp("pos")
    record = train("cws", str(out), max_train_samples=64, max_steps=4, max_eval_samples=20)
    return out / "model", record


def test_words_are_the_segmenters_and_every_word_has_a_tag(trained):
    folder, record = trained
    tagger = zhbert.load(str(folder))
    cws = zhbert.load("cws")
    labels = set(json.loads((folder / "zhbert_pos.json").read_text(encoding="utf-8"))["head"]["labels"])
    tags = {label.split("-", 1)[-1] for label in labels} - {"O"} | {"x"}
    batch = tagger(SENTENCES)
    assert batch == [tagger(s) for s in SENTENCES]  # batch equals one by one
    for text, words, plain in zip(SENTENCES, batch, cws(SENTENCES)):
        assert [(w.text, w.start, w.end) for w in words] == [(w.text, w.start, w.end) for w in plain]
        assert all(text[w.start : w.end] == w.text and w.label in tags and 0 <= w.score <= 1 for w in words)
    assert 0 <= record["score"] <= 1 and record["metrics"]["words"]["f1"] > 0.9  # the words are cws's


def test_the_head_round_trips_bit_for_bit(trained):
    from safetensors.torch import load_file

    from zhbert.heads.pos import head_state

    folder, _ = trained
    tagger = zhbert.load(str(folder))
    saved = load_file(str(folder / "pos_head.safetensors"))
    state = head_state(tagger.pos_model)
    assert saved.keys() == state.keys() and all((saved[k].float() == state[k]).all() for k in saved)
    assert zhbert.load(str(folder))(SENTENCES) == tagger(SENTENCES)  # a fresh load answers the same


def test_a_changed_segmenter_or_damaged_head_is_refused(trained, tmp_path):
    folder, _ = trained
    copy = tmp_path / "pos"
    shutil.copytree(folder, copy)
    record = json.loads((copy / "zhbert_pos.json").read_text(encoding="utf-8"))
    record["segmenter_sha256"] = "0" * 64
    (copy / "zhbert_pos.json").write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ModelLoadError, match=r"zhbert_pos.json: trained on the features of segmenter 'cws' as it was"):
        zhbert.load(str(copy))
    shutil.copy(folder / "zhbert_pos.json", copy / "zhbert_pos.json")
    (copy / "pos_head.safetensors").write_bytes((folder / "pos_head.safetensors").read_bytes()[:100])
    with pytest.raises(ModelLoadError, match=r"pos_head.safetensors"):
        zhbert.load(str(copy))
    # a record that names its own folder, or a folder without weights, as its segmenter: said so
    for segmenter, problem in ((str(copy), "names its own folder as its segmenter"), (str(tmp_path), "not a model folder")):
        record = json.loads((folder / "zhbert_pos.json").read_text(encoding="utf-8"))
        record["segmenter"] = segmenter
        (copy / "zhbert_pos.json").write_text(json.dumps(record), encoding="utf-8")
        with pytest.raises(ModelLoadError, match=problem):
            zhbert.load(str(copy))


def test_user_dictionary_and_web_units_apply_to_the_words(trained):
    folder, _ = trained
    text = "这家公司研发的石墨烯电池获得了碳中和认证 https://t.cn/abc"
    words = [w.text for w in zhbert.load(str(folder), user_dict=["石墨烯", "碳中和"])(text)]
    assert "石墨烯" in words and "碳中和" in words and "https://t.cn/abc" in words


def test_the_bundled_pos_model_tags_real_sentences():
    """zhbert.load("pos"): cws's words with the tags a reader of People's Daily expects."""
    tagger = zhbert.load("pos")
    got = {(w.text, w.label) for w in tagger("江泽民主席在北京会见了美国总统克林顿。")}
    assert {("北京", "ns"), ("会见", "v"), ("。", "w"), ("美国", "ns"), ("了", "u"), ("在", "p")} <= got, got
    assert ("主席", "n") in got and ("克林顿", "nr") in got
    info = zhbert.load("pos")
    assert type(info).__name__ == "POSTagger"


def test_the_command_line_reads_the_pos_folder():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "zhbert", "predict", "--model", "pos", "-"], input="北京欢迎你。\n",
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-1500:]
    words = json.loads(out.stdout)["words"]
    assert [w["text"] for w in words] == ["北京", "欢迎", "你", "。"] and words[0]["label"] == "ns"
    info = subprocess.run([sys.executable, "-m", "zhbert", "info", "pos"], capture_output=True, text=True, timeout=300)
    assert info.returncode == 0 and json.loads(info.stdout)["head_parameters"] < 100_000
    export = subprocess.run(
        [sys.executable, "-m", "zhbert", "export", "pos", "/nonexistent/x"], capture_output=True, text=True, timeout=300
    )
    assert export.returncode == 1 and "ship it by copying the folder" in export.stderr and "Traceback" not in export.stderr


def test_a_segmenter_of_several_standards_gets_a_pos_head(tiny_encoder, tokenizer, tmp_path, shared):
    """A multi-criteria segmenter (--criteria pku,weibo) takes a POS head too: the frozen head reads its
    first criterion's features, whichever criterion cuts the words."""
    import torch

    from zhbert.heads import HeadConfig, new_head, save_head
    from zhbert.pos_on_segmenter import train

    bmes = dict(kind="token", labels=["B", "M", "E", "S"], scheme="BMES-untyped", window=64)
    seg = new_head(tiny_encoder, HeadConfig(**bmes, criteria=["pku", "weibo"]))
    with torch.no_grad():  # the Weibo row apart from the news row, as training leaves it
        seg.bert.embeddings.token_type_embeddings.weight[1] += 3.0
    save_head(seg, tokenizer, tmp_path / "seg")
    record = train(str(tmp_path / "seg"), str(tmp_path / "pos"), max_train_samples=32, max_steps=2, max_eval_samples=5)
    assert record["features_criterion"] == "pku"
    head = json.loads((tmp_path / "pos" / "model" / "zhbert_pos.json").read_text(encoding="utf-8"))["head"]
    assert head["criteria"] == [] and head["mode"] == "frozen"
    for criterion in ("pku", "weibo"):
        tagger = zhbert.load(str(tmp_path / "pos" / "model"), criterion=criterion)
        words = tagger(SENTENCES[0])
        cut = zhbert.load(str(tmp_path / "seg"), criterion=criterion)(SENTENCES[0])
        assert [(w.text, w.start, w.end) for w in words] == [(w.text, w.start, w.end) for w in cut]
        assert all(w.label for w in words)

    # a segmenter whose default reads between its standards (zhbert export --blend-criteria) takes one too
    from zhbert.export import export_model

    export_model(tmp_path / "seg", tmp_path / "seg-mixed", fp16=False, blend_criteria="mixed")
    record = train(str(tmp_path / "seg-mixed"), str(tmp_path / "pos-mixed"), max_train_samples=32, max_steps=2, max_eval_samples=5)
    assert record["features_criterion"] == "pku"
    words = zhbert.load(str(tmp_path / "pos-mixed" / "model"))(SENTENCES[0])
    cut = zhbert.load(str(tmp_path / "seg-mixed"))(SENTENCES[0])
    assert [(w.text, w.start, w.end) for w in words] == [(w.text, w.start, w.end) for w in cut]


def _snapshot(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_folder_zhbert_did_not_write_is_refused_before_training(trained, tmp_path):
    """--output-dir a project whose model/ is another tool's, or a POS folder holding the user's notes: refused at
    the start, naming the file, every file as it was (the head's save would have written over them)."""
    from zhbert.pos_on_segmenter import train

    folder, _ = trained
    hub = tmp_path / "hub" / "model"
    hub.mkdir(parents=True)
    (hub / "config.json").write_text('{"model_type": "bert"}', encoding="utf-8")
    (hub / "metrics.json").write_text('{"accuracy": 0.9}', encoding="utf-8")
    noted = tmp_path / "noted" / "model"
    shutil.copytree(folder, noted)
    (noted / "NOTES.md").write_text("which run this was\n", encoding="utf-8")
    unmarked = tmp_path / "unmarked" / "model"
    unmarked.mkdir(parents=True)
    (unmarked / "metrics.json").write_text('{"f1": 0.5}', encoding="utf-8")
    for project, named in ((hub.parent, "config.json"), (noted.parent, "NOTES.md"), (unmarked.parent, "metrics.json")):
        before = _snapshot(project)
        with pytest.raises(ValueError, match=rf"model/{named}: not a file of a POS head zhbert saved"):
            train("cws", str(project), max_train_samples=8, max_steps=1, max_eval_samples=2)
        assert _snapshot(project) == before
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    with pytest.raises(ValueError, match="afile: exists and is not a folder"):
        train("cws", str(tmp_path / "afile"), max_steps=1)


def test_a_rerun_replaces_its_own_folder_and_the_command_line_says_a_refusal_in_one_line(trained, tmp_path):
    import subprocess
    import sys

    from zhbert.pos_on_segmenter import train

    folder, _ = trained
    again = tmp_path / "again"
    shutil.copytree(folder, again / "model")
    record = train("cws", str(again), max_train_samples=8, max_steps=1, max_eval_samples=2)
    saved = json.loads((again / "model" / "metrics.json").read_text(encoding="utf-8"))
    assert saved["train_examples"] == 8 == record["train_examples"]
    assert sorted(p.name for p in (again / "model").iterdir()) == ["metrics.json", "pos_head.safetensors", "zhbert_pos.json"]
    assert [p.name for p in again.iterdir() if p.name.startswith(".")] == []  # no staging folder left
    assert zhbert.load(str(again / "model"))(SENTENCES[0])

    (again / "model" / "NOTES.md").write_text("mine\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "zhbert.pos_on_segmenter", "--output-dir", str(again), "--max-steps", "1"],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith(f"error: {again / 'model' / 'NOTES.md'}: not a file of a POS head")


def test_a_dictionary_word_takes_its_own_part_of_speech():
    """jieba's posseg gives a user-dictionary word the tag its line names; so does zhbert.load("pos") for the words its
    dictionary forces (when the tag is one of the tagset), score 1.0. Before, 字节跳动 listed as nt came out n."""
    text = "字节跳动创始人张一鸣在北京说石墨烯很好。"
    plain = {w.text: w.label for w in zhbert.load("pos", user_dict=["字节跳动", "石墨烯"])(text)}
    assert plain["字节跳动"] != "nt"  # what the dictionary's tag must change
    words = zhbert.load("pos", user_dict=["字节跳动 3 nt", "石墨烯 5", "张一鸣 nrfg"])(text)
    got = {w.text: (w.label, w.score, w.forced) for w in words}
    assert got["字节跳动"] == ("nt", 1.0, True)
    assert got["石墨烯"][2] and got["石墨烯"][0] == plain["石墨烯"]  # no tag in its line: the model's
    assert got["张一鸣"][0] != "nrfg" and got["张一鸣"][1] < 1.0  # jieba's nrfg is not a PKU tag: the model's
    assert not got["北京"][2] and [w.text for w in words] == [
        w.text for w in zhbert.load("cws", user_dict=["字节跳动", "石墨烯", "张一鸣"])(text)
    ]
