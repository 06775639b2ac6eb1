"""Masking strategies for Chinese MLM pretraining behind one registry.

``get_masker("char" | "wwm" | "ernie" | "ngram" | "mixed")``; all share
:func:`~zhbert.masking.base.apply_80_10_10` and an explicit ``torch.Generator``.
"""

from .base import Masker, MaskingConfig, apply_80_10_10, budget, units_of
from .strategies import MASKERS, CharMasker, ErnieMasker, MixedMasker, NgramMasker, WholeWordMasker, get_masker, masker_class

__all__ = [
    "Masker",
    "MaskingConfig",
    "apply_80_10_10",
    "budget",
    "units_of",
    "MASKERS",
    "CharMasker",
    "WholeWordMasker",
    "ErnieMasker",
    "NgramMasker",
    "MixedMasker",
    "get_masker",
    "masker_class",
]
