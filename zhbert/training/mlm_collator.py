"""Masked-LM batches: per example, a ``torch.Generator`` seeded from (seed, epoch,
example index) lets the masking strategy pick units and applies 80/10/10, so masks are
reproducible across a crash and resume without saving collator state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from ..masking import Masker

__all__ = ["MaskingCollator"]


@dataclass
class MaskingCollator:
    """Pads (rarely needed after packing), masks, and returns model inputs."""

    tokenizer: Any
    masker: Masker
    seed: int = 0
    epoch: int = 0
    record: str | None = None  # append each batch's example indices here (per rank; tests of data sharding)
    stats: dict = field(default_factory=lambda: {"tokens": 0, "masked": 0, "units": 0, "masked_units": 0})

    def _generator(self, idx: int) -> torch.Generator:
        g = torch.Generator()
        g.manual_seed((self.seed * 1_000_003 + self.epoch * 7_919 + int(idx)) % (2**63 - 1))
        return g

    def __call__(self, examples: list[dict]) -> dict[str, torch.Tensor]:
        from ..masking.base import apply_80_10_10

        if self.record:
            import json
            import os

            with open(f"{self.record}.rank{os.environ.get('RANK', '0')}", "a") as f:
                f.write(json.dumps([int(e.get("idx", -1)) for e in examples]) + "\n")
        pad = self.tokenizer.pad_token_id
        length = max(len(e["input_ids"]) for e in examples)
        batch_ids, batch_labels, batch_mask = [], [], []
        for e in examples:
            ids = torch.tensor(e["input_ids"], dtype=torch.long)
            units = self.masker.unit_ids(e, self._special_ids)
            g = self._generator(e.get("idx", 0))
            selected, draw_units = self.masker.choose(units, g)
            inputs, labels, _ = apply_80_10_10(
                ids,
                selected,
                draw_units,
                self.masker.config,
                self.tokenizer.mask_token_id,
                len(self.tokenizer),
                g,
                random_low=self._first_regular_id,
            )
            self.stats["tokens"] += int((units >= 0).sum())
            self.stats["masked"] += int(selected.sum())
            n = len(ids)
            batch_ids.append(torch.cat([inputs, torch.full((length - n,), pad)]))
            batch_labels.append(torch.cat([labels, torch.full((length - n,), -100)]))
            batch_mask.append(torch.cat([torch.ones(n, dtype=torch.long), torch.zeros(length - n, dtype=torch.long)]))
        ids = torch.stack(batch_ids)
        batch = {"input_ids": ids, "attention_mask": torch.stack(batch_mask), "labels": torch.stack(batch_labels)}
        if "token_type_ids" in examples[0]:  # NSP pairs: segment A = 0, B = 1
            batch["token_type_ids"] = torch.tensor([e["token_type_ids"] + [0] * (length - len(e["token_type_ids"])) for e in examples])
            batch["next_sentence_label"] = torch.tensor([e["next_sentence_label"] for e in examples])
        else:
            batch["token_type_ids"] = torch.zeros_like(ids)
        return batch

    @property
    def _special_ids(self) -> set[int]:
        return set(self.tokenizer.all_special_ids)

    @property
    def _first_regular_id(self) -> int:
        # random replacements come from ordinary tokens, never [PAD]/[unused]/[CLS]...
        return max(self.tokenizer.all_special_ids) + 1
