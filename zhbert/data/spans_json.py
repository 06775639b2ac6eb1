"""CLUENER-2020 style JSON span files.

Records ``{"text": ..., "label": {type: {mention: [[start, end], ...]}}}`` with
*inclusive* end offsets, pretty-printed one object after another (our copy) or one
per line (the original release). We convert to end-exclusive spans, check that
``text[start:end]`` equals the mention, and derive BIO tags per character.
The test split has no ``label`` key: such records get no entities.
"""

from __future__ import annotations

from datasets import ClassLabel, Dataset, Features, List, Value

from ..errors import DataFormatError, clip
from ..tags import labels_for, spans_to_tags
from .build import build_dataset
from .char_tagged import ENTITY_FEATURE
from .jsonio import iter_json_records, require
from .source import read_text

__all__ = ["read_cluener", "CLUENER_TYPES"]

CLUENER_TYPES = ["address", "book", "company", "game", "government", "movie", "name", "organization", "position", "scene"]


def _gen(paths, policy, types):
    (path,) = paths
    allowed = set(types)
    for k, (line, rec) in enumerate(iter_json_records(read_text(path), path)):
        try:
            text = require(rec, "text", str, path, line)
            label = rec.get("label", {})  # the test split has no "label"; a present one must be an object
            if not isinstance(label, dict):
                raise DataFormatError(path, line, "field 'label' should be an object {type: {mention: [[start, end]]}}")
            spans = []
            for typ, mentions in label.items():
                if typ not in allowed:
                    raise DataFormatError(path, line, f"unknown entity type {typ!r} (known: {', '.join(types)})")
                if not isinstance(mentions, dict):
                    raise DataFormatError(path, line, f"entities of type {typ!r} should be an object {{mention: [[start, end]]}}")
                for mention, positions in mentions.items():
                    if not isinstance(positions, list):
                        raise DataFormatError(
                            path, line, f"{typ} {clip(mention)}: positions {str(positions)[:40]} should be a list of [start, end]"
                        )
                    for pos in positions:
                        if not (
                            isinstance(pos, list) and len(pos) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in pos)
                        ):
                            raise DataFormatError(path, line, f"{typ} {clip(mention)}: position {pos!r} is not [start, end]")
                        s, e = pos[0], pos[1] + 1  # inclusive end in the file
                        if not 0 <= s < e <= len(text):
                            raise DataFormatError(path, line, f"{typ} {clip(mention)}: span {pos} outside a text of {len(text)} chars")
                        if text[s:e] != mention:
                            raise DataFormatError(path, line, f"{typ} {clip(mention)}: span {pos} covers {clip(text[s:e])}")
                        spans.append((typ, s, e))
            flat, nested = _flatten(spans)
            tags = spans_to_tags(len(text), flat, "BIO")
        except DataFormatError as e:
            policy.handle(e)
            continue
        yield {
            "id": k,
            "text": text,
            "entities": [{"type": t, "start": s, "end": e, "text": text[s:e]} for t, s, e in flat],
            "nested_entities": [{"type": t, "start": s, "end": e, "text": text[s:e]} for t, s, e in nested],
            "tokens": list(text),
            "tags": tags,
        }


def _flatten(spans):
    """Outermost spans for flat BIO tags; mentions nested inside them apart.

    CLUENER nests a few mentions (a company inside a book title); flat tagging
    keeps the longer, earlier span, the inner ones stay in ``nested_entities``.
    """
    flat, nested = [], []
    for span in sorted(spans, key=lambda x: (x[1], -(x[2] - x[1]))):
        if flat and span[1] < flat[-1][2]:
            nested.append(span)
        else:
            flat.append(span)
    return flat, nested


def read_cluener(path: str, types: list[str] | None = None, on_error: str = "raise") -> Dataset:
    """CLUENER JSON into ``id, text, entities, nested_entities, tokens, tags``.

    Offsets are end-exclusive (the file's are inclusive).
    """
    types = list(types or CLUENER_TYPES)
    features = Features(
        {
            "id": Value("int32"),
            "text": Value("string"),
            "entities": ENTITY_FEATURE,
            "nested_entities": ENTITY_FEATURE,
            "tokens": List(Value("string")),
            "tags": List(ClassLabel(names=labels_for(types, "BIO"))),
        }
    )
    return build_dataset(_gen, features, [str(path)], on_error=on_error, types=types)
