"""JSON-lines logs with a row per logged step (``loss_log.jsonl``, ``eval_log.jsonl``). A resumed run logs the
steps since its last checkpoint again, so a step can have several rows: the latest is the one that holds."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["latest_per_step", "read_step_log"]


def latest_per_step(rows) -> list[dict]:
    """``rows`` in step order, one per step: the latest row of each."""
    by_step = {row["step"]: row for row in rows}
    return [by_step[step] for step in sorted(by_step)]


def read_step_log(path: Path) -> list[dict]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return latest_per_step(json.loads(line) for line in lines if line.strip())
