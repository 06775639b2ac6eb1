"""Turning a validating generator into a cached, typed ``datasets.Dataset``.

``Dataset.from_generator`` caches on the generator and its kwargs, not on file
contents, so every build passes a fingerprint of the source files (path, size,
mtime) to invalidate the cache when a file changes, and one of the readers' own code
(``datasets`` knows a generator by its name, so a reader fixed in a new zhbert would
otherwise keep serving what the old one read). Errors raised inside the
generator come back wrapped by ``datasets``; we unwrap our own
:class:`DataFormatError` so the user sees ``file:line: problem`` and nothing else.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any, Callable, Iterable

import datasets
from datasets import Dataset, Features

from ..errors import DataFormatError, ErrorPolicy
from .source import file_fingerprint

__all__ = ["build_dataset"]


@functools.lru_cache(maxsize=1)
def readers_fingerprint() -> str:
    """SHA-256 of the source of every module in ``zhbert/data`` (the readers and what they call)."""
    digest = hashlib.sha256()
    for module in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(module.name.encode() + b"\0" + module.read_bytes())
    return digest.hexdigest()


def _unwrap(exc: BaseException) -> BaseException | None:
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, DataFormatError):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def build_dataset(
    generator: Callable[..., Iterable[dict[str, Any]]],
    features: Features,
    paths: list[str],
    on_error: str = "raise",
    cache: bool = True,
    **kwargs: Any,
) -> Dataset:
    """Run ``generator(paths=..., policy=..., **kwargs)`` into a typed dataset.

    With ``on_error="skip"`` the build is done in memory (no cache) so the report of
    skipped lines is printed on every load, never hidden behind a cache hit.
    """
    if on_error == "skip" or not cache:
        policy = ErrorPolicy(paths[0] if paths else "<input>", on_error)
        rows = list(generator(paths=paths, policy=policy, **kwargs))
        policy.finish()
        return Dataset.from_list(rows, features=features) if rows else Dataset.from_dict({k: [] for k in features}, features=features)
    # check paths up front, so "file not found" is never turned into a cache error
    from .hub_files import is_saved_dataset
    from .source import _check_path

    for p in paths:
        if not is_saved_dataset(p):  # a folder Dataset.save_to_disk wrote is read as one source
            _check_path(Path(p.split("!")[0]))
    # datasets shards list-valued gen_kwargs; tuples are passed through whole
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in kwargs.items()}
    files = file_fingerprint(*[p.split("!")[0] for p in paths])
    gen_kwargs = dict(paths=tuple(paths), fingerprint=(files, readers_fingerprint()), **kwargs)
    progress = datasets.utils.logging.is_progress_bar_enabled()
    datasets.utils.logging.disable_progress_bar()
    try:
        return Dataset.from_generator(_GeneratorAdapter(generator), features=features, gen_kwargs=gen_kwargs)
    except Exception as e:  # datasets wraps generator errors in DatasetGenerationError
        inner = _unwrap(e)
        if inner is not None:
            raise inner from None
        cause = e.__cause__ or e.__context__ or e
        # a reader bug must still say which file it was reading, never a bare "error generating the dataset"
        raise DataFormatError(
            paths[0] if paths else "<input>", None, f"could not be read ({type(cause).__name__}: {str(cause)[:200]})"
        ) from e
    finally:
        if progress:
            datasets.utils.logging.enable_progress_bar()


class _GeneratorAdapter:
    """Picklable wrapper so the cache key includes the reader's qualified name."""

    def __init__(self, fn: Callable[..., Iterable[dict[str, Any]]]):
        self.fn = fn
        self.__name__ = f"{fn.__module__}.{fn.__qualname__}"

    def __call__(self, paths, fingerprint, **kwargs):
        policy = ErrorPolicy(paths[0] if paths else "<input>", "raise")
        yield from self.fn(paths=paths, policy=policy, **kwargs)
