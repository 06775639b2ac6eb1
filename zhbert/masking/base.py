"""What every masking strategy shares: the unit budget and the 80/10/10 rule.

A strategy only decides *which units* to mask (a unit is one character, a whole
word, an entity/phrase or an n-gram of words). :func:`apply_80_10_10` then
treats every token of a chosen unit the same way, as BERT does for whole words:
with probability 0.8 all its tokens become ``[MASK]``, 0.1 each becomes a random
token, 0.1 they stay; the unit's tokens are predicted in all three cases.

Inputs per sequence: ``input_ids`` (1-D) and ``unit_ids`` (1-D, same length):
tokens with the same non-negative id form one unit; ``-1`` marks special tokens,
which are never masked. Randomness comes only from the ``torch.Generator`` given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

__all__ = ["MaskingConfig", "Masker", "apply_80_10_10", "units_of", "budget"]


@dataclass
class MaskingConfig:
    rate: float = 0.15  # share of units selected for prediction
    mask_prob: float = 0.8  # of selected units: replaced by [MASK]
    random_prob: float = 0.1  # of selected units: replaced by random tokens (rest kept)


def units_of(unit_ids: torch.Tensor) -> torch.Tensor:
    """The distinct unit ids of a sequence, in order of first appearance."""
    ids = unit_ids[unit_ids >= 0]
    if ids.numel() == 0:
        return ids
    return _ordered_unique(ids)


def _ordered_unique(ids: torch.Tensor) -> torch.Tensor:
    uniq, inverse = torch.unique(ids, return_inverse=True)
    first = torch.full((uniq.numel(),), ids.numel(), dtype=torch.long)
    first.scatter_reduce_(0, inverse, torch.arange(ids.numel()), reduce="amin")
    return uniq[torch.argsort(first)]


def budget(n_units: int, rate: float, generator: torch.Generator) -> int:
    """How many units to select: ``rate * n`` with stochastic rounding (unbiased)."""
    if n_units == 0:
        return 0
    exact = rate * n_units
    k = math.floor(exact)
    if torch.rand((), generator=generator).item() < exact - k:
        k += 1
    return max(1, min(k, n_units))


def apply_80_10_10(
    input_ids: torch.Tensor,
    selected: torch.Tensor,
    unit_ids: torch.Tensor,
    config: MaskingConfig,
    mask_token_id: int,
    vocab_size: int,
    generator: torch.Generator,
    random_low: int = 0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Corrupt the tokens of selected units; return (inputs, labels, action).

    ``selected``: bool per token (whole units). ``labels`` is ``-100`` exactly where
    a token is not selected. ``action`` per token: 0 none, 1 [MASK], 2 random, 3 kept.
    The 80/10/10 draw is made once per unit and applied to all its tokens.
    """
    inputs = input_ids.clone()
    labels = torch.full_like(input_ids, -100)
    labels[selected] = input_ids[selected]
    action = torch.zeros_like(input_ids)
    if not selected.any():
        return inputs, labels, action
    sel_units = torch.unique(unit_ids[selected])
    draw = torch.rand(sel_units.numel(), generator=generator)
    unit_action = torch.where(draw < config.mask_prob, 1, torch.where(draw < config.mask_prob + config.random_prob, 2, 3))
    # map each selected token to its unit's action
    pos = torch.searchsorted(sel_units, unit_ids[selected])
    action[selected] = unit_action[pos]
    inputs[action == 1] = mask_token_id
    n_random = int((action == 2).sum())
    if n_random:
        inputs[action == 2] = torch.randint(random_low, vocab_size, (n_random,), generator=generator)
    return inputs, labels, action


class Masker:
    """Base class: choose whole units to predict. A strategy names the per-token unit
    column it reads (``unit_column``) and every column preprocessing must compute for it
    (``needs_units``, keys of :data:`zhbert.masking.units.UNIT_SPANS`): corpus
    preparation and the portable corpus check ask the strategy instead of its name."""

    name = "base"
    unit_column: str | None = "word_ids"  # which per-token unit ids the strategy reads
    # word units are always computed: packing and NSP cut sequences between words
    needs_units: tuple[str, ...] = ("word_ids",)

    def unit_ids(self, example: dict, special_ids: set[int]) -> torch.Tensor:
        """The example's unit id per token (``-1`` for special tokens)."""
        return torch.tensor(example[self.unit_column], dtype=torch.long)

    def draw_units(self, unit_ids: torch.Tensor) -> torch.Tensor:
        """The units :func:`apply_80_10_10` draws one action for."""
        return unit_ids

    def __init__(self, config: MaskingConfig | None = None):
        self.config = config or MaskingConfig()

    def choose(self, unit_ids: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """(bool per token: the tokens chosen for prediction, the unit ids :func:`apply_80_10_10`
        draws one action for). A strategy whose units depend on the draw overrides this."""
        return self.select(unit_ids, generator), self.draw_units(unit_ids)

    def select(self, unit_ids: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """Bool per token: the tokens of the units chosen for prediction."""
        units = units_of(unit_ids)
        k = budget(units.numel(), self.config.rate, generator)
        if k == 0:
            return torch.zeros_like(unit_ids, dtype=torch.bool)
        chosen = units[torch.randperm(units.numel(), generator=generator)[:k]]
        return torch.isin(unit_ids, chosen)
