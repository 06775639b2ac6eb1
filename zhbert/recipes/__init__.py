"""The recipes: one module per task, each a ``run(args) -> metrics record`` that reads
top to bottom like Hugging Face's ``run_ner.py`` (arguments, data, model, train,
evaluate, save).

:data:`RECIPES` is the one list of them: ``zhbert train <name>``, the studies
(``zhbert study ...``) and the ``recipes/*.py`` scripts of a source checkout all go
through it, so a recipe is added by writing its module and one entry here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, replace

__all__ = ["Recipe", "RECIPES", "recipe", "train"]


@dataclass(frozen=True)
class Recipe:
    name: str  # zhbert train <name>
    module: str  # zhbert.recipes.<module>, whose run(args) trains, scores and returns the metrics record
    head: str  # the head it trains: token | sequence | pair, or several (one per task)
    default_dataset: str  # --dataset when none is given
    study_dataset: str  # the dataset the mode and masking studies train it on
    summary: str

    def _module(self):
        return importlib.import_module(f"{__name__}.{self.module}")

    def arguments(self, **options):
        """:class:`~zhbert.recipes.arguments.RecipeArguments` as a caller in Python states them,
        the preset filled in."""
        from .arguments import RecipeArguments, finalize_args

        return finalize_args(RecipeArguments(**options), self.default_dataset)

    def run(self, args) -> dict:
        """Train (or evaluate) and score; returns the record it writes to ``metrics.json``."""
        from .arguments import finalize_args
        from .output_folder import check_output_folder

        args = finalize_args(replace(args), self.default_dataset)
        check_output_folder(args.output_dir, saves_model=bool(args.save_model and not args.evaluate_only))
        return self._module().run(args)

    def dev_score(self, folder, **options) -> float:
        """The headline score (``metrics.json``'s ``score``) of the saved task folder ``folder`` on
        the dev split: ``--evaluate-only FOLDER --score-on dev``, what a greedy soup compares.
        ``options`` as :meth:`arguments` takes them (``dataset="msra"``, ``max_eval_samples=...``)."""
        import tempfile

        with tempfile.TemporaryDirectory() as out:  # the record is returned; its folder is not kept
            return self.run(self.arguments(evaluate_only=str(folder), score_on="dev", output_dir=out, **options))["score"]

    def parse(self, argv: list[str] | None = None):
        from .arguments import finalize_args, parse_args

        prog = f"zhbert train {self.name}"
        return finalize_args(parse_args(argv, prog=prog, description=self._module().__doc__), self.default_dataset)

    def main(self, argv: list[str] | None = None) -> None:
        """The command line: ``zhbert train <name> ARGS`` and ``python recipes/<script> ARGS``."""
        from .arguments import run_cli

        run_cli(lambda: self.run(self.parse(argv)))


RECIPES = {
    r.name: r
    for r in (
        Recipe("cws", "cws", "token", "pku", "pku", "word segmentation (BMES character tagging)"),
        Recipe("ner", "ner", "token", "msra", "msra", "named entities (BIO/BMES character tagging, optional CRF)"),
        Recipe("pos", "pos", "token", "peoples_daily", "peoples_daily", "part-of-speech tags with the words (BMES x PKU tags)"),
        Recipe("tagging", "tagging", "sequence", "usual", "usual", "Weibo post classification, single- or multi-label"),
        Recipe("matching", "matching", "pair", "afqmc", "lcqmc", "sentence pairs: paraphrase, NLI or STS regression"),
        Recipe(
            "multitask",
            "multitask",
            "several",
            "ner=msra,cws=pku,tagging=usual",
            "ner=msra,cws=pku,tagging=usual",
            "several tasks on one shared encoder, one folder",
        ),
    )
}


def recipe(name: str) -> Recipe:
    """The recipe called ``name``; an unknown name is an error listing the known ones."""
    if name not in RECIPES:
        raise ValueError(f"unknown recipe {name!r}; choose one of {', '.join(RECIPES)}")
    return RECIPES[name]


def train(task: str, **options) -> dict:
    """``zhbert train TASK`` from Python: ``options`` are the command's flags in snake_case
    (``train_file="my.conll"``, ``encoder="hfl/chinese-macbert-base"``, ``output_dir="runs/my-ner"``).
    Trains, scores and saves the model in ``output_dir/model``; returns the record written to
    ``output_dir/metrics.json`` (``score``, ``scored_on``, ``notes``, ...)."""
    import difflib
    from dataclasses import fields

    from .arguments import RecipeArguments

    known = [f.name for f in fields(RecipeArguments)]
    for name in options:
        if name not in known:
            near = difflib.get_close_matches(name, known, n=1)
            raise ValueError(f"unknown option {name!r}" + (f"; did you mean {near[0]!r}?" if near else ""))
    chosen = recipe(task)
    return chosen.run(chosen.arguments(**options))
