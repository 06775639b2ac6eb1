"""The long-document classification dataset (``tagging/sources``): excerpts of the real
corpora, labelled by source, no document in two splits (issue 20, question 4)."""

import random
from collections import Counter

import pytest

from zhbert.data.source_excerpts import MIN_CHARS, SOURCE_LABELS, document_at, excerpt


@pytest.fixture(scope="module")
def sources():
    from zhbert.data.tasks import load_task_data

    return load_task_data("tagging", "sources")


def test_every_excerpt_is_long_real_text_of_its_labelled_source(sources):
    assert sources.labels == list(SOURCE_LABELS)
    assert (len(sources.train), len(sources.dev), len(sources.test)) == (1000, 200, 500)
    for split in (sources.train, sources.dev, sources.test):
        assert Counter(r["label"] for r in split) == Counter({k: len(split) // 5 for k in range(5)})
        assert all(1000 <= len(r["text"]) <= 1200 for r in split)
    for r in sources.test[:40] + sources.train[:10]:  # traced back to the document it was cut from
        assert r["source"].startswith(SOURCE_LABELS[sources.labels[r["label"]]] + "/")
        assert r["text"] in document_at(r["source"])
    # the first rows of a split mix the labels (tests and the tiny preset read only those)
    assert len({r["label"] for r in sources.test[:16]}) >= 4


def test_no_document_gives_text_to_two_splits(sources):
    docs = [{r["source"] for r in split} for split in (sources.train, sources.dev, sources.test)]
    assert sum(map(len, docs)) == 1700 and not (docs[0] & docs[1] or docs[0] & docs[2] or docs[1] & docs[2])


def test_an_excerpt_starts_after_a_sentence_end_and_closes_at_one():
    text = "".join(f"第{i}句话说的是一件事情，内容不长也不短。" for i in range(200))  # 4,400 characters
    for seed in range(20):
        piece = excerpt(text, random.Random(seed), length=1200, min_chars=1000)
        assert 1000 <= len(piece) <= 1200 and piece in text
        assert piece.startswith("第") and piece.endswith("。")
    with pytest.raises(ValueError, match="999 characters"):
        excerpt("字" * 999, random.Random(0))
    assert MIN_CHARS == 1000
