"""Crash-safe checkpoints on top of the Trainer's (non-atomic) saves.

Transformers issue #35782: a crash during a save leaves a ``checkpoint-N`` that
``resume_from_checkpoint`` picks and then fails on. We mark a checkpoint
complete only after the Trainer has finished writing it (``on_save`` runs after
the save); the marker records the size and SHA-256 of every file in it. On
resume we take the newest checkpoint whose files all still match their record:
a truncated ``optimizer.pt``, a deleted ``rng_state.pth`` or bytes zeroed inside
``model.safetensors`` would otherwise fail every rerun or resume silently to
different weights. Incomplete checkpoints are removed; damaged complete ones are
renamed ``damaged-checkpoint-N`` (kept for inspection) and the previous one is
used, said in one line. Keep ``save_total_limit >= 2`` so the previous complete
checkpoint survives while the next is written.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
from contextlib import contextmanager
from pathlib import Path

from transformers import TrainerCallback

from ..errors import ModelLoadError, StorageError

logger = logging.getLogger("zhbert")
MARKER = "zhbert_complete.json"
REQUIRED = ("trainer_state.json", "model.safetensors", "optimizer.pt", "scheduler.pt")

__all__ = ["CompleteCheckpointCallback", "latest_complete_checkpoint", "damage", "checkpoint_step", "train_or_restore", "MARKER"]


def checkpoint_step(ckpt: str | os.PathLike) -> int:
    """The optimizer step a checkpoint was saved at."""
    return int(json.loads((Path(ckpt) / "trainer_state.json").read_text())["global_step"])


def train_or_restore(trainer, resume: str | None, max_steps: int) -> None:
    """``trainer.train`` from ``resume`` (None: from the start), or, when that checkpoint is already at
    ``max_steps`` (the run had finished), its weights loaded instead: training again would take one
    step past the end."""
    if resume and checkpoint_step(resume) >= max_steps:
        from safetensors.torch import load_file

        trainer.model.load_state_dict(load_file(str(Path(resume) / "model.safetensors")), strict=False)
        logger.warning("%s is at step %d of %d: nothing left to train", resume, checkpoint_step(resume), max_steps)
    else:
        trainer.train(resume_from_checkpoint=resume)


class CompleteCheckpointCallback(TrainerCallback):
    def on_save(self, args, state, control, **kwargs):
        if not state.is_world_process_zero:
            return
        ckpt = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        if not ckpt.is_dir():
            return
        missing = [f for f in REQUIRED if not (ckpt / f).is_file()]
        if missing:
            logger.warning("%s: not marked complete, missing %s", ckpt, missing)
            return
        files = {f.name: _digest(f) for f in sorted(ckpt.iterdir()) if f.is_file() and not f.name.startswith(MARKER)}
        tmp = ckpt / (MARKER + ".tmp")
        with open(tmp, "w") as f:
            json.dump({"global_step": state.global_step, "files": files}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, ckpt / MARKER)


def _digest(path: Path) -> dict:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return {"size": path.stat().st_size, "sha256": h.hexdigest()}


def damage(ckpt: Path) -> str | None:
    """What changed in a complete checkpoint since it was marked, or None when it is intact."""
    try:
        record = json.loads((ckpt / MARKER).read_text())
    except (OSError, ValueError) as e:
        return f"unreadable completion marker ({e})"
    for name, want in (record.get("files") or {}).items():  # markers before this record list no files
        f = ckpt / name
        if not f.is_file():
            return f"{name} is missing"
        if f.stat().st_size != want["size"]:
            return f"{name} has {f.stat().st_size:,} bytes, {want['size']:,} when it was saved"
        if _digest(f)["sha256"] != want["sha256"]:
            return f"{name} changed since it was saved (SHA-256 differs)"
    return None


@contextmanager
def storage_errors(output_dir: Path, resume: str | None = None):
    """A save that fails for a read-only or full disk ends in one line that says so, names the
    folder and the last complete checkpoint (not a 108-line traceback or ``basic_ios::clear``)."""
    try:
        yield
    except StorageError:  # already one line (an inner block said it)
        raise
    except (OSError, RuntimeError) as e:
        # torch and safetensors re-raise a failed write as another exception: read the whole chain
        # (a full disk reaches here as "[enforce fail at inline_container.cc] . unexpected pos",
        # with the "No space left" OSError or the "iostream error" as its cause or context)
        chain, link = [], e
        while link is not None and len(chain) < 20:
            chain.append(link)
            link = link.__cause__ or link.__context__
        text = " | ".join(str(x) for x in chain)
        errnos = {getattr(x, "errno", None) for x in chain}
        errno_ = 30 if 30 in errnos else 28 if 28 in errnos else getattr(e, "errno", None)
        if errno_ == 30 or "Read-only file system" in text:
            cause = "the folder is read-only"
        elif (
            errno_ == 28 or "No space left" in text or "iostream error" in text or "PytorchStreamWriter" in text or "unexpected pos" in text
        ):
            free = shutil.disk_usage(output_dir).free if output_dir.exists() else 0
            cause = f"no space left on the device ({free / 1e6:,.0f} MB free)"
        elif isinstance(e, PermissionError) or errno_ == 13:
            cause = "permission denied"
        else:
            raise
        last = latest_complete_checkpoint(output_dir, clean=False) or resume or "none yet"
        raise StorageError(f"{output_dir}: cannot save: {cause}; last complete checkpoint: {last}") from None


def _loads(ckpt: Path) -> bool:
    try:
        from safetensors import safe_open

        with safe_open(str(ckpt / "model.safetensors"), framework="pt") as f:
            f.keys()
        json.loads((ckpt / "trainer_state.json").read_text())
        return True
    except Exception as e:  # a truncated file is exactly what we guard against
        logger.warning("%s: checkpoint does not load (%s)", ckpt, e)
        return False


def latest_complete_checkpoint(output_dir: str | os.PathLike, clean: bool = True) -> str | None:
    """Newest complete checkpoint in ``output_dir``; removes incomplete newer ones."""
    out = Path(output_dir)
    if not out.is_dir():
        return None
    ckpts = []
    root = out.resolve()
    for d in out.iterdir():
        m = re.fullmatch(r"checkpoint-(\d+)", d.name)
        if m and d.is_dir():
            target = d.resolve()
            if d.is_symlink() or target.parent != root:
                # resuming (or cleaning up) would read or delete files that belong to someone else
                raise ModelLoadError(f"{d}: resolves to {target}, outside the output folder {root}; not resuming from it (remove the link)")
            ckpts.append((int(m.group(1)), d))
    for _, d in sorted(ckpts, reverse=True):
        if (d / MARKER).is_file() and all((d / f).is_file() for f in REQUIRED):
            problem = damage(d)
            if problem is None and _loads(d):
                return str(d)
            if problem is not None:
                logger.warning(
                    "%s: %s; not resuming from it (kept as damaged-%s), trying the previous complete checkpoint", d, problem, d.name
                )
                if clean:
                    shutil.rmtree(d.with_name("damaged-" + d.name), ignore_errors=True)
                    d.rename(d.with_name("damaged-" + d.name))
                continue
        if clean:
            logger.warning("removing incomplete checkpoint %s (interrupted save)", d)
            shutil.rmtree(d, ignore_errors=True)
    return None


class FaultInjection(TrainerCallback):
    """Kill the process (SIGKILL, like ``kill -9``) to test crash-safe resume.

    Active only when ``ZHBERT_FAULT_AT_STEP`` (kill after that optimizer step) or
    ``ZHBERT_FAULT_DURING_SAVE`` (truncate that step's weights file, then kill
    before the checkpoint is marked complete) is set in the environment.
    """

    def __init__(self):
        self.at_step = int(os.environ.get("ZHBERT_FAULT_AT_STEP", "0"))
        self.during_save = int(os.environ.get("ZHBERT_FAULT_DURING_SAVE", "0"))

    @property
    def active(self) -> bool:
        return bool(self.at_step or self.during_save)

    def on_step_end(self, args, state, control, **kwargs):
        if self.at_step and state.global_step == self.at_step:
            os.kill(os.getpid(), 9)

    def on_save(self, args, state, control, **kwargs):
        if self.during_save and state.global_step == self.during_save:
            weights = Path(args.output_dir) / f"checkpoint-{state.global_step}" / "model.safetensors"
            size = weights.stat().st_size
            with open(weights, "r+b") as f:
                f.truncate(size // 2)
            os.kill(os.getpid(), 9)
