"""Batched prediction for every head, with offsets into the caller's original text.

Texts are normalised and tokenised by :func:`zhbert.tokenizer.encode` (offsets
map back through normalisation), split into windows by the same collator as in
training, and run in batches of window rows. Token heads keep each token's tag
from its owner window (``zhbert.windows.owners``); a character's tag is the tag
of the token that covers it.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass

import numpy as np
import torch

from ..tags import lenient_spans
from ..text import unit_columns
from ..tokenizer import Encoding, encode
from ..windows import owner_groups
from .criteria import criterion_ids
from .inputs import TaskCollator, window_size
from .model import ZhBertForTask

__all__ = ["TokenTags", "predict_tags", "predict_scores", "char_spans", "row_batches", "batch_token_budget", "MAX_BATCH_TOKENS"]


@dataclass(frozen=True)
class TokenTags:
    encoding: Encoding
    tags: tuple[str, ...]  # one per token of ``encoding``
    scores: tuple[float, ...] = ()  # softmax probability of each chosen tag (from the emissions, also under a CRF)


def _collator(model: ZhBertForTask, tokenizer) -> TaskCollator:
    return TaskCollator(tokenizer, model.head, window_size(model.head, model.config))


def _on_model_device(model: ZhBertForTask, batch: dict) -> dict:
    """Batches are built on the CPU; the model may sit on a GPU (e.g. right after ``Trainer``)."""
    device = next(model.parameters()).device
    return {k: v.to(device) if torch.is_tensor(v) else v for k, v in batch.items()}


@torch.no_grad()
def predict_tags(
    model: ZhBertForTask,
    tokenizer,
    texts: list[str],
    batch_size: int | None = None,
    forced=None,
    criterion: str | list | None = None,
    with_scores: bool = True,
) -> list[TokenTags]:
    """Each text's tokens and their decoded tags; ``batch_size``: at most this many window rows per
    batch (``None``: as many as the model's token budget holds, :func:`batch_token_budget`);
    ``forced`` (a :class:`~zhbert.heads.user_dict.ForcedWords`) keeps its words whole in decoding;
    ``criterion``: the annotation standard to tag by (a head trained with ``criteria``), one name for
    every text or one per text; ``None`` the head's default (``default_criterion``, else its first). ``with_scores=False`` leaves each
    record's ``scores`` empty (a segmenter's words carry none; the softmax and the gather cost
    about a twentieth of a small model's time)."""
    if model.head.kind != "token":
        raise ValueError(f"predict_tags needs a token head, this model is a {model.head.kind} head")
    model.eval()
    coll = _collator(model, tokenizer)
    texts = list(texts)
    names = criterion if isinstance(criterion, (list, tuple)) else [criterion] * len(texts)
    if len(names) != len(texts):
        raise ValueError(f"{len(names)} criteria for {len(texts)} texts")
    types = criterion_ids(model.head.criteria, list(names), default=model.head.default_criterion)
    encs = encode(tokenizer, texts)
    spans = [coll.text_spans(e) for e in encs]
    rows = window_rows(spans, keep_empty=False)
    constraints = forced.token_constraints_many([e.text for e in encs], [e.offsets for e in encs]) if forced is not None else None
    preds: dict[tuple[int, int], list[int]] = {}
    probs: dict[tuple[int, int], list[float]] | None = {} if with_scores else None
    for chunk in row_batches(rows, batch_size, batch_token_budget(model.config)):
        batch = _on_model_device(model, coll._tokens([{"input_ids": encs[i].ids[a:b], "criterion": types[i]} for i, a, b in chunk]))
        logits = model(**batch).logits  # input ids, attention mask and, with criteria, segment ids
        decode_rows(model, logits, chunk, batch["attention_mask"], preds, probs, constraints)
    return assemble_tags(spans, encs, preds, probs, model.head.labels)


def decode_rows(
    model: ZhBertForTask, logits: torch.Tensor, chunk: list, attention_mask: torch.Tensor, preds: dict, probs: dict | None, constraints=None
) -> None:
    """The decoded tag path (CRF or argmax) of each window row, and each chosen tag's probability
    (unless ``probs`` is None); rows with forced words (``constraints``: per text, the tokens forced
    words constrain and the tags each may take, ``heads.user_dict.TokenConstraints``) decode under them."""
    token_mask = token_mask_of(chunk, attention_mask)
    paths = model.decode_tokens(logits, token_mask)
    if constraints is not None:
        _decode_forced(model, logits, token_mask, chunk, constraints, paths)
    if probs is None:
        for (i, a, _), path in zip(chunk, paths):
            preds[(i, a)] = path
        return
    soft = torch.softmax(logits[:, 1:].float(), dim=-1).cpu()
    if model.crf is None and constraints is None:  # the argmax path: each chosen tag's probability is the row maximum
        best = soft.max(-1).values.tolist()
        chosen = [row[: len(path)] for row, path in zip(best, paths)]
    else:  # every row's chosen probabilities in one gather, then cut back into rows
        rows = [r for r, path in enumerate(paths) for _ in path]
        cols = [c for path in paths for c in range(len(path))]
        flat = soft[rows, cols, [t for path in paths for t in path]].tolist() if rows else []
        ends = list(itertools.accumulate(len(path) for path in paths))
        chosen = [flat[e - len(path) : e] for e, path in zip(ends, paths)]
    for (i, a, _), path, p in zip(chunk, paths, chosen):
        preds[(i, a)] = path
        probs[(i, a)] = p


def _decode_forced(model, logits, token_mask, chunk, constraints, paths) -> None:
    """Redecode, in place in ``paths``, the rows that hold forced tokens (the others keep their
    plain decoding, so a text's answer never depends on the batch it shares)."""
    from .user_dict import constrained_decode

    found = [(r, constraints[i].within(a, b)) for r, (i, a, b) in enumerate(chunk)]
    found = [(r, at, ok) for r, (at, ok) in found if len(at)]
    if not found:
        return
    rows = [r for r, _, _ in found]
    allowed = np.ones((len(rows), logits.size(1) - 1, logits.size(-1)), dtype=bool)
    for j, (_, at, ok) in enumerate(found):
        allowed[j, at] = ok
    allowed = torch.from_numpy(allowed).to(logits.device)
    fixed = constrained_decode(model, logits[rows, 1:], token_mask[rows, 1:].bool(), allowed)
    for r, path in zip(rows, fixed):
        paths[r] = path


def window_rows(spans: list[list[tuple[int, int]]], keep_empty: bool) -> list[tuple[int, int, int]]:
    """``(text index, window start, window end)`` for every window of every text (``spans``:
    each text's windows, ``TaskCollator.text_spans``), shortest first (batches of similar
    length waste little padding); ``keep_empty`` keeps the one empty window of a text
    without tokens (a sequence head still reads its [CLS])."""
    rows = [(i, a, b) for i, sp in enumerate(spans) for a, b in sp if keep_empty or b > a]
    rows.sort(key=lambda r: r[2] - r[1])
    return rows


# Padded tokens per batch: a batch of short rows holds more of them, one of full windows fewer.
# On this CPU, a batch's activations beyond a few MB fall out of cache and the memory-bound
# steps (GELU, softmax, layer norm) slow down: the bundled `cws` on PKU test lines, one thread,
# ran 11,300 chars/s at 64 rows per batch, 12,900 at 16 and 13,600 at 2,048 tokens per batch.
MAX_BATCH_TOKENS = 2048
# A narrower model holds more tokens in the same cache (what fills it is the feed-forward
# layer's intermediate activations, tokens x intermediate size), and each batch has fixed costs
# (a Python step per position in CRF decoding, one lexicon walk, a dispatch per operator). On the
# PKU test lines, one thread, in one process (bench/LOG.md, forty-fourth session): the 1 x 64
# `cws-fast` student (intermediate 256) read 117,848 chars/s in batches of 2,048 tokens and 64
# rows, 135,049 at 4,096 tokens and 139,180 at 8,192 (any number of rows); the bundled
# `cws-fast` (512) 57,613 at 2,048 and 57,836 at 3,072 but 56,433 at 4,096 (60,494 at 2,048 in
# that run); the bundled `cws` (1,024) 9,709 at 2,048 and 9,234 at 4,096.
BATCH_ACTIVATIONS = MAX_BATCH_TOKENS * 512


def batch_token_budget(config) -> int:
    """Padded tokens per batch for a model with this ``config``: :data:`MAX_BATCH_TOKENS` for an
    intermediate size of 512 (the bundled `cws-fast`) and wider, more for a narrower model."""
    return max(MAX_BATCH_TOKENS, BATCH_ACTIVATIONS // config.intermediate_size)


def row_batches(rows: list[tuple[int, int, int]], batch_size: int | None, max_tokens: int = MAX_BATCH_TOKENS) -> list[list]:
    """Consecutive runs of window rows (sorted shortest first by :func:`window_rows`), each of
    at most ``batch_size`` rows (``None``: no limit of its own) and ``max_tokens`` padded tokens
    ([CLS]/[SEP] counted); a row longer than ``max_tokens`` runs alone."""
    most = len(rows) if batch_size is None else batch_size
    out, start = [], 0
    while start < len(rows):
        end = start + 1
        while end < len(rows) and end - start < most and (end - start + 1) * (rows[end][2] - rows[end][1] + 2) <= max_tokens:
            end += 1
        out.append(rows[start:end])
        start = end
    return out


def token_mask_of(chunk: list[tuple[int, int, int]], attention_mask: torch.Tensor) -> torch.Tensor:
    """1 on each window's own tokens (after [CLS], before [SEP]), left-aligned as decoding expects."""
    lengths = torch.tensor([b - a for _, a, b in chunk], device=attention_mask.device)
    pos = torch.arange(attention_mask.size(1), device=attention_mask.device)
    return ((pos >= 1) & (pos <= lengths[:, None])).to(attention_mask.dtype)


def assemble_tags(text_spans: list, encs: list[Encoding], preds: dict, probs: dict | None, labels: list[str]) -> list[TokenTags]:
    """Each token's tag and probability (none when ``probs`` is None) from its owner window's
    decoded path (windows that overlap nothing are copied whole: :func:`zhbert.windows.owner_groups`)."""
    out = []
    for i, enc in enumerate(encs):
        tags: list[str] = []
        scores: list[float] = []
        for first, group, own in owner_groups([(a, b) for a, b in text_spans[i] if b > a]):
            if own is None:
                (a, b) = group[0]
                tags += [labels[t] for t in preds[(i, a)][: b - a]]
                if probs is not None:
                    scores += probs[(i, a)][: b - a]
                continue
            for k, w in enumerate(own, start=first):
                a = group[w][0]
                tags.append(labels[preds[(i, a)][k - a]])
                if probs is not None:
                    scores.append(probs[(i, a)][k - a])
        out.append(TokenTags(enc, tuple(tags), tuple(scores)))
    return out


def char_spans(pred: TokenTags, scheme: str, with_scores: bool = False, split_at_space: bool | None = None) -> list[tuple]:
    """Tagged spans as ``(type, start, end)`` character offsets into the original text;
    with ``with_scores``, ``(type, start, end, mean tag probability over the span)``.

    Spans are built over :func:`zhbert.text.token_units`, so they never overlap, never
    cut a grapheme cluster, and take in characters no token covers (combining marks,
    ZWJ, control characters). ``split_at_space`` (default: for the BMES schemes of
    segmentation) ends a span at every whitespace gap: a word never contains whitespace.
    """
    if split_at_space is None:
        split_at_space = scheme.startswith("BMES")
    enc, n = pred.encoding, len(pred.tags)
    starts, ends, tokens = unit_columns(enc.text, enc.offsets, enc.word_ids)
    if n < len(enc):  # the caller asked to truncate: units of the tagged tokens only
        keep = [i for i, t in enumerate(tokens) if t < n]
        starts, ends, tokens = [starts[i] for i in keep], [ends[i] for i in keep], [tokens[i] for i in keep]
    if tokens == list(range(n)):  # a unit per token, in order (most text): the tags as they are
        tags = list(pred.tags)
    else:
        outside = "S" if scheme == "BMES-untyped" else "O"  # a unit no token covers, on its own
        tags = [pred.tags[t] if t >= 0 else outside for t in tokens]
    if with_scores:
        scores = [pred.scores[t] if t >= 0 and pred.scores else 1.0 for t in tokens]
    # whitespace between units k-1 and k: a span across it is cut there (there is none when
    # the units' extent is just their own characters)
    gaps = []
    if split_at_space and starts and ends[-1] - starts[0] > len(starts):
        gaps = [k for k in range(1, len(starts)) if starts[k] > ends[k - 1]]
    if not gaps and not with_scores:  # most text: each tagged span is one character span (one list pass)
        return [(t, starts[s], ends[e - 1]) for t, s, e in lenient_spans(tags, scheme)]
    out = []
    for t, s, e in lenient_spans(tags, scheme):
        cuts = gaps[bisect.bisect_right(gaps, s) : bisect.bisect_left(gaps, e)] if gaps else []
        for a, b in zip([s, *cuts], [*cuts, e]):
            span = (t, starts[a], ends[b - 1])
            if with_scores:
                span += (sum(scores[a:b]) / (b - a),)
            out.append(span)
    return out


def activate(head, logits: torch.Tensor) -> torch.Tensor:
    """Scores (regression), sigmoid probabilities (multi-label) or softmax probabilities."""
    if head.regression:
        return logits.squeeze(-1)
    return torch.sigmoid(logits) if head.multi_label else torch.softmax(logits, dim=-1)


SEQUENCE_BATCH = 32  # texts (or pairs) per batch of a sequence or pair head when the caller names none


@torch.no_grad()
def predict_scores(model: ZhBertForTask, tokenizer, inputs: list, batch_size: int | None = None) -> torch.Tensor:
    """Probabilities ``(N, K)`` (softmax, or sigmoid when multi-label) or scores ``(N,)``.

    ``inputs``: texts for a sequence head, ``(text_a, text_b)`` pairs for a pair head;
    ``batch_size``: inputs per batch (``None``: :data:`SEQUENCE_BATCH`).
    """
    h = model.head
    if h.kind == "token":
        raise ValueError("predict_scores needs a sequence or pair head; use predict_tags for token heads")
    batch_size = SEQUENCE_BATCH if batch_size is None else batch_size
    model.eval()
    coll = _collator(model, tokenizer)
    # batches of similar length waste little padding; results go back in input order
    size = (lambda x: len(x[0]) + len(x[1])) if h.kind == "pair" else len
    order = sorted(range(len(inputs)), key=lambda i: size(inputs[i]))
    outs = []
    for start in range(0, len(order), batch_size):
        chunk = [inputs[i] for i in order[start : start + batch_size]]
        if h.kind == "pair":
            a = encode(tokenizer, [x[0] for x in chunk])
            b = encode(tokenizer, [x[1] for x in chunk])
            examples = [
                {"input_ids": ea.ids, "input_ids_b": eb.ids, "breaks": coll.breaks(ea), "breaks_b": coll.breaks(eb)} for ea, eb in zip(a, b)
            ]
        else:
            examples = [{"input_ids": e.ids, "breaks": coll.breaks(e)} for e in encode(tokenizer, list(chunk))]
        outs.append(activate(h, model(**_on_model_device(model, coll(examples))).logits.float().cpu()))
    if not outs:
        return torch.empty(0)
    result = torch.empty_like(torch.cat(outs))
    result[torch.tensor(order)] = torch.cat(outs)
    return result
