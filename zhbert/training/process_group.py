"""Closing the process group a distributed command opened.

Under torchrun or ``accelerate launch`` the Trainer opens a process group (gloo on CPU) and
nothing closes it. When a rank's interpreter then shuts down while gloo's worker threads are
still alive, that rank can abort with "terminate called without an active exception" (exit
-6; pytorch issue #190489, and #179291, an atexit hook in torch itself, abandoned) and the
launcher reports the whole run as failed after every step and checkpoint had finished. It
happened here under load, in ``tests/test_distributed.py``.

So the command-line entry points close the group once their command has succeeded. Not after
a failure: destroying a group while another rank may still wait in a collective can hang
(torchtitan closes it on success only, for the same reason). Library calls such as
``zhbert.training.pretrain.pretrain`` leave the group to their caller, who may still need it.
"""

from __future__ import annotations

import sys

__all__ = ["close_process_group"]


def close_process_group() -> None:
    """Destroy the default process group if this process opened one; otherwise do nothing."""
    if "torch" not in sys.modules:  # nothing distributed can have run, and importing torch costs a second
        return
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
