"""Rows of a CSV file, strictly parsed, each with the line it starts on.

Python's ``csv`` module, left lenient, reads a quote that is opened and never closed as one cell
running to the end of the file (or the next stray quote): every row after it silently becomes
part of one text. Parsed strictly, that is an error naming the line where the quote opened.
"""

from __future__ import annotations

import csv
from typing import Iterable, Iterator

from ..errors import DataFormatError

__all__ = ["csv_records", "csv_rows"]


def csv_rows(lines: Iterable[str], name: str, max_cell: int) -> Iterator[tuple[int, list[str]]]:
    """``(line the row starts on, cells)`` of CSV ``lines`` (each ending in its newline), the header
    included; a cell longer than ``max_cell`` characters, or a quote never closed, is an error at
    its row's line."""
    csv.field_size_limit(max(csv.field_size_limit(), max_cell + 1))  # process-wide; only ever raised
    reader = csv.reader(lines, strict=True)
    start = 1
    try:
        while True:
            start = reader.line_num + 1
            cells = next(reader, None)
            if cells is None:
                return
            if any(len(cell) > max_cell for cell in cells):
                raise DataFormatError(name, start, f"a cell over the {max_cell:,} characters a text may have")
            yield start, cells
    except csv.Error as e:
        if "end of data" in str(e) or "field larger" in str(e):  # a quote opened runs to the end, or to the cell limit
            hint = ": a quote opened here and never closed"
        elif "expected after" in str(e):  # text after a closing quote: a stray quote, or one closing a quote opened earlier
            hint = ': a quote opened here closes further on, or text follows a quoted cell; inside a quoted cell a quote is written ""'
        else:
            hint = ""
        raise DataFormatError(name, start, f"not CSV ({e}){hint}") from None


def csv_records(lines: Iterable[str], name: str, max_cell: int) -> tuple[list[str], Iterator[tuple[int, dict[str, str]]]]:
    """The header row's names (stripped: "text, label" typed by hand names ``label``; empty for an
    empty file) and ``(line, {name: cell})`` of each later row, blank rows skipped. A row with
    more or fewer cells than the header, or a name the header gives twice, is an error."""
    rows = csv_rows(lines, name, max_cell)
    first = next(rows, None)
    header = [] if first is None else [cell.strip() for cell in first[1]]
    seen: set[str] = set()
    for column in header:
        if column and column in seen:  # which of the two a record's text or label is would be a guess
            raise DataFormatError(name, 1, f"the header names {column!r} twice")
        seen.add(column)
    return header, _records(rows, header, name)


def _records(rows: Iterator[tuple[int, list[str]]], header: list[str], name: str) -> Iterator[tuple[int, dict[str, str]]]:
    for start, cells in rows:
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            raise DataFormatError(name, start, f"{len(cells)} columns, the header has {len(header)}")
        yield start, dict(zip(header, cells))
