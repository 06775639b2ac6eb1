"""One task, several encoders: bar chart of ``zhbert study modes`` results side by side.

Each ``--run`` is ``label=path/to/modes.json``. A label given several times merges its files;
a cell found in more than one of them is one result per pretraining run of that encoder
recipe: its bar is the mean over runs, its error bar the sample std over runs, and every run's
own mean is drawn as a dot, so the run-to-run spread is seen beside the fine-tuning seed spread.
Every (mode, representation) cell found in the first run is drawn for each encoder (or the
``--cell`` ones), and a table with the same numbers is printed. Used for the pair-objective
question (the bundled encoder continued with masked LM only, with NSP, with SOP):

    python bench/encoders_compared_plot.py --run "+MLM=runs/modes-std/lcqmc-mlm-s43/modes.json" \
        --run "+MLM+NSP=runs/modes-std/lcqmc-nsp/modes.json" --run "+MLM+NSP=runs/modes-std/lcqmc-nsp-s43/modes.json" \
        --run "+MLM+SOP=runs/modes-std/lcqmc-sop/modes.json" --run "+MLM+SOP=runs/modes-std/lcqmc-sop-s43/modes.json" \
        --cell finetune/cls --cell frozen/cls --chance 50 --output bench/figures/lcqmc_pair_objective_runs.png
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

Cell = tuple[str, str]


def load_cells(path: str) -> dict[Cell, tuple[float, float, int]]:
    """(mode, representation) -> (mean %, std %, seeds) of one modes.json."""
    rows = json.loads(Path(path).read_text(encoding="utf-8"))["rows"]
    return {(r["mode"], r["representation"]): (100 * r["mean"], 100 * r["std"], len(r["scores"])) for r in rows}


def summarise(runs: list[tuple[float, float, int]]) -> tuple[float, float, str]:
    """Bar height, error bar and table text of one cell over its pretraining runs."""
    if len(runs) == 1:
        mean, std, _ = runs[0]
        return mean, std, f"{mean:.2f} ± {std:.2f}"
    means = [m for m, _, _ in runs]
    mean, spread = statistics.mean(means), statistics.stdev(means)
    each = " / ".join(f"{m:.2f}" for m in means)
    return mean, spread, f"{mean:.2f} ± {spread:.2f} over {len(runs)} runs ({each})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="append", required=True, help="label=path/to/modes.json (repeat)")
    parser.add_argument("--cell", action="append", help="mode/representation to draw (repeat); default: every cell of the first run")
    parser.add_argument("--chance", type=float, help="draw a chance line at this score")
    parser.add_argument("--output", required=True, help="PNG to write")
    args = parser.parse_args()

    merged: dict[str, dict[Cell, list[tuple[float, float, int]]]] = {}
    for spec in args.run:
        label, sep, path = spec.partition("=")
        if not sep:
            parser.error(f"--run {spec!r}: expected label=path/to/modes.json")
        for cell, result in load_cells(path).items():
            merged.setdefault(label, {}).setdefault(cell, []).append(result)
    runs = list(merged.items())
    cells = [tuple(c.split("/", 1)) for c in args.cell] if args.cell else sorted(runs[0][1])
    for label, found in runs:
        missing = [f"{m}/{r}" for m, r in cells if (m, r) not in found]
        if missing:
            parser.error(f"run {label!r} has no cell {', '.join(missing)}")
    summary = {label: {c: summarise(found[c]) for c in cells} for label, found in runs}

    print("| encoder | " + " | ".join(f"{m} {r}" for m, r in cells) + " |")
    print("|---|" + "---:|" * len(cells))
    for label, _ in runs:
        print(f"| {label} | " + " | ".join(summary[label][c][2] for c in cells) + " |")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1.6 + 1.3 * len(cells) * len(runs) / 2, 3.6))
    width = 0.8 / len(runs)
    for k, (label, found) in enumerate(runs):
        xs = [i + (k - (len(runs) - 1) / 2) * width for i in range(len(cells))]
        ax.bar(xs, [summary[label][c][0] for c in cells], width, yerr=[summary[label][c][1] for c in cells], capsize=3, label=label)
        for x, c in zip(xs, cells):
            if len(found[c]) > 1:  # one dot per pretraining run
                ax.plot([x] * len(found[c]), [m for m, _, _ in found[c]], "o", color="black", markersize=3, zorder=3)
    if args.chance is not None:
        ax.axhline(args.chance, color="grey", linestyle=":", linewidth=1, label="chance")
    lows = [m - s for label in summary for m, s, _ in summary[label].values()]
    lows += [m for _, found in runs for c in cells for m, _, _ in found[c]]
    ax.set_ylim(min(lows + ([args.chance] if args.chance is not None else [])) - 2, None)
    ax.set_xticks(range(len(cells)), [f"{m}\n{r}" for m, r in cells])
    ax.set_ylabel("score (%): mean ± std (over runs\nwhere dots show several)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
