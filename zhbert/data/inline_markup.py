"""Entities marked inside the text itself, one text a line: BosonNLP's ``{{TYPE:mention}}`` (its NER set,
``{{person_name:张三}}在{{location:北京}}``) and YEDDA's ``[@mention#TYPE*]`` (the annotation tool's export).

The text is the line with each mark replaced by its mention; a mark's span is where its mention lands. A mark
left open (``{{time:2015年`` with no ``}}``, ``[@北京#`` with no ``*]``) is an error at its line, never text.
"""

from __future__ import annotations

import re

from ..errors import DataFormatError, clip
from .source import head_lines, nonblank_lines

__all__ = ["read_marked_lines", "looks_marked"]

#: a text of more characters is refused at its line (BosonNLP's longest paragraph has a few thousand)
MAX_LINE_CHARS = 200_000
_MARK = re.compile(r"\{\{([^:{}\s]+):([^{}]*)\}\}|\[@([^\[\]]*?)#([^#*\[\]\s]+)\*\]")
_OPENS = ("{{", "[@")


def looks_marked(path: str) -> bool:
    """Whether the file's first non-blank line holds a mark of either form."""
    first = head_lines(path, 1)
    return bool(first) and bool(_MARK.search(first[0]))


def _marked(line: str, path: str, lineno: int) -> dict:
    text, spans, pos = [], [], 0
    length = 0
    for m in _MARK.finditer(line):
        before = line[pos : m.start()]
        _check_no_open(before, path, lineno)
        text.append(before)
        length += len(before)
        typ, mention = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(4), m.group(3))
        if not mention:
            raise DataFormatError(path, lineno, f"{clip(m.group(0))}: a mark with no mention")
        text.append(mention)
        spans.append((typ, length, length + len(mention)))
        length += len(mention)
        pos = m.end()
    rest = line[pos:]
    _check_no_open(rest, path, lineno)
    text.append(rest)
    return {"text": "".join(text), "spans": spans, "line": lineno}


def _check_no_open(plain: str, path: str, lineno: int) -> None:
    for opener in _OPENS:
        at = plain.find(opener)
        if at >= 0:
            closer = "}}" if opener == "{{" else "*]"
            raise DataFormatError(path, lineno, f"a mark opened and never closed ({clip(plain[at:])}): {opener}...{closer}")


def read_marked_lines(path: str) -> list[dict]:
    """Records ``{"text", "spans": [(type, start, end)], "line"}`` of the file's non-blank lines."""
    records = []
    for lineno, line in nonblank_lines(path, MAX_LINE_CHARS, "a text"):
        records.append(_marked(line, path, lineno))
    if not records:
        raise DataFormatError(path, None, "no lines")
    if not any(r["spans"] for r in records):
        raise DataFormatError(path, None, "no marked entity ({{TYPE:mention}} or [@mention#TYPE*])")
    return records
