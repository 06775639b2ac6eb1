"""Crash-safe checkpoints on top of the Trainer's (non-atomic) saves.

Transformers issue #35782: a crash during a save leaves a ``checkpoint-N`` that
``resume_from_checkpoint`` picks and then fails on. We mark a checkpoint
complete only after the Trainer has finished writing it (``on_save`` runs after
the save), and on resume take the newest checkpoint that carries the marker and
whose files load; incomplete ones are removed. Keep ``save_total_limit >= 2``
so the previous complete checkpoint survives while the next is written.
"""
from __future__ import annotations

import json
import logging
import os
import re
import shutil
from pathlib import Path

from transformers import TrainerCallback

logger = logging.getLogger("zhbert")
MARKER = "zhbert_complete.json"
REQUIRED = ("trainer_state.json", "model.safetensors", "optimizer.pt", "scheduler.pt")

__all__ = ["CompleteCheckpointCallback", "latest_complete_checkpoint", "MARKER"]


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
        tmp = ckpt / (MARKER + ".tmp")
        with open(tmp, "w") as f:
            json.dump({"global_step": state.global_step}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, ckpt / MARKER)


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
    for d in out.iterdir():
        m = re.fullmatch(r"checkpoint-(\d+)", d.name)
        if m and d.is_dir():
            ckpts.append((int(m.group(1)), d))
    for _, d in sorted(ckpts, reverse=True):
        if (d / MARKER).is_file() and all((d / f).is_file() for f in REQUIRED) and _loads(d):
            return str(d)
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
