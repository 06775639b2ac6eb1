"""The README's Python examples run, and every result written as a Python literal in a comment
(at the end of the line, or alone on the next line) is what they give."""

from __future__ import annotations

import ast
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _literal(comment: str):
    try:
        return ast.literal_eval(re.split(r":\s", comment)[0].strip())  # "[...]: why" -> [...]
    except (ValueError, SyntaxError):
        return None  # prose, or a repr (Span(...)) that is no literal


def test_readme_python_examples_give_what_they_say():
    checked = 0
    namespace: dict = {}
    for block in re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            code, _, comment = line.partition("  # ")
            if not comment and i + 1 < len(lines) and lines[i + 1].startswith("# "):
                comment = lines[i + 1][2:]
            expected = _literal(comment) if comment else None
            if expected is not None and not re.match(r"\w+ = ", code):
                assert eval(code, namespace) == expected, line
                checked += 1
            else:
                exec(code, namespace)
    assert checked >= 4
