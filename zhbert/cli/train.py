"""zhbert train: a recipe's command line."""

from __future__ import annotations

from typing import Optional

import typer

from .app import _fail, _recipe_names, app


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []})
def train(
    ctx: typer.Context,
    task: Optional[str] = typer.Argument(None, help="the recipe: " + ", ".join(_recipe_names())),
) -> None:
    """Fine-tune a task head with its recipe; `zhbert train <recipe> --help` lists the recipe's arguments."""
    from ..recipes import RECIPES

    if task in (None, "--help", "-h"):
        typer.echo("usage: zhbert train RECIPE [ARGS]  (zhbert train RECIPE --help for its arguments)\n\nrecipes:")
        for r in RECIPES.values():
            typer.echo(f"  {r.name:<10} {r.summary} (default dataset: {r.default_dataset})")
        raise typer.Exit(0 if task else 2)
    if task not in RECIPES:
        _fail(f"unknown task {task!r}; the recipes are {', '.join(RECIPES)}")
    RECIPES[task].main(list(ctx.args))
