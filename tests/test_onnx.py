"""`zhbert export --onnx` and `zhbert.load(..., backend="onnx")` on real People's Daily sentences: the
encoder runs in ONNX Runtime, everything around it as in torch, so the answers are torch's."""

from __future__ import annotations

import subprocess
import sys

import pytest

import zhbert
from zhbert.data.peoples_daily import NER_LABELS
from zhbert.errors import ModelLoadError
from zhbert.heads import HeadConfig, new_head, save_head

pytest.importorskip("onnxruntime")
pytest.importorskip("onnxscript")


def _zhbert(*args):
    return subprocess.run([sys.executable, "-m", "zhbert", *map(str, args)], capture_output=True, text=True, timeout=600)


def _spans(results):
    return [[(s.start, s.end, s.label) for s in spans] for spans in results]


@pytest.fixture(scope="module")
def onnx_heads(tiny_encoder, tokenizer, tmp_path_factory):
    """Tiny heads of every kind, each exported with --onnx --int8 as a user would."""
    import torch

    root = tmp_path_factory.mktemp("onnx_heads")
    heads = {
        # word features from the lexicon and bigrams, a BiLSTM, a CRF and every layer mixed: all of it around the graph
        "ner": HeadConfig(
            kind="token",
            labels=NER_LABELS,
            scheme="BIO",
            crf=True,
            lexicon="jieba",
            lexicon_dim=8,
            bigram_dim=4,
            bilstm_layers=1,
            bilstm_hidden=8,
            representation="scalar-mix",
            window=64,
        ),  # fmt: skip
        "tagging": HeadConfig(kind="sequence", labels=["neutral", "angry", "happy"], window=64),
        "matching": HeadConfig(kind="pair", labels=["0", "1"], window=64),
    }
    out = {}
    for name, head in heads.items():
        torch.manual_seed(0)
        saved = save_head(new_head(tiny_encoder, head), tokenizer, root / f"{name}-torch")
        r = _zhbert("export", saved, root / name, "--onnx", "--int8")
        assert r.returncode == 0, r.stderr[-2000:]
        assert r.stderr.strip() == "" or "Traceback" not in r.stderr
        out[name] = root / name
    return out


def test_export_writes_the_graphs_beside_the_weights_and_says_nothing_else(onnx_heads):
    folder = onnx_heads["ner"]
    assert {p.name for p in (folder / "onnx").iterdir()} == {"model.onnx", "model_qint8.onnx", "zhbert_onnx.json"}
    r = _zhbert("export", folder, folder.parent / "again", "--onnx")
    assert r.returncode == 0 and r.stdout.startswith(f"exported {folder} -> ") and "exporting" not in r.stdout.lower()
    assert "warn" not in r.stderr.lower(), r.stderr[-2000:]  # the exporter's notes and advice stay off the terminal


def test_onnx_gives_torch_s_entities_scores_and_labels(onnx_heads, pd_sentences):
    texts = pd_sentences[:60]
    torch_ner, onnx_ner = zhbert.load(str(onnx_heads["ner"])), zhbert.load(str(onnx_heads["ner"]), backend="onnx")
    a, b = torch_ner(texts), onnx_ner(texts)
    assert _spans(a) == _spans(b) and sum(map(len, a)) > 0  # a random tiny head still finds some spans
    assert all(abs(x.score - y.score) < 1e-4 for sa, sb in zip(a, b) for x, y in zip(sa, sb))
    for name, inputs in (("tagging", texts[:20]), ("matching", [(a[:25], b[:25]) for a, b in zip(texts[:20], texts[20:40])])):
        ta, tb = zhbert.load(str(onnx_heads[name]))(inputs), zhbert.load(str(onnx_heads[name]), backend="onnx")(inputs)
        every = [[(s.label, s.score) for s in x.scores] for x in ta], [[(s.label, s.score) for s in x.scores] for x in tb]
        assert [[label for label, _ in x] for x in every[0]] == [[label for label, _ in x] for x in every[1]]
        assert all(abs(p - q) < 1e-4 for x, y in zip(*every) for (_, p), (_, q) in zip(x, y))


def test_the_int8_graph_serves_and_keeps_offsets_exact(onnx_heads, pd_sentences):
    texts = pd_sentences[:30]
    for text, spans in zip(texts, zhbert.load(str(onnx_heads["ner"]), backend="onnx-int8")(texts)):
        assert all(text[s.start : s.end] == s.text for s in spans)


def test_bundled_cws_fast_segments_the_same_from_onnx(tmp_path, pd_sentences):
    r = _zhbert("export", "cws-fast", tmp_path / "cws-fast", "--onnx")
    assert r.returncode == 0, r.stderr[-2000:]
    texts = pd_sentences[:200]
    assert _spans(zhbert.load(str(tmp_path / "cws-fast"))(texts)) == _spans(zhbert.load(str(tmp_path / "cws-fast"), backend="onnx")(texts))


def test_a_stale_or_missing_graph_is_refused_by_name(onnx_heads, tiny_encoder, tokenizer, tmp_path):
    import shutil

    import torch

    stale = tmp_path / "stale"
    shutil.copytree(onnx_heads["tagging"], stale)
    model = zhbert.load(str(stale)).model
    with torch.no_grad():
        model.classifier.bias += 1  # retrained after the export, say
    save_head(model, tokenizer, stale)
    with pytest.raises(ModelLoadError, match="made from other weights than .*model.safetensors.*export the model again with --onnx"):
        zhbert.load(str(stale), backend="onnx")
    plain = save_head(new_head(tiny_encoder, HeadConfig(kind="sequence", labels=["a", "b"], window=64)), tokenizer, tmp_path / "plain")
    missing = r"onnx/model\.onnx: no such ONNX graph; export the model with it \(zhbert export MODEL DIR --onnx\) and load DIR"
    with pytest.raises(ModelLoadError, match=missing):
        zhbert.load(str(plain), backend="onnx")


def test_what_onnx_does_not_serve_is_one_line(onnx_heads, tmp_path):
    r = _zhbert("export", onnx_heads["tagging"], tmp_path / "a", "--int8")
    assert r.returncode == 1 and "--int8 quantises the ONNX graph: give --onnx with it" in r.stderr and "Traceback" not in r.stderr
    r = _zhbert("export", "base", tmp_path / "b", "--onnx")
    assert r.returncode == 1 and "--onnx exports task heads" in r.stderr and "Traceback" not in r.stderr
    assert "pretrained/base: --onnx" in r.stderr and ".staging" not in r.stderr  # the folder given, not the one being written
    assert not (tmp_path / "b").exists()  # nothing half-made left behind
    with pytest.raises(ValueError, match="backend='onnx' serves task heads exported with --onnx, not MaskedLM"):
        zhbert.load("base", backend="onnx")
    with pytest.raises(ValueError, match="runs on the CPU only"):
        zhbert.load(str(onnx_heads["tagging"]), backend="onnx", device="cuda")


def test_a_plain_transformers_classifier_exports_to_onnx_and_answers_as_before(tokenizer, pd_sentences, tmp_path):
    """A CLUENER tagger and a pair classifier saved by plain transformers: ``zhbert export --onnx`` writes
    their head's settings beside the graph (once refused as no task head), and the export answers as
    the folder did, the pair classifier with pairs=True."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertForTokenClassification

    def stock(cls, labels, path):
        torch.manual_seed(0)
        names = {"id2label": dict(enumerate(labels)), "label2id": {x: i for i, x in enumerate(labels)}}
        config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                            max_position_embeddings=64, **names)  # fmt: skip
        cls(config).save_pretrained(path)
        tokenizer.save_pretrained(path)
        return path

    tagger = stock(BertForTokenClassification, ["O", "B-name", "I-name", "S-name", "B-address", "I-address", "S-address"], tmp_path / "t")
    pairs = stock(BertForSequenceClassification, ["不相似", "相似"], tmp_path / "p")
    texts = [t for t in pd_sentences if 10 <= len(t) <= 50][:8]
    for src, dst in ((tagger, tmp_path / "t-onnx"), (pairs, tmp_path / "p-onnx")):
        r = _zhbert("export", src, dst, "--onnx", "--no-fp16")  # fp32 weights: the graph's answers are the folder's
        assert r.returncode == 0, r.stderr
    want = _spans(zhbert.load(str(tagger))(texts))
    assert _spans(zhbert.load(str(tmp_path / "t-onnx"), backend="onnx")(texts)) == want and any(want)
    short = [t for t in pd_sentences if 8 <= len(t) <= 25][:8]  # a pair fits the 64-token window whole
    both = list(zip(short[:4], short[4:]))
    want = [m.scores[0].score for m in zhbert.load(str(pairs), pairs=True)(both)]
    got = [m.scores[0].score for m in zhbert.load(str(tmp_path / "p-onnx"), backend="onnx", pairs=True)(both)]
    assert got == pytest.approx(want, abs=1e-4)
