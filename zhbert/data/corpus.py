"""Raw text for pretraining: one document per line, or blank-line-separated.

The default corpus is ``../shared/corpora/*/*.txt`` (one document per line); a
user's own files work the same way. A file that is empty, binary or not UTF-8 is
an error naming the file (and line); blank lines between documents are
separators, never documents. Nothing is truncated: a document longer than
``MAX_DOC_CHARS`` is cut into consecutive pieces (at a sentence end where one is
near), which the packer joins into blocks as it would the whole document; one
50 MB line would otherwise be tokenised as one example in gigabytes of memory.
"""

from __future__ import annotations

import os
from pathlib import Path

from datasets import Dataset, Features, Value

from ..errors import DataFormatError
from .build import build_dataset
from .source import cut_point, iter_line_pieces, iter_lines

__all__ = ["read_corpus", "corpus_files", "CORPUS_FEATURES", "MAX_DOC_CHARS"]

MAX_DOC_CHARS = 100_000


def _pieces(text: str, limit: int = MAX_DOC_CHARS):
    """``text`` in consecutive pieces of at most ``limit`` characters, cut after 。！？ when one is near."""
    while len(text) > limit:
        end = cut_point(text, limit)
        yield text[:end]
        text = text[end:]
    yield text


CORPUS_FEATURES = Features({"text": Value("string"), "source": Value("string"), "line": Value("int32")})


def corpus_files(paths: list[str | os.PathLike]) -> list[str]:
    """Expand directories into their ``*.txt`` files (sorted); keep files as given."""
    out: list[str] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found = sorted(str(f) for f in p.rglob("*.txt") if f.is_file())
            if not found:
                raise DataFormatError(str(p), None, "directory holds no .txt files")
            out.extend(found)
        else:
            out.append(str(p))
    return out


def _gen(paths, policy, doc_format):
    for path in paths:
        source = Path(path).parent.name if Path(path).parent.name else Path(path).stem
        n_docs = 0
        if doc_format == "line":
            # read a chunk at a time: a one-line 50 MB file arrives as 100,000-character pieces,
            # never as one string (the pieces of a line are consecutive documents, as _pieces cuts them)
            last = 0
            for lineno, piece in iter_line_pieces(path, MAX_DOC_CHARS):
                text = piece.strip()
                if text:
                    n_docs += lineno != last
                    last = lineno
                    yield {"text": text, "source": source, "line": lineno}
        elif doc_format == "blank-line":
            buf: list[str] = []
            first = 0
            for lineno, line in iter_lines(path):
                if line.strip():
                    if not buf:
                        first = lineno
                    buf.append(line.strip())
                elif buf:
                    n_docs += 1
                    yield from ({"text": p, "source": source, "line": first} for p in _pieces("\n".join(buf)))
                    buf = []
            if buf:
                n_docs += 1
                yield from ({"text": p, "source": source, "line": first} for p in _pieces("\n".join(buf)))
        else:
            raise ValueError(f"doc_format must be 'line' or 'blank-line', got {doc_format!r}")
        if n_docs == 0:
            raise DataFormatError(path, 1, "no documents in file")


def read_corpus(paths: list[str | os.PathLike] | str, doc_format: str = "line", on_error: str = "raise") -> Dataset:
    """Documents from text files or directories as ``text, source, line``."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = corpus_files(list(paths))
    return build_dataset(_gen, CORPUS_FEATURES, files, on_error=on_error, doc_format=doc_format)
