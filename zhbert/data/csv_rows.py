"""Rows of a CSV file, strictly parsed, each with the line it starts on.

Python's ``csv`` module, left lenient, reads a quote that is opened and never closed as one cell
running to the end of the file (or the next stray quote): every row after it silently becomes
part of one text. Parsed strictly, that is an error naming the line where the quote opened.
"""

from __future__ import annotations

import csv
from typing import Iterable, Iterator

from ..errors import DataFormatError

__all__ = ["csv_rows"]


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
