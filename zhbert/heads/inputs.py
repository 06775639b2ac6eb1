"""Model inputs for every head: windows, [CLS]/[SEP], padding, labels.

Examples carry token ids *without* special tokens (``input_ids``, and
``input_ids_b`` for pairs), optionally where their sentences start (``breaks``,
``breaks_b``: windows then align to sentences), plus a label: ``label`` (class id, float score or a
multi-hot list) for sequence/pair heads, ``tags`` (one tag id per token) for
token heads, and for a token head trained on several standards a ``criterion`` (segment id,
``zhbert.heads.criteria``). :class:`TaskCollator` turns a list of them into a batch for
:class:`~zhbert.heads.model.ZhBertForTask`; training and inference use the same
code, so a window at prediction time looks exactly like one seen in training.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..encoder_info import trained_length
from ..tags import continues_span, token_tags
from ..windows import sentence_breaks, windows
from .config import HeadConfig
from .criteria import segment_ids

__all__ = ["TaskCollator", "window_batch", "pair_batch", "window_size", "token_tags_from_chars"]


def window_size(head: HeadConfig, config) -> int:
    """Tokens per window including [CLS]/[SEP]: by default the length the encoder was
    pretrained on (``zhbert.encoder_info``); a longer window only when the head allows it."""
    limit = config.max_position_embeddings
    trained = trained_length(config)
    size = head.window or trained
    if size > limit:
        raise ValueError(f"window {size} exceeds the model's {limit} positions")
    if size > trained and not head.allow_untrained_positions:
        raise ValueError(
            f"window {size} reads positions {trained}-{size - 1}, which the encoder never trained on "
            f"(it was pretrained on {trained}-token sequences): use window <= {trained}, or set "
            "allow_untrained_positions=True to accept untrained positions"
        )
    return size


def _pad(rows: list[list[int]], value: int) -> torch.Tensor:
    n = max((len(r) for r in rows), default=0)
    return torch.tensor([r + [value] * (n - len(r)) for r in rows], dtype=torch.long)


def window_batch(bodies: list, cls: int, sep: int, pad: int) -> dict[str, torch.Tensor]:
    """``[CLS] body [SEP]`` per row, right-padded, with its attention mask: the one place
    window rows become model inputs (heads in training and inference, features, fill-mask)."""
    ids = [[cls, *body, sep] for body in bodies]
    return {"input_ids": _pad(ids, pad), "attention_mask": _pad([[1] * len(r) for r in ids], 0)}


def pair_batch(pairs: list[tuple[list[int], list[int]]], cls: int, sep: int, pad: int, max_length: int, truncate: bool = False) -> dict:
    """``[CLS] a [SEP] b [SEP]`` per pair with segment ids: the one place cross-encoded pairs
    become model inputs (pair heads in training and inference, pair probes). A pair longer
    than ``max_length`` is an error unless ``truncate`` (longest side first, as BERT's
    run_classifier)."""
    ids, types = [], []
    for a, b in pairs:
        a, b = list(a), list(b)
        if len(a) + len(b) + 3 > max_length:
            if not truncate:
                raise ValueError(
                    f"pair of {len(a)} + {len(b)} tokens exceeds the {max_length}-token window; "
                    "use pair_encoding='bi' (each side windowed) or truncate=True"
                )
            while len(a) + len(b) + 3 > max_length:
                (a if len(a) >= len(b) else b).pop()
        ids.append([cls] + a + [sep] + b + [sep])
        types.append([0] * (len(a) + 2) + [1] * (len(b) + 1))
    return {"input_ids": _pad(ids, pad), "attention_mask": _pad([[1] * len(r) for r in ids], 0), "token_type_ids": _pad(types, 0)}


@dataclass
class TaskCollator:
    tokenizer: Any
    head: HeadConfig
    max_length: int  # window size incl. specials

    def __post_init__(self):
        self.cls, self.sep, self.pad = self.tokenizer.cls_token_id, self.tokenizer.sep_token_id, self.tokenizer.pad_token_id
        self.body = self.max_length - 2
        self.stride = self.head.stride
        # tag ids that continue a span: a training window never starts on one (training_spans)
        self.continues = [continues_span(label, self.head.scheme) for label in self.head.labels] if self.head.kind == "token" else []

    def spans(self, n: int, breaks: list[int] | None = None) -> list[tuple[int, int]]:
        """Window ranges over ``n`` tokens; ``breaks`` (sentence starts) align them when the
        head says so (training examples carry no text, so they window at any token)."""
        if self.head.truncate:
            return [(0, min(n, self.body))]
        align = self.head.window_align
        return windows(n, self.body, self.stride, None if align == "token" else breaks, pack=align == "packed")

    def breaks(self, enc) -> list[int] | None:
        """Sentence starts of an encoded text, when its windows align to them."""
        if len(enc) <= self.body or self.head.truncate or self.head.window_align == "token":
            return None
        return sentence_breaks(enc.text, enc.offsets)

    def training_spans(self, tags: list[int]) -> list[tuple[int, int]]:
        """Window ranges over a tagged training example: whole spans packed into each window,
        never overlapping. A window cut inside a word or entity would begin on ``M``/``I``/``E``
        (or end on ``B``), a gold sequence a CRF's constraints forbid."""
        if self.head.truncate:
            return [(0, min(len(tags), self.body))]
        breaks = [i for i in range(1, len(tags)) if not self.continues[tags[i]]]
        return windows(len(tags), self.body, self.stride, breaks, pack=True)

    def text_spans(self, enc) -> list[tuple[int, int]]:
        """Window ranges over an encoded text (:class:`zhbert.tokenizer.Encoding`)."""
        return self.spans(len(enc), self.breaks(enc))

    def _single(self, examples: list[dict], key: str = "input_ids") -> dict:
        bodies, index = [], []
        for k, e in enumerate(examples):
            for a, b in self.spans(len(e[key]), e.get(key.replace("input_ids", "breaks"))):
                bodies.append(list(e[key][a:b]))
                index.append(k)
        return {**window_batch(bodies, self.cls, self.sep, self.pad), "example_index": torch.tensor(index, dtype=torch.long)}

    def _cross(self, examples: list[dict]) -> dict:
        pairs = [(e["input_ids"], e["input_ids_b"]) for e in examples]
        return pair_batch(pairs, self.cls, self.sep, self.pad, self.max_length, self.head.truncate)

    def _tokens(self, examples: list[dict]) -> dict:
        bodies, labels, weights, soft, types = [], [], [], [], []
        n_labels = len(self.head.labels)
        for e in examples:
            tags = e.get("tags")
            teacher = e.get("teacher_logits")  # zhbert.training.distillation: the teacher's tag logits, flattened
            if teacher is not None:
                teacher = torch.as_tensor(np.asarray(teacher, dtype=np.float32)).reshape(-1, n_labels)
            for a, b in self.spans(len(e["input_ids"])) if tags is None else self.training_spans(tags):
                bodies.append(list(e["input_ids"][a:b]))
                weights.append(e.get("weight", 1.0))
                types.append(e.get("criterion", 0))
                if tags is not None:
                    labels.append([-100] + list(tags[a:b]) + [-100])
                if teacher is not None:
                    soft.append(teacher[a:b])
        batch = window_batch(bodies, self.cls, self.sep, self.pad)
        if self.head.criteria:  # each row's annotation standard as its segment id, at every position (criteria.py)
            batch["token_type_ids"] = segment_ids(types, batch["input_ids"])
        if labels:
            batch["labels"] = _pad(labels, -100)
            if any(w != 1.0 for w in weights):  # each window row's share of the loss (its example's weight)
                batch["example_weights"] = torch.tensor(weights, dtype=torch.float32)
        if soft:
            if len(soft) != len(bodies):
                raise ValueError("teacher_logits on some examples of a batch and not on others")
            logits = torch.zeros(*batch["input_ids"].shape, n_labels)  # zeros at [CLS], [SEP], padding: never labelled
            for row, t in enumerate(soft):
                logits[row, 1 : 1 + len(t)] = t
            batch["teacher_logits"] = logits
        return batch

    def __call__(self, examples: list[dict]) -> dict[str, torch.Tensor]:
        h = self.head
        if h.kind == "token":
            return self._tokens(examples)
        if h.kind == "pair" and h.pair_encoding == "cross":
            batch = self._cross(examples)
        else:
            batch = self._single(examples)
            batch["num_examples"] = torch.tensor(len(examples))
            if h.kind == "pair":
                side_b = self._single(examples, "input_ids_b")
                batch.update(
                    input_ids_b=side_b["input_ids"], attention_mask_b=side_b["attention_mask"], example_index_b=side_b["example_index"]
                )
        if "label" in examples[0]:
            dtype = torch.float if (h.multi_label or h.regression) else torch.long
            batch["labels"] = torch.tensor([e["label"] for e in examples], dtype=dtype)
        return batch


def token_tags_from_chars(offsets, char_tags: list[int], labels: list[str], scheme: str) -> list[int]:
    """Per-token tag ids from per-character tag ids (:func:`zhbert.tags.token_tags`).

    Tokens are single characters for Chinese; a Latin/digit run such as ``iPhone15`` becomes
    word pieces, each starting at a character of the run and tagged by the span it starts in.
    """
    names = token_tags([labels[t] for t in char_tags], [s for s, _ in offsets], scheme)
    index = {label: i for i, label in enumerate(labels)}
    return [index[t] for t in names]
