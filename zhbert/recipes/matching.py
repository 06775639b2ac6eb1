"""Sentence-pair matching: cross-encoder (default) or bi-encoder, or STS regression.

    zhbert train matching --dataset afqmc --truncate --output-dir runs/matching-afqmc
    zhbert train matching --dataset ocnli --pair-encoding bi --output-dir runs/matching-ocnli-bi
    zhbert train matching --dataset afqmc --evaluate-only runs/matching-afqmc/model

afqmc (train/dev; 69% one class: macro-F1 and the majority baseline reported),
ocnli (train.50k minus '-' / dev, 3-way), lcqmc and pawsx (no train split here:
trained on their dev, scored on their labelled test), bq (no train split and an
unlabelled test: its labelled dev split 72/8/20 into train / dev / scored part),
paraphrase (the training parts of lcqmc, bq, afqmc and pawsx pooled, labels
different / paraphrase, scored on LCQMC's test: the bundled ``matching`` model),
sts (STS-B zh, regression, Pearson / Spearman). Metric: accuracy, plus macro-F1.

A cross-encoded pair is one window: pairs longer than it are refused before training, with
their count per split, unless ``--truncate`` (afqmc, bq, pawsx and sts each have some over 128
tokens) or ``--pair-encoding bi``.
"""

from __future__ import annotations

from collections import Counter

import torch

from ..heads import predict_scores
from ..metrics import classification_scores
from .arguments import RecipeArguments
from .common import check_pair_lengths, fit, head_config, load_splits, pair_examples, prepare_model, write_results


def correlations(gold: list[float], pred: list[float]) -> dict:
    g, p = torch.tensor(gold, dtype=torch.float64), torch.tensor(pred, dtype=torch.float64)

    def pearson(a, b):
        a, b = a - a.mean(), b - b.mean()
        return float((a * b).sum() / (a.norm() * b.norm()).clamp(min=1e-12))

    rank = lambda x: torch.argsort(torch.argsort(x)).double()  # noqa: E731 (ties are rare in model scores)
    return {"pearson": pearson(g, p), "spearman": pearson(rank(g), rank(p))}


def run(args: RecipeArguments) -> dict:
    """Train (or load) a pair model and score it; returns the ``metrics.json`` record."""
    # 1. arguments: parsed by the caller (``zhbert train matching``, a study, a script)

    # 2. data
    data = load_splits(args, "matching")

    # 3. model
    model, tokenizer = prepare_model(args, head_config(args, "pair", data))
    splits = {"test": data.test} if args.evaluate_only else {"train": data.train, "dev": data.dev, "test": data.test}
    check_pair_lengths(model, tokenizer, splits)

    # 4. train
    data = fit(args, data, model, tokenizer, lambda: pair_examples(tokenizer, data.train), evaluate)

    # 5. evaluate
    metrics, headline = evaluate(args, data, model, tokenizer)

    # 6. save
    return write_results(args, "matching", data, metrics, model, tokenizer, headline=headline)


def evaluate(args: RecipeArguments, data, model, tokenizer) -> tuple[dict, str]:
    """Accuracy and macro-F1 with the majority baseline, or Pearson/Spearman for STS."""
    test = data.test
    scores = predict_scores(model, tokenizer, [(r["text_a"], r["text_b"]) for r in test], batch_size=64)
    gold = [r["label"] for r in test]
    if data.regression:
        metrics = correlations(gold, scores.tolist())
        headline = "pearson"
    else:
        metrics = classification_scores(gold, scores.argmax(-1).tolist(), len(data.labels))
        if data.train:  # a saved model scored on a file of the user's has no training set to take the majority of
            majority = Counter(r["label"] for r in data.train).most_common(1)[0][0]
            metrics["majority_baseline"] = classification_scores(gold, [majority] * len(gold), len(data.labels))
        headline = "accuracy"
    return metrics, headline
