"""The five masking strategies; each is a few lines on top of :class:`Masker`.

* ``char``  - every token is a unit (original Chinese BERT).
* ``wwm``   - whole words from jieba (Chinese-BERT-wwm, Cui et al. 2019).
* ``ernie`` - ERNIE 1.0 knowledge masking: entity and phrase units (precomputed
  into ``ernie_ids``, see :mod:`zhbert.masking.units`) mixed with word units.
* ``ngram`` - spans of n consecutive words, n drawn from ``ngram_probs``
  (default n=1..3 with p = 0.6, 0.3, 0.1, the skew of ERNIE-Gram / SpanBERT-style
  n-gram masking), so a segmenter error inside one word does not decide a unit.
* ``mixed`` - each jieba word is one unit with probability ``word_prob`` (0.5), otherwise each
  of its characters is a unit of its own: the model learns to fill a character with the rest
  of its word in view and a whole word with none of it, the two blanks users type.
"""

from __future__ import annotations

import torch

from .base import Masker, MaskingConfig, budget, units_of

__all__ = ["CharMasker", "WholeWordMasker", "ErnieMasker", "NgramMasker", "MixedMasker", "MASKERS", "get_masker", "masker_class"]


class CharMasker(Masker):
    name = "char"
    unit_column = None  # each non-special token is its own unit

    def unit_ids(self, example, special_ids):
        ids = example["input_ids"]
        return torch.where(torch.tensor([i in special_ids for i in ids]), -1, torch.arange(len(ids)))

    def draw_units(self, unit_ids):
        return torch.arange(unit_ids.numel())

    def select(self, unit_ids, generator):
        token_units = torch.where(unit_ids >= 0, torch.arange(unit_ids.numel()), unit_ids)
        return super().select(token_units, generator)


class WholeWordMasker(Masker):
    name = "wwm"
    unit_column = "word_ids"


class ErnieMasker(Masker):
    name = "ernie"
    unit_column = "ernie_ids"
    needs_units = ("word_ids", "ernie_ids")


class NgramMasker(Masker):
    name = "ngram"
    unit_column = "word_ids"

    def __init__(self, config: MaskingConfig | None = None, ngram_probs: tuple[float, ...] = (0.6, 0.3, 0.1)):
        super().__init__(config)
        total = sum(ngram_probs)
        self.ngram_probs = torch.tensor([p / total for p in ngram_probs])
        self.last_lengths: list[int] = []  # n of each span placed in the last call (after the budget cut)
        self.last_draws: list[int] = []  # n as drawn from ngram_probs, before the budget cut

    def select(self, unit_ids, generator):
        words = units_of(unit_ids)  # words in order of appearance
        n_words = words.numel()
        selected_words = torch.zeros(n_words, dtype=torch.bool)
        # the budget counts words, as for wwm, so the masked share stays ~15%
        target = budget(n_words, self.config.rate, generator)
        self.last_lengths, self.last_draws = [], []
        # draw n first, then a free start for that n: rejecting starts instead of
        # shrinking spans keeps the lengths on the configured distribution (only
        # the last span is cut to the budget)
        attempts = 0
        while int(selected_words.sum()) < target and attempts < 10 * n_words:
            attempts += 1
            n = int(torch.multinomial(self.ngram_probs, 1, generator=generator)) + 1
            self.last_draws.append(n)
            n = min(n, target - int(selected_words.sum()))
            free = ~selected_words
            if n > 1:  # starts whose next n words are all free
                windows = free.unfold(0, n, 1).all(dim=1) if n <= n_words else torch.zeros(0, dtype=torch.bool)
            else:
                windows = free
            starts = torch.nonzero(windows).flatten()
            if starts.numel() == 0:
                continue
            start = int(starts[torch.randint(starts.numel(), (1,), generator=generator)])
            selected_words[start : start + n] = True
            self.last_lengths.append(n)
        return torch.isin(unit_ids, words[selected_words])


class MixedMasker(Masker):
    name = "mixed"
    unit_column = "word_ids"

    def __init__(self, config: MaskingConfig | None = None, word_prob: float = 0.5):
        super().__init__(config)
        if not 0.0 <= word_prob <= 1.0:
            raise ValueError(f"word_prob must lie in [0, 1], got {word_prob}")
        self.word_prob = word_prob

    def mixed_units(self, unit_ids: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """Word ids where a word stays whole, a fresh id per token where it is split (``-1`` kept)."""
        words = units_of(unit_ids)
        whole = torch.isin(unit_ids, words[torch.rand(words.numel(), generator=generator) < self.word_prob])
        fresh = int(unit_ids.max()) + 1 + torch.arange(unit_ids.numel()) if unit_ids.numel() else unit_ids
        return torch.where((unit_ids < 0) | whole, unit_ids, fresh)

    def choose(self, unit_ids, generator):
        units = self.mixed_units(unit_ids, generator)
        return super().select(units, generator), units

    def select(self, unit_ids, generator):
        return self.choose(unit_ids, generator)[0]


MASKERS = {m.name: m for m in (CharMasker, WholeWordMasker, ErnieMasker, NgramMasker, MixedMasker)}


def masker_class(name: str) -> type[Masker]:
    """The strategy called ``name``; an unknown name is an error listing the known ones."""
    if name not in MASKERS:
        raise ValueError(f"unknown masking strategy {name!r}; choose one of {', '.join(MASKERS)}")
    return MASKERS[name]


def get_masker(name: str, config: MaskingConfig | None = None, **kwargs) -> Masker:
    return masker_class(name)(config, **kwargs)
