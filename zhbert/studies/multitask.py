"""The multi-task study (issue 20, question 5): one shared encoder trained on several tasks
against a single-task model per task, on the same data, seeds and budget.

Budget: with epochs, each task's examples are seen the same number of times either way
(the multi-task run takes the sum of the single-task runs' steps); with ``max_steps``, the
multi-task run gets ``max_steps`` per task. Every run is a recipe call (``zhbert train <task>``
or ``zhbert train multitask``); a rerun skips finished runs.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from ..recipes import RECIPES
from . import run_recipe, summary

__all__ = ["MultitaskRow", "run_multitask_study", "write_multitask_report"]


@dataclass
class MultitaskRow:
    task: str
    dataset: str
    metric: str
    single: dict  # summary over seeds: scores, mean, std
    multi: dict


def run_multitask_study(
    encoder: str, output: str | Path, spec: str = "ner=msra,cws=pku,tagging=usual", seeds=(1,), recipe_args: dict | None = None
) -> list[MultitaskRow]:
    from ..recipes.multitask import plan

    tasks = plan(spec)
    out = Path(output)
    options = {k: v for k, v in (recipe_args or {}).items() if v is not None}
    single: dict[str, list[dict]] = {t: [] for t in tasks}
    multi: list[dict] = []
    for seed in seeds:
        for task, dataset in tasks.items():
            single[task].append(
                run_recipe(
                    task, out / "single" / f"{task}-seed{seed}", encoder=encoder, dataset=dataset, seed=seed, save_model=False, **options
                )
            )
        folder = out / "multitask" / f"seed{seed}"
        done = folder / "metrics.json"
        if done.is_file():
            multi.append(json.loads(done.read_text(encoding="utf-8")))
            continue
        joint = dict(options)
        if options.get("max_steps"):  # the same steps per task as each single-task run
            joint["max_steps"] = options["max_steps"] * len(tasks)
        recipe = RECIPES["multitask"]
        multi.append(
            recipe.run(recipe.arguments(encoder=encoder, dataset=spec, seed=seed, save_model=False, output_dir=str(folder), **joint))
        )
    rows = []
    for task in tasks:
        first = single[task][0]
        rows.append(
            MultitaskRow(
                task,
                first["dataset"],
                first["headline"],
                summary([float(r["score"]) for r in single[task]]),
                summary([float(m["tasks"][task]["score"]) for m in multi]),
            )
        )
    return rows


def write_multitask_report(rows: list[MultitaskRow], output: str | Path, meta: dict | None = None) -> dict[str, Path]:
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    (out / "multitask.json").write_text(json.dumps({"meta": meta or {}, "rows": [asdict(r) for r in rows]}, ensure_ascii=False, indent=1))

    def cell(s: dict) -> str:
        return f"{100 * s['mean']:.2f}" + (f" ± {100 * s['std']:.2f}" if len(s["scores"]) > 1 else "")

    lines = ["| task | dataset (metric) | single-task | multi-task | multi - single |", "|---|---|---:|---:|---:|"]
    for r in rows:
        gap = 100 * (r.multi["mean"] - r.single["mean"])
        lines.append(f"| {r.task} | {r.dataset} ({r.metric}) | {cell(r.single)} | {cell(r.multi)} | {gap:+.2f} |")
    (out / "multitask.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _plot_multitask(rows, out / "multitask.png")
    return {"json": out / "multitask.json", "table": out / "multitask.md", "plot": out / "multitask.png"}


def _plot_multitask(rows: list[MultitaskRow], path: Path) -> None:
    """One panel per task (their metrics differ in scale): single- beside multi-task, mean and
    seed spread as bars, every seed as a dot, so a gap can be read against the spread."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(rows), figsize=(2.4 * len(rows) + 0.6, 3.4), squeeze=False)
    for ax, r in zip(axes[0], rows):
        for x, (label, s) in enumerate((("single", r.single), ("multi", r.multi))):
            scores = [100 * v for v in s["scores"]]
            ax.bar(x, 100 * s["mean"], yerr=100 * s["std"] if len(scores) > 1 else 0, capsize=4, color=("#8da0cb", "#fc8d62")[x])
            ax.plot([x] * len(scores), scores, "k.", markersize=5)
        every = [100 * v for v in r.single["scores"] + r.multi["scores"]]
        margin = max(1.0, max(every) - min(every))
        ax.set_ylim(min(every) - margin, max(every) + margin)
        ax.set_xticks([0, 1], ["single", "multi"])
        ax.set_title(f"{r.task}: {r.dataset}", fontsize=9)
        ax.set_ylabel(r.metric, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
