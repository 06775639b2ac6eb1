"""bench/RESULTS.md is a scoreboard a reader can re-run: at most 300 lines, and every command it quotes
names a script of the checkout or a `zhbert` command, with options that command takes."""

from __future__ import annotations

import pytest
from command_check import RESULTS, ROOT, problems_of, quoted_commands


def test_results_is_a_scoreboard():
    assert RESULTS.read_text(encoding="utf-8").count("\n") <= 300


def test_every_quoted_command_exists():
    commands = quoted_commands(RESULTS.read_text(encoding="utf-8"))
    assert len(commands) >= 20  # the scoreboard quotes its commands; an empty parse would pass below
    problems = [f"{c}: {p}" for c in commands for p in problems_of(c)]
    assert not problems, "\n".join(problems)


USER_PAGES = ["README.md", "recipes/README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", USER_PAGES)
def test_every_command_in_the_user_pages_exists(page):
    """The same check on the commands of README, docs/ and recipes/README.md (their fenced blocks)."""
    commands = [c for c in quoted_commands((ROOT / page).read_text(encoding="utf-8"), inline=False) if "$" not in c]
    problems = [f"{c}: {p}" for c in commands for p in problems_of(c)]
    assert not problems, "\n".join(problems)


def test_the_checker_catches_a_missing_script_command_option_and_dataset():
    assert problems_of("python bench/no_such_bench.py") == ["no script bench/no_such_bench.py"]
    assert problems_of("python bench/peers.py --no-such-flag") == ["bench/peers.py has no option --no_such_flag"]
    assert problems_of("zhbert distil cws") == ["no command zhbert distil"]
    assert problems_of("zhbert train ner --dataset msra --no_such_arg 1") == ["zhbert train has no option --no_such_arg"]
    assert problems_of("zhbert train ner --dataset msar") == ["zhbert train ner has no dataset msar"]
    assert problems_of("zhbert study nothing") == ["no command zhbert study nothing"]
    assert problems_of("zhbert study words --no-such") == ["zhbert study words has no option --no_such"]
    assert problems_of("python recipes/ner.py --dataset msra --lexicon_dimm 3") == ["recipes/ner.py has no option --lexicon_dimm"]
    assert problems_of("zhbert export ner out --trim-vocab") == []
    assert problems_of("zhbert pretrain --corpus c --objective electra --rtd-weight 50") == []
    assert quoted_commands("```bash\nzhbert predict --model cws \\\n  f.txt   # a comment\n```\nRun `python bench/pos.py`.") == [
        "zhbert predict --model cws f.txt",
        "python bench/pos.py",
    ]
