"""Mention replacement: new NER training sentences made by swapping entities for others of the same type.

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


def mentions_by_type(rows: list[dict], scheme: str) -> dict[str, list[str]]:
    """Every type's distinct mention texts in ``rows`` (``text`` + per-character ``tags``), sorted so a seed fixes the draw."""
    found: dict[str, set[str]] = {}
    for r in rows:
        for typ, s, e in tags_to_spans(r["tags"], scheme):
            found.setdefault(typ, set()).add(r["text"][s:e])
    return {typ: sorted(texts) for typ, texts in found.items()}


def mention_replacement(rows: list[dict], scheme: str, copies: int, seed: int) -> list[dict]:
    """``copies`` passes over ``rows``; each pass yields, for every sentence with an entity, a copy in
    which each entity is replaced with probability 0.5 by a random training mention of its type.
    A copy identical to its sentence (nothing drawn, or a mention drawn as itself) is left out."""
    if copies < 0:
        raise ValueError(f"mention replacement: copies must be 0 or more, got {copies}")
    pool = mentions_by_type(rows, scheme)
    rng = random.Random(seed)
    out = []
    for _ in range(copies):
        for r in rows:
            spans = tags_to_spans(r["tags"], scheme)
            if not spans:
                continue
            text, new_spans, cursor, shift = [], [], 0, 0
            for typ, s, e in spans:
                mention = r["text"][s:e]
                if rng.random() < REPLACE_PROBABILITY:
                    mention = rng.choice(pool[typ])
                text.append(r["text"][cursor:s] + mention)
                new_spans.append((typ, s + shift, s + shift + len(mention)))
                shift += len(mention) - (e - s)
                cursor = e
            copy = "".join(text) + r["text"][cursor:]
            if copy != r["text"]:
                out.append({"text": copy, "tags": spans_to_tags(len(copy), new_spans, scheme)})
    return out
