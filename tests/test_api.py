"""zhbert.load(...) predictors on real sentences: offsets into the original text."""

import json
import re

import pytest

import zhbert
from zhbert.api import Classifier, MaskedLM, Matcher, Segmenter, Tagger
from zhbert.data.peoples_daily import NER_LABELS
from zhbert.heads import HeadConfig, new_head, save_head

TEXTS = [
    "江泽民主席在北京会见了美国总统克林顿。",
    "ＡＢＣ１２３公司在  上海 开业😀！",
    "iPhone15发布于2023年，臺灣大學的學生說：“好貴”。",
    "",
    "\u3000",
]


@pytest.fixture(scope="module")
def models(tiny_encoder, tokenizer, tmp_path_factory):
    root = tmp_path_factory.mktemp("api_models")
    heads = {
        "cws": HeadConfig(kind="token", labels=["B", "M", "E", "S"], scheme="BMES-untyped", window=64),
        "ner": HeadConfig(kind="token", labels=NER_LABELS, scheme="BIO", crf=True, window=64),
        "tagging": HeadConfig(kind="sequence", labels=["neutral", "angry", "happy", "sad", "fear", "surprise"], window=64),
        "multi": HeadConfig(kind="sequence", labels=["like", "anger"], multi_label=True, thresholds=[0.3, 0.6], window=64),
        "matching": HeadConfig(kind="pair", labels=["0", "1"], window=64),
    }
    out = {"base": tiny_encoder}
    for name, head in heads.items():
        out[name] = save_head(new_head(tiny_encoder, head), tokenizer, root / name)
    return out


def test_load_picks_the_predictor(models):
    kinds = {"cws": Segmenter, "ner": Tagger, "tagging": Classifier, "multi": Classifier, "matching": Matcher, "base": MaskedLM}
    for name, cls in kinds.items():
        assert type(zhbert.load(str(models[name]))) is cls


def test_segmenter_and_tagger_offsets(models):
    cws, ner = zhbert.load(str(models["cws"])), zhbert.load(str(models["ner"]))
    words = cws(TEXTS)
    assert len(words) == len(TEXTS) and cws(TEXTS[0]) == words[0]  # one in, one out; list in, list out
    for text, ws in zip(TEXTS, words):
        assert all(text[w.start : w.end] == w.text for w in ws)
        assert "".join(w.text for w in ws) == "".join(text.split())  # words spell the text (spaces aside)
        assert [w.start for w in ws] == sorted(w.start for w in ws)
    for text, ents in zip(TEXTS, ner(TEXTS)):
        for e in ents:
            assert text[e.start : e.end] == e.text and e.label in ("PER", "LOC", "ORG") and 0 < e.score <= 1
    json.dumps([[e.to_dict() for e in ents] for ents in ner(TEXTS)], ensure_ascii=False)


def test_answers_do_not_depend_on_the_batch_size(models, pd_sentences):
    """By default (``batch_size=None``) a batch takes as many rows as the model's token budget holds;
    each text's words and entities are those it gets in batches of one or seven rows."""
    texts = list(pd_sentences[:40]) + TEXTS
    cws, ner = zhbert.load(str(models["cws"])), zhbert.load(str(models["ner"]))
    assert cws(texts) == cws(texts, batch_size=1) == cws(texts, batch_size=7)
    where = [[(e.start, e.end, e.label) for e in ents] for ents in ner(texts)]
    assert where == [[(e.start, e.end, e.label) for e in ents] for ents in ner(texts, batch_size=1)]
    scored, bare = ner.tags(texts), ner.tags(texts, with_scores=False)  # segmenters skip the tag probabilities
    assert [t.tags for t in scored] == [t.tags for t in bare]
    assert all(len(t.scores) == len(t.tags) for t in scored) and not any(t.scores for t in bare)
    with pytest.raises(ValueError, match="batch_size must be at least 1, got 0"):
        cws(texts, batch_size=0)


def test_classifier_and_matcher(models):
    tagging, multi, matching = (zhbert.load(str(models[k])) for k in ("tagging", "multi", "matching"))
    r = tagging("今天心情特别好，阳光明媚😀")
    assert len(r.labels) == 1 and r.labels[0] == r.scores[0] and abs(sum(s.score for s in r.scores) - 1) < 1e-5
    for m in multi(TEXTS):
        assert all(l.score >= {"like": 0.3, "anger": 0.6}[l.label] for l in m.labels)
    pair = matching(("花呗怎么还款", "花呗如何还钱"))
    assert pair.label in ("0", "1") and 0.5 <= pair.score <= 1
    assert len(matching([("a", "b"), ("", "😀")])) == 2
    with pytest.raises(TypeError, match="expected a string"):
        tagging([1, 2])
    # the other kind of input is named as such, not by the tokenizer ("texts[0]: expected str, got tuple")
    ner = zhbert.load(str(models["ner"]))
    for model, given in ((tagging, ("今天心情很好", "明天也好")), (ner, ["江泽民在北京", ("北京", "上海")])):
        with pytest.raises(TypeError, match=r"input \d: this model takes texts, not a \(text_a, text_b\) pair"):
            model(given)
    with pytest.raises(TypeError, match=r"input 1: a matching model takes \(text_a, text_b\) pairs, not a text"):
        matching([("花呗怎么还款", "花呗如何还钱"), "花呗怎么还款"])
    json.dumps(r.to_dict(), ensure_ascii=False)


def test_fill_mask_and_features(models):
    base = zhbert.load(str(models["base"]))
    text = "中国的首都是[MASK][MASK]。"
    fills = base.fill_mask(text, top_k=3)
    assert [(f.start, f.end) for f in fills] == [(6, 12), (12, 18)]
    assert all(len(f.candidates) == 3 and f.token == f.candidates[0].token for f in fills)
    assert all(c.token not in ("[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]") for f in fills for c in f.candidates)
    with pytest.raises(ValueError, match="no \\[MASK\\]"):
        base.fill_mask("没有遮盖")
    # [MASK] as people type it (before: "no [MASK] to fill"): any case, an input method's full-width brackets
    for typed in ("中国的首都是[mask][Mask]。", "中国的首都是［MASK］[MASK]。", "中国的首都是［mask］［MASK］。"):
        assert base.fill_mask(typed, top_k=3) == fills
    with pytest.raises(ValueError, match="<mask> is RoBERTa's spelling; this model's is \\[MASK\\]"):
        base.fill_mask("中国的首都是<mask>。")
    vecs = base.features(["你好", "北京欢迎你"], representation="mean-last-4")
    assert len(vecs) == 2 and len(vecs[0]) == 32
    per_token = base.features("北京 欢迎", pooled=False)
    assert [(t["start"], t["end"]) for t in per_token] == [(0, 1), (1, 2), (3, 4), (4, 5)]


def test_load_errors(tmp_path, models):
    from pathlib import Path

    from zhbert.errors import ModelLoadError

    with pytest.raises(ModelLoadError, match="bundled models: base, electra, cws"):
        zhbert.load("no-such-model")
    with pytest.raises(ModelLoadError, match=r"config.json is missing\)$"):
        zhbert.load(str(tmp_path))
    # a folder of model folders (a training run's output holds its model in model/): the error points inside
    root = Path(models["ner"]).parent
    inside = ", ".join(str(root / name) for name in ("cws", "matching", "multi"))
    want = f"{root}: not a model folder (config.json is missing): the model folders inside it are {inside}"
    with pytest.raises(ModelLoadError, match=re.escape(want)):
        zhbert.load(str(root))


def _half_copy(model, src, dst):
    """``model`` saved in fp16 to ``dst``, with the tokenizer files of ``src``."""
    import shutil
    from pathlib import Path

    model.half().save_pretrained(dst)
    for f in Path(src).iterdir():
        if f.name.startswith(("tokenizer", "vocab", "special_tokens")):
            shutil.copy(f, Path(dst) / f.name)
    return str(dst)


def test_half_precision_folders_load_as_float32(models, tmp_path):
    """Bundled weights are stored in fp16 to fit the size budget; transformers 5 would load
    them as fp16 (slow on CPU, and a different model): zhbert always loads fp32."""
    import torch
    from transformers import BertForMaskedLM

    from zhbert.heads import load_head

    ner16 = zhbert.load(_half_copy(load_head(models["ner"]), models["ner"], tmp_path / "ner16"))
    assert next(ner16.model.parameters()).dtype == torch.float32
    text = "国务院总理李鹏在人民大会堂会见了日本首相桥本龙太郎。"
    assert [(s.start, s.end, s.label) for s in ner16(text)] == [(s.start, s.end, s.label) for s in zhbert.load(str(models["ner"]))(text)]
    base16 = zhbert.load(_half_copy(BertForMaskedLM.from_pretrained(models["base"]), models["base"], tmp_path / "base16"))
    assert next(base16.model.parameters()).dtype == torch.float32


def test_features_window_long_texts(models, pd_sentences):
    """Per-token features of a text 3x the model's length: every character gets a vector
    from its owner window, none is cut; a text that fits is one window."""
    import torch

    base = zhbert.load(str(models["base"]))
    text = "".join(pd_sentences[:12])[:180]  # the tiny encoder reads 62 tokens at a time
    rows = base.features(text, representation="last", pooled=False)
    assert [(r["start"], r["end"]) for r in rows] == [(i, i + 1) for i in range(len(text))]
    short = pd_sentences[0][:30]
    alone = base.features(short, representation="last", pooled=False)
    # the first 30 characters of the long text see more context to the right: different vectors
    assert not torch.allclose(torch.tensor(alone[5]["vector"]), torch.tensor(rows[5]["vector"]))
    pooled = base.features([text, short], representation="mean-last-4")
    assert len(pooled) == 2 and len(pooled[0]) == base.model.config.hidden_size
    assert torch.allclose(
        torch.tensor(pooled[1]), torch.tensor([r["vector"] for r in base.features(short, "mean-last-4", pooled=False)]).mean(0), atol=1e-5
    )


def test_fill_mask_orders(models):
    """Several masks: all-at-once answers every mask from one pass; left-to-right fills the
    first mask from that same pass, then sees it; confident starts with the surest mask."""
    lm = zhbert.load(models["base"])
    text = "中国的首都是[MASK][MASK]，人民大会堂在[MASK]安门广场西侧。"
    once = lm.fill_mask(text, top_k=3, order="all-at-once")
    ltr = lm.fill_mask(text, top_k=3, order="left-to-right")
    conf = lm.fill_mask(text, top_k=3)
    assert [m.start for m in once] == [m.start for m in ltr] == [m.start for m in conf] == [6, 12, 25]
    assert ltr[0].candidates == once[0].candidates  # nothing filled yet when the first mask is chosen
    surest = max(range(3), key=lambda k: once[k].candidates[0].score)
    assert conf[surest].candidates == once[surest].candidates
    assert ltr[1].candidates != once[1].candidates  # the second mask saw the first one's answer
    with pytest.raises(ValueError, match="order must be one of confident, left-to-right, all-at-once"):
        lm.fill_mask(text, order="random")


def test_int8_backend_segments_nearly_as_fp32(pd_sentences):
    """``load(..., backend="int8")``: the linear layers become int8 (in place, so the head's
    own reference follows); on real People's Daily sentences almost every word is the fp32
    model's (bench/LOG.md: -0.15 PKU word F1 for 1.4-1.6x); a GPU or an unknown backend
    is refused by name."""
    texts = list(pd_sentences[:200])
    fp32, int8 = zhbert.load("cws"), zhbert.load("cws", backend="int8")
    assert any("quantized" in type(m).__module__ for m in int8.model.modules())
    assert not any("quantized" in type(m).__module__ for m in fp32.model.modules())
    assert int8.head is int8.model.head
    want = {(k, w.start, w.end) for k, ws in enumerate(fp32(texts)) for w in ws}
    got = {(k, w.start, w.end) for k, ws in enumerate(int8(texts)) for w in ws}
    assert len(want & got) / len(want) >= 0.98
    with pytest.raises(ValueError, match="backend must be one of torch, int8, onnx, onnx-int8"):
        zhbert.load("cws", backend="tensorrt")
    with pytest.raises(ValueError, match="CPU only"):
        zhbert.load("cws", device="cuda", backend="int8")


@pytest.mark.parametrize("name", ["cws", "ner", "tagging", "base"])
def test_lone_surrogate_is_refused_by_position(name):
    import zhbert

    pred = zhbert.load(name)
    run = pred.fill_mask if name == "base" else pred
    with pytest.raises(ValueError, match=r"input 1, character 2: lone surrogate U\+D800"):
        run(["北京[MASK]" if name == "base" else "北京", "北京\ud800上海"])


def test_lone_surrogate_in_a_pair_names_its_side():
    import zhbert

    with pytest.raises(ValueError, match=r"input 0, text b, character 1: lone surrogate U\+DFFF"):
        zhbert.load("matching")(("好", "a\udfffb"))


def test_a_prediction_call_runs_without_cyclic_collections_and_leaves_the_collector_as_it_was(models, pd_sentences, monkeypatch):
    """Prediction pauses the cyclic garbage collector (a batch's spans set off full passes over
    the whole process), and gives it back enabled, also when the call fails inside."""
    import gc

    cws = zhbert.load(str(models["cws"]))
    predict, seen = cws._predict, []

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return predict(*args, **kwargs)

    monkeypatch.setattr(cws, "_predict", spy)
    words = cws(list(pd_sentences[:50]), batch_size=16)
    assert len(words) == 50 and seen == [False] and gc.isenabled()
    monkeypatch.setattr(cws, "_predict", lambda *a, **k: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        cws(["北京"])
    assert gc.isenabled()  # a failure inside the call restores it
    gc.disable()
    try:
        monkeypatch.setattr(cws, "_predict", spy)
        cws(["北京"])
        assert not gc.isenabled()  # a caller's own choice is kept
    finally:
        gc.enable()


def test_every_size_a_call_takes_is_bounded_and_named(models):
    from zhbert.api import MAX_MASKS
    from zhbert.text import MAX_TEXT_CHARS

    segmenter = zhbert.load(str(models["cws"]))
    with pytest.raises(ValueError, match=f"input 1: {MAX_TEXT_CHARS + 1:,} characters; one text takes up to {MAX_TEXT_CHARS:,}"):
        segmenter(["今天天气很好。", "啊" * (MAX_TEXT_CHARS + 1)])
    matcher = zhbert.load(str(models["matching"]))
    with pytest.raises(ValueError, match="input 0, text b: "):
        matcher(("今天天气怎么样", "啊" * (MAX_TEXT_CHARS + 1)))
    masked = zhbert.load(str(models["base"]))
    assert len(masked.fill_mask("北京是中国的[MASK]都。" * MAX_MASKS)) == MAX_MASKS
    with pytest.raises(ValueError, match=f"the text has {MAX_MASKS + 1} \\[MASK\\]s; one text takes up to {MAX_MASKS}"):
        masked.fill_mask("[MASK]" * (MAX_MASKS + 1))
