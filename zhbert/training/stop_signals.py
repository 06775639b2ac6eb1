"""SIGTERM ends a training run the way Ctrl-C does.

``kill PID``, a job scheduler's time limit and a machine shutting down send SIGTERM, whose default
action ends Python at once, without the one line that says the step reached and where a rerun
resumes. Inside ``terminate_as_interrupt()`` SIGTERM raises :class:`Terminated`, a
``KeyboardInterrupt``, so the code that reports Ctrl-C reports it too. SIGINT is left as it is: a
process started in the background (``nohup ... &``) ignores it on purpose.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from pathlib import Path

from ..errors import Interrupted
from .checkpoints import latest_complete_checkpoint

__all__ = ["Terminated", "terminate_as_interrupt", "interrupted"]


class Terminated(KeyboardInterrupt):
    """A run stopped by SIGTERM."""


def _raise_terminated(signum, frame):
    raise Terminated()


@contextmanager
def _stops_unwrapped():
    """A stop that lands while Python creates a class (inside any import, such as the image plugins
    PIL loads at the first saved plot) comes out of Python 3.11 as ``RuntimeError: Error calling
    __set_name__ ...`` whose cause is the ``KeyboardInterrupt``. Raise the stop itself, so that it is
    reported as a stop (the step, where a rerun resumes, 130 or 143) and not as a crash."""
    try:
        yield
    except RuntimeError as wrapped:
        if isinstance(wrapped.__cause__, KeyboardInterrupt):
            raise wrapped.__cause__ from None
        raise


@contextmanager
def terminate_as_interrupt():
    """Within the block, SIGTERM raises :class:`Terminated`, and a stop wrapped by Python on its way
    out comes out as the ``KeyboardInterrupt`` it is; the previous SIGTERM handler comes back after.
    Outside the main thread (where Python cannot set handlers) SIGTERM is left as it is."""
    if threading.current_thread() is not threading.main_thread():
        with _stops_unwrapped():
            yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        with _stops_unwrapped():
            yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def interrupted(out: Path, trainer, stop: KeyboardInterrupt, checkpoints: bool = True) -> Interrupted:
    """The error for a run in ``out`` stopped by ``stop``: the step it reached and where a rerun of the
    same command resumes. Its ``exit_code`` is the shell's status for that signal, 128 + its number
    (130 for Ctrl-C, 143 for SIGTERM)."""
    state = trainer.state
    if not checkpoints:
        where = "starts again (no checkpoints are saved without --save-steps)"
    else:
        last = latest_complete_checkpoint(out, clean=False) if trainer.is_world_process_zero() else None
        where = f"resumes from {last}" if last else "starts again (no checkpoint was complete yet)"
    return Interrupted(
        f"{out}: interrupted at step {state.global_step} of {state.max_steps}; rerunning the same command {where}"
        + (", and ends with the weights an uninterrupted run would have" if checkpoints else ""),
        exit_code=128 + (signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT),
    )
