"""One writer per output folder: a lock file held while ``pretrain`` or a recipe trains there.

Two runs writing checkpoints into one folder would each resume from, and delete, the other's
checkpoints. The lock is ``<folder>/.zhbert.lock`` created with ``O_EXCL`` (atomic on local file
systems) and holding ``pid host start-time``. A second run refuses with the holder's PID; a lock
whose process is gone (same host, PID not alive) is stale: it is replaced, with a warning.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from contextlib import contextmanager
from pathlib import Path

from ..errors import StorageError

__all__ = ["output_lock", "LOCK_NAME"]

LOCK_NAME = ".zhbert.lock"
logger = logging.getLogger("zhbert")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True


def _holder(path: Path) -> tuple[int, str, str] | None:
    try:
        pid, host, since = path.read_text(encoding="utf-8").split(" ", 2)
        return int(pid), host, since.strip()
    except (OSError, ValueError):
        return None


@contextmanager
def output_lock(folder: str | os.PathLike):
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    me = f"{os.getpid()} {socket.gethostname()} {time.strftime('%Y-%m-%dT%H:%M:%S')}"
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = _holder(path)
            if holder and holder[0] != os.getpid() and (holder[1] != socket.gethostname() or _alive(holder[0])):
                pid, host, since = holder
                raise StorageError(
                    f"{folder}: another zhbert run is writing here (PID {pid} on {host}, since {since}); "
                    f"wait for it, stop it, or choose another output folder (its lock: {path})"
                ) from None
            logger.warning("%s: removing a stale lock (%s): its process is gone", path, " ".join(map(str, holder or ("unreadable",))))
            path.unlink(missing_ok=True)
            continue
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(me)
        except OSError:  # a full disk: leave no empty lock behind for the next run to puzzle over
            _remove(path)
            raise
        break
    try:
        yield path
    finally:
        if (_holder(path) or (None,))[0] == os.getpid():
            _remove(path)


def _remove(path: Path) -> None:
    """Remove our lock; a folder made read-only meanwhile must not replace the error the run
    ended with (the next run finds the lock's process gone and takes it over)."""
    try:
        path.unlink(missing_ok=True)
    except OSError as e:
        logger.warning("%s: could not remove the lock (%s); the next run replaces it", path, e.strerror or e)
