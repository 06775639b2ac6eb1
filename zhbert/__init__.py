"""zhbert: a Chinese-focused BERT application framework.

Two stages: continue pretraining on your corpus (``zhbert pretrain``), then
fine-tune task heads (segmentation, Weibo post tagging, NER, matching).
"""

from __future__ import annotations

import logging
import warnings

__version__ = "0.1.0"

# jieba 0.42 imports pkg_resources, which warns on modern setuptools
warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
logging.getLogger("zhbert").addHandler(logging.NullHandler())

__all__ = ["__version__", "load", "train"]


def __getattr__(name):
    # ``zhbert.load`` and ``zhbert.train`` import torch/transformers only when first used
    if name == "load":
        from .api import load

        return load
    if name == "train":
        from .recipes import train

        return train
    raise AttributeError(f"module 'zhbert' has no attribute {name!r}")
