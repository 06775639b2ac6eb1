"""Readers for every corpus format zhbert uses; each returns a typed ``Dataset``.

Each reader validates as it reads and raises :class:`zhbert.errors.DataFormatError`
(``file:line: problem``) on malformed input; ``on_error="skip"`` skips and reports.
"""

from ..errors import DataFormatError
from .char_tagged import read_char_tagged, read_msra_ner
from .corpus import read_corpus
from .pairs import read_ocnli, read_pair_tsv, read_pawsx, read_sts
from .paths import corpora_dir, dataset_path, shared_dir
from .peoples_daily import peoples_daily_path, read_peoples_daily, remove_overlap
from .segmented import read_lines, read_segmented
from .spans_json import read_cluener
from .weibo import drop_overlap, read_clue_emotion, read_nlpcc2014_emotion, read_smp2020_ewect

__all__ = [
    "read_char_tagged",
    "read_msra_ner",
    "read_corpus",
    "read_ocnli",
    "read_pair_tsv",
    "read_pawsx",
    "read_sts",
    "read_peoples_daily",
    "peoples_daily_path",
    "remove_overlap",
    "read_lines",
    "read_segmented",
    "read_cluener",
    "read_smp2020_ewect",
    "read_nlpcc2014_emotion",
    "read_clue_emotion",
    "drop_overlap",
    "DataFormatError",
    "shared_dir",
    "dataset_path",
    "corpora_dir",
]
