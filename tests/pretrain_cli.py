"""`zhbert pretrain` as the pretraining tests run it: in a fresh process, with a tiny model."""

from __future__ import annotations

import os
import subprocess
import sys

TINY = ["--size", "tiny", "--batch-size", "8", "--num-proc", "1", "--max-length", "64"]
# 12 steps with a checkpoint every 4: long enough to stop part way and resume
RESUMABLE = [*TINY, "--max-steps", "12", "--save-steps", "4", "--logging-steps", "2", "--masking", "wwm"]


def pretrain_cli(*args, env_extra: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """``zhbert pretrain ARGS`` (paths may be Path objects); later flags override earlier ones."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env_extra or {})}
    cmd = [sys.executable, "-m", "zhbert", "pretrain", *map(str, args)]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
