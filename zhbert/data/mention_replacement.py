"""Mention replacement: new NER training sentences made by swapping entities for others of the same type,
and mention runs: copies in which one entity becomes several of its type written back to back.

Dai & Adel (COLING 2020, "An Analysis of Simple Data Augmentation for Named Entity Recognition")
replace each mention of a training sentence, with a fixed probability, by a random mention of the
same type from the training split, and find it helps most where the training set is small. The
sentence around the entity stays as it was, so the copy teaches the head that the context, not the
memorised name, marks the entity.
"""

from __future__ import annotations

import random

from ..tags import spans_to_tags, tags_to_spans

# The share of a sentence's mentions replaced in a copy: the paper's binomial draw per mention.
REPLACE_PROBABILITY = 0.5
# How many mentions a run of names holds (inclusive bounds, drawn uniformly): lists in news text run
# longer, but two to five already puts each name's start after another name's end.
RUN_LENGTHS = (2, 5)


def mentions_by_type(rows: list[dict], scheme: str) -> dict[str, list[str]]:
    """Every type's distinct mention texts in ``rows`` (``text`` + per-character ``tags``), sorted so a seed fixes the draw."""
    found: dict[str, set[str]] = {}
    for r in rows:
        for typ, s, e in tags_to_spans(r["tags"], scheme):
            found.setdefault(typ, set()).add(r["text"][s:e])
    return {typ: sorted(texts) for typ, texts in found.items()}


def mention_replacement(rows: list[dict], scheme: str, copies: int, seed: int, pool: dict[str, list[str]] | None = None) -> list[dict]:
    """``copies`` passes over ``rows``; each pass yields, for every sentence with an entity, a copy in
    which each entity is replaced with probability 0.5 by a random mention of its type from ``pool``
    (default: the mentions of ``rows``, :func:`mentions_by_type`). With a ``pool`` of names from
    elsewhere (a list of companies, say), entities of a type it lacks stay as they are, so every name
    a copy brings in is one of the list's. A copy identical to its sentence (nothing drawn, or a
    mention drawn as itself) is left out."""
    if copies < 0:
        raise ValueError(f"mention replacement: copies must be 0 or more, got {copies}")
    pool = mentions_by_type(rows, scheme) if pool is None else pool
    rng = random.Random(seed)
    out = []
    for _ in range(copies):
        for r in rows:
            spans = tags_to_spans(r["tags"], scheme)
            if not any(pool.get(typ) for typ, _, _ in spans):
                continue
            drawn = {
                i: [rng.choice(pool[typ])] for i, (typ, _, _) in enumerate(spans) if pool.get(typ) and rng.random() < REPLACE_PROBABILITY
            }
            copy = _rewritten(r, spans, drawn, scheme)
            if copy["text"] != r["text"]:
                out.append(copy)
    return out


def mention_runs(rows: list[dict], scheme: str, kinds: list[str], seed: int, pool: dict[str, list[str]] | None = None) -> list[dict]:
    """One copy of each sentence that has a mention of a type in ``kinds``, in which one such mention,
    drawn at random, becomes a run of RUN_LENGTHS mentions of its type written back to back (each its
    own entity), drawn from ``pool`` (default: the mentions of ``rows``, :func:`mentions_by_type`).

    Why: news text lists people without a separator (MSRA's test files: 31.9% of the people stand in
    such runs, its training split 1.8%), and a tagger that has rarely seen two names touch joins them
    into one; a run of names seen one at a time teaches where one ends and the next begins."""
    pool = mentions_by_type(rows, scheme) if pool is None else pool
    missing = [k for k in kinds if not pool.get(k)]
    if missing or not kinds:
        what = ", ".join(missing) or "(none given)"
        raise ValueError(f"mention runs: no mentions of type {what} to draw from (types: {', '.join(sorted(pool))})")
    rng = random.Random(seed)
    out = []
    for r in rows:
        spans = tags_to_spans(r["tags"], scheme)
        candidates = [i for i, (typ, _, _) in enumerate(spans) if typ in kinds]
        if candidates:
            i = rng.choice(candidates)
            out.append(_rewritten(r, spans, {i: [rng.choice(pool[spans[i][0]]) for _ in range(rng.randint(*RUN_LENGTHS))]}, scheme))
    return out


def _rewritten(row: dict, spans: list[tuple[str, int, int]], drawn: dict[int, list[str]], scheme: str) -> dict:
    """``row`` with its ``i``-th span replaced by the mentions ``drawn[i]`` (back to back, each an entity
    of that span's type); the text around the spans and the other spans stay as they were."""
    text, new_spans, cursor, at = [], [], 0, 0
    for i, (typ, s, e) in enumerate(spans):
        text.append(row["text"][cursor:s])
        at += s - cursor
        for mention in drawn.get(i, [row["text"][s:e]]):
            text.append(mention)
            new_spans.append((typ, at, at + len(mention)))
            at += len(mention)
        cursor = e
    copy = "".join(text) + row["text"][cursor:]
    return {"text": copy, "tags": spans_to_tags(len(copy), new_spans, scheme)}
