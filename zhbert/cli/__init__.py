"""The ``zhbert`` command line (typer). Each subcommand is a thin layer over a Python function, so
everything the CLI does is also importable; each command's options live in the module of its group."""

from __future__ import annotations

# each module registers its commands on app; ``zhbert --help`` lists them in this order
from . import models  # noqa: F401  # isort: skip
from . import pretrain  # noqa: F401  # isort: skip
from . import train  # noqa: F401  # isort: skip
from . import predict  # noqa: F401  # isort: skip
from . import study  # noqa: F401  # isort: skip
from .app import app  # isort: skip

__all__ = ["app", "main"]


def _setup_logging() -> None:
    import logging

    log = logging.getLogger("zhbert")
    if not any(isinstance(h, logging.StreamHandler) for h in log.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("zhbert: %(levelname)s: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False  # a recipe's root handler (run_cli) would print every line a second time
    # transformers' per-load progress bars and load reports would bury the one line a command prints
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()


def main() -> None:  # console-script entry point
    from ..training.process_group import close_process_group

    _setup_logging()
    try:
        app()
    except SystemExit as e:  # typer ends every command with one, 0 on success
        if not e.code:
            close_process_group()
        raise
    close_process_group()


if __name__ == "__main__":  # pragma: no cover
    main()
