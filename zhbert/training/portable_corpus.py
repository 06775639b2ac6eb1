"""A portable, pre-tokenised copy of a prepared pretraining corpus (``*.zhcorpus``).

The word-boundary pass (jieba, CPU-bound, ~9 minutes for the default corpus on
two cores) is what ties pretraining to the machine that holds the raw text. This
file carries its result instead: token ids and unit boundaries, xz-compressed, so
a GPU machine trains without jieba and without the raw corpus.

Format: an ``.npz`` archive, compressed as a whole with xz (``lzma``):

- ``input_ids`` (uint16): every document's token ids, concatenated;
- ``doc_lengths`` (uint32): tokens per document;
- ``word_starts`` / ``ernie_starts`` (``np.packbits``): 1 where a token begins a new
  word / ERNIE unit. :func:`prepare` numbers units in token order, so the start
  bits give back the same grouping (the ids themselves are renumbered from 0);
- ``meta`` (UTF-8 JSON): format version, the vocabulary's hash, the masking it was
  prepared for, document and token counts and the source paths.

``zhbert prepare-corpus`` writes one; ``zhbert pretrain --corpus FILE.zhcorpus``
reads it in place of text.
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
from pathlib import Path

import numpy as np

from ..masking import masker_class
from ..masking.units import UNIT_SPANS

__all__ = ["SUFFIX", "is_portable_corpus", "check_destination_file", "save_portable_corpus", "load_portable_corpus", "vocab_hash"]

SUFFIX = ".zhcorpus"
FORMAT_VERSION = 1
# a unit column's start bits are stored in the array "<unit>_starts" (word_ids -> word_starts)
_UNIT_COLUMNS = {c: c.removesuffix("_ids") + "_starts" for c in UNIT_SPANS}


def is_portable_corpus(path) -> bool:
    return str(path).endswith(SUFFIX) and Path(path).is_file()


def vocab_hash(tokenizer) -> str:
    """Hash of the token -> id map: a file only makes sense with the vocabulary it was cut with."""
    items = sorted(tokenizer.get_vocab().items(), key=lambda kv: kv[1])
    return hashlib.sha256(json.dumps(items, ensure_ascii=False).encode()).hexdigest()[:16]


def _flat(dataset, column: str) -> tuple[np.ndarray, np.ndarray]:
    """(values, offsets) of a list column, without going through Python lists."""
    import pyarrow as pa

    arr = dataset.data.column(column).combine_chunks()
    if isinstance(arr, pa.ChunkedArray):  # pyarrow < 15 returns a ChunkedArray here
        arr = pa.concat_arrays(arr.chunks)
    return arr.flatten().to_numpy(), arr.offsets.to_numpy()


def _starts(units: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """True where a token begins a unit: at every document start and where the id changes."""
    starts = np.ones(len(units), dtype=bool)
    if len(units) > 1:
        starts[1:] = units[1:] != units[:-1]
    starts[offsets[:-1][offsets[:-1] < len(units)]] = True
    return starts


def _written_here(path: Path) -> bool:
    """Whether ``path`` begins as a file of this format does: an xz stream whose first bytes are a zip's (the npz),
    told from the first kilobytes without reading a file of gigabytes whole."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
        return lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(head, max_length=4)[:4] == b"PK\x03\x04"
    except (OSError, lzma.LZMAError, EOFError):
        return False


def check_destination_file(path) -> Path:
    """``path`` as a file :func:`save_portable_corpus` may write: named ``*.zhcorpus``, and new or a file of this
    format (a rerun replaces it); anything else there is the user's, refused before any work."""
    path = Path(path)
    if not path.name.endswith(SUFFIX):
        raise ValueError(f"{path}: a portable corpus file must end in {SUFFIX}")
    if path.is_symlink() or (path.exists() and not (path.is_file() and _written_here(path))):
        raise ValueError(f"{path}: exists and is not a {SUFFIX} file zhbert wrote; choose another name")
    return path


def save_portable_corpus(prepared, tokenizer, path, masking: str, sources: list[str] | None = None, preset: int = 9) -> dict:
    """Write a :func:`prepare`-d corpus to ``path`` (``*.zhcorpus``); returns its ``meta``."""
    path = check_destination_file(path)
    if len(tokenizer) > 65535:
        raise ValueError(f"the vocabulary has {len(tokenizer)} tokens; the {SUFFIX} format stores ids as uint16")
    if prepared._indices is not None:  # a shuffled or filtered view: ``.data`` would still be the whole table
        prepared = prepared.flatten_indices()
    ids, offsets = _flat(prepared, "input_ids")
    arrays = {"input_ids": ids.astype(np.uint16), "doc_lengths": np.diff(offsets).astype(np.uint32)}
    for column, name in _UNIT_COLUMNS.items():
        if column in prepared.column_names:
            units, unit_offsets = _flat(prepared, column)
            if not np.array_equal(unit_offsets, offsets):
                raise ValueError(f"{column} and input_ids differ in length in some document")
            arrays[name] = np.packbits(_starts(units, offsets))
    meta = {
        "format": FORMAT_VERSION,
        "vocab_hash": vocab_hash(tokenizer),
        "vocab_size": len(tokenizer),
        "masking": masking,
        "documents": int(len(offsets) - 1),
        "tokens": int(len(ids)),
        "units": [c for c in _UNIT_COLUMNS if c in prepared.column_names],
        "sources": [str(s) for s in (sources or [])],
    }
    arrays["meta"] = np.frombuffer(json.dumps(meta, ensure_ascii=False).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    tmp = path.with_name(path.name + ".partial")
    tmp.write_bytes(lzma.compress(buffer.getvalue(), preset=preset))
    tmp.replace(path)  # a crash mid-write never leaves a truncated file under the real name
    return meta


def _read(path: Path) -> dict[str, np.ndarray]:
    try:
        raw = lzma.decompress(path.read_bytes())
        with np.load(io.BytesIO(raw)) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (lzma.LZMAError, ValueError, OSError) as e:
        raise ValueError(f"{path}: not a readable {SUFFIX} file ({e})") from e
    for key in ("input_ids", "doc_lengths", "meta"):
        if key not in arrays:
            raise ValueError(f"{path}: not a {SUFFIX} file (no {key!r} array)")
    return arrays


def load_portable_corpus(path, tokenizer, masking: str):
    """The :func:`prepare`-d ``datasets.Dataset`` stored in ``path``, checked against
    ``tokenizer`` and ``masking`` (ERNIE masking needs a file prepared for ``ernie``).
    The rows are written once to an Arrow cache beside the file (``<file>.arrow``),
    which later runs and ``num_proc`` workers memory-map instead of pickling."""
    import pyarrow as pa
    from datasets import Dataset, load_from_disk

    path = Path(path)
    arrays = _read(path)
    meta = json.loads(arrays["meta"].tobytes().decode())
    if meta.get("format") != FORMAT_VERSION:
        raise ValueError(f"{path}: format {meta.get('format')} (this zhbert reads {FORMAT_VERSION})")
    if meta["vocab_hash"] != vocab_hash(tokenizer):
        raise ValueError(
            f"{path}: prepared with another vocabulary ({meta['vocab_size']} tokens, hash {meta['vocab_hash']}) "
            f"than the model's ({len(tokenizer)} tokens, hash {vocab_hash(tokenizer)}); run zhbert prepare-corpus again"
        )
    missing = [c for c in masker_class(masking).needs_units if c not in meta["units"]]
    if missing:
        raise ValueError(
            f"{path}: has no {' or '.join(UNIT_SPANS[c].label for c in missing)} units, which {masking} masking needs "
            f"(prepared for {meta['masking']}); "
            f"prepare it with --masking {masking}"
        )
    cache = path.with_name(path.name + ".arrow")
    done = cache / "zhbert_source.json"
    stamp = {"size": path.stat().st_size, "mtime_ns": path.stat().st_mtime_ns}
    if done.is_file() and json.loads(done.read_text()) == stamp:
        return load_from_disk(str(cache))

    lengths = arrays["doc_lengths"].astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    n = int(offsets[-1])
    if len(arrays["input_ids"]) != n:
        raise ValueError(f"{path}: {len(arrays['input_ids'])} token ids but the document lengths add up to {n}")
    columns = {"input_ids": pa.ListArray.from_arrays(pa.array(offsets), pa.array(arrays["input_ids"].astype(np.int32)))}
    doc_of_token = np.repeat(np.arange(len(lengths)), lengths)
    for column, name in _UNIT_COLUMNS.items():
        if column in meta["units"]:
            starts = np.unpackbits(arrays[name], count=n).astype(np.int64)
            running = np.cumsum(starts) - 1  # a unit counter over the whole file ...
            first = running[offsets[:-1][lengths > 0]]
            base = np.zeros(len(lengths), dtype=np.int64)
            base[lengths > 0] = first
            units = (running - base[doc_of_token]).astype(np.int32)  # ... restarted at 0 in every document
            columns[column] = pa.ListArray.from_arrays(pa.array(offsets), pa.array(units))
    dataset = Dataset(pa.table(columns))
    dataset.save_to_disk(str(cache))
    done.write_text(json.dumps(stamp))
    return load_from_disk(str(cache))
