"""The ``zhbert`` command group and what every command shares: the failure line, the output flag."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="zhbert",
    help="Chinese BERT: pretrain with Chinese masking, fine-tune task heads, predict, demo.",
    no_args_is_help=True,
    add_completion=False,
    # plain help (click's), the format `zhbert train` and `zhbert pretrain` print too (zhbert.options)
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

# Every command that writes a folder takes the same flag: --output-dir, as zhbert train spells it,
# with the spellings older versions used (--output, -o, --output_dir) kept as aliases.
OUTPUT_DIR = ("--output-dir", "--output", "-o", "--output_dir")


def _recipe_names() -> list[str]:
    from ..recipes import RECIPES

    return list(RECIPES)


def _fail(message: str, code: int = 1) -> None:
    typer.secho(f"zhbert: error: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code)
