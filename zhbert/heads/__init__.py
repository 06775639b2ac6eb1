"""Task heads (sequence, pair, token) in every application mode; see ``model.py``."""

from .config import HeadConfig
from .inference import TokenTags, char_spans, predict_scores, predict_tags
from .inputs import TaskCollator, window_size
from .io import load_head, new_head, save_head
from .model import TaskOutput, ZhBertForTask, stock_architecture

__all__ = [
    "HeadConfig",
    "ZhBertForTask",
    "TaskOutput",
    "TaskCollator",
    "window_size",
    "new_head",
    "save_head",
    "load_head",
    "predict_tags",
    "predict_scores",
    "char_spans",
    "TokenTags",
    "stock_architecture",
]
