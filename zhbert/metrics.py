"""Task metrics, computed the way each task's literature reports them.

* Word segmentation: word precision / recall / F1 as the SIGHAN-2005 scorer
  counts them (a word is right when both its boundaries are right), plus OOV
  recall (recall over gold words not in the training word list).
* NER: entity-level P / R / F1 per type and overall from ``seqeval``
  (``mode="strict"`` for BIOES/BMES, where BMES ``M`` is mapped to ``I``).
* Classification: accuracy and macro-F1; multi-label: micro-F1, macro-F1 and
  exact match over label sets.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["word_prf", "entity_prf", "classification_scores", "multilabel_scores"]


def _word_spans(words: Sequence[str]) -> set[tuple[int, int]]:
    spans, pos = set(), 0
    for w in words:
        spans.add((pos, pos + len(w)))
        pos += len(w)
    return spans


def word_prf(gold: Iterable[Sequence[str]], pred: Iterable[Sequence[str]], train_words: set[str] | None = None) -> dict:
    """SIGHAN word P/R/F1 (and OOV recall when ``train_words`` is given)."""
    tp = n_gold = n_pred = oov_total = oov_hit = 0
    for k, (g, p) in enumerate(zip(gold, pred, strict=True)):
        if "".join(g) != "".join(p):
            raise ValueError(f"sentence {k}: gold and predicted words spell different texts")
        gs, ps = _word_spans(g), _word_spans(p)
        tp += len(gs & ps)
        n_gold += len(gs)
        n_pred += len(ps)
        if train_words is not None:
            pos = 0
            for w in g:
                if w not in train_words:
                    oov_total += 1
                    oov_hit += (pos, pos + len(w)) in ps
                pos += len(w)
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    out = {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0, "gold_words": n_gold, "predicted_words": n_pred}
    if train_words is not None:
        out["oov_rate"] = oov_total / n_gold if n_gold else 0.0
        out["oov_recall"] = oov_hit / oov_total if oov_total else 0.0
    return out


def entity_prf(gold_tags: list[list[str]], pred_tags: list[list[str]], scheme: str) -> dict:
    """seqeval entity scores: ``{"overall": {...}, "per_type": {type: {...}}}``."""
    from seqeval.metrics import classification_report
    from seqeval.scheme import IOB2, IOBES

    def conv(seq):
        return [t.replace("M-", "I-") if t.startswith("M-") else t for t in seq]

    strict = scheme in ("BIOES", "BMES")
    kwargs = {"mode": "strict", "scheme": IOBES if strict else IOB2} if strict else {}
    g = [conv(s) for s in gold_tags]
    p = [conv(s) for s in pred_tags]
    report = classification_report(g, p, output_dict=True, zero_division=0, **kwargs)
    per_type = {
        k: {"precision": v["precision"], "recall": v["recall"], "f1": v["f1-score"], "support": int(v["support"])}
        for k, v in report.items()
        if not k.endswith(" avg")
    }
    m = report["micro avg"]
    return {
        "overall": {"precision": m["precision"], "recall": m["recall"], "f1": m["f1-score"], "support": int(m["support"])},
        "per_type": per_type,
    }


def classification_scores(gold: Sequence[int], pred: Sequence[int], num_labels: int) -> dict:
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold labels but {len(pred)} predictions")
    acc = sum(g == p for g, p in zip(gold, pred)) / len(gold) if gold else 0.0
    f1s = []
    for c in range(num_labels):
        tp = sum(g == c and p == c for g, p in zip(gold, pred))
        fp = sum(g != c and p == c for g, p in zip(gold, pred))
        fn = sum(g == c and p != c for g, p in zip(gold, pred))
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    present = [f for c, f in enumerate(f1s) if c in set(gold) or c in set(pred)]
    return {"accuracy": acc, "macro_f1": sum(present) / len(present) if present else 0.0, "per_label_f1": f1s}


def multilabel_scores(gold: Sequence[Sequence[int]], pred: Sequence[Sequence[int]], num_labels: int) -> dict:
    """``gold``/``pred``: per example, the list of label ids (possibly empty)."""
    tp = fp = fn = 0
    per = [[0, 0, 0] for _ in range(num_labels)]
    exact = 0
    for g, p in zip(gold, pred, strict=True):
        g, p = set(g), set(p)
        exact += g == p
        for c in range(num_labels):
            per[c][0] += c in g and c in p
            per[c][1] += c not in g and c in p
            per[c][2] += c in g and c not in p
    tp, fp, fn = (sum(x[i] for x in per) for i in range(3))
    f1 = [2 * a / (2 * a + b + c) if a else 0.0 for a, b, c in per]
    present = [f for (a, b, c), f in zip(per, f1) if a + b + c]
    return {
        "micro_f1": 2 * tp / (2 * tp + fp + fn) if tp else 0.0,
        "macro_f1": sum(present) / len(present) if present else 0.0,
        "exact_match": exact / len(gold) if gold else 0.0,
        "per_label_f1": f1,
    }
