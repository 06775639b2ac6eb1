"""Which reading should a two-criteria segmenter give by default? Each reading, every criterion the
model was trained with and the mean of their segment-embedding rows, scored on the recipe's dev
splits, one per source (People's Daily dev under `pku`, the held-out part of NLPCC-2016 train under
`weibo`), through `zhbert.load` with web units on. The default is the reading with the highest mean
over the sources: a user's text follows no standard in particular, so the reading that agrees best
with all of them. No test set is read.

    python bench/cws_default_criterion.py runs/cws-candidates/cws-trim runs/cws-candidates/cws-fast-trim

The mean-row reading is the model as `zhbert export --blend-criteria mixed` writes it (to a temporary
folder), read with its default; it is chosen only if it leads every single reading by more than
--mean-margin.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def dev_by_source(dataset: str = "news+weibo") -> dict[str, tuple[list[str], list[list[str]]]]:
    """The recipe's dev split, grouped by the standard each sentence was annotated under."""
    from zhbert.data.tasks import load_task_data

    groups: dict[str, tuple[list[str], list[list[str]]]] = {}
    for row in load_task_data("cws", dataset).dev:
        texts, words = groups.setdefault(row["criterion"], ([], []))
        texts.append(row["text"])
        words.append(row["words"])
    return groups


def word_f1(model: str, criterion: str | None, texts: list[str], gold: list[list[str]]) -> float:
    import zhbert
    from zhbert.metrics import word_prf

    found = zhbert.load(model, criterion=criterion)(texts, batch_size=64)
    return 100 * word_prf(gold, [[w.text for w in ws] for ws in found])["f1"]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", help="segmenter folders trained with --criteria")
    ap.add_argument("--mean-margin", type=float, default=0.1)
    args = ap.parse_args(argv)
    import torch

    import zhbert
    from zhbert.export import export_model

    torch.set_num_threads(1)
    sources = dev_by_source()
    head = "| model | reading | " + " | ".join(f"{s} dev ({len(t):,})" for s, (t, _) in sources.items()) + " | mean |"
    lines = [head, "|---|---|" + "---:|" * (len(sources) + 1)]
    verdicts = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models:
            criteria = zhbert.load(model).head.criteria
            if not criteria:
                raise SystemExit(f"{model}: trained on one standard (no --criteria); it has no reading to choose")
            readings = [(c, model, c) for c in criteria]
            readings.append(("mean of rows", str(export_model(model, Path(tmp) / Path(model).name, blend_criteria="mixed")), None))
            means = {}
            for name, path, criterion in readings:
                scores = [word_f1(path, criterion, t, g) for t, g in sources.values()]
                means[name] = statistics.mean(scores)
                lines.append(f"| {model} | {name} | " + " | ".join(f"{s:.2f}" for s in scores) + f" | {means[name]:.2f} |")
                print(lines[-1], file=sys.stderr, flush=True)
            best = max(criteria, key=means.get)
            if means["mean of rows"] > means[best] + args.mean_margin:
                best = "mean of rows"
            verdicts.append(f"{model}: default `{best}`")
    print("\n".join(lines + [""] + verdicts))


if __name__ == "__main__":
    main()
