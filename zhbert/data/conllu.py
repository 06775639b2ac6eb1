"""Lines of CoNLL-U, Universal Dependencies' form: a word a line, ten tab-separated columns.

Training (``pos`` and ``cws`` on a treebank) and prediction (a treebank's test file) read the same
lines; both skip what is no word of the text.
"""

from __future__ import annotations

from ..errors import DataFormatError, clip

__all__ = ["CONLLU_COLUMNS", "conllu_cells"]

#: the columns of a CoNLL-U line: ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC
CONLLU_COLUMNS = 10


def conllu_cells(line: str, name: str, lineno: int) -> list[str] | None:
    """The columns of a CoNLL-U word line (FORM at 1, UPOS at 3); None for a ``#`` comment, a
    multiword token's range (``1-2``) or an empty node (``1.1``), which are no words of the text.
    A line without the ten columns is an error at ``name:lineno``."""
    if line.startswith("#"):
        return None
    cells = line.split("\t")
    if len(cells) != CONLLU_COLUMNS:
        raise DataFormatError(name, lineno, f"{len(cells)} tab-separated columns; a CoNLL-U line has {CONLLU_COLUMNS}: {clip(line)}")
    return None if "-" in cells[0] or "." in cells[0] else cells
