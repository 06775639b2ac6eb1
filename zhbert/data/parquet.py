"""Parquet files, the form in which the Hugging Face hub (and its mirrors) serves datasets and in
which ``Dataset.to_parquet`` writes them: rows as records, read a batch at a time.

A ``ClassLabel`` column holds numbers; their names are in the file's ``huggingface`` metadata, and
each number is given its name here (``label: 1`` of ChnSentiCorp is ``"positive"``, ``ner_tags:
[5, 6]`` of MSRA NER is ``["B-LOC", "I-LOC"]``), so a model learns and saves names, not indices.
The hub's ``-1`` (no label, as in every CLUE test split) becomes ``missing``. Errors name the file
and the row (1-based), where a text file's name the line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from ..errors import DataFormatError
from .jsonio import MAX_RECORD_CHARS

__all__ = ["PARQUET_MAGIC", "class_label_names", "iter_parquet_records", "is_parquet"]

#: the first (and last) four bytes of every Parquet file
PARQUET_MAGIC = b"PAR1"
#: rows decoded at a time: memory holds one batch of records, whatever the file's size
BATCH_ROWS = 1024
#: a row group's columns are decoded whole: past this (uncompressed, of the columns read) it is refused
#: before it is read. The hub writes row groups of about 100 MB at most.
MAX_ROW_GROUP_BYTES = 2**30
#: HF's number for "no label" in a ClassLabel column
NO_LABEL = -1


def is_parquet(path: str | Path) -> bool:
    """Whether the file starts as a Parquet file does (whatever its name)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == PARQUET_MAGIC
    except OSError:
        return False


def _class_names(feature: Any) -> list[str] | None:
    """The names of a ClassLabel feature, or of the ClassLabel a list feature holds
    (``Sequence``/``List``/``LargeList``: older and newer ``datasets`` write these)."""
    if not isinstance(feature, dict):
        return None
    if feature.get("_type") == "ClassLabel":
        names = feature.get("names")
        return list(names) if isinstance(names, list) and all(isinstance(n, str) for n in names) else None
    if feature.get("_type") in ("Sequence", "List", "LargeList"):
        return _class_names(feature.get("feature"))
    return None


def class_label_names(metadata: dict[bytes, bytes] | None) -> dict[str, list[str]]:
    """``{column: names}`` of the ClassLabel columns (and lists of ClassLabels) that a Parquet schema's
    metadata describes; empty for a file not written by ``datasets`` (pandas, Spark)."""
    try:
        info = json.loads((metadata or {}).get(b"huggingface", b"{}"))
        features = info.get("info", {}).get("features", {})
    except (ValueError, AttributeError):
        return {}
    if not isinstance(features, dict):
        return {}
    return {column: names for column, feature in features.items() if (names := _class_names(feature)) is not None}


def _named(value: Any, names: list[str], missing: Any, path: str, row: int, column: str) -> Any:
    if isinstance(value, list):
        return [_named(v, names, missing, path, row, column) for v in value]
    if value is None or value == NO_LABEL:
        return missing
    if not isinstance(value, int) or not 0 <= value < len(names):
        raise DataFormatError(path, row, f"{column!r} holds {value!r}: not one of its {len(names)} class numbers (0..{len(names) - 1})")
    return names[value]


def _size(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return sum(map(_size, value)) + len(value)
    if isinstance(value, dict):
        return sum(map(_size, value.values())) + len(value)
    return 1


def iter_parquet_records(path: str | Path, missing: Any = None, columns: list[str] | None = None) -> Iterator[tuple[int, dict]]:
    """``(row, record)`` for each row of a Parquet file, row numbers from 1, ClassLabel numbers as
    their names (``-1``, no label, as ``missing``). ``columns``: read only these (a corpus's text
    column, not its other columns). A file that is not Parquet, or is cut short, is an error naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .source import _check_path

    name = str(path)
    _check_path(Path(path))
    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as e:
        raise DataFormatError(name, None, f"not a readable Parquet file ({str(e).strip()[:200]})") from None
    have = parquet.schema_arrow.names
    read = [j for j in range(parquet.metadata.num_columns) if columns is None or parquet.schema.column(j).path.split(".")[0] in columns]
    for i in range(parquet.metadata.num_row_groups):
        group = parquet.metadata.row_group(i)
        size = sum(group.column(j).total_uncompressed_size for j in read)
        if size > MAX_ROW_GROUP_BYTES:
            raise DataFormatError(
                name,
                None,
                f"row group {i} holds {size / 2**30:.1f} GiB uncompressed: over the {MAX_ROW_GROUP_BYTES / 2**30:.0f} GiB read at once; "
                "write the file again in smaller row groups (pyarrow.parquet.write_table(table, NEW_FILE, row_group_size=100_000))",
            )
    if columns is not None:
        absent = [c for c in columns if c not in have]
        if absent:
            raise DataFormatError(name, None, f"no column {absent[0]!r} in {', '.join(have)}")
    labels = {c: n for c, n in class_label_names(parquet.schema_arrow.metadata).items() if columns is None or c in columns}
    row = 0
    try:
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns):
            for record in batch.to_pylist():
                row += 1
                if _size(record) > MAX_RECORD_CHARS:
                    raise DataFormatError(name, row, f"a row of more than {MAX_RECORD_CHARS:,} characters: over the most one may have")
                for column, names in labels.items():
                    record[column] = _named(record[column], names, missing, name, row, column)
                yield row, record
    except (pa.ArrowException, OSError) as e:
        raise DataFormatError(name, row + 1, f"unreadable Parquet data ({str(e).strip()[:200]})") from None
