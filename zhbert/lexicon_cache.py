"""A disk cache for the default dictionary's lexicon, so loading a lexicon head takes a fraction
of a second instead of the 3-5 s that building it takes (reading jieba's 349,046 words,
tokenising them, building the trie).

The file is a safetensors file of plain arrays (:meth:`zhbert.lexicon.TokenLexicon.to_arrays`):
reading it runs no code. Its name is a SHA-256 over everything the lexicon is made from: the
dictionary file's bytes, the tokenizer's full definition, the bucket count and tag list, the
source of the modules that build it, and the ``tokenizers`` version. Any change makes another
name, so a stale file is never read; the key is also stored inside the file and checked. A file
that cannot be read (truncated, damaged) is rebuilt and replaced, with a warning. Files are
written under a temporary name and renamed, so processes loading at once never see half a file.

Where: ``$ZHBERT_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/zhbert``, else ``~/.cache/zhbert``;
``ZHBERT_CACHE_DIR=off`` turns the cache off. The newest :data:`KEEP` files are kept.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Callable

from .errors import warn
from .lexicon import LEXICON_TAGS, TokenLexicon, file_sha256, read_jieba_dict, tokenizer_sha256

__all__ = ["cache_dir", "cached_lexicon", "lexicon_cache_key", "shared_lexicon", "KEEP"]

logger = logging.getLogger("zhbert")
FORMAT = 2  # 2: integer arrays stored in the narrowest of int16 / int32 that holds them (about half the bytes)
KEEP = 4  # lexicon files kept (25 MB each for jieba under the bundled tokenizer): one per tokenizer a user switches between
_SUBDIR = "lexicon"
# what a lexicon is built by: a change to any of them changes every key
_BUILDERS = ("lexicon.py", "dictionary.py", "text.py")


def cache_dir() -> Path | None:
    """The cache folder, None when ``ZHBERT_CACHE_DIR=off``."""
    value = os.environ.get("ZHBERT_CACHE_DIR")
    if value is not None:
        return None if value.strip().lower() in ("off", "0", "none", "") else Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "zhbert"


def lexicon_cache_key(dictionary_path: str | Path, tokenizer, buckets: int, tags: list[str]) -> str:
    import tokenizers

    here = Path(__file__).parent
    parts = {
        "format": FORMAT,
        "dictionary": file_sha256(dictionary_path),
        "tokenizer": tokenizer_sha256(tokenizer),
        "buckets": buckets,
        "tags": tags,
        "code": [hashlib.sha256((here / name).read_bytes()).hexdigest() for name in _BUILDERS],
        "tokenizers": tokenizers.__version__,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()


def cached_lexicon(
    dictionary_path: str | Path, tokenizer, buckets: int, tags: list[str], build: Callable[[], TokenLexicon]
) -> TokenLexicon:
    """The lexicon ``build()`` makes from ``dictionary_path`` under ``tokenizer``: read from the
    cache when a file for exactly these inputs is there, else built and stored."""
    folder = cache_dir()
    if folder is None:
        return build()
    key = lexicon_cache_key(dictionary_path, tokenizer, buckets, tags)
    path = folder / _SUBDIR / f"lexicon-{key[:32]}.safetensors"
    if path.is_file():
        try:
            lexicon = _read(path, key)
        except Exception as e:  # any damage: the file is rebuilt, never trusted
            warn(f"lexicon cache {path} unreadable ({type(e).__name__}: {e}): building the lexicon again")
        else:
            lexicon.source = str(dictionary_path)  # the same bytes may be installed elsewhere
            _touch(path)
            return lexicon
    lexicon = build()
    _write(lexicon, path, key)
    return lexicon


def _read(path: Path, key: str) -> TokenLexicon:
    import numpy as np
    from safetensors import safe_open

    with safe_open(str(path), framework="numpy") as f:
        metadata = f.metadata() or {}
        if metadata.get("key") != key:
            raise ValueError(f"its key is {metadata.get('key', 'missing')!r}, not this lexicon's")
        # copies, not views of the mapped file: a later writer's rename must not change them
        arrays = {name: np.array(f.get_tensor(name)) for name in f.keys()}
    for name in json.loads(metadata.get("narrowed", "[]")):
        arrays[name] = arrays[name].astype(np.int64)
    return TokenLexicon.from_arrays(arrays, metadata)


def _narrowed(arrays: dict) -> tuple[dict, list[str]]:
    """``arrays`` with each int64 array stored in the narrowest of int16 / int32 that holds its
    values, and the names of those arrays (read back as int64: the lexicon computes in int64)."""
    import numpy as np

    out, names = dict(arrays), []
    for name, a in arrays.items():
        if a.dtype != np.int64 or not a.size:
            continue
        low, high = int(a.min()), int(a.max())
        for dtype in (np.int16, np.int32):
            if np.iinfo(dtype).min <= low and high <= np.iinfo(dtype).max:
                out[name], names = a.astype(dtype), [*names, name]
                break
    return out, names


def _write(lexicon: TokenLexicon, path: Path, key: str) -> None:
    from safetensors.numpy import save_file

    try:
        arrays, metadata = lexicon.to_arrays()
    except ValueError as e:
        logger.info("lexicon not cached: %s", e)
        return
    arrays, narrowed = _narrowed(arrays)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        os.close(fd)
        save_file(arrays, tmp, metadata={**metadata, "key": key, "narrowed": json.dumps(narrowed)})
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide a shared cache folder's files from other users
        os.replace(tmp, path)
        tmp = None
        _prune(path.parent)
    except OSError as e:  # a read-only home or a full disk costs load time, not the load
        logger.warning("lexicon cache not written to %s (%s): set ZHBERT_CACHE_DIR to a writable folder, or to off", path, e)
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _touch(path: Path) -> None:
    try:
        os.utime(path)  # newest use first when pruning
    except OSError:
        pass


def _prune(folder: Path) -> None:
    def last_used(p: Path) -> int:
        try:
            return p.stat().st_mtime_ns
        except OSError:  # another process pruned it first
            return -1

    for old in sorted(folder.glob("lexicon-*.safetensors"), key=last_used, reverse=True)[KEEP:]:
        old.unlink(missing_ok=True)


_SHARED: dict = {}


def shared_lexicon(source: str, tokenizer, buckets: int) -> "TokenLexicon":
    """The lexicon of a named dictionary (``"jieba"``) under ``tokenizer``, built once per process
    and shared read-only (a user's words make a new one: :meth:`TokenLexicon.with_words`), and
    kept on disk between processes (:func:`cached_lexicon`)."""
    from .dictionary import jieba_dictionary_path, read_dictionary

    if source != "jieba":
        raise ValueError(f"unknown lexicon {source!r} (known: jieba)")
    path = jieba_dictionary_path()
    stat = path.stat()
    tok = tokenizer_sha256(tokenizer)
    key = (str(path), stat.st_size, stat.st_mtime_ns, tok, buckets)
    if key not in _SHARED:
        _SHARED.clear()  # one tokenizer's lexicon at a time: each holds about 100 MB
        _SHARED[key] = cached_lexicon(
            path, tokenizer, buckets, LEXICON_TAGS, lambda: TokenLexicon(read_jieba_dict(path) or read_dictionary(path), tokenizer, buckets)
        )
    return _SHARED[key]
