"""Where the shared public datasets and corpora live (read in place, never copied).

Search order: ``$ZHBERT_SHARED`` if set, then a ``shared/`` folder beside the
repository checkout (``../shared``), then beside the working directory.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["shared_dir", "dataset_path", "corpora_dir"]

_REPO = Path(__file__).resolve().parents[2]


def shared_dir(required: bool = True) -> Path | None:
    candidates = []
    if os.environ.get("ZHBERT_SHARED"):
        candidates.append(Path(os.environ["ZHBERT_SHARED"]))
    candidates += [_REPO.parent / "shared", Path.cwd().parent / "shared", _REPO / "shared"]
    for c in candidates:
        if (c / "datasets").is_dir():
            return c
    if required:
        raise FileNotFoundError(
            "the public datasets (a folder holding datasets/ and corpora/) were not found: set the environment "
            "variable ZHBERT_SHARED=/path/to/that/folder, or train on your own files with --train-file; "
            f"looked in {', '.join(str(c) for c in candidates)}"
        )
    return None


def dataset_path(*parts: str) -> Path:
    """``shared/datasets/<parts>``, e.g. ``dataset_path("msra_ner", "msra_test_bio.txt")``."""
    return shared_dir() / "datasets" / Path(*parts)


def corpora_dir() -> Path:
    return shared_dir() / "corpora"
