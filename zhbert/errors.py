"""Errors that name where bad input came from.

Every reader raises :class:`DataFormatError` for malformed input; the message is
always ``"<file>:<line>: <problem>"`` so a user can jump straight to the line.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, field

logger = logging.getLogger("zhbert")


def warn(message: str, stacklevel: int = 3) -> None:
    """Tell the user something they should know: through the ``zhbert`` logger where it is shown
    (the CLI's handler, or one the user added), else as a Python warning, which a library's
    silent logger (``NullHandler``, as zhbert installs) would otherwise swallow."""
    shown = [h for h in logger.handlers if not isinstance(h, logging.NullHandler)]
    if shown or logger.propagate and logging.getLogger().handlers:
        logger.warning(message)
    else:
        warnings.warn(message, UserWarning, stacklevel=stacklevel)


class ZhbertError(Exception):
    """Base class for errors raised by zhbert on bad input or bad set-up."""


def clip(text, limit: int = 80) -> str:
    """``repr`` of at most ``limit`` characters of ``text``: an error quotes the offending line, not
    a 50 MB one."""
    text = str(text)
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + f"... ({len(text):,} characters)"


class DataFormatError(ZhbertError, ValueError):
    """A data file is malformed; names the file, the 1-based line and the problem."""

    def __init__(self, path: str, line: int | None, problem: str):
        self.path = str(path)
        self.line = line
        if len(problem) > 400:  # a safety net behind clip(): no message carries a whole line
            problem = problem[:400] + f"... ({len(problem):,} characters)"
        self.problem = problem
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}")


class Interrupted(ZhbertError):
    """A run stopped by Ctrl-C or SIGTERM; says the step reached and where a rerun resumes. ``exit_code``
    is the shell's status for that signal (130 or 143)."""

    def __init__(self, message: str, exit_code: int = 130):
        super().__init__(message)
        self.exit_code = exit_code


class StorageError(ZhbertError, OSError):
    """Writing a checkpoint or model failed: read-only folder, full disk, no permission."""


class ModelLoadError(ZhbertError, OSError):
    """A model folder is missing, incomplete or corrupted; names the path."""


@dataclass
class BadLineReport:
    """Collects skipped lines when a caller asks a reader to skip bad input.

    Nothing is dropped silently: the report is logged and returned so callers can
    print ``count`` and the first few line numbers.
    """

    path: str
    errors: list[DataFormatError] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.errors)

    def first_lines(self, n: int = 5) -> list[int | None]:
        return [e.line for e in self.errors[:n]]

    def summary(self) -> str:
        if not self.errors:
            return f"{self.path}: no bad lines"
        first = ", ".join(str(x) for x in self.first_lines())
        return f"{self.path}: skipped {self.count} bad record(s) (first lines: {first}); first problem: {self.errors[0].problem}"


class ErrorPolicy:
    """``raise`` (default) stops at the first bad record; ``skip`` records and goes on."""

    def __init__(self, path: str, on_error: str = "raise"):
        if on_error not in ("raise", "skip"):
            raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
        self.on_error = on_error
        self.report = BadLineReport(str(path))

    def handle(self, error: DataFormatError) -> None:
        if self.on_error == "raise":
            raise error
        self.report.errors.append(error)

    def finish(self) -> BadLineReport:
        if self.report.count:
            logger.warning(self.report.summary())
            warnings.warn(self.report.summary(), stacklevel=3)
        return self.report
