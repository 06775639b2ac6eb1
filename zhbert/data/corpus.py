"""Raw text for pretraining: one document per line, blank-line-separated, JSON lines or Parquet.

The default corpus is ``../shared/corpora/*/*.txt`` (one document per line); a
user's own files work the same way. Corpora shipped as JSON lines (Chinese Wikipedia
dumps ``{"id", "url", "title", "text"}``, news2016zh ``{"title", "content", ...}``,
web crawls ``{"text"}``) give each record's text as a document (``.jsonl``/``.json``
files, or ``doc_format="jsonl"``), and so do Parquet files, the form the Hugging Face
hub serves corpora in (``.parquet``, read a batch of rows at a time, the same keys as
columns), and folders ``Dataset.save_to_disk`` wrote; a plain-text file whose first line
is a JSON object is refused, as its keys and quotes would be trained on. A file that is empty,
binary or not UTF-8 is an error naming the file (and line); blank lines between
documents are separators, never documents. Nothing is truncated: a document longer
than ``MAX_DOC_CHARS`` is cut into consecutive pieces (at a sentence end where one is
near), which the packer joins into blocks as it would the whole document; one 50 MB
line would otherwise be tokenised as one example in gigabytes of memory.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

from datasets import Dataset, Features, Value

from ..errors import DataFormatError
from .build import build_dataset
from .hub_files import is_parquet, is_saved_dataset
from .jsonio import MAX_RECORD_CHARS, json_line_record, looks_like_json_object
from .source import _check_path, cut_point, iter_line_pieces, iter_lines

logger = logging.getLogger(__name__)

__all__ = ["read_corpus", "iter_corpus", "corpus_files", "CORPUS_FEATURES", "MAX_DOC_CHARS", "DOC_FORMATS", "CORPUS_TEXT_KEYS"]

MAX_DOC_CHARS = 100_000
DOC_FORMATS = ("auto", "line", "blank-line", "jsonl", "csv", "parquet", "arrow")
#: CORPUS_SUFFIXES: what a folder of corpus files is read for; ``auto`` reads .json and .jsonl as JSON
#: lines, .csv as CSV and .parquet as Parquet
CORPUS_SUFFIXES = (".txt", ".jsonl", ".json", ".csv", ".parquet")
#: where a JSON-lines record (or CSV or Parquet row) keeps its text when --text-key is left at auto: Wikipedia
#: dumps and web crawls say ``text``, news2016zh, webtext2019zh and WuDaoCorpora ``content``, the
#: SophonPlus review sets (CSV) ``review``
CORPUS_TEXT_KEYS = ("text", "content", "review")


def _pieces(text: str, limit: int = MAX_DOC_CHARS):
    """``text`` in consecutive pieces of at most ``limit`` characters, cut after 。！？ when one is near."""
    while len(text) > limit:
        end = cut_point(text, limit)
        yield text[:end]
        text = text[end:]
    yield text


CORPUS_FEATURES = Features({"text": Value("string"), "source": Value("string"), "line": Value("int32")})


def _count(n: int, thing: str) -> str:
    return f"{n:,} {thing}{'s' if n != 1 else ''}"


def corpus_files(paths: list[str | os.PathLike]) -> list[str]:
    """Expand directories into their ``*.txt``, ``*.jsonl``, ``*.json``, ``*.csv`` and ``*.parquet`` files (sorted); keep files
    as given. Other files in a directory are not read, and the log says how many."""
    out: list[str] = []
    for p in paths:
        p = Path(p)
        if is_saved_dataset(p):  # a folder Dataset.save_to_disk wrote: one source, read through datasets
            out.append(str(p))
        elif p.is_dir():
            files = sorted(f for f in p.rglob("*") if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts))
            found = [str(f) for f in files if f.suffix.lower() in CORPUS_SUFFIXES]
            others = [f for f in files if f.suffix.lower() not in CORPUS_SUFFIXES]
            if not found:
                held = (
                    f" (it holds {_count(len(others), 'other file')}, such as {others[0].name}: name them .txt or .jsonl by their form)"
                    if others
                    else ""
                )
                raise DataFormatError(str(p), None, f"directory holds no .txt, .jsonl, .json, .csv or .parquet files{held}")
            if others:
                logger.warning(
                    "%s: %s not read, not .txt, .jsonl, .json, .csv or .parquet (such as %s)", p, _count(len(others), "file"), others[0]
                )
            out.extend(found)
        else:
            out.append(str(p))
    return out


def _file_format(path: str, doc_format: str) -> str:
    if doc_format not in DOC_FORMATS:
        raise ValueError(f"doc_format must be one of {', '.join(DOC_FORMATS)}, got {doc_format!r}")
    if doc_format == "auto":
        if is_saved_dataset(path):
            return "arrow"
        suffix = Path(path).suffix.lower()
        if suffix in (".json", ".jsonl", ".csv"):
            return "csv" if suffix == ".csv" else "jsonl"
        return "parquet" if suffix == ".parquet" or is_parquet(path) else "line"
    return doc_format


def _refuse_json_as_text(path: str, lineno: int, text: str) -> None:
    if looks_like_json_object(text):
        raise DataFormatError(
            path,
            lineno,
            "a JSON object: read as text, its keys and quotes would be trained on; "
            "name the file .jsonl or give --doc-format jsonl (--text-key names the key of the text)",
        )


def _json_records(path: str):
    """``(line, record)`` of a JSON-lines corpus file, read a line at a time (blank lines skipped)."""
    last = 0
    for lineno, piece in iter_line_pieces(path, MAX_RECORD_CHARS):
        if lineno == last:
            raise DataFormatError(path, lineno, f"a JSON record over the {MAX_RECORD_CHARS:,} characters one may have")
        last = lineno
        if piece.strip():
            yield lineno, json_line_record(piece, path, lineno)


def _csv_records(path: str):
    """``(line, record)`` of a CSV corpus file with a header row, read a line at a time."""
    from .csv_rows import csv_records

    def lines():
        last = 0
        for lineno, piece in iter_line_pieces(path, MAX_RECORD_CHARS):
            if lineno == last:
                raise DataFormatError(path, lineno, f"a line over the {MAX_RECORD_CHARS:,} characters a CSV record may have")
            last = lineno
            yield piece + "\n"

    yield from csv_records(lines(), path, MAX_RECORD_CHARS)[1]


def _keyed_documents(path: str, fmt: str, text_key: str):
    """``(line, document)`` of a JSON-lines, CSV or Parquet corpus file: each record's text under
    ``text_key`` (``auto``: the first of :data:`CORPUS_TEXT_KEYS` in the first record; keys joined by
    commas, such as ``title,content``, give their texts a line each). A Parquet file is read a batch
    of rows at a time, of the text columns only where they are named."""
    keys = None if text_key == "auto" else [k.strip() for k in text_key.split(",") if k.strip()]
    where = "row" if fmt in ("parquet", "arrow") else "line"
    if fmt in ("parquet", "arrow"):
        from .hub_files import iter_hub_records

        records = iter_hub_records(path, columns=keys)
    else:
        records = _csv_records(path) if fmt == "csv" else _json_records(path)
    empty = []
    for lineno, record in records:
        if keys is None:
            keys = [next((k for k in CORPUS_TEXT_KEYS if k in record), None)]
            if keys[0] is None:
                raise DataFormatError(
                    path,
                    lineno,
                    f"no key {' or '.join(map(repr, CORPUS_TEXT_KEYS))} in {', '.join(map(repr, list(record)[:12]))}: "
                    "--text-key names the key of the text (several joined by commas, such as title,content)",
                )
        texts = []
        for key in keys:
            if key not in record:
                raise DataFormatError(path, lineno, f"no key {key!r} (--text-key)")
            value = record[key]
            if value is not None and not isinstance(value, str):
                raise DataFormatError(path, lineno, f"{key!r} is {type(value).__name__}, expected a text")
            if value and value.strip():
                texts.append(value.strip())
        if texts:
            yield lineno, "\n".join(texts)
        else:
            empty.append(lineno)
    if empty:
        logger.warning("%s: %s with no text, no document (the first at %s %d)", path, _count(len(empty), "record"), where, empty[0])


def _gen(paths, policy, doc_format, text_key="auto"):
    for path in paths:
        source = Path(path).name if Path(path).is_dir() else Path(path).parent.name or Path(path).stem
        n_docs = 0
        fmt = _file_format(path, doc_format)
        if fmt == "line":
            # read a chunk at a time: a one-line 50 MB file arrives as 100,000-character pieces,
            # never as one string (the pieces of a line are consecutive documents, as _pieces cuts them)
            last = 0
            for lineno, piece in iter_line_pieces(path, MAX_DOC_CHARS):
                text = piece.strip()
                if text:
                    if not n_docs:
                        _refuse_json_as_text(path, lineno, text)
                    n_docs += lineno != last
                    last = lineno
                    yield {"text": text, "source": source, "line": lineno}
        elif fmt in ("jsonl", "csv", "parquet", "arrow"):
            for lineno, text in _keyed_documents(path, fmt, text_key):
                n_docs += 1
                yield from ({"text": p, "source": source, "line": lineno} for p in _pieces(text))
        elif fmt == "blank-line":
            buf: list[str] = []
            first = 0
            for lineno, line in iter_lines(path):
                if line.strip():
                    if not buf:
                        first = lineno
                        if not n_docs:
                            _refuse_json_as_text(path, lineno, line)
                    buf.append(line.strip())
                elif buf:
                    n_docs += 1
                    yield from ({"text": p, "source": source, "line": first} for p in _pieces("\n".join(buf)))
                    buf = []
            if buf:
                n_docs += 1
                yield from ({"text": p, "source": source, "line": first} for p in _pieces("\n".join(buf)))
        if n_docs == 0:
            raise DataFormatError(path, 1, "no documents in file")


def read_corpus(paths: list[str | os.PathLike] | str, doc_format: str = "auto", on_error: str = "raise", text_key: str = "auto") -> Dataset:
    """Documents from text files or directories as ``text, source, line``; ``doc_format`` is one of
    :data:`DOC_FORMATS` (``auto``: JSON lines for ``.jsonl``/``.json`` files, CSV with a header row for
    ``.csv``, Parquet for ``.parquet`` files, a document a line otherwise)."""
    files = _checked_files(paths, doc_format)
    return build_dataset(_gen, CORPUS_FEATURES, files, on_error=on_error, doc_format=doc_format, text_key=text_key)


def iter_corpus(paths: list[str | os.PathLike] | str, doc_format: str = "auto", text_key: str = "auto") -> Iterator[dict]:
    """:func:`read_corpus`'s documents one at a time, each file read only as far as the caller takes them: no
    dataset is built and nothing is cached. For readers of a corpus's first characters (held-out text), which
    would otherwise wait for, and cache, every document of a file of gigabytes."""
    files = _checked_files(paths, doc_format)
    for path in files:
        if not is_saved_dataset(path):
            _check_path(Path(path))  # every file up front, as read_corpus does: a missing third file is not found late
    yield from _gen(files, None, doc_format, text_key)


def _checked_files(paths: list[str | os.PathLike] | str, doc_format: str) -> list[str]:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = corpus_files(list(paths))
    for path in files:
        _file_format(path, doc_format)  # a wrong format fails here, before any file is read
    return files
