"""Bundled models: short names -> folders shipped inside the package.

The README's main command runs the demo on these; a missing one is reported with
the command that makes it.
"""
from __future__ import annotations

from pathlib import Path

BUNDLED_DIR = Path(__file__).parent / "pretrained"

# short name -> (folder, how to make it)
BUNDLED = {
    "base": ("base", "zhbert pretrain --preset default --output zhbert/pretrained/base (see bench/RESULTS.md)"),
    "cws": ("cws", "python recipes/cws.py --preset bundle"),
    "tagging": ("tagging", "python recipes/weibo_tagging.py --preset bundle"),
    "ner": ("ner", "python recipes/ner.py --preset bundle"),
    "matching": ("matching", "python recipes/matching.py --preset bundle"),
}


def bundled_path(name: str) -> Path:
    """Folder of a bundled model; raises with the list of names or the make command."""
    if name not in BUNDLED:
        raise KeyError(f"unknown model {name!r}; bundled models: {', '.join(BUNDLED)} (or pass a local model folder)")
    folder, how = BUNDLED[name]
    path = BUNDLED_DIR / folder
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"bundled model {name!r} is missing at {path}; make it with: {how}")
    return path


def missing_bundled() -> list[tuple[str, Path, str]]:
    return [(n, BUNDLED_DIR / f, how) for n, (f, how) in BUNDLED.items() if not (BUNDLED_DIR / f / "config.json").is_file()]
