"""Readers for every corpus format zhbert uses; each returns a typed ``Dataset``.

Each reader validates as it reads and raises :class:`zhbert.errors.DataFormatError`
(``file:line: problem``) on malformed input; ``on_error="skip"`` skips and reports.
"""

from __future__ import annotations

import importlib

# each reader's module, imported on first use: most of them import ``datasets`` (half a second),
# which `zhbert predict` reading its input through ``zhbert.data.source`` never needs
_READERS = {
    "read_char_tagged": "char_tagged", "read_msra_ner": "char_tagged", "read_corpus": "corpus",
    "read_ocnli": "pairs", "read_pair_tsv": "pairs", "read_pawsx": "pairs", "read_sts": "pairs",
    "corpora_dir": "paths", "dataset_path": "paths", "shared_dir": "paths",
    "peoples_daily_path": "peoples_daily", "read_peoples_daily": "peoples_daily", "remove_overlap": "peoples_daily",
    "read_lines": "segmented", "read_segmented": "segmented", "read_cluener": "spans_json",
    "drop_overlap": "weibo", "read_clue_emotion": "weibo", "read_nlpcc2014_emotion": "weibo", "read_smp2020_ewect": "weibo",
}  # fmt: skip


def __getattr__(name: str):
    if name == "DataFormatError":
        from ..errors import DataFormatError

        return DataFormatError
    if name in _READERS:
        return getattr(importlib.import_module(f".{_READERS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [*_READERS, "DataFormatError"]
