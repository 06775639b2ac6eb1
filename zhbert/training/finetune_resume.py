"""Crash-safe resume for fine-tuning: a rerun of the same command continues from the last checkpoint.

A recipe given ``--save-steps N`` checkpoints every N optimizer steps and at every epoch's end
into ``<output_dir>/checkpoints`` (the pretraining checkpoints' completion markers and SHA-256
records, ``zhbert.training.checkpoints``; the newest two are kept). A rerun of the same command
resumes from the newest complete one; on this project's 2 CPU cores a run on MSRA takes hours, and a
session, a crash or a ``kill`` ends it part way.

Resuming is only right for the same run. The checkpoint folder keeps a record of what defines it
(:mod:`zhbert.training.run_record`: the schedule, the head, the encoder and a digest of the training
examples); a rerun that differs is refused, naming what changed, rather than mixing two runs' weights.

What the epoch-end callbacks hold in memory (the best epoch's weights and every epoch's dev score
for ``--best-epoch-on-dev``; the last epochs' weights for ``--average-last-epochs``) is written into
each checkpoint too (:class:`EpochStateInCheckpoints`), so a resumed run ends on the same weights
as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

import torch
from transformers import TrainerCallback

from .run_record import RUN_RECORD, resume_checkpoint

__all__ = ["RUN_RECORD", "SaveAtEpochEnd", "EpochStateInCheckpoints", "examples_digest", "resume_checkpoint", "finished_at"]

logger = logging.getLogger("zhbert")
_NOT_HASHED = {"teacher_logits"}  # computed from the examples by a teacher the record already names


def examples_digest(train: list[dict]) -> str:
    """SHA-256 over the training examples in order (every field but the teacher's logits)."""
    h = hashlib.sha256()
    for e in train:
        h.update(repr(sorted((k, v) for k, v in e.items() if k not in _NOT_HASHED)).encode())
    return h.hexdigest()


def finished_at(checkpoint: str | os.PathLike) -> int:
    """The step the run that saved this checkpoint ends at (the run record guarantees it is this run)."""
    return int(json.loads((Path(checkpoint) / "trainer_state.json").read_text())["max_steps"])


class SaveAtEpochEnd(TrainerCallback):
    """With step checkpoints, also save when an epoch ends, after the epoch-end callbacks ran.

    The Trainer saves at a step before ``on_epoch_end``; a checkpoint at an epoch's last step would
    then lack that epoch's dev score, and a run resumed from it starts the next epoch and never
    scores that one. So a save due at an epoch's last step (or the run's) moves to just after the
    epoch's end: one save, holding the epoch-end state."""

    def on_step_end(self, args, state, control, **kwargs):
        if control.should_save and (float(state.epoch).is_integer() or state.global_step >= state.max_steps):
            control.should_save = False  # on_epoch_end follows at once and saves
        return control

    def on_epoch_end(self, args, state, control, **kwargs):
        control.should_save = True
        return control


class EpochStateInCheckpoints(TrainerCallback):
    """Writes an epoch-end callback's memory into every checkpoint; runs before the completion
    marker is written (it is listed before ``CompleteCheckpointCallback``), so the marker covers it."""

    FILE = "zhbert_epoch_state.safetensors"

    def __init__(self, holder):
        self.holder = holder  # KeepBestEpoch or AverageLastEpochs: tensors() and load_tensors()

    def on_save(self, args, state, control, **kwargs):
        ckpt = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        if state.is_world_process_zero and ckpt.is_dir():
            from safetensors.torch import save_file

            tensors, meta = self.holder.tensors()
            save_file({k: v.contiguous() for k, v in tensors.items()}, str(ckpt / self.FILE), metadata={"state": json.dumps(meta)})

    def restore(self, ckpt: str | os.PathLike) -> None:
        from safetensors import safe_open

        path = Path(ckpt) / self.FILE
        if not path.is_file():
            raise ValueError(f"{ckpt}: no {self.FILE}: the checkpoint was saved without the epoch-end state this run keeps")
        with safe_open(str(path), framework="pt") as f:
            meta = json.loads(f.metadata()["state"])
            tensors: dict[str, torch.Tensor] = {k: f.get_tensor(k) for k in f.keys()}
        self.holder.load_tensors(tensors, meta)
