"""Sentence-pair matching: cross-encoder (default) or bi-encoder, or STS regression.

    python recipes/matching.py --dataset afqmc --output_dir runs/matching-afqmc
    python recipes/matching.py --dataset ocnli --pair_encoding bi --output_dir runs/matching-ocnli-bi
    python recipes/matching.py --dataset afqmc --evaluate_only runs/matching-afqmc/model

afqmc (train/dev; 69% one class: macro-F1 and the majority baseline reported),
ocnli (train.50k minus '-' / dev, 3-way), lcqmc and pawsx (no train split here:
trained on their dev, scored on their labelled test), bq (no train split and an
unlabelled test: its labelled dev split 72/8/20 into train / dev / scored part),
sts (STS-B zh, regression, Pearson / Spearman). Metric: accuracy, plus macro-F1.
"""

from __future__ import annotations

from collections import Counter

import torch

from zhbert.heads import predict_scores
from zhbert.metrics import classification_scores
from zhbert.training.recipe import (
    fit,
    head_config,
    load_splits,
    pair_examples,
    parse_args,
    prepare_model,
    run_recipe,
    write_results,
)


def correlations(gold: list[float], pred: list[float]) -> dict:
    g, p = torch.tensor(gold, dtype=torch.float64), torch.tensor(pred, dtype=torch.float64)

    def pearson(a, b):
        a, b = a - a.mean(), b - b.mean()
        return float((a * b).sum() / (a.norm() * b.norm()).clamp(min=1e-12))

    rank = lambda x: torch.argsort(torch.argsort(x)).double()  # noqa: E731 (ties are rare in model scores)
    return {"pearson": pearson(g, p), "spearman": pearson(rank(g), rank(p))}


def main() -> None:
    # 1. arguments
    args = parse_args(default_dataset="afqmc")

    # 2. data
    data = load_splits(args, "matching")
    test = data.test

    # 3. model
    model, tokenizer = prepare_model(args, head_config(args, "pair", data))

    # 4. train
    fit(args, model, tokenizer, lambda: pair_examples(tokenizer, data.train))

    # 5. evaluate
    scores = predict_scores(model, tokenizer, [(r["text_a"], r["text_b"]) for r in test], batch_size=64)
    gold = [r["label"] for r in test]
    if data.regression:
        metrics = correlations(gold, scores.tolist())
        headline = "pearson"
    else:
        metrics = classification_scores(gold, scores.argmax(-1).tolist(), len(data.labels))
        majority = Counter(r["label"] for r in data.train).most_common(1)[0][0]
        metrics["majority_baseline"] = classification_scores(gold, [majority] * len(gold), len(data.labels))
        headline = "accuracy"

    # 6. save
    write_results(args, "matching", data, metrics, model, tokenizer, headline=headline)


if __name__ == "__main__":
    run_recipe(main)
