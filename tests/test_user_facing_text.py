"""What users read (README, docs/, every --help) says what is: no issue numbers, sessions, targets
or weight replacements (project history lives in bench/LOG.md), and help never points at source files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HISTORY = re.compile(
    r"issue \d+|issue's|\bsessions?\b|weight replacements?|\b(?:twenty|thirty|forty|fifty|sixty)-\w+(?:th|st|nd|rd)\b"
    r"|targets? (?:of|the bundled|missed)",
    re.IGNORECASE,
)
SOURCE_FILE = re.compile(r"\b[\w/]+\.py\b|bench/RESULTS")


def _hits(pattern, text: str) -> list[str]:
    return [text[max(0, m.start() - 60) : m.end() + 20].replace("\n", " ") for m in pattern.finditer(text)]


PAGE_GLOBS = ("docs/*.md", "zhbert/pretrained/*/README.md")  # the model cards are read by users too
PAGES = ["README.md", *(str(p.relative_to(ROOT)) for pattern in PAGE_GLOBS for p in sorted(ROOT.glob(pattern)))]


@pytest.mark.parametrize("page", PAGES)
def test_pages_carry_no_project_history(page):
    assert _hits(HISTORY, (ROOT / page).read_text(encoding="utf-8")) == []


def test_every_help_text_is_for_users():
    from typer.main import get_command
    from typer.testing import CliRunner

    from zhbert.cli import app
    from zhbert.recipes import RECIPES

    group = get_command(app)
    commands = [[name] for name in group.commands]
    commands += [["study", name] for name in group.commands["study"].commands] + [["train", name] for name in RECIPES]
    runner = CliRunner()
    found = {}
    for args in commands:
        out = runner.invoke(app, [*args, "--help"]).output
        assert "Usage" in out or "usage" in out, (args, out[-500:])
        hits = _hits(HISTORY, out) + _hits(SOURCE_FILE, out)
        if hits:
            found[" ".join(args)] = hits
    assert found == {}
