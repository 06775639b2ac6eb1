"""Word, entity and phrase units for a document, computed once per corpus.

Runs inside ``datasets.map(num_proc=...)``; the collator only samples. Word
boundaries come from ``rjieba`` (jieba-rs: jieba's dictionary and HMM in Rust,
~15x faster) when it is installed and no user dictionary is given, else from a
private ``jieba.Tokenizer`` (so user dictionaries never leak between corpora);
``bench/word_boundaries.py`` measures how often the two agree. Entity and phrase units (ERNIE 1.0 knowledge masking)
from jieba's POS tags, optional gold spans and an optional user dictionary.

Phrase rule (documented chunking, applied to runs of jieba words not inside an
entity): a numeral followed by a classifier (``m q``: 三 个), and 2-4 consecutive
nominal words (POS ``n``, ``nz``, ``vn``, ``an``, ``ng``: 经济 体制 改革) form one
phrase unit. Entities: POS ``nr`` person, ``ns`` place, ``nt`` organisation,
``nz`` other proper noun; consecutive ``nr`` words form one person.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

__all__ = ["word_spans", "word_backend", "pos_spans", "ernie_spans", "token_units", "UNIT_SPANS", "ENTITY_POS", "NOMINAL_POS"]

ENTITY_POS = {"nr", "ns", "nt", "nz", "nrt", "nrfg"}
NOMINAL_POS = {"n", "nz", "vn", "an", "ng"}


@lru_cache(maxsize=4)
def _jieba(user_dict: str | None = None):
    import jieba

    jieba.setLogLevel(logging.WARNING)
    tok = jieba.Tokenizer()
    tok.initialize()
    if user_dict:
        tok.load_userdict(user_dict)
    return tok


@lru_cache(maxsize=4)
def _posseg(user_dict: str | None = None):
    import jieba.posseg

    return jieba.posseg.POSTokenizer(_jieba(user_dict))


def word_backend(user_dict: str | None = None, backend: str = "auto") -> str:
    """``rjieba`` or ``jieba``: ``auto`` takes rjieba when installed and no user dictionary is given
    (rjieba cannot load one)."""
    if backend not in ("auto", "rjieba", "jieba"):
        raise ValueError(f"word backend must be auto, rjieba or jieba, got {backend!r}")
    if backend == "auto":
        import importlib.util

        return "rjieba" if user_dict is None and importlib.util.find_spec("rjieba") else "jieba"
    if backend == "rjieba" and user_dict is not None:
        raise ValueError("rjieba cannot load a user dictionary; use backend='jieba'")
    return backend


def word_spans(text: str, user_dict: str | None = None, backend: str = "auto") -> list[tuple[int, int]]:
    """Word spans ``(start, end)`` in ``text`` from jieba's dictionary with HMM for unknown words."""
    if word_backend(user_dict, backend) == "rjieba":
        import rjieba

        return [(s, e) for _, s, e in rjieba.tokenize(text, hmm=True)]
    return [(s, e) for _, s, e in _jieba(user_dict).tokenize(text)]


def pos_spans(text: str, user_dict: str | None = None) -> list[tuple[int, int, str]]:
    """jieba words with POS tags as ``(start, end, pos)``."""
    out, pos = [], 0
    for pair in _posseg(user_dict).cut(text):
        w = pair.word
        out.append((pos, pos + len(w), pair.flag))
        pos += len(w)
    return out


def ernie_spans(
    text: str,
    gold_entities: list[tuple[int, int]] | None = None,
    user_dict: str | None = None,
) -> list[tuple[int, int, str]]:
    """Units over ``text``: ``(start, end, kind)``, kind in word/entity/phrase.

    Gold entity spans (e.g. People's Daily ``nr/ns/nt``) win over jieba's; words
    overlapping a gold entity are absorbed into it.
    """
    words = pos_spans(text, user_dict)
    units: list[tuple[int, int, str]] = []
    gold = sorted(gold_entities or [])
    gi = 0
    i = 0
    while i < len(words):
        s, e, p = words[i]
        while gi < len(gold) and gold[gi][1] <= s:
            gi += 1
        if gi < len(gold) and gold[gi][0] < e:  # word touches a gold entity: take the entity
            gs, ge = gold[gi]
            start = min(gs, s)
            while i < len(words) and words[i][0] < ge:
                i += 1
            end = max(ge, words[i - 1][1])
            units.append((start, end, "entity"))
            gi += 1
            continue
        if p in ENTITY_POS:
            j = i + 1
            if p.startswith("nr"):
                while j < len(words) and words[j][2].startswith("nr") and not _touches(gold, gi, words[j]):
                    j += 1
            units.append((s, words[j - 1][1], "entity"))
            i = j
            continue
        if p == "m" and i + 1 < len(words) and words[i + 1][2] == "q" and not _touches(gold, gi, words[i + 1]):
            units.append((s, words[i + 1][1], "phrase"))
            i += 2
            continue
        if p in NOMINAL_POS:
            j = i + 1
            while j < len(words) and j - i < 4 and words[j][2] in NOMINAL_POS and not _touches(gold, gi, words[j]):
                j += 1
            units.append((s, words[j - 1][1], "phrase" if j - i > 1 else "word"))
            i = j
            continue
        units.append((s, e, "word"))
        i += 1
    return units


def _touches(gold, gi, word) -> bool:
    return gi < len(gold) and gold[gi][0] < word[1]


def token_units(token_offsets: list[tuple[int, int]], spans: list[tuple[int, int]]) -> list[int]:
    """Index of the span holding each token's start (spans sorted, covering text)."""
    starts = [s for s, _ in spans]
    out = []
    for s, _ in token_offsets:
        k = bisect.bisect_right(starts, s) - 1
        out.append(max(k, 0))
    return out


def _ernie_unit_spans(text: str, user_dict: str | None = None) -> list[tuple[int, int]]:
    return [(s, e) for s, e, _ in ernie_spans(text, user_dict=user_dict)]


class UnitKind(NamedTuple):
    label: str  # how messages name these units
    spans: Callable[..., list[tuple[int, int]]]  # (text, user_dict) -> character spans of the units


# unit column -> how to find its units in a text; a masking strategy names the columns it
# needs (``Masker.needs_units``), and corpus preparation and the portable corpus handle
# exactly those
UNIT_SPANS = {"word_ids": UnitKind("word", word_spans), "ernie_ids": UnitKind("ERNIE", _ernie_unit_spans)}
