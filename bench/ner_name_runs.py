"""A dev probe of names written back to back: does a model tag each name of a run as its own entity?

    python bench/ner_name_runs.py --models ner runs/ner45/bil3e3/model    # minutes a model, one thread

News text lists people without a separator (MSRA's test files: 31.9% of the people stand in runs of
names, its training split 1.8% and its dev split 1.2%; ``bench/ner_split_overlap.py``), so the dev
split cannot say whether a change helps there. The probe is the dev split with, in each sentence that
has a person, one person replaced by a run of 2-5 people drawn from the dev split's own
(``zhbert.data.mention_replacement.mention_runs``, seed 0): the same construction as the recipe's
``--mention-runs``, whose copies draw from the training split instead. Prints each model's entity F1 on
the plain dev split and on the probe, its recall of the probe's people inside and outside runs, and its
merged spans (one predicted entity covering two or more gold ones).
"""

from __future__ import annotations

import argparse

from ner_split_overlap import entity_spans, f1, predictions, recall, run_counts, touching

from zhbert.data.mention_replacement import mention_runs, mentions_by_type
from zhbert.data.tasks import load_task_data
from zhbert.tags import tags_to_spans


def span_f1(rows, predicted) -> float:
    tp = fp = fn = 0
    for gold, pred in zip(entity_spans(rows), predicted):
        tp, fp, fn = tp + len(gold & pred), fp + len(pred - gold), fn + len(gold - pred)
    return f1(tp, fp, fn)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="msra", help="a ner recipe dataset with a PER type (msra, msra-bio)")
    ap.add_argument("--models", nargs="+", required=True, help="NER models (bundled names or folders)")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    data = load_task_data("ner", args.dataset)
    dev = data.dev
    probe = [r for r in dev if not any(k == "PER" for k, _, _ in tags_to_spans(r["tags"], data.scheme))]
    probe += mention_runs(dev, data.scheme, ["PER"], seed=0, pool=mentions_by_type(dev, data.scheme))
    in_runs = sum(len(touching(spans)) for spans in entity_spans(probe))
    print(f"{args.dataset}: dev {len(dev):,} sentences; probe {len(probe):,}, {in_runs:,} entities in runs of their type")
    print("\n| model | dev F1 | probe F1 | probe recall in runs | probe recall alone | probe merged |")
    print("|---|---:|---:|---:|---:|---:|")
    for model in args.models:
        counts = run_counts(probe, on_probe := predictions(model, probe))
        cells = [span_f1(dev, predictions(model, dev)), span_f1(probe, on_probe)]
        cells += [recall(counts, "run"), recall(counts, "alone")]
        print(f"| {model} | {' | '.join(f'{c:.2f}' for c in cells)} | {counts['merged']} |", flush=True)


if __name__ == "__main__":
    main()
