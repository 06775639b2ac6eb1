"""Held-out fill-mask quality: masked-character accuracy and perplexity.

Each held-out sentence gets 15% of its tokens (at least one) replaced by
``[MASK]``, positions drawn from a seeded generator, so every model and the
baseline are scored on exactly the same blanks. Given each sentence's words
(gold segmentation), 15% of the *words* are blanked instead, every character of
a chosen word at once: the whole-word test, which a model cannot pass by copying
the rest of a half-masked word (char-level blanks favour char-masked models,
whole-word blanks favour word-masked ones; a masking study reports both). The model sees one sentence per
row (``[CLS] s [SEP]``, sentences longer than the window are windowed).

Baseline: the unigram model that predicts each blank from character
frequencies counted on the pretraining corpus (add-one smoothed): its accuracy
is the share of blanks that are the single most frequent token, its perplexity
``exp`` of the mean negative log-frequency.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import torch

from ..masking.units import token_units
from ..tokenizer import encode
from ..windows import windows

__all__ = ["MaskedLMScore", "blank_positions", "blank_units", "evaluate_mlm", "unigram_counts", "evaluate_unigram"]


@dataclass(frozen=True)
class MaskedLMScore:
    blanks: int
    accuracy: float  # share of blanks whose top-1 prediction is the original token
    perplexity: float  # exp(mean cross-entropy over blanks)
    # share of blanked units (words, given words; else single tokens) whose every token is top-1 right:
    # a two-character word filled at once counts only with both characters right
    unit_accuracy: float | None = None

    def to_dict(self) -> dict:
        out = {"blanks": self.blanks, "accuracy": self.accuracy, "perplexity": self.perplexity}
        if self.unit_accuracy is not None:
            out["unit_accuracy"] = self.unit_accuracy
        return out


def _word_spans(text: str, words: list[str], index: int) -> list[tuple[int, int]]:
    if "".join(words) != text:
        raise ValueError(f"text {index}: its words do not spell it ({text[:30]!r} vs {''.join(words)[:30]!r})")
    spans, start = [], 0
    for w in words:
        spans.append((start, start + len(w)))
        start += len(w)
    return spans


def blank_positions(
    tokenizer, texts: list[str], rate: float = 0.15, seed: int = 0, words: list[list[str]] | None = None
) -> list[tuple[list[int], list[int]]]:
    """``(token ids, masked positions)`` per text; ``[UNK]`` tokens are never blanks.

    Without ``words`` each token is a unit; with ``words`` (one list per text) each
    word is, and all tokens of a chosen word are blanked together.
    """
    return [(ids, sorted(k for unit in units for k in unit)) for ids, units in blank_units(tokenizer, texts, rate, seed, words)]


def blank_units(
    tokenizer, texts: list[str], rate: float = 0.15, seed: int = 0, words: list[list[str]] | None = None
) -> list[tuple[list[int], list[list[int]]]]:
    """:func:`blank_positions` with the masked positions grouped by unit: ``(token ids, [positions of
    each chosen unit])`` per text, the same blanks for the same arguments."""
    if words is not None and len(words) != len(texts):
        raise ValueError(f"{len(texts)} texts but {len(words)} word lists")
    g = torch.Generator().manual_seed(seed)
    out = []
    for i, enc in enumerate(encode(tokenizer, texts)):
        ids = list(enc.ids)
        keep = [k for k, t in enumerate(ids) if t != tokenizer.unk_token_id]
        if words is None:
            units = [[k] for k in keep]
        else:
            owner = token_units(list(enc.offsets), _word_spans(texts[i], words[i], i))
            grouped: dict[int, list[int]] = {}
            for k in keep:
                grouped.setdefault(owner[k], []).append(k)
            units = list(grouped.values())
        if not units:
            continue
        n = max(1, round(rate * len(units)))
        pick = torch.randperm(len(units), generator=g)[:n].tolist()
        out.append((ids, [units[p] for p in pick]))
    return out


def _blank_logits(model, input_ids, attention_mask, picked):
    """Vocabulary logits at the ``picked`` positions only, ``(n_picked, V)`` in row-major order: through the
    model's ``blank_logits`` where it has one (the vocabulary projection at every position costs more than a
    small encoder), else from its full output."""
    if hasattr(model, "blank_logits"):
        return model.blank_logits(input_ids, attention_mask, picked)
    return model(input_ids=input_ids, attention_mask=attention_mask).logits[picked]


@torch.no_grad()
def evaluate_mlm(
    model,
    tokenizer,
    texts: list[str],
    rate: float = 0.15,
    seed: int = 0,
    batch_size: int = 32,
    max_length: int = 128,
    words: list[list[str]] | None = None,
    overlap: bool = True,
) -> MaskedLMScore:
    """``overlap=False`` reads a long text in windows that do not overlap: each blank is scored once either way
    (where first seen), so overlapping windows only cost a second pass over most tokens."""
    model.eval()
    rows = []  # (input ids with [MASK], {row position: original id}, text number, window start)
    # a model with fewer positions than max_length gets shorter windows, not an index error
    body = min(max_length, getattr(getattr(model, "config", None), "max_position_embeddings", max_length)) - 2
    blanked = blank_units(tokenizer, texts, rate, seed, words)
    for t, (ids, units) in enumerate(blanked):
        blanks = sorted(k for unit in units for k in unit)
        masked = list(ids)
        for k in blanks:
            masked[k] = tokenizer.mask_token_id
        bset = set(blanks)
        for a, b in windows(len(ids), body, stride=None if overlap else body):
            # each blank scored once: in the window where it is first seen
            targets = {k - a + 1: ids[k] for k in range(a, b) if k in bset}
            bset -= {k for k in range(a, b)}
            if targets:
                rows.append(([tokenizer.cls_token_id] + masked[a:b] + [tokenizer.sep_token_id], targets, t, a))
    right: set[tuple[int, int]] = set()  # (text number, position) of each blank predicted right
    nll, total = 0.0, 0
    for start in range(0, len(rows), batch_size):
        chunk = rows[start : start + batch_size]
        n = max(len(r[0]) for r in chunk)
        input_ids = torch.tensor([r[0] + [tokenizer.pad_token_id] * (n - len(r[0])) for r in chunk])
        attention = (torch.arange(n)[None, :] < torch.tensor([len(r[0]) for r in chunk])[:, None]).long()
        picked = torch.zeros(input_ids.shape, dtype=torch.bool)
        for i, (_, targets, _, _) in enumerate(chunk):
            picked[i, list(targets)] = True
        logits = _blank_logits(model, input_ids, attention, picked)
        at = 0
        for _, targets, t, a in chunk:
            gold = torch.tensor(list(targets.values()))  # ascending positions: picked's row-major order
            lp = torch.log_softmax(logits[at : at + len(gold)].float(), dim=-1)
            at += len(gold)
            nll -= float(lp[torch.arange(len(gold)), gold].sum())
            hits = (lp.argmax(-1) == gold).tolist()
            right.update((t, p + a - 1) for p, hit in zip(targets, hits) if hit)
            total += len(gold)
    units = [(t, unit) for t, (_, text_units) in enumerate(blanked) for unit in text_units]
    whole = sum(all((t, k) in right for k in unit) for t, unit in units)
    return MaskedLMScore(total, len(right) / max(total, 1), math.exp(nll / max(total, 1)), whole / max(len(units), 1))


def unigram_counts(tokenizer, texts, batch_size: int = 2000) -> Counter:
    counts: Counter = Counter()
    batch: list[str] = []
    for t in texts:
        batch.append(t)
        if len(batch) == batch_size:
            for e in encode(tokenizer, batch):
                counts.update(e.ids)
            batch = []
    for e in encode(tokenizer, batch):
        counts.update(e.ids)
    return counts


def evaluate_unigram(
    counts: Counter, tokenizer, texts: list[str], rate: float = 0.15, seed: int = 0, words: list[list[str]] | None = None
) -> MaskedLMScore:
    vocab = len(tokenizer)
    total_count = sum(counts.values()) + vocab  # add-one smoothing
    top = counts.most_common(1)[0][0]
    correct, nll, n = 0, 0.0, 0
    for ids, blanks in blank_positions(tokenizer, texts, rate, seed, words):
        for k in blanks:
            nll -= math.log((counts.get(ids[k], 0) + 1) / total_count)
            correct += ids[k] == top
            n += 1
    return MaskedLMScore(n, correct / max(n, 1), math.exp(nll / max(n, 1)))
