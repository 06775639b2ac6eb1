"""Bundled models: short names -> folders shipped inside the package.

The README's main command runs the demo on these; a missing one is reported with
the command that makes it.
"""
from __future__ import annotations

from pathlib import Path

from .errors import ModelLoadError

BUNDLED_DIR = Path(__file__).parent / "pretrained"

# short name -> (folder, how to make it)
BUNDLED = {
    "base": ("base", "runs/pretrain_default.sh as recorded in bench/RESULTS.md, then export OUTPUT/final here"),
    "cws": ("cws", "python recipes/cws.py --dataset pku --output_dir runs/cws-pku, then copy runs/cws-pku/model here"),
    "tagging": ("tagging", "python recipes/weibo_tagging.py --dataset usual --output_dir runs/tagging-usual, then copy its model here"),
    "ner": ("ner", "python recipes/ner.py --dataset msra --crf --output_dir runs/ner-msra, then copy its model here"),
    "matching": ("matching", "python recipes/matching.py --dataset afqmc --output_dir runs/matching-afqmc, then copy its model here"),
}


def bundled_path(name: str) -> Path:
    """Folder of a bundled model; raises with the list of names or the make command."""
    if name not in BUNDLED:
        raise ModelLoadError(f"unknown model {name!r}; bundled models: {', '.join(BUNDLED)} (or pass a local model folder)")
    folder, how = BUNDLED[name]
    path = BUNDLED_DIR / folder
    if not (path / "config.json").is_file():
        raise ModelLoadError(f"bundled model {name!r} is missing at {path}; make it with: {how}")
    return path


def missing_bundled() -> list[tuple[str, Path, str]]:
    return [(n, BUNDLED_DIR / f, how) for n, (f, how) in BUNDLED.items() if not (BUNDLED_DIR / f / "config.json").is_file()]
