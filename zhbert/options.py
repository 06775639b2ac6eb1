"""Command-line options made from a dataclass (``HfArgumentParser``), in the one style of every ``zhbert``
command: kebab-case flags in the usage and help (``--max-steps``; the ``--max_steps`` spelling still
works), and an unknown flag refused in one line that names the nearest known one."""

from __future__ import annotations

import difflib
import sys

__all__ = ["dataclass_parser", "parse_into"]


def dataclass_parser(cls, prog: str, description: str | None = None):
    """An ``HfArgumentParser`` for ``cls`` whose usage and help show each flag's kebab-case spelling."""
    from transformers import HfArgumentParser

    parser = HfArgumentParser(cls, prog=prog, description=description)
    for action in parser._actions:
        if len(action.option_strings) > 1:  # HfArgumentParser gives --a_b and --a-b: show the kebab one first
            action.option_strings.sort(key=lambda s: (s.startswith("--") and "_" in s, s.startswith("--no")))
    return parser


def parse_into(parser, argv: list[str] | None):
    """The dataclass parsed from ``argv``; an unknown flag or a stray argument exits 2 with one line."""
    (parsed, rest) = parser.parse_args_into_dataclasses(args=argv, return_remaining_strings=True)
    if rest:
        known = [s for a in parser._actions for s in a.option_strings if s.startswith("--") and "_" not in s]
        flag = next((r for r in rest if r.startswith("-")), None)
        if flag is not None:
            near = difflib.get_close_matches(flag.split("=")[0].replace("_", "-"), known, n=1, cutoff=0.6)
            hint = f"; did you mean {near[0]}?" if near else f" ({parser.prog} --help lists the options)"
            message = f"unknown option {flag}{hint}"
        else:
            message = f"unexpected argument {rest[0]!r} ({parser.prog} --help lists the options)"
        print(f"zhbert: error: {message}", file=sys.stderr)
        sys.exit(2)
    return parsed
