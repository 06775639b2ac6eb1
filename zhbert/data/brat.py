"""brat's standoff annotation (the form brat, INCEpTION's export and the CCKS and Ruijin medical NER sets
use): a document's text in ``name.txt`` and its annotations beside it in ``name.ann``, one a line.

An entity is ``T1<TAB>TYPE START END<TAB>mention``, character offsets into the text, end exclusive. Flat
character tags hold neither a discontinuous entity (``T2<TAB>TYPE 0 2;5 7<TAB>...``) nor one across a line
break (the text is cut into its lines, the unit tagged); both are left out and counted. Relations, events,
attributes and notes (``R``, ``E``, ``A``/``M``, ``N``, ``#``, ``*``) are not entities: counted, not read.

brat's own server reads text with Python's universal newlines (a CRLF is one character), its older
releases without (two): where the mentions match the text only with CRLF kept, offsets count it as two.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import re
from collections import Counter
from pathlib import Path

from ..errors import DataFormatError, clip
from .source import _check_path, decode_utf8, iter_lines

logger = logging.getLogger(__name__)

__all__ = ["brat_documents", "read_brat", "is_brat_folder"]

_ENTITY = re.compile(r"T\S*\t(\S+) (\d+ \d+(?:;\d+ \d+)*)\t(.*)")
#: the first character of a line that is an annotation but not an entity
OTHER_ANNOTATIONS = {
    "R": "relations",
    "E": "events",
    "A": "attributes",
    "M": "attributes",
    "N": "normalisations",
    "#": "notes",
    "*": "equivalences",
}


def is_brat_folder(path: str) -> bool:
    p = Path(path)
    return p.is_dir() and any(p.glob("*.ann"))


def brat_documents(path: str) -> list[tuple[Path, Path]]:
    """``(ann, txt)`` pairs: of a folder's ``.ann`` files (sorted, with their ``.txt``), or of one ``.ann`` or
    ``.txt`` file and the other beside it."""
    p = Path(path)
    anns = sorted(p.glob("*.ann")) if p.is_dir() else [p.with_suffix(".ann")]
    if not anns:
        raise DataFormatError(path, None, "no .ann file: brat's annotations are name.ann beside name.txt")
    pairs = []
    for ann in anns:
        txt = ann.with_suffix(".txt")
        if not txt.is_file():
            raise DataFormatError(str(txt), None, f"not found: brat keeps {ann.name}'s text in {txt.name}, beside it")
        if not ann.is_file():
            raise DataFormatError(str(ann), None, f"not found: brat keeps {txt.name}'s annotations in {ann.name}, beside it")
        pairs.append((ann, txt))
    return pairs


def _entities(ann: Path) -> tuple[list[tuple[int, str, list[tuple[int, int]], str]], Counter]:
    """``(line, type, fragments, mention)`` of the ``.ann`` file's entities; its other annotations counted."""
    entities, others = [], Counter()
    for lineno, line in iter_lines(str(ann)):
        if not line.strip():
            continue
        if line[0] in OTHER_ANNOTATIONS:
            others[OTHER_ANNOTATIONS[line[0]]] += 1
            continue
        m = _ENTITY.fullmatch(line)
        if line[0] != "T" or m is None:
            raise DataFormatError(str(ann), lineno, f"{clip(line)} is not a brat annotation (an entity: T1<TAB>TYPE START END<TAB>mention)")
        typ, offsets, mention = m.groups()
        fragments = [tuple(map(int, f.split())) for f in offsets.split(";")]
        if any(e <= s for s, e in fragments):
            raise DataFormatError(str(ann), lineno, f"entity {clip(mention)}: an end at or before its start ({offsets})")
        entities.append((lineno, typ, fragments, mention))
    return entities, others


def _document_text(txt: Path, ann: Path, entities) -> str:
    """The text the entities' offsets count in: universal newlines, or CRLF kept where only that matches."""
    _check_path(txt)
    raw = decode_utf8(txt.read_bytes(), str(txt))
    texts = [raw.replace("\r\n", "\n").replace("\r", "\n")]
    if "\r" in raw:
        texts.append(raw)

    def mismatch(text):
        for lineno, _, fragments, mention in entities:
            if fragments[-1][1] > len(text):
                return lineno, f"entity {clip(mention)} ends at {fragments[-1][1]}, past the end of {txt.name} ({len(text):,} characters)"
            found = " ".join(text[s:e] for s, e in fragments)
            if found != mention:
                return lineno, f"{txt.name} holds {clip(found)} at {fragments[0][0]}-{fragments[-1][1]}, not the mention {clip(mention)}"
        return None

    problems = [mismatch(text) for text in texts]
    for text, problem in zip(texts, problems):
        if problem is None:
            return text
    line, problem = problems[0]
    raise DataFormatError(str(ann), line, problem)


def read_brat(path: str, notes: list[str] | None = None) -> list[dict]:
    """Records ``{"text", "spans": [(type, start, end)], "line", "where"}``, one per non-blank line of each
    document's text, ready for flat character tags."""
    records, left_out, others = [], Counter(), Counter()
    first_left: str | None = None
    for ann, txt in brat_documents(path):
        entities, other = _entities(ann)
        others.update(other)
        text = _document_text(txt, ann, entities)
        lines = text.split("\n")
        line_starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
        by_line: dict[int, list] = {}
        for ann_line, typ, fragments, mention in entities:
            s, e = fragments[0][0], fragments[-1][1]
            why = "discontinuous" if len(fragments) > 1 else "across a line break" if "\n" in text[s:e] else None
            if why:
                left_out[why] += 1
                first_left = first_left or f"{ann.name}:{ann_line} ({clip(mention)}, {why})"
                continue
            k = bisect.bisect_right(line_starts, s) - 1
            by_line.setdefault(k, []).append((typ, s - line_starts[k], e - line_starts[k]))
        for k, line in enumerate(lines):
            line = line.rstrip("\r")  # where offsets count CRLF as two, the CR ends the line and is no text of it
            if line.strip():
                records.append({"text": line, "spans": by_line.get(k, []), "line": k + 1, "where": f"{txt.name}:{k + 1}"})
    if not records:
        raise DataFormatError(path, None, "no text: every .txt beside the .ann files is empty")
    said = []
    if left_out:
        said.append(
            f"{sum(left_out.values()):,} entities flat tags cannot hold left out ("
            + ", ".join(f"{why} {n:,}" for why, n in sorted(left_out.items()))
            + f"), the first at {first_left}"
        )
    if others:
        said.append("annotations that are not entities not read: " + ", ".join(f"{what} {n:,}" for what, n in sorted(others.items())))
    for note in said:
        note = f"{path}: {note}"
        logger.warning(note)
        if notes is not None:
            notes.append(note)
    return records
