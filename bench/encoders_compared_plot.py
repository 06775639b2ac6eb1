"""One task, several encoders: bar chart of ``zhbert study modes`` results side by side.

Each ``--run`` is ``label=path/to/modes.json`` (a label given twice merges both files); every (mode, representation) cell found in the
first run is drawn for each encoder, mean over seeds with the sample std as error bar, and a
table with the same numbers is printed. Used for the pair-objective question (the bundled
encoder, continued with masked LM only, continued with masked LM + NSP):

    python bench/encoders_compared_plot.py --run base=runs/modes-std/lcqmc/modes.json \
        --run base=runs/modes-std/lcqmc-frozen-dev-lr/modes.json \
        --run "+MLM=runs/modes-std/lcqmc-mlm/modes.json" --run "+MLM+NSP=runs/modes-std/lcqmc-nsp/modes.json" \
        --cell finetune/cls --cell frozen/cls --chance 50 --output bench/figures/lcqmc_pair_objective.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def load_cells(path: str) -> dict[tuple[str, str], tuple[float, float, int]]:
    """(mode, representation) -> (mean %, std %, seeds) of one modes.json."""
    rows = json.loads(Path(path).read_text(encoding="utf-8"))["rows"]
    return {(r["mode"], r["representation"]): (100 * r["mean"], 100 * r["std"], len(r["scores"])) for r in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="append", required=True, help="label=path/to/modes.json (repeat)")
    parser.add_argument("--cell", action="append", help="mode/representation to draw (repeat); default: every cell of the first run")
    parser.add_argument("--chance", type=float, help="draw a chance line at this score")
    parser.add_argument("--output", required=True, help="PNG to write")
    args = parser.parse_args()

    merged: dict[str, dict] = {}  # a label given twice merges its files (fine-tuned and feature-based runs kept apart)
    for spec in args.run:
        label, sep, path = spec.partition("=")
        if not sep:
            parser.error(f"--run {spec!r}: expected label=path/to/modes.json")
        merged.setdefault(label, {}).update(load_cells(path))
    runs = list(merged.items())
    cells = [tuple(c.split("/", 1)) for c in args.cell] if args.cell else sorted(runs[0][1])
    for label, found in runs:
        missing = [f"{m}/{r}" for m, r in cells if (m, r) not in found]
        if missing:
            parser.error(f"run {label!r} has no cell {', '.join(missing)}")

    print("| encoder | " + " | ".join(f"{m} {r}" for m, r in cells) + " |")
    print("|---|" + "---:|" * len(cells))
    for label, found in runs:
        print(f"| {label} | " + " | ".join(f"{found[c][0]:.2f} ± {found[c][1]:.2f}" for c in cells) + " |")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1.6 + 1.3 * len(cells) * len(runs) / 2, 3.6))
    width = 0.8 / len(runs)
    for k, (label, found) in enumerate(runs):
        xs = [i + (k - (len(runs) - 1) / 2) * width for i in range(len(cells))]
        ax.bar(xs, [found[c][0] for c in cells], width, yerr=[found[c][1] for c in cells], capsize=3, label=label)
    if args.chance is not None:
        ax.axhline(args.chance, color="grey", linestyle=":", linewidth=1, label="chance")
    lows = [found[c][0] - found[c][1] for _, found in runs for c in cells]
    ax.set_ylim(min(lows + ([args.chance] if args.chance is not None else [])) - 2, None)
    ax.set_xticks(range(len(cells)), [f"{m}\n{r}" for m, r in cells])
    ax.set_ylabel("score (%), mean ± std over seeds")
    ax.legend(fontsize=8)
    fig.tight_layout()
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
