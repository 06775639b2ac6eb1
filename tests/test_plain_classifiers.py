"""Classifier folders saved by plain transformers (``run_ner.py``'s ``BertForTokenClassification``,
``run_glue.py``'s ``BertForSequenceClassification``, checkpoints such as CLUENER taggers with B/I/S
tags) open in ``zhbert.load`` as zhbert's heads, with offsets, windows and user dictionaries.
Before, each was read as a masked LM and refused as one "without a masked-LM head"."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest
import torch

import zhbert
from zhbert.errors import ModelLoadError

CLUENER_TAGS = ["O", "B-address", "I-address", "S-address", "B-name", "I-name", "S-name", "B-company", "I-company"]


def _stock(cls, tokenizer, path, labels, model_type="bert", seed=0):
    from transformers import AutoConfig

    torch.manual_seed(seed)
    config = AutoConfig.for_model(
        model_type,
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        **({"embedding_size": 32} if model_type == "electra" else {}),
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
    )
    model = cls(config).eval()
    with torch.no_grad():  # a classifier that answers more than one label on real text
        model.classifier.bias.copy_(torch.linspace(-1, 1, len(labels))) if hasattr(model.classifier, "bias") else None
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return model


def test_a_plain_token_classifier_tags_as_transformers_does_with_offsets(tokenizer, pd_sentences, tmp_path, caplog):
    from transformers import BertForTokenClassification

    from zhbert.tags import lenient_spans

    folder = tmp_path / "cluener-tagger"
    stock = _stock(BertForTokenClassification, tokenizer, folder, CLUENER_TAGS)
    with caplog.at_level(logging.WARNING):
        ner = zhbert.load(str(folder))
    assert type(ner).__name__ == "EntityRecognizer" and ner.head.scheme == "BIOES"
    assert "LOAD REPORT" not in caplog.text and "MISSING" not in caplog.text  # no pooler in a token classifier, none needed
    texts = [t for t in pd_sentences if 8 <= len(t) <= 40 and all("\u4e00" <= c <= "\u9fff" for c in t)][:12]
    found = 0
    for text, spans in zip(texts, ner(texts)):
        enc = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            best = stock(**enc).logits[0, 1:-1].argmax(-1).tolist()  # one token a character (Han only)
        want = [(t, s, e) for t, s, e in lenient_spans([CLUENER_TAGS[i] for i in best], "BIOES")]
        assert [(s.label, s.start, s.end) for s in spans] == want, text
        assert all(text[s.start : s.end] == s.text for s in spans)
        found += len(spans)
    assert found > 0
    info = subprocess.run([sys.executable, "-m", "zhbert", "info", str(folder)], capture_output=True, text=True, timeout=300)
    head = json.loads(info.stdout)["task_head"]  # which types a user dictionary may name
    assert head == {"kind": "token", "labels": CLUENER_TAGS, "scheme": "BIOES", "types": ["address", "company", "name"]}
    listed = zhbert.load(str(folder), user_dict=["人民日报\tcompany"])("人民日报发表社论")
    assert ("人民日报", "company") in [(s.text, s.label) for s in listed]


def test_a_plain_sequence_classifier_scores_as_transformers_does_and_reads_pairs_when_asked(tokenizer, tmp_path):
    from transformers import BertForSequenceClassification

    folder = tmp_path / "lcqmc-classifier"
    stock = _stock(BertForSequenceClassification, tokenizer, folder, ["不相似", "相似"])
    texts = ["花呗怎么还款", "今天天气怎么样"], ["花呗如何还钱", "今天天气如何"]
    classifier = zhbert.load(str(folder))
    with torch.no_grad():
        want = stock(**tokenizer(texts[0], return_tensors="pt", padding=True)).logits.softmax(-1)
    got = classifier(texts[0])
    for w, g in zip(want, got):
        assert {x.label: x.score for x in g.scores} == pytest.approx({"不相似": float(w[0]), "相似": float(w[1])}, abs=1e-5)
    with pytest.raises(TypeError, match="this model takes texts, not a \\(text_a, text_b\\) pair"):
        classifier([tuple(pair) for pair in zip(*texts)])
    matcher = zhbert.load(str(folder), pairs=True)
    with torch.no_grad():
        want = stock(**tokenizer(texts[0], texts[1], return_tensors="pt", padding=True)).logits.softmax(-1)
    for w, g in zip(want, matcher(list(zip(*texts)))):
        assert {x.label: x.score for x in g.scores} == pytest.approx({"不相似": float(w[0]), "相似": float(w[1])}, abs=1e-5)
    r = subprocess.run(
        [sys.executable, "-m", "zhbert", "predict", "--model", str(folder), "--pairs", "-"],
        input="花呗怎么还款\t花呗如何还钱\n", capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["text_b"] == "花呗如何还钱"


def test_plain_classifiers_zhbert_cannot_compute_are_refused_by_name(tokenizer, tmp_path):
    from transformers import BertForTokenClassification, ElectraForSequenceClassification

    old_style = tmp_path / "bert-ner"  # BERT-NER repositories of 2019 tag [CLS], [SEP] and word pieces
    _stock(BertForTokenClassification, tokenizer, old_style, ["O", "B-PER", "I-PER", "X", "[CLS]", "[SEP]"])
    with pytest.raises(
        ModelLoadError, match=rf"{old_style / 'config.json'}: its labels \(O, B-PER, I-PER, X, \[CLS\], \[SEP\]\) are no tag scheme"
    ):
        zhbert.load(str(old_style))
    info = subprocess.run([sys.executable, "-m", "zhbert", "info", str(old_style)], capture_output=True, text=True, timeout=300)
    assert json.loads(info.stdout)["task_head"].startswith(f"not read by zhbert.load: {old_style / 'config.json'}: its labels")
    unnamed = tmp_path / "unnamed"  # id2label left at transformers' LABEL_0, LABEL_1, ...
    _stock(BertForTokenClassification, tokenizer, unnamed, ["LABEL_0", "LABEL_1", "LABEL_2"])
    with pytest.raises(
        ModelLoadError,
        match="its labels \\(LABEL_0, LABEL_1, LABEL_2\\) are no tag scheme .*placeholders.*write them in config.json as id2label",
    ):
        zhbert.load(str(unnamed))
    electra = tmp_path / "electra-classifier"
    _stock(ElectraForSequenceClassification, tokenizer, electra, ["neg", "pos"], model_type="electra")
    with pytest.raises(
        ModelLoadError, match="its ElectraForSequenceClassification puts layers on \\[CLS\\] that zhbert's classifier does not have"
    ):
        zhbert.load(str(electra))
    shipped = subprocess.run(
        [sys.executable, "-m", "zhbert", "export", str(electra), str(tmp_path / "shipped")], capture_output=True, text=True, timeout=300
    )
    assert shipped.returncode == 0, shipped.stderr  # what zhbert does not read as a head still ships, as it is, in fp16
    assert "zhbert_head" not in json.loads((tmp_path / "shipped" / "config.json").read_text(encoding="utf-8"))
    with pytest.raises(
        ValueError, match="pairs=True reads a plain transformers sequence classifier as a matching model; 'cws' loads as Segmenter"
    ):
        zhbert.load("cws", pairs=True)
