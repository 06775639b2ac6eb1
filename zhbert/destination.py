"""Where a command writes a model folder: never over anything zhbert did not make.

The rules, the safest of those users already know (``git clone`` refuses a non-empty
destination; ``datasets.save_to_disk`` refuses to write over its own source):

- a destination that is, contains or lies inside a source folder is refused;
- an existing file, or a non-empty folder holding anything but a model folder's own files, is
  refused, naming the first file that is not one;
- an existing model folder is replaced only when the caller says ``overwrite``;
- the new folder is written in a staging folder with a unique name beside the destination
  (``tempfile.mkdtemp``) and renamed into place once complete; on any failure the staging
  folder is removed and the first error is the one raised;
- files and folders get the modes the user's umask gives (``mkdtemp`` makes 0700 folders).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from .errors import StorageError

__all__ = ["check_destination", "check_report_folder", "foreign_file", "staged_folder", "is_model_folder", "MODEL_FILES"]

# every name zhbert (or save_pretrained) writes at the top of a model folder
MODEL_FILES = frozenset(
    {
        "config.json",
        "model.safetensors",
        "generation_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        "vocab.txt",
        "README.md",
        "lexicon_words.txt",  # a word list trained into a head
        "metrics.json",  # scores zhbert train writes beside its model
        "trainer_state.json",
        "training_args.bin",
        "all_results.json",
        "train_results.json",
        "eval_results.json",
        "loss_curve.png",
        "generator",  # an ELECTRA encoder's generator
        "onnx",
    }
)


def _model_file(name: str) -> bool:
    return name in MODEL_FILES or (name.startswith("zhbert_") and name.endswith(".json"))


def is_model_folder(path: Path) -> bool:
    """A folder with a model's config and weights and nothing else."""
    return (path / "config.json").is_file() and all(_model_file(p.name) for p in path.iterdir())


def _inside(a: Path, b: Path) -> bool:
    return a == b or b in a.parents


def check_destination(dest: str | Path, sources: Iterable[str | Path] = (), overwrite: bool = False, what: str = "output") -> Path:
    """Raise ``ValueError`` (one line naming ``dest``) unless ``dest`` may be written; returns it."""
    dest = Path(dest)
    real = dest.resolve()
    for source in sources:
        src = Path(source).resolve()
        if _inside(real, src) or _inside(src, real):
            relation = "is" if real == src else "lies inside" if _inside(real, src) else "contains"
            raise ValueError(f"{dest}: the {what} folder {relation} the source {source}; choose a folder outside it")
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        raise ValueError(f"{dest}: exists and is not a folder; choose a new {what} folder")
    if dest.is_dir():
        entries = sorted(dest.iterdir())
        if not entries:
            return dest
        stranger = next((p for p in entries if not _model_file(p.name)), None)
        if stranger is not None or not (dest / "config.json").is_file():
            name = stranger.name if stranger is not None else entries[0].name
            raise ValueError(
                f"{dest}: not empty and not a model folder (it holds {name}); zhbert writes only to a new or empty "
                f"folder, or over a model folder with --overwrite"
            )
        if not overwrite:
            raise ValueError(f"{dest}: a model folder is already there; pass --overwrite to replace it")
    return dest


def foreign_file(folder: Path, names: Iterable[str], record: str, is_ours) -> Path | None:
    """The first of ``names`` in ``folder`` (files a command writes there, a rerun rewriting its own) that is someone
    else's: any of them, unless the command's JSON ``record`` there reads back as one it wrote (``is_ours(parsed)``)."""
    taken = [folder / name for name in names if (folder / name).exists() or (folder / name).is_symlink()]
    if not taken:
        return None
    path = folder / record
    try:
        ours = path.is_file() and not path.is_symlink() and is_ours(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        ours = False
    return None if ours else taken[0]


def check_report_folder(folder: str | Path, stem: str) -> Path:
    """A study's or probe's folder: its report (``STEM.json``, ``STEM.md``, ``STEM.png``) is rewritten by a rerun, as
    are the runs it keeps beside it; a ``STEM.md`` or ``STEM.png`` there without the report's JSON, or a
    ``STEM.json`` that is not JSON, is someone else's and refused (one line naming it) before the study runs."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{folder}: exists and is not a folder; choose a new folder for the {stem} report")
    theirs = foreign_file(folder, (f"{stem}.json", f"{stem}.md", f"{stem}.png"), f"{stem}.json", lambda r: isinstance(r, (dict, list)))
    if theirs is not None:
        raise ValueError(f"{theirs}: already there, and not beside a {stem} report zhbert wrote; choose another folder")
    return folder


@contextlib.contextmanager
def staged_folder(dest: str | Path) -> Iterator[Path]:
    """Yield an empty staging folder beside ``dest``; on success it replaces ``dest`` (checked
    beforehand with :func:`check_destination`), on failure it is removed and the error raised."""
    dest = Path(dest)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".staging", dir=dest.parent))
    except OSError as e:
        raise _storage_error(dest, e) from None
    try:
        yield staging
        _apply_umask(staging)
        if dest.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".replaced", dir=dest.parent))
            os.rename(dest, old / dest.name)  # the old folder leaves only once the new one is complete
            os.rename(staging, dest)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(staging, dest)
    except BaseException as e:
        shutil.rmtree(staging, ignore_errors=True)  # ignore_errors: cleanup never hides the error that caused it
        if isinstance(e, OSError) and e.errno in _STORAGE_ERRNOS:
            raise _storage_error(dest, e) from None
        raise


_STORAGE_ERRNOS = {errno.EROFS: "the folder is read-only", errno.ENOSPC: "no space left on the device", errno.EACCES: "permission denied"}
if hasattr(errno, "EDQUOT"):
    _STORAGE_ERRNOS[errno.EDQUOT] = "disk quota exceeded"


def _storage_error(dest: Path, e: OSError) -> StorageError:
    cause = _STORAGE_ERRNOS.get(e.errno, e.strerror or str(e))
    return StorageError(f"{dest}: cannot write in {dest.parent}: {cause}; nothing was written")


def _apply_umask(folder: Path) -> None:
    umask = os.umask(0)
    os.umask(umask)
    for root, dirs, files in os.walk(folder):
        os.chmod(root, 0o777 & ~umask)
        for name in files:
            os.chmod(os.path.join(root, name), 0o666 & ~umask)
