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
from transformers import HfArgumentParser

from zhbert.data.tasks import load_task_data
from zhbert.heads import predict_scores
from zhbert.heads.thresholds import apply_thresholds, tune_thresholds
from zhbert.metrics import classification_scores, multilabel_scores
from zhbert.training.finetune import fine_tune
from zhbert.training.recipe import (RecipeArguments, apply_preset, classification_examples, finetune_config, head_config,
                                    prepare_model, run_recipe, subsample, write_results)


def label_sets(pred: torch.Tensor) -> list[list[int]]:
    return [torch.nonzero(row).flatten().tolist() for row in pred]


def main() -> None:
    # 1. arguments
    (args,) = HfArgumentParser(RecipeArguments).parse_args_into_dataclasses()
    args = apply_preset(args)
    args.dataset = args.dataset or "usual"

    # 2. data
    data = load_task_data("tagging", args.dataset)
    train = subsample(data.train, args.max_train_samples)
    dev = subsample(data.dev, args.max_eval_samples)
    test = subsample(data.test, args.max_eval_samples)
    k = len(data.labels)

    # 3. model
    model, tokenizer = prepare_model(args, head_config(args, "sequence", data))

    # 4. train
    if not args.evaluate_only:
        fine_tune(model, tokenizer, classification_examples(tokenizer, train, k, data.multi_label), finetune_config(args))

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
        sets = {"test": test, "extra_test": subsample(getattr(data, "extra_test", []), args.max_eval_samples)}
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
