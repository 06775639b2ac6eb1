"""Crash-safe resume for fine-tuning: a rerun of the same command continues from the last checkpoint.

A recipe given ``--save-steps N`` checkpoints every N optimizer steps and at every epoch's end
into ``<output_dir>/checkpoints`` (the pretraining checkpoints' completion markers and SHA-256
records, ``zhbert.training.checkpoints``; the newest two are kept). A rerun of the same command
resumes from the newest complete one; on this project's 2 CPU cores a run on MSRA takes hours, and a
session, a crash or a ``kill`` ends it part way.

Resuming is only right for the same run. The checkpoint folder keeps a record of what defines it
(``zhbert_run.json``: the schedule, the head, the encoder and a digest of the training examples);
a rerun that differs is refused, naming what changed, rather than mixing two runs' weights.

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

from .checkpoints import latest_complete_checkpoint

__all__ = ["RUN_RECORD", "SaveAtEpochEnd", "EpochStateInCheckpoints", "examples_digest", "resume_checkpoint", "finished_at"]

logger = logging.getLogger("zhbert")
RUN_RECORD = "zhbert_run.json"
_NOT_HASHED = {"teacher_logits"}  # computed from the examples by a teacher the record already names


def examples_digest(train: list[dict]) -> str:
    """SHA-256 over the training examples in order (every field but the teacher's logits)."""
    h = hashlib.sha256()
    for e in train:
        h.update(repr(sorted((k, v) for k, v in e.items() if k not in _NOT_HASHED)).encode())
    return h.hexdigest()


def resume_checkpoint(folder: str | os.PathLike, record: dict) -> str | None:
    """The checkpoint to resume from in ``folder`` (None: start afresh), after checking that its
    checkpoints belong to the run ``record`` describes; writes the record for a fresh start."""
    folder = Path(folder)
    path = folder / RUN_RECORD
    record = json.loads(json.dumps(record))  # as it reads back: tuples become lists
    resume = latest_complete_checkpoint(folder)
    if resume and path.is_file():
        try:
            earlier = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as e:
            raise ValueError(f"{path}: unreadable run record ({e}); remove {folder} to start the run afresh") from None
        changed = _differences(earlier, record)
        if changed:
            raise ValueError(
                f"{folder}: its checkpoints are from a different run ({'; '.join(changed[:6])}); rerun with the same "
                f"settings to resume, or remove {folder} (or choose another --output-dir) to start afresh"
            )
        logger.warning("resuming from %s", resume)
        return resume
    if resume:  # checkpoints without a record: not ours to guess about
        raise ValueError(f"{folder}: checkpoints without a {RUN_RECORD}; remove {folder} to start the run afresh")
    folder.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(RUN_RECORD + ".tmp")
    tmp.write_text(json.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
    return None


def _differences(earlier: dict, now: dict, prefix: str = "") -> list[str]:
    out = []
    for key in sorted(set(earlier) | set(now)):
        a, b = earlier.get(key), now.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += _differences(a, b, f"{prefix}{key}.")
        elif a != b:
            out.append(f"{prefix}{key}: {_short(a)} then, {_short(b)} now")
    return out


def _short(value) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


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
