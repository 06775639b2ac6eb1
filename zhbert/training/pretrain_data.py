"""Corpus -> token ids with unit ids -> packed blocks -> masked batches.

1. :func:`prepare` (``datasets.map``, ``num_proc`` workers, Arrow-cached):
   tokenise each document with offsets and attach per-token ``word_ids`` (jieba
   words) and, for ERNIE masking, ``ernie_ids`` (entity/phrase/word units).
2. :func:`pack`: concatenate documents (``[SEP]`` between them) into blocks of
   exactly ``max_length`` tokens, ``[CLS] ... [SEP]``: no padding waste; a long
   document simply continues in the next block (windowed, never truncated).
3. :class:`MaskingCollator`: per example, a ``torch.Generator`` seeded from
   (seed, epoch, example index) picks units and applies 80/10/10, so masks are
   reproducible across a crash and resume without saving collator state.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from datasets import Dataset

from ..masking import Masker
from ..masking.units import ernie_spans, token_units, word_spans
from ..tokenizer import encode

__all__ = ["prepare", "pack", "MaskingCollator"]


def _prepare_batch(batch, tokenizer, with_ernie: bool, user_dict: str | None):
    encs = encode(tokenizer, batch["text"])
    out: dict[str, list] = {"input_ids": [], "word_ids": []}
    if with_ernie:
        out["ernie_ids"] = []
    for text, enc in zip(batch["text"], encs):
        out["input_ids"].append(list(enc.ids))
        out["word_ids"].append(token_units(enc.offsets, word_spans(text, user_dict)))
        if with_ernie:
            spans = [(s, e) for s, e, _ in ernie_spans(text, user_dict=user_dict)]
            out["ernie_ids"].append(token_units(enc.offsets, spans))
    return out


def prepare(corpus: Dataset, tokenizer, masking: str = "wwm", num_proc: int | None = None, user_dict: str | None = None) -> Dataset:
    """Tokenise documents and compute unit ids once (cached by ``datasets``)."""
    with_ernie = masking == "ernie"
    return corpus.map(
        _prepare_batch,
        batched=True,
        batch_size=200,
        num_proc=num_proc if num_proc and num_proc > 1 else None,
        remove_columns=corpus.column_names,
        fn_kwargs={"tokenizer": tokenizer, "with_ernie": with_ernie, "user_dict": user_dict},
        desc=f"tokenising + word boundaries ({masking})",
    )


def _pack_batch(batch, max_length: int, cls_id: int, sep_id: int, unit_columns: tuple[str, ...]):
    body = max_length - 2
    ids: list[int] = []
    units: dict[str, list[int]] = {c: [] for c in unit_columns}
    next_unit = {c: 0 for c in unit_columns}
    for k, doc in enumerate(batch["input_ids"]):
        if k > 0:
            ids.append(sep_id)
            for c in unit_columns:
                units[c].append(-1)
        ids.extend(doc)
        for c in unit_columns:
            local = batch[c][k]
            units[c].extend(u + next_unit[c] for u in local)
            next_unit[c] += (max(local) + 1) if local else 0
    out: dict[str, list] = {"input_ids": [], **{c: [] for c in unit_columns}}
    for start in range(0, len(ids), body):
        chunk = ids[start : start + body]
        if not chunk:
            continue
        out["input_ids"].append([cls_id] + chunk + [sep_id])
        for c in unit_columns:
            out[c].append([-1] + units[c][start : start + body] + [-1])
    return out


def pack(prepared: Dataset, tokenizer, max_length: int = 128, num_proc: int | None = None) -> Dataset:
    """Blocks of ``max_length`` tokens across document boundaries, plus ``idx``."""
    unit_columns = tuple(c for c in ("word_ids", "ernie_ids") if c in prepared.column_names)
    packed = prepared.map(
        _pack_batch,
        batched=True,
        batch_size=1000,
        num_proc=num_proc if num_proc and num_proc > 1 else None,
        remove_columns=prepared.column_names,
        fn_kwargs={
            "max_length": max_length,
            "cls_id": tokenizer.cls_token_id,
            "sep_id": tokenizer.sep_token_id,
            "unit_columns": unit_columns,
        },
        desc=f"packing into blocks of {max_length}",
    )
    return packed.add_column("idx", list(range(len(packed))))


@dataclass
class MaskingCollator:
    """Pads (rarely needed after packing), masks, and returns model inputs."""

    tokenizer: Any
    masker: Masker
    seed: int = 0
    epoch: int = 0
    stats: dict = field(default_factory=lambda: {"tokens": 0, "masked": 0, "units": 0, "masked_units": 0})

    def _generator(self, idx: int) -> torch.Generator:
        g = torch.Generator()
        g.manual_seed((self.seed * 1_000_003 + self.epoch * 7_919 + int(idx)) % (2**63 - 1))
        return g

    def __call__(self, examples: list[dict]) -> dict[str, torch.Tensor]:
        from ..masking.base import apply_80_10_10, units_of

        pad = self.tokenizer.pad_token_id
        length = max(len(e["input_ids"]) for e in examples)
        batch_ids, batch_labels, batch_mask = [], [], []
        column = self.masker.unit_column or "word_ids"
        for e in examples:
            ids = torch.tensor(e["input_ids"], dtype=torch.long)
            if self.masker.unit_column is None:
                units = torch.where(
                    torch.tensor([i in self._special_ids for i in e["input_ids"]]), -1, torch.arange(len(ids))
                )
            else:
                units = torch.tensor(e[column], dtype=torch.long)
            g = self._generator(e.get("idx", 0))
            selected = self.masker.select(units, g)
            inputs, labels, _ = apply_80_10_10(
                ids, selected, units if self.masker.unit_column else torch.arange(len(ids)), self.masker.config,
                self.tokenizer.mask_token_id, len(self.tokenizer), g, random_low=self._first_regular_id,
            )
            self.stats["tokens"] += int((units >= 0).sum())
            self.stats["masked"] += int(selected.sum())
            n = len(ids)
            batch_ids.append(torch.cat([inputs, torch.full((length - n,), pad)]))
            batch_labels.append(torch.cat([labels, torch.full((length - n,), -100)]))
            batch_mask.append(torch.cat([torch.ones(n, dtype=torch.long), torch.zeros(length - n, dtype=torch.long)]))
        ids = torch.stack(batch_ids)
        return {
            "input_ids": ids,
            "attention_mask": torch.stack(batch_mask),
            "token_type_ids": torch.zeros_like(ids),
            "labels": torch.stack(batch_labels),
        }

    @property
    def _special_ids(self) -> set[int]:
        return set(self.tokenizer.all_special_ids)

    @property
    def _first_regular_id(self) -> int:
        # random replacements come from ordinary tokens, never [PAD]/[unused]/[CLS]...
        return max(self.tokenizer.all_special_ids) + 1
