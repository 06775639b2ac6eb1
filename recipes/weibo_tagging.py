"""Weibo post tagging: emotion, single-label (softmax) or multi-label (sigmoid).

    python recipes/weibo_tagging.py --dataset usual --output_dir runs/tagging-usual
    python recipes/weibo_tagging.py --dataset nlpcc2014 --output_dir runs/tagging-nlpcc2014
    python recipes/weibo_tagging.py --dataset usual --evaluate_only runs/tagging-usual/model

usual / virus: SMP2020-EWECT, six emotions, train rows whose text is in dev/test
dropped; accuracy and macro-F1 on the labelled test. nlpcc2014: NLPCC-2014 Weibo
emotion, primary + secondary emotion per post (multi-label); per-label thresholds
tuned on a held-out 15% of train; micro/macro-F1 and exact match on both gold test
sets. Long posts go through sliding windows (--window, --window_pool).
"""

from __future__ import annotations

import torch

from zhbert.heads import predict_scores
from zhbert.heads.thresholds import apply_thresholds, tune_thresholds
from zhbert.metrics import classification_scores, multilabel_scores
from zhbert.training.recipe import (
    classification_examples,
    fit,
    head_config,
    load_splits,
    parse_args,
    prepare_model,
    run_recipe,
    write_results,
)


def label_sets(pred: torch.Tensor) -> list[list[int]]:
    return [torch.nonzero(row).flatten().tolist() for row in pred]


def main() -> None:
    # 1. arguments
    args = parse_args(default_dataset="usual")

    # 2. data
    data = load_splits(args, "tagging")
    dev, test, k = data.dev, data.test, len(data.labels)

    # 3. model
    model, tokenizer = prepare_model(args, head_config(args, "sequence", data))

    # 4. train
    fit(args, model, tokenizer, lambda: classification_examples(tokenizer, data.train, k, data.multi_label))

    # 5. evaluate
    if not data.multi_label:
        probs = predict_scores(model, tokenizer, [r["text"] for r in test], batch_size=64)
        metrics = classification_scores([r["label"] for r in test], probs.argmax(-1).tolist(), k)
        headline = "macro_f1"
    else:
        if not args.evaluate_only:  # thresholds are part of the model: tuned once, on dev
            dev_probs = predict_scores(model, tokenizer, [r["text"] for r in dev], batch_size=64)
            gold = torch.tensor([[float(i in r["labels"]) for i in range(k)] for r in dev])
            model.head.thresholds = tune_thresholds(dev_probs, gold)
        metrics = {}
        sets = {"test": test, "extra_test": data.extra_test}
        for name, rows in sets.items():
            if rows:
                probs = predict_scores(model, tokenizer, [r["text"] for r in rows], batch_size=64)
                pred = label_sets(apply_thresholds(probs, model.head.thresholds))
                metrics[name] = multilabel_scores([r["labels"] for r in rows], pred, k)
        metrics["thresholds"] = model.head.thresholds
        headline = "test.micro_f1"

    # 6. save
    write_results(args, "tagging", data, metrics, model, tokenizer, headline=headline)


if __name__ == "__main__":
    run_recipe(main)
