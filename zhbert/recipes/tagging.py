"""Weibo post tagging: emotion, single-label (softmax) or multi-label (sigmoid).

    zhbert train tagging --dataset usual --output-dir runs/tagging-usual
    zhbert train tagging --dataset nlpcc2014 --output-dir runs/tagging-nlpcc2014
    zhbert train tagging --dataset usual --evaluate-only runs/tagging-usual/model

usual / virus: SMP2020-EWECT, six emotions, train rows whose text is in dev/test
dropped; accuracy and macro-F1 on the labelled test. nlpcc2014: NLPCC-2014 Weibo
emotion, primary + secondary emotion per post (multi-label); per-label thresholds
tuned on a held-out 15% of train; micro/macro-F1 and exact match on both gold test
sets. sources: which of five corpus sources a 1,000-1,200 character excerpt comes from (the
long-document task of ``zhbert study long-classification``). Long texts go through sliding
windows (--window, --window-pool), or only the first window with --truncate.
"""

from __future__ import annotations

import torch

from ..heads import predict_scores
from ..heads.thresholds import apply_thresholds, tune_thresholds
from ..metrics import classification_scores, multilabel_scores
from .arguments import RecipeArguments
from .common import classification_examples, fit, head_config, load_splits, prepare_model, write_results


def label_sets(pred: torch.Tensor) -> list[list[int]]:
    return [torch.nonzero(row).flatten().tolist() for row in pred]


def run(args: RecipeArguments) -> dict:
    """Train (or load) a post classifier and score it; returns the ``metrics.json`` record."""
    # 1. arguments: parsed by the caller (``zhbert train tagging``, a study, a script)

    # 2. data
    data = load_splits(args, "tagging")

    # 3. model
    model, tokenizer = prepare_model(args, head_config(args, "sequence", data))

    # 4. train
    data = fit(
        args, data, model, tokenizer, lambda: classification_examples(tokenizer, data.train, len(data.labels), data.multi_label), evaluate
    )

    # 5. evaluate
    metrics, headline = evaluate(args, data, model, tokenizer)

    # 6. save
    return write_results(args, "tagging", data, metrics, model, tokenizer, headline=headline)


def evaluate(args: RecipeArguments, data, model, tokenizer) -> tuple[dict, str]:
    """Accuracy and macro-F1, or (multi-label) thresholds tuned on dev and micro/macro-F1 on
    both test sets; the metrics and the headline's key."""
    dev, test, k = data.dev, data.test, len(data.labels)
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
    return metrics, headline
