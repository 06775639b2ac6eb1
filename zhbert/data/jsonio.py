"""JSON in the shapes our datasets use, with line numbers for every record.

Handles JSON lines, pretty-printed objects one after another (CLUENER) and a
single top-level array (SMP2020-EWECT "virus"), yielding ``(line, value)``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

from ..errors import DataFormatError

_decoder = json.JSONDecoder()
_WS = " \t\n\r"
#: one record (a post, a sentence with its spans) is a few thousand characters; a 50 MB one is refused
#: before anything is built from it (its tags and spans would take gigabytes)
MAX_RECORD_CHARS = 1_000_000


def _checked(value, pos: int, end: int, name: str, line_of):
    if end - pos > MAX_RECORD_CHARS:
        raise DataFormatError(name, line_of(pos), f"record of {end - pos:,} characters: over the {MAX_RECORD_CHARS:,} one may have")
    return value


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


def iter_json_records(text: str, name: str) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, value)`` for each top-level value (or array element)."""
    pos = _skip_ws(text, 0)
    line_of = _LineCounter(text)
    if pos < len(text) and text[pos] == "[":
        yield from _iter_array(text, pos + 1, name, line_of)
        return
    while pos < len(text):
        try:
            value, end = _decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise DataFormatError(name, e.lineno, f"invalid JSON: {e.msg}") from None
        except RecursionError:
            raise DataFormatError(name, line_of(pos), "JSON nested too deeply") from None
        yield line_of(pos), _checked(value, pos, end, name, line_of)
        pos = _skip_ws(text, end)


def _iter_array(text: str, pos: int, name: str, line_of) -> Iterator[tuple[int, Any]]:
    pos = _skip_ws(text, pos)
    if pos < len(text) and text[pos] == "]":
        return
    while True:
        try:
            value, end = _decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise DataFormatError(name, e.lineno, f"invalid JSON in array: {e.msg}") from None
        except RecursionError:
            raise DataFormatError(name, line_of(pos), "JSON nested too deeply") from None
        yield line_of(pos), _checked(value, pos, end, name, line_of)
        pos = _skip_ws(text, end)
        if pos >= len(text):
            raise DataFormatError(name, line_of(pos), "array is not closed with ']'")
        if text[pos] == "]":
            rest = _skip_ws(text, pos + 1)
            if rest < len(text):
                raise DataFormatError(name, line_of(rest), "data after the closing ']'")
            return
        if text[pos] != ",":
            raise DataFormatError(name, line_of(pos), f"expected ',' or ']' in array, found {text[pos]!r}")
        pos = _skip_ws(text, pos + 1)


class _LineCounter:
    """Line number of a character position, counting forward incrementally."""

    def __init__(self, text: str):
        self.text, self.pos, self.line = text, 0, 1

    def __call__(self, pos: int) -> int:
        if pos < self.pos:
            self.pos, self.line = 0, 1
        self.line += self.text.count("\n", self.pos, pos)
        self.pos = pos
        return self.line


#: the command that writes a JSON array (or records spread over several lines) as one object a line
JQ_ONE_A_LINE = "jq -c '.[]' FILE > NEW_FILE"
#: a line that starts as a JSON object does (``{"key":``): read as plain text, its keys and quotes become text
_LOOKS_LIKE_JSON_OBJECT = re.compile(r'\s*\{\s*"[^"\n]{1,100}"\s*:')


def looks_like_json_object(line: str) -> bool:
    return bool(_LOOKS_LIKE_JSON_OBJECT.match(line))


def json_line_record(line: str, name: str, lineno: int) -> dict:
    """One line of a JSON-lines file as its object; anything else (an array, a record spread over
    lines) is an error naming ``name:lineno``, with the command that writes one object a line."""
    try:
        record = json.loads(line)
    except ValueError as e:
        problem = f"not a JSON object on one line ({getattr(e, 'msg', e)}); JSON lines hold one object a line"
        raise DataFormatError(name, lineno, f"{problem}: a JSON array or pretty-printed file becomes one with {JQ_ONE_A_LINE}") from None
    except RecursionError:
        raise DataFormatError(name, lineno, "JSON nested too deeply") from None
    if not isinstance(record, dict):
        hint = f": a JSON array becomes one object a line with {JQ_ONE_A_LINE}" if isinstance(record, list) else ""
        raise DataFormatError(name, lineno, f"expected a JSON object, found {type(record).__name__}{hint}")
    return record


def record_texts(record: dict, keys, name: str, line: int) -> list[str]:
    """The texts under ``keys`` in one record; a key missing or not holding a string is an error
    naming ``name:line`` (the keys were chosen from the first record, so every record needs them)."""
    texts = []
    for key in keys:
        if key not in record:
            raise DataFormatError(name, line, f"no key {key!r} (the first record's text)")
        if not isinstance(record[key], str):
            found = "null (empty)" if record[key] is None else type(record[key]).__name__
            raise DataFormatError(name, line, f"{key!r} is {found}, expected a text")
        texts.append(record[key])
    return texts


def require(record: Any, key: str, kind: type | tuple[type, ...], name: str, line: int) -> Any:
    """``record[key]`` checked for presence and type; error names file and line."""
    if not isinstance(record, dict):
        raise DataFormatError(name, line, f"expected a JSON object, got {type(record).__name__}")
    if key not in record:
        raise DataFormatError(name, line, f"missing field {key!r}")
    value = record[key]
    if not isinstance(value, kind):
        want = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise DataFormatError(name, line, f"field {key!r} should be {want}, got {type(value).__name__}")
    return value


INT32_MAX = 2**31 - 1


def is_ascii_number(text: str) -> bool:
    """``str.isdigit`` accepts ``"²"`` and ``"١"``, which ``int`` then rejects or misreads."""
    return text.isascii() and text.isdigit()


def record_id(value: Any, name: str, line: int) -> int:
    """A record's id: a whole number (JSON integer or ASCII digits) from 0 to 2**31-1."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise DataFormatError(name, line, f"id {value!r} is not a whole number")
    if isinstance(value, str):
        if not is_ascii_number(value):
            raise DataFormatError(name, line, f"id {value[:40]!r} is not a whole number")
        value = int(value)
    if not 0 <= value <= INT32_MAX:
        raise DataFormatError(name, line, f"id {value} is outside 0..{INT32_MAX}")
    return value
