"""A run's record of what defines it, so that a rerun resumes only the same run.

A rerun of a training command into its output folder resumes from the newest complete checkpoint there. That is
only right when the rerun is the same run: resumed with another batch size, masking or learning rate, it would go on
silently with other settings, and the model at its end would be a mix of two trainings that neither command
describes. The folder keeps a record (``zhbert_run.json``) of the settings that decide the weights, written at a fresh
start; a rerun that differs is refused, naming what changed.

A folder without a record is zhbert's only when it is empty or holds checkpoints zhbert marked complete (a run
begun before runs kept records). Anything else in it is someone else's: a run there would write among their files,
append to a file of theirs named as its loss log, and remove, as an interrupted save, a ``checkpoint-N`` folder of
theirs (a Hugging Face Trainer's output). Such a folder is refused before anything is written or removed.

Settings that may change on a resume (``may_change``: a pretraining run's ``--max-steps``, to train a finished run
further) are said in one line and the record then holds the new value.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from .checkpoints import MARKER, latest_complete_checkpoint
from .lock import LOCK_NAME

__all__ = ["RUN_RECORD", "resume_checkpoint", "write_record", "differences"]

logger = logging.getLogger("zhbert")
RUN_RECORD = "zhbert_run.json"


def resume_checkpoint(
    folder: str | os.PathLike, record: dict, *, adopt_unrecorded: str | None = None, may_change: tuple[str, ...] = ()
) -> str | None:
    """The checkpoint to resume from in ``folder`` (None: start afresh), after checking that its checkpoints belong
    to the run ``record`` describes; writes the record for a fresh start.

    Checkpoints without a record are refused, unless ``adopt_unrecorded`` (the reason, for the log) says that such
    checkpoints were written before runs kept records: they are resumed, and the caller records the settings given
    with :func:`write_record` once its own checks of them have passed."""
    folder = Path(folder)
    path = folder / RUN_RECORD
    record = json.loads(json.dumps(record))  # as it reads back: tuples become lists
    if not path.is_file():
        _refuse_a_folder_not_ours(folder)
    resume = latest_complete_checkpoint(folder)
    if resume and path.is_file():
        try:
            earlier = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as e:
            raise ValueError(f"{path}: unreadable run record ({e}); remove {folder} to start the run afresh") from None
        fixed = lambda r: {k: v for k, v in r.items() if k not in may_change}  # noqa: E731
        changed = differences(fixed(earlier), fixed(record))
        if changed:
            raise ValueError(
                f"{folder}: its checkpoints are from a different run ({'; '.join(changed[:6])}); rerun with the same "
                f"settings to resume, or remove {folder} (or choose another --output-dir) to start afresh"
            )
        moved = differences({k: earlier.get(k) for k in may_change}, {k: record.get(k) for k in may_change})
        if moved:
            logger.warning("%s: resumed with another %s", folder, "; ".join(moved))
            _write(path, record)
        logger.warning("resuming from %s", resume)
        return resume
    if resume and adopt_unrecorded is None:  # checkpoints without a record: not ours to guess about
        raise ValueError(f"{folder}: checkpoints without a {RUN_RECORD}; remove {folder} to start the run afresh")
    if resume:  # recorded by the caller once its own checks pass (write_record): a refused start records nothing
        logger.warning("%s: checkpoints without a %s (%s); it will record the settings given", folder, RUN_RECORD, adopt_unrecorded)
        logger.warning("resuming from %s", resume)
        return resume
    folder.mkdir(parents=True, exist_ok=True)
    _write(path, record)
    return None


def write_record(folder: str | os.PathLike, record: dict) -> None:
    """Record ``record`` as the run in ``folder`` where none is recorded yet (adopted checkpoints)."""
    path = Path(folder) / RUN_RECORD
    if not path.is_file():
        _write(path, json.loads(json.dumps(record)))


def _refuse_a_folder_not_ours(folder: Path) -> None:
    entries = sorted(e for e in folder.iterdir() if e.name != LOCK_NAME) if folder.is_dir() else []
    if not entries or any(e.name.startswith("checkpoint-") and (e / MARKER).is_file() for e in entries):
        return
    names = ", ".join(e.name + "/" * e.is_dir() for e in entries[:4]) + (f" and {len(entries) - 4:,} more" if len(entries) > 4 else "")
    raise ValueError(
        f"{folder}: holds {names}, which zhbert did not write: a run there would write among them and remove "
        "checkpoint folders it cannot tell from its own; give --output-dir a new or empty folder"
    )


def _write(path: Path, record: dict) -> None:
    tmp = path.with_name(RUN_RECORD + ".tmp")
    tmp.write_text(json.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def differences(earlier: dict, now: dict, prefix: str = "") -> list[str]:
    """``key: A then, B now`` for each setting that differs (nested records by dotted keys)."""
    out = []
    for key in sorted(set(earlier) | set(now)):
        a, b = earlier.get(key), now.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += differences(a, b, f"{prefix}{key}.")
        elif a != b:
            out.append(f"{prefix}{key}: {_short(a)} then, {_short(b)} now")
    return out


def _short(value) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:15] + "..." + text[-22:]  # a path's end names its file
