"""`zhbert soup`: one head whose weights are the mean of several runs of one recipe."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from transformers import BertConfig, BertForMaskedLM

from zhbert.data.peoples_daily import NER_LABELS
from zhbert.errors import ModelLoadError
from zhbert.heads import HeadConfig, TaskCollator, load_head, new_head, predict_tags, save_head
from zhbert.heads.inputs import token_tags_from_chars
from zhbert.model_soup import MANIFEST, MAX_DISTANCE, soup
from zhbert.tokenizer import encode


def _head(**kw) -> HeadConfig:
    return HeadConfig(kind="token", labels=NER_LABELS, scheme="BIO", crf=True, lexicon="jieba", lexicon_dim=8, window=64, **kw)


@pytest.fixture(scope="module")
def ner_batch(peoples_daily, tokenizer):
    rows = [r for r in peoples_daily.select(range(200)) if 10 <= len(r["text"]) <= 50 and r["entities"]][:8]
    examples = []
    for r in rows:
        enc = encode(tokenizer, r["text"])
        examples.append({"input_ids": list(enc.ids), "tags": token_tags_from_chars(enc.offsets, r["ner_tags"], NER_LABELS, "BIO")})
    return TaskCollator(tokenizer, _head(), 64)(examples)


def _run(encoder, tokenizer, batch, seed, folder, head=None, words=None):
    """One seed of a recipe: a fresh head drawn with the seed, a few steps on real sentences."""
    torch.manual_seed(seed)
    model = new_head(encoder, head or _head(), words)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(4):
        loss = model(**batch).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    save_head(model.eval(), tokenizer, folder)
    return folder


def test_the_soup_is_the_mean_of_its_runs_and_loads_as_a_head(tiny_encoder, tokenizer, ner_batch, tmp_path, pd_sentences):
    words = tmp_path / "domain.txt"
    words.write_text("高级经济师\tTITLE\n", encoding="utf-8")  # a word list trained in travels with the soup
    runs = [_run(tiny_encoder, tokenizer, ner_batch, seed, tmp_path / f"s{seed}", words=words) for seed in (1, 2, 3)]
    manifest = soup(runs, tmp_path / "soup")
    souped, ingredients = load_head(tmp_path / "soup"), [load_head(r).state_dict() for r in runs]
    state = souped.state_dict()
    for name, value in state.items():
        if value.is_floating_point():
            torch.testing.assert_close(value, (ingredients[0][name] + ingredients[1][name] + ingredients[2][name]) / 3)
        else:
            assert torch.equal(value, ingredients[0][name])
    assert not torch.equal(state["crf.transitions"], ingredients[0]["crf.transitions"])  # the runs did differ
    assert (tmp_path / "soup" / "lexicon_words.txt").read_bytes() == words.read_bytes()
    written = json.loads((tmp_path / "soup" / MANIFEST).read_text(encoding="utf-8"))
    assert written == manifest and [i["folder"] for i in written["ingredients"]] == [str(r) for r in runs]
    assert all(len(i["model_sha256"]) == 64 and 0 < i["distance"] < MAX_DISTANCE for i in written["ingredients"])
    from zhbert.model_info import describe

    assert describe(str(tmp_path / "soup"))["soup_of"] == [str(r) for r in runs]
    predictions = predict_tags(souped, tokenizer, pd_sentences[:6])
    assert [len(p.tags) for p in predictions] == [len(t) for t in pd_sentences[:6]]
    # from the command line, into the same folder: refused in one line, then replaced whole with --overwrite
    command = [sys.executable, "-m", "zhbert", "soup", str(runs[0]), str(runs[1]), "--output-dir", str(tmp_path / "soup")]
    out = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert out.returncode == 1 and "a model folder is already there; pass --overwrite" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    out = subprocess.run([*command, "--overwrite"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert f"souped 2 runs -> {tmp_path / 'soup'}" in out.stdout
    assert len(json.loads((tmp_path / "soup" / MANIFEST).read_text(encoding="utf-8"))["ingredients"]) == 2
    two = load_head(tmp_path / "soup").state_dict()["crf.transitions"]
    torch.testing.assert_close(two, (ingredients[0]["crf.transitions"] + ingredients[1]["crf.transitions"]) / 2)


def test_runs_that_cannot_be_souped_are_refused_by_name(tiny_encoder, tokenizer, ner_batch, tmp_path):
    a = _run(tiny_encoder, tokenizer, ner_batch, 1, tmp_path / "a")
    b = _run(tiny_encoder, tokenizer, ner_batch, 2, tmp_path / "b")
    with pytest.raises(ValueError, match="at least 2 fine-tuned folders, got 1"):
        soup([a], tmp_path / "out")
    with pytest.raises(ValueError, match="a folder is given twice"):
        soup([a, a], tmp_path / "out")
    with pytest.raises(ValueError, match="b: the soup folder is the source"):
        soup([a, b], b)
    no_crf = _run(tiny_encoder, tokenizer, ner_batch, 3, tmp_path / "no_crf", head=HeadConfig(**{**_head().to_dict(), "crf": False}))
    with pytest.raises(ValueError, match=r"no_crf: its head differs from .*a's in crf: soup runs of one recipe only"):
        soup([a, no_crf], tmp_path / "out")
    torch.manual_seed(1)  # the same shape as the tiny encoder, initialised apart: another start
    config = BertConfig.from_pretrained(tiny_encoder)
    BertForMaskedLM(config).save_pretrained(tmp_path / "other_encoder")
    tokenizer.save_pretrained(tmp_path / "other_encoder")
    other = _run(tmp_path / "other_encoder", tokenizer, ner_batch, 1, tmp_path / "other")
    with pytest.raises(ValueError, match=r"a: its encoder lies (0\.[4-9]|1\.)\d* from the soup's .* did not start from the same encoder"):
        soup([a, other], tmp_path / "out")
    (b / "model.safetensors").unlink()
    with pytest.raises(ModelLoadError, match="b/model.safetensors: model.safetensors is missing"):
        soup([a, b], tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing written by a refused soup
    out = subprocess.run(
        [sys.executable, "-m", "zhbert", "soup", str(a), "--output-dir", str(tmp_path / "out")], capture_output=True, text=True
    )
    assert out.returncode == 1 and "zhbert: error: a soup needs at least 2 fine-tuned folders, got 1" in out.stderr


def test_the_soup_holds_one_run_in_memory_at_a_time(tiny_encoder, tokenizer, ner_batch, tmp_path, monkeypatch):
    import gc
    import weakref

    import zhbert.heads.io as head_io

    runs = [_run(tiny_encoder, tokenizer, ner_batch, seed, tmp_path / f"s{seed}") for seed in (1, 2, 3, 4)]
    loaded, alive_at_load = [], []
    real_load = head_io.load_head

    def counting_load(path, *args, **kwargs):  # how many earlier runs' weights are still held when the next loads
        gc.collect()
        alive_at_load.append(sum(any(ref() is not None for ref in refs) for refs in loaded))
        model = real_load(path, *args, **kwargs)
        refs = [weakref.ref(model.classifier.weight)]  # the run is held by its model or by any state dict taken from it
        loaded.append(refs)
        state_dict = model.state_dict

        def tracked_state_dict(*a, **kw):
            state = state_dict(*a, **kw)
            refs.append(weakref.ref(state["classifier.weight"]))
            return state

        model.state_dict = tracked_state_dict
        return model

    monkeypatch.setattr(head_io, "load_head", counting_load)
    soup(runs, tmp_path / "soup")
    assert alive_at_load == [0, 1, 1, 1]  # the first run (kept to be saved as the soup) and nothing else
    monkeypatch.undo()
    souped = load_head(tmp_path / "soup").state_dict()["classifier.weight"]
    expected = sum(load_head(r).state_dict()["classifier.weight"] for r in runs) / 4
    torch.testing.assert_close(souped, expected)


def test_the_greedy_soup_keeps_a_run_only_if_the_score_holds(tiny_encoder, tokenizer, ner_batch, tmp_path):
    """Runs scored 0.5 / 0.7 / 0.6 / 0.4: the soup starts from s2, tries s3 (kept: 0.72), s1 (dropped:
    0.71), s4 (kept: an equal 0.72), as Wortsman et al.'s recipe does; the soup is the mean of s2, s3, s4."""
    from zhbert.model_info import describe
    from zhbert.model_soup import greedy_soup

    runs = {seed: _run(tiny_encoder, tokenizer, ner_batch, seed, tmp_path / f"s{seed}") for seed in (1, 2, 3, 4)}
    alone = {"s1": 0.5, "s2": 0.7, "s3": 0.6, "s4": 0.4}
    souped = {("s2", "s3"): 0.72, ("s1", "s2", "s3"): 0.71, ("s2", "s3", "s4"): 0.72}
    scored = []

    def score(folder):
        scored.append(folder.name)
        if folder.name in alone:
            return alone[folder.name]
        ingredients = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["ingredients"]
        return souped[tuple(sorted(Path(i["folder"]).name for i in ingredients))]

    manifest = greedy_soup(list(runs.values()), tmp_path / "greedy", score, metric="a made-up dev score")
    assert scored == ["s1", "s2", "s3", "s4", "trial", "trial", "trial"]
    assert [Path(i["folder"]).name for i in manifest["ingredients"]] == ["s2", "s3", "s4"]
    assert [(Path(t["added"]).name, t["score"], t["kept"]) for t in manifest["greedy"]["trials"]] == [
        ("s3", 0.72, True),
        ("s1", 0.71, False),
        ("s4", 0.72, True),
    ]
    assert manifest["greedy"]["score"] == 0.72 and manifest["greedy"]["metric"] == "a made-up dev score"
    assert json.loads((tmp_path / "greedy" / MANIFEST).read_text(encoding="utf-8")) == manifest
    states = [load_head(runs[s]).state_dict()["crf.transitions"] for s in (2, 3, 4)]
    torch.testing.assert_close(load_head(tmp_path / "greedy").state_dict()["crf.transitions"], sum(states) / 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["greedy", "s1", "s2", "s3", "s4"]  # no trial left behind
    # no soup holds the best run's score: the output is that run, byte for byte, and says so
    with pytest.raises(ValueError, match="pass --overwrite"):  # the soup made above is not replaced unasked
        greedy_soup(list(runs.values()), tmp_path / "greedy", lambda f: alone.get(f.name, 0.0))
    manifest = greedy_soup(list(runs.values()), tmp_path / "greedy", lambda f: alone.get(f.name, 0.0), overwrite=True)
    assert [Path(i["folder"]).name for i in manifest["ingredients"]] == ["s2"] and manifest["greedy"]["score"] == 0.7
    assert not any(t["kept"] for t in manifest["greedy"]["trials"]) and len(manifest["greedy"]["trials"]) == 3
    assert (tmp_path / "greedy" / "model.safetensors").read_bytes() == (runs[2] / "model.safetensors").read_bytes()
    assert describe(str(tmp_path / "greedy"))["soup_of"] == [str(runs[2])]
    # a score that fails part way leaves no trial behind and the earlier output as it was; a NaN is refused by name
    before = (tmp_path / "greedy" / MANIFEST).read_bytes()

    def failing(folder):
        if folder.name in alone:
            return alone[folder.name]
        raise RuntimeError("dev split unreadable")

    with pytest.raises(RuntimeError, match="dev split unreadable"):
        greedy_soup(list(runs.values()), tmp_path / "greedy", failing, overwrite=True)
    with pytest.raises(ValueError, match=r"s3: its score is nan, not a number a soup can be chosen by"):
        greedy_soup(list(runs.values()), tmp_path / "greedy", lambda f: float("nan") if f.name == "s3" else 0.5, overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["greedy", "s1", "s2", "s3", "s4"]
    assert (tmp_path / "greedy" / MANIFEST).read_bytes() == before


def test_the_greedy_soup_from_the_command_line_scores_on_a_dev_split(tiny_encoder, tokenizer, ner_batch, tmp_path):
    """`zhbert soup --greedy ner --dataset peoples_daily`: every run is scored on the dev split as
    `zhbert train ner --evaluate-only RUN --score-on dev` scores it, and the manifest keeps the scores."""
    from zhbert.recipes import recipe

    runs = [_run(tiny_encoder, tokenizer, ner_batch, seed, tmp_path / f"s{seed}") for seed in (1, 2)]
    options = ["--dataset", "peoples_daily", "--max-eval-samples", "24"]
    out = subprocess.run(
        [sys.executable, "-m", "zhbert", "soup", *map(str, runs), "--greedy", "ner", *options, "-o", str(tmp_path / "greedy")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    manifest = json.loads((tmp_path / "greedy" / MANIFEST).read_text(encoding="utf-8"))
    expected = [recipe("ner").dev_score(r, dataset="peoples_daily", max_eval_samples=24) for r in runs]
    assert [r["score"] for r in manifest["greedy"]["runs"]] == expected
    assert manifest["greedy"]["metric"] == "zhbert train ner --score-on dev: peoples_daily dev split"
    assert f"greedy soup: run 1 {runs[0]} dev {100 * expected[0]:.2f}" in out.stderr
    best = 100 * manifest["greedy"]["score"]
    if len(manifest["ingredients"]) == 2:  # stdout is the soup's one line (the recipe's result rows go to stderr)
        assert out.stdout.startswith(f"souped 2 runs of 2 (dev {best:.2f}) -> {tmp_path / 'greedy'}")
    else:
        assert out.stdout.startswith(f"no soup of the 2 runs held the best run's dev {best:.2f}: {tmp_path / 'greedy'} is a copy of it")
    assert out.stdout.count("\n") == 1
    out = subprocess.run(
        [sys.executable, "-m", "zhbert", "soup", *map(str, runs), "--dataset", "msra", "-o", str(tmp_path / "u")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1 and "--dataset and --max-eval-samples choose what --greedy scores on" in out.stderr
    assert not (tmp_path / "u").exists()
