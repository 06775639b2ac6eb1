"""Datasets as the Hugging Face ecosystem stores them, read as records: Parquet files (the form the
hub and its mirrors serve datasets in, and ``Dataset.to_parquet`` writes) and the folders
``Dataset.save_to_disk`` writes (Arrow files beside ``state.json``), a batch of rows at a time.

A ``ClassLabel`` column holds numbers; their names are in the file's ``huggingface`` metadata (a
saved folder's features), and each number is given its name here (``label: 1`` of ChnSentiCorp is
``"positive"``, ``ner_tags: [5, 6]`` of MSRA NER is ``["B-LOC", "I-LOC"]``), so a model learns and
saves names, not indices. The hub's ``-1`` (no label, as in every CLUE test split) becomes
``missing``. Errors name the file (or folder) and the row (1-based), where a text file's name the line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from ..errors import DataFormatError
from .jsonio import MAX_RECORD_CHARS

__all__ = ["PARQUET_MAGIC", "class_label_names", "iter_parquet_records", "is_parquet", "is_saved_dataset", "iter_hub_records"]

#: the first (and last) four bytes of every Parquet file
PARQUET_MAGIC = b"PAR1"
#: rows decoded at a time: memory holds one batch of records, whatever the file's size
BATCH_ROWS = 1024
#: a row group's column chunks are read into memory whole: past this (uncompressed, of the columns read) it is refused
#: before it is read. The hub writes row groups of about 100 MB at most.
MAX_ROW_GROUP_BYTES = 2**30
#: HF's number for "no label" in a ClassLabel column
NO_LABEL = -1


def is_parquet(path: str | Path) -> bool:
    """Whether the file starts as a Parquet file does (whatever its name). Only a regular file is
    looked into: four bytes read from a pipe (``/dev/stdin``, ``<(...)``) would be lost to its reader."""
    if not Path(path).is_file():
        return False
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


def class_label_names(features: dict | None) -> dict[str, list[str]]:
    """``{column: names}`` of the ClassLabel columns (and lists of ClassLabels) among ``features``
    (``Features.to_dict()``'s form, as a Parquet file's metadata keeps it)."""
    if not isinstance(features, dict):
        return {}
    return {column: names for column, feature in features.items() if (names := _class_names(feature)) is not None}


def _parquet_features(metadata: dict[bytes, bytes] | None) -> dict | None:
    """The features a Parquet schema's ``huggingface`` metadata describes; None for a file not written
    by ``datasets`` (pandas, Spark)."""
    try:
        return json.loads((metadata or {}).get(b"huggingface", b"{}")).get("info", {}).get("features")
    except (ValueError, AttributeError):
        return None


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
    labels = class_label_names(_parquet_features(parquet.schema_arrow.metadata))
    try:
        yield from _named_rows((b.to_pylist() for b in parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns)), labels, missing, name)
    except (pa.ArrowException, OSError) as e:
        raise DataFormatError(name, None, f"unreadable Parquet data ({str(e).strip()[:200]})") from None


def _named_rows(batches, labels: dict[str, list[str]], missing: Any, name: str) -> Iterator[tuple[int, dict]]:
    """``(row, record)`` of batches of records, each ClassLabel column's numbers as their names."""
    row = 0
    for batch in batches:
        for record in batch:
            row += 1
            if _size(record) > MAX_RECORD_CHARS:
                raise DataFormatError(name, row, f"a row of more than {MAX_RECORD_CHARS:,} characters: over the most one may have")
            for column, names in labels.items():
                if column in record:
                    record[column] = _named(record[column], names, missing, name, row, column)
            yield row, record


def is_saved_dataset(path: str | Path) -> bool:
    """Whether ``path`` is a folder ``Dataset.save_to_disk`` wrote (or a ``DatasetDict``'s)."""
    path = Path(path)
    return path.is_dir() and ((path / "state.json").is_file() or (path / "dataset_dict.json").is_file())


def iter_saved_dataset_records(path: str | Path, missing: Any = None, columns: list[str] | None = None) -> Iterator[tuple[int, dict]]:
    """``(row, record)`` of a folder ``Dataset.save_to_disk`` wrote (memory-mapped, read a batch of
    rows at a time), as :func:`iter_parquet_records`. A ``DatasetDict``'s folder is an error naming
    its splits, each of which is such a folder."""
    import datasets

    name = str(path)
    splits_file = Path(path) / "dataset_dict.json"
    if splits_file.is_file():
        try:
            splits = json.loads(splits_file.read_text(encoding="utf-8")).get("splits", [])
        except (ValueError, OSError, AttributeError):
            splits = []
        first = f"{Path(path) / splits[0]}" if splits else f"{Path(path) / 'train'}"
        raise DataFormatError(
            name,
            None,
            f"a DatasetDict of splits {', '.join(map(str, splits)) or '(none listed)'}: give one split's folder, such as {first}",
        )
    try:
        ds = datasets.load_from_disk(str(path))
    except (OSError, ValueError, KeyError) as e:
        raise DataFormatError(name, None, f"not a readable save_to_disk folder ({str(e).strip()[:200]})") from None
    ds = ds.with_format(None)  # a format saved with it (set_format("torch")) would give tensors, not texts and numbers
    if columns is not None:
        absent = [c for c in columns if c not in ds.column_names]
        if absent:
            raise DataFormatError(name, None, f"no column {absent[0]!r} in {', '.join(ds.column_names)}")
        ds = ds.select_columns(columns)
    labels = class_label_names(ds.features.to_dict())

    def batches():
        for batch in ds.iter(batch_size=BATCH_ROWS):
            keys = list(batch)
            yield [dict(zip(keys, values)) for values in zip(*(batch[k] for k in keys))]

    return _named_rows(batches(), labels, missing, name)


def iter_hub_records(path: str | Path, missing: Any = None, columns: list[str] | None = None) -> Iterator[tuple[int, dict]]:
    """:func:`iter_saved_dataset_records` for a folder, :func:`iter_parquet_records` for a file."""
    if Path(path).is_dir():
        return iter_saved_dataset_records(path, missing, columns)
    return iter_parquet_records(path, missing, columns)
