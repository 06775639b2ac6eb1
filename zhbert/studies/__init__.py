"""Studies anyone can rerun on their own model: which application mode, which masking.

* :mod:`.modes` trains the same encoder on one dataset per task type with every
  {fine-tune, feature-based} x representation combination (``cls`` only for
  sequence and pair heads), several seeds each, and reproduces the BERT paper's
  feature-based NER table (Devlin et al. 2019, Table 7) on Chinese.
* :mod:`.masking` pretrains the same configuration for the same number of steps
  under each masking strategy (with and without NSP), then fine-tunes each result
  on the four tasks.

Every training run is one call of the task's recipe (:data:`zhbert.recipes.RECIPES`)
with the arguments a user would type after ``zhbert train <recipe>`` (logged, so a
table cell can be reproduced by hand). Runs write ``metrics.json`` into their own
folder; a rerun skips finished runs, so a study killed halfway resumes where it stopped.
"""

from __future__ import annotations

import json
import logging
import statistics
from pathlib import Path

from ..options import flag as option_flag
from ..recipes import RECIPES

logger = logging.getLogger("zhbert")

__all__ = ["STUDY_TASKS", "run_recipe", "recipe_options", "summary"]

STUDY_TASKS = tuple(name for name, r in RECIPES.items() if r.head != "several")  # the single-task recipes


def _flags(options: dict) -> list[str]:
    """The command-line flags that give these recipe arguments (``save_model=False``: ``--no-save-model``)."""
    argv = []
    for key, value in options.items():
        if value is None:
            continue
        flag = option_flag(key)
        if isinstance(value, bool):
            argv += [flag] if value else ["--no-" + flag[2:]] if key == "save_model" else []
        else:
            argv += [flag, str(value)]
    return argv


def recipe_options(flags: str) -> dict:
    """The recipe arguments a string of ``zhbert train`` flags gives, as keyword arguments for
    :func:`run_recipe` (``"--crf --learning-rate 5e-4"`` -> ``{"crf": True, "learning_rate": 0.0005}``):
    how a bench runs every one of its heads with a user's recipe settings. The flags are checked as
    the command line checks them; every flag named is returned, also one that repeats a default."""
    import shlex

    from ..recipes.arguments import parse_args

    tokens = shlex.split(flags)
    given = parse_args(tokens, prog="recipe flags")
    named = {t[2:].split("=")[0].replace("-", "_") for t in tokens if t.startswith("--")}
    named |= {n[3:] for n in named if n.startswith("no_")}
    return {name: getattr(given, name) for name in sorted(named) if hasattr(given, name)}


def run_recipe(task: str, output_dir: str | Path, **options) -> dict:
    """Run the task's recipe on its study dataset with these arguments; returns its
    ``metrics.json`` record. A folder that already holds one is not run again."""
    out = Path(output_dir)
    done = out / "metrics.json"
    if done.is_file():
        return json.loads(done.read_text(encoding="utf-8"))
    recipe = RECIPES[task]
    options = {"dataset": recipe.study_dataset, **{k: v for k, v in options.items() if v is not None}, "output_dir": str(out)}
    logger.warning("study run: zhbert train %s %s", task, " ".join(_flags(options)))
    return recipe.run(recipe.arguments(**options))


def summary(scores: list[float]) -> dict:
    return {"scores": scores, "mean": statistics.fmean(scores), "std": statistics.stdev(scores) if len(scores) > 1 else 0.0}
