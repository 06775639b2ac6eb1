"""How many of a NER split's entities (text and type) also occur in the recipe's training split:
a dev split that repeats training entities more often than the test files do rewards remembering
them (bench/LOG.md, forty-sixth session). Prints one line per split, with the share of entities that
touch another entity of their type (a run of names written without a separator, as in MSRA's lists
of deputies); with ``--models``, each model's entity F1 on the entities seen in training and on the
unseen ones, per split, and its recall inside and outside such runs: where a model's points are
won or lost.

    python bench/ner_split_overlap.py --dataset msra      # msra-bio too; a few seconds
    python bench/ner_split_overlap.py --models ner runs/ner45/bil3e3/model   # minutes a model, one thread
"""

from __future__ import annotations

import argparse
from collections import Counter


def entities(rows) -> list[tuple[str, str]]:
    from seqeval.metrics.sequence_labeling import get_entities

    return [(r["text"][a : b + 1], kind) for r in rows for kind, a, b in get_entities(list(r["tags"]))]


def entity_spans(rows) -> list[set[tuple[int, int, str]]]:
    from seqeval.metrics.sequence_labeling import get_entities

    return [{(a, b + 1, kind) for kind, a, b in get_entities(list(r["tags"]))} for r in rows]


def f1(tp: int, fp: int, fn: int) -> float:
    return 200 * tp / max(2 * tp + fp + fn, 1)


def predictions(model: str, rows) -> list[set[tuple[int, int, str]]]:
    """The model's entities in each row, as ``(start, end, type)``."""
    import zhbert

    return [{(e.start, e.end, e.label) for e in ents} for ents in zhbert.load(model)([r["text"] for r in rows], batch_size=64)]


def touching(spans: set[tuple[int, int, str]]) -> set[tuple[int, int, str]]:
    """The spans that begin where another of their type ends, or end where one begins."""
    ends, starts = {(b, k) for _, b, k in spans}, {(a, k) for a, _, k in spans}
    return {(a, b, k) for a, b, k in spans if (a, k) in ends or (b, k) in starts}


def stratum_counts(rows, predicted, seen: set) -> dict[tuple[str, bool], list[int]]:
    """``[tp, fp, fn]`` per entity type and stratum (True: seen in training): a gold entity counts for
    recall in its stratum, a predicted one for precision in its own (seen or not by its text and type)."""
    texts = [r["text"] for r in rows]
    counts: dict[tuple[str, bool], list[int]] = {}
    for text, gold, pred in zip(texts, entity_spans(rows), predicted):
        for a, b, kind in pred:
            counts.setdefault((kind, (text[a:b], kind) in seen), [0, 0, 0])[0 if (a, b, kind) in gold else 1] += 1
        for a, b, kind in gold - pred:
            counts.setdefault((kind, (text[a:b], kind) in seen), [0, 0, 0])[2] += 1
    return counts


def run_counts(rows, predicted) -> dict[str, int]:
    """Gold entities inside runs of their type (``run``) and outside (``alone``), how many of each the
    model found, and its ``merged`` spans: one predicted entity covering two or more gold ones of its type."""
    out = dict.fromkeys(("run", "run found", "alone", "alone found", "merged"), 0)
    for gold, pred in zip(entity_spans(rows), predicted):
        in_run = touching(gold)
        for span in gold:
            key = "run" if span in in_run else "alone"
            out[key] += 1
            out[f"{key} found"] += span in pred
        out["merged"] += sum(sum(a <= x and y <= b and k == kind for x, y, kind in gold) >= 2 for a, b, k in pred)
    return out


def runs_line(rows) -> str:
    """The share of the rows' entities in runs of their type, in all and per type."""
    found = Counter(k for _, k in entities(rows))
    in_runs = Counter(k for spans in entity_spans(rows) for _, _, k in touching(spans))
    per_type = ", ".join(f"{k} {in_runs[k] / n:.1%}" for k, n in sorted(found.items()))
    return f"{in_runs.total() / max(found.total(), 1):.1%} in runs of their type ({per_type})"


def recall(counts: dict[str, int], key: str) -> float:
    return 100 * counts[f"{key} found"] / max(counts[key], 1)


def by_stratum(counts: dict[tuple[str, bool], list[int]]) -> dict[bool, list[int]]:
    """The counts summed over entity types."""
    out = {True: [0, 0, 0], False: [0, 0, 0]}
    for (_, stratum), c in counts.items():
        out[stratum] = [x + y for x, y in zip(out[stratum], c)]
    return out


def mixed_f1(counts: dict[bool, list[int]], weights: dict[bool, float]) -> float:
    """F1 from both strata's counts, each stratum's scaled by its weight (1, 1: the split's own F1)."""
    return f1(*(sum(weights[k] * counts[k][i] for k in counts) for i in range(3)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="msra", help="a ner recipe dataset (msra, msra-bio, weibo, resume)")
    ap.add_argument("--models", nargs="*", default=[], help="NER models (bundled names or folders) to score by stratum")
    args = ap.parse_args()

    from zhbert.data.tasks import load_task_data

    data = load_task_data("ner", args.dataset)
    seen = set(entities(data.train))
    print(f"{args.dataset}: training split {len(data.train):,} sentences, {runs_line(data.train)}")
    share = {}  # of each split's entities, those seen in training
    for name, rows in (("dev", data.dev), ("test", data.test)):
        found = entities(rows)
        share[name] = sum(e in seen for e in found) / max(len(found), 1)
        print(
            f"  {name}: {len(rows):,} sentences, {len(found):,} entities, {share[name]:.1%} of them in the training split, "
            + runs_line(rows)
        )
    if args.models:
        import torch

        torch.set_num_threads(1)
        # the dev split at the test files' mix: each stratum's counts scaled so its gold entities take the test share
        to_test = {True: share["test"] / share["dev"], False: (1 - share["test"]) / (1 - share["dev"])}
        print("\n| model | dev F1 | dev seen | dev unseen | dev at test's mix | test F1 | test seen | test unseen |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        ones = {True: 1.0, False: 1.0}
        typed, runs = {}, {}
        for model in args.models:
            on_dev, on_test = predictions(model, data.dev), predictions(model, data.test)
            typed[model] = stratum_counts(data.test, on_test, seen)
            runs[model] = (run_counts(data.dev, on_dev), run_counts(data.test, on_test))
            dev, test = by_stratum(stratum_counts(data.dev, on_dev, seen)), by_stratum(typed[model])
            cells = [mixed_f1(dev, ones), f1(*dev[True]), f1(*dev[False]), mixed_f1(dev, to_test)]
            cells += [mixed_f1(test, ones), f1(*test[True]), f1(*test[False])]
            print(f"| {model} | {' | '.join(f'{c:.2f}' for c in cells)} |", flush=True)
        kinds = sorted({k for counts in typed.values() for k, _ in counts})
        print("\n| model (test) | " + " | ".join(f"{k} seen | {k} unseen" for k in kinds) + " |")
        print("|---|" + "---:|" * 2 * len(kinds))
        for model, counts in typed.items():
            cells = [f1(*counts.get((k, stratum), [0, 0, 0])) for k in kinds for stratum in (True, False)]
            print(f"| {model} | {' | '.join(f'{c:.2f}' for c in cells)} |")
        gold = {key: c[0] + c[2] for key, c in next(iter(typed.values())).items()}
        print("gold entities: " + ", ".join(f"{k} {gold.get((k, True), 0):,} seen / {gold.get((k, False), 0):,} unseen" for k in kinds))
        print("\n| model | dev recall in runs | dev recall alone | dev merged | test recall in runs | test recall alone | test merged |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for model, pair in runs.items():
            cells = [f"{recall(c, 'run'):.2f} | {recall(c, 'alone'):.2f} | {c['merged']}" for c in pair]
            print(f"| {model} | {' | '.join(cells)} |")
        in_runs = [f"{name} {c['run']:,} of {c['run'] + c['alone']:,}" for name, c in zip(("dev", "test"), pair)]
        print("gold entities in runs: " + ", ".join(in_runs))


if __name__ == "__main__":
    main()
