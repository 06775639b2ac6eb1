"""What ``zhbert train`` writes into ``--output-dir``, checked before anything is read or trained.

A recipe writes ``model/`` (the fine-tuned model, by ``save_pretrained``), ``metrics.json`` (its scores) and, with
``--save-steps``, ``checkpoints/`` there. Rerunning a recipe into its own folder replaces its earlier model and
scores, as users expect of ``runs/ner``; but a ``model/`` or ``metrics.json`` that zhbert did not write (a project
folder given as ``--output-dir .``, a Hugging Face model saved as ``model/``) would be written over at the end of
the run. Such a folder is refused at the start, naming the file, so that hours of training do not end in either a
user's file lost or a refusal. (``checkpoints/`` is checked by the resume's own record: :mod:`zhbert.training.run_record`.)
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["check_output_folder", "RESULT_KEYS"]

#: the keys every ``metrics.json`` zhbert train writes has, one task's or several's
RESULT_KEYS = ("task", "dataset", "arguments")
#: the config key of a zhbert task model: one head, or a multi-task model's heads
HEAD_KEYS = ("zhbert_head", "zhbert_heads")


def check_output_folder(output_dir: str | Path, saves_model: bool) -> None:
    """Raise ``ValueError`` (one line naming the file) when ``output_dir`` holds a ``model/`` or ``metrics.json``
    that a run would write over and zhbert did not write."""
    out = Path(output_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out}: exists and is not a folder; --output-dir names the folder zhbert train writes its model and scores in")
    _check_scores(out)
    if saves_model:
        _check_model(out / "model")


def _refuse(path: Path, what: str) -> ValueError:
    return ValueError(f"{path}: {what}; a run would write over it: choose another --output-dir")


def _check_scores(out: Path) -> None:
    from ..destination import foreign_file

    theirs = foreign_file(out, ("metrics.json",), "metrics.json", lambda r: isinstance(r, dict) and all(key in r for key in RESULT_KEYS))
    if theirs is not None:
        raise _refuse(theirs, "not scores zhbert train wrote")


def _check_model(folder: Path) -> None:
    if not folder.exists() and not folder.is_symlink():
        return
    if folder.is_symlink() or not folder.is_dir():
        raise _refuse(folder, "not a folder")
    if not any(folder.iterdir()):
        return
    config = folder / "config.json"
    try:
        saved = json.loads(config.read_text(encoding="utf-8")) if config.is_file() else None
    except (OSError, ValueError):
        saved = None
    if not (isinstance(saved, dict) and any(isinstance(saved.get(key), dict) for key in HEAD_KEYS)):
        first = min(p.name for p in folder.iterdir())
        why = "its config.json has no zhbert_head" if saved else f"it holds {first}"
        raise _refuse(folder, f"not a model zhbert train saved ({why})")
