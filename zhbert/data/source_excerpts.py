"""A long-document classification task built from real text: which source of the raw
pretraining corpora (``../shared/corpora``) a 1,000-1,200 character excerpt comes from.

Issue 20's question 4 asks how a classifier should read texts longer than its window
(truncation, or overlapping windows pooled by mean or mean-max), and no labelled dataset
here has documents that long. The five corpus sources with hundreds of documents of
1,000+ characters give one, with labels that need no annotator:

==============================  ==============================================
label                           source folder (genre)
==============================  ==============================================
``news``                        ``xinwenlianbo_cctv`` (TV news transcripts)
``commentary``                  ``bedtimenews_transcripts`` (current-affairs talk)
``law``                         ``laws_lawrefbook`` (statutes, interpretations)
``qa``                          ``zhihu_archive`` (Zhihu answers and articles)
``novel``                       ``classical_novels_sample`` (Ming-Qing novels)
==============================  ==============================================

Each document gives at most one excerpt: it starts after a sentence end (。！？ or the
document's start) drawn at random, runs ``EXCERPT_CHARS`` characters and is cut back to
the last sentence end if that leaves at least ``MIN_CHARS``. Documents shorter than
``MIN_CHARS`` are not used. Per label, the eligible documents (in file and line order) are
shuffled with a fixed seed and cut into ``TEST_PER_LABEL`` test, ``DEV_PER_LABEL`` dev and
``TRAIN_PER_LABEL`` train documents, so no document gives text to two splits; each split is
then shuffled, so that its first rows hold every label.

Caveat, written into the dataset's notes: the bundled encoders were pretrained on all of
these documents (masked LM, without the source label). That makes the task easier for them
than for a model that never read the text, but it is the same for every way of reading a
long text, which is what the study compares.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from ..errors import DataFormatError
from .paths import corpora_dir

__all__ = ["SOURCE_LABELS", "source_excerpts", "excerpt", "long_documents_of", "document_at", "EXCERPT_CHARS", "MIN_CHARS"]

SOURCE_LABELS = {
    "news": "xinwenlianbo_cctv",
    "commentary": "bedtimenews_transcripts",
    "law": "laws_lawrefbook",
    "qa": "zhihu_archive",
    "novel": "classical_novels_sample",
}
EXCERPT_CHARS = 1200
MIN_CHARS = 1000
TRAIN_PER_LABEL, DEV_PER_LABEL, TEST_PER_LABEL = 200, 40, 100
SEED = 13

_SENTENCE_END = re.compile(r"[。！？!?]")


def excerpt(text: str, rng: random.Random, length: int = EXCERPT_CHARS, min_chars: int = MIN_CHARS) -> str:
    """A piece of ``text`` of ``min_chars``-``length`` characters starting at a random sentence
    start (the last sentence end inside it closes it when that keeps ``min_chars``)."""
    if len(text) < min_chars:
        raise ValueError(f"a text of {len(text)} characters has no excerpt of {min_chars}")
    starts = [0] + [m.end() for m in _SENTENCE_END.finditer(text) if len(text) - m.end() >= min_chars]
    begin = rng.choice(starts)
    piece = text[begin : begin + length]
    ends = [m.end() for m in _SENTENCE_END.finditer(piece) if m.end() >= min_chars]
    return piece[: ends[-1]] if ends else piece


def long_documents_of(folder: Path, min_chars: int = MIN_CHARS) -> list[tuple[str, int, str]]:
    """``(file, line, text)`` of every line of ``min_chars``+ characters in the folder's ``*.txt`` files
    (one line is one document in ``../shared/corpora``)."""
    files = sorted(folder.glob("*.txt"))
    if not files:
        raise DataFormatError(str(folder), None, "no .txt files: this corpus source is needed for the long-document datasets")
    docs = []
    for f in files:
        with open(f, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                text = line.rstrip("\n")
                if len(text) >= min_chars:
                    docs.append((f.name, n, text))
    return docs


def document_at(source: str, root: Path | None = None) -> str:
    """The corpus document a row's ``source`` (``folder/file:line``) names, for tracing an excerpt back."""
    root = corpora_dir() if root is None else Path(root)
    where, line = source.rsplit(":", 1)
    with open(root / where, encoding="utf-8") as f:
        for n, text in enumerate(f, 1):
            if n == int(line):
                return text.rstrip("\n")
    raise DataFormatError(str(root / where), int(line), "no such line")


def source_excerpts(
    root: Path | None = None,
    train: int = TRAIN_PER_LABEL,
    dev: int = DEV_PER_LABEL,
    test: int = TEST_PER_LABEL,
    seed: int = SEED,
) -> tuple[list[str], dict[str, list[dict]]]:
    """The labels and ``{"train", "dev", "test"}`` rows ``{"text", "label", "source"}``
    (``source``: ``folder/file:line`` of the document, for tracing an excerpt back)."""
    root = corpora_dir() if root is None else Path(root)
    labels = list(SOURCE_LABELS)
    splits: dict[str, list[dict]] = {"train": [], "dev": [], "test": []}
    for label_id, (label, folder) in enumerate(SOURCE_LABELS.items()):
        docs = long_documents_of(root / folder)
        need = train + dev + test
        if len(docs) < need:
            raise DataFormatError(str(root / folder), None, f"{len(docs)} documents of {MIN_CHARS}+ characters, {need} needed")
        rng = random.Random(f"{seed}/{label}")  # a string seed: the same draw on every Python
        rng.shuffle(docs)
        cut = {"test": docs[:test], "dev": docs[test : test + dev], "train": docs[test + dev : need]}
        for split, chosen in cut.items():
            for file, line, text in chosen:
                row = {"text": excerpt(text, rng), "label": label_id, "source": f"{folder}/{file}:{line}"}
                splits[split].append(row)
    for split, rows in splits.items():  # labels interleaved: the first N rows of a split (tests, presets) hold every label
        random.Random(f"{seed}/{split}").shuffle(rows)
    return labels, splits
