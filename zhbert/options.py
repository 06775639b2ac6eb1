"""Command-line options made from a dataclass (``HfArgumentParser``), in the one style of every ``zhbert``
command: kebab-case flags in the usage and help (``--max-steps``; the ``--max_steps`` spelling still
works), and an unknown flag refused in one line that names the nearest known one."""

from __future__ import annotations

import argparse
import difflib
import sys
import textwrap

__all__ = ["dataclass_parser", "parse_into", "flag"]


def flag(field: str) -> str:
    """The command-line spelling of a dataclass field, as help and messages show it: ``max_steps`` -> ``--max-steps``."""
    return "--" + field.replace("_", "-")


def _is_switch(action) -> bool:
    """A boolean field: ``--crf`` alone means True (HfArgumentParser's ``nargs="?"``, ``const=True``)."""
    return action.nargs == 0 or (action.nargs == "?" and action.const is True)


class _ClickStyleHelp(argparse.HelpFormatter):
    """argparse's help laid out as click lays out every other zhbert command's: ``Usage: PROG
    [OPTIONS]``, the description indented, then ``Options:`` with each flag's kebab-case spellings,
    its ``<type>`` and ``[default: ...]``."""

    def __init__(self, prog: str):
        super().__init__(prog, max_help_position=24, width=80)

    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(f"{self._prog} [OPTIONS]", actions, groups, prefix="Usage: ")

    def start_section(self, heading):
        super().start_section(heading[:1].upper() + heading[1:] if heading else heading)

    def _format_text(self, text):
        return textwrap.indent(super()._format_text(text), "  ")

    def _fill_text(self, text, width, indent):
        # paragraphs re-wrapped; indented lines (example commands) kept one to a line, as written
        paragraphs = textwrap.dedent(text).strip().split("\n\n")
        out = []
        for para in paragraphs:
            if para.startswith((" ", "\t")):
                out.append("\n".join(indent + line.rstrip() for line in para.splitlines()))
            else:
                out.append(
                    textwrap.fill(
                        " ".join(para.split()), width - 2, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
                    )
                )
        return "\n\n".join(out)

    def _format_action_invocation(self, action):
        if not action.option_strings:
            return super()._format_action_invocation(action)
        # the snake_case spellings still parse; the help shows the kebab-case ones
        names = ", ".join(s for s in action.option_strings if not (s.startswith("--") and "_" in s)) or action.option_strings[0]
        if _is_switch(action):
            return names
        kind = getattr(action.type, "__name__", "str") if action.type in (int, float, str) else "str"
        return f"{names} <{kind}>" + (" ..." if action.nargs in ("+", "*") else "")

    def _get_help_string(self, action):
        text = action.help or ""
        if not _is_switch(action) and action.default not in (None, "", [], argparse.SUPPRESS):
            text += "  [default: %(default)s]"
        return text


def dataclass_parser(cls, prog: str, description: str | None = None):
    """An ``HfArgumentParser`` for ``cls`` whose usage and help show each flag's kebab-case spelling,
    laid out as the other commands' help."""
    from transformers import HfArgumentParser

    parser = HfArgumentParser(cls, prog=prog, description=description, formatter_class=_ClickStyleHelp)
    for action in parser._actions:
        if len(action.option_strings) > 1:  # HfArgumentParser gives --a_b and --a-b: show the kebab one first
            action.option_strings.sort(key=lambda s: (s.startswith("--") and "_" in s, s.startswith("--no")))
        if isinstance(action, argparse._HelpAction):
            action.option_strings, action.help = ["--help"], "Show this message and exit."
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
