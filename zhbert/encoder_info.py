"""What an encoder saw in pretraining, recorded in its ``config.json`` under ``zhbert_encoder``.

``max_length``: the longest sequence (tokens, with [CLS]/[SEP]) the encoder was
pretrained on. Position embeddings past it never received a gradient: a model
pretrained on 128-token blocks reads positions 128-511 as noise (windowing at 512
cost 8.7 word-F1 on PKU), so windows default to this length and a longer window
is refused unless asked for. ``normalizer``: which text normalisation the saved
tokenizer applies (``zhbert-1``; ``zhbert-2``, which also reads traditional characters as
simplified; or ``tokenizer`` for a checkpoint's own).

A checkpoint without the record (any Hugging Face BERT) counts as trained on all
of its positions, as BERT's 90/10 schedule did.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["KEY", "trained_length", "record_encoder", "recorded_length"]

KEY = "zhbert_encoder"


def _get(config, name, default=None):
    return config.get(name, default) if isinstance(config, dict) else getattr(config, name, default)


def recorded_length(config, folder: str | Path | None = None) -> int | None:
    """The recorded pretraining length, also from an older zhbert folder's ``zhbert_pretrain.json``."""
    info = _get(config, KEY)
    if isinstance(info, dict) and info.get("max_length"):
        return int(info["max_length"])
    if folder is not None and (Path(folder) / "zhbert_pretrain.json").is_file():
        try:
            return int(json.loads((Path(folder) / "zhbert_pretrain.json").read_text(encoding="utf-8"))["max_length"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
    return None


def trained_length(config, folder: str | Path | None = None) -> int:
    """Tokens per sequence the encoder can read through trained positions."""
    limit = int(_get(config, "max_position_embeddings"))
    recorded = recorded_length(config, folder)
    return min(limit, recorded) if recorded else limit


def record_encoder(config, max_length: int, normalizer: str, continued_from: dict | None = None) -> None:
    """Store the record on a ``PretrainedConfig`` (saved with it by ``save_pretrained``).

    ``continued_from``: the record of the checkpoint this run continued, kept whole under
    that key (its notes, a ``seen_max_length`` longer than the usable one), so a chain of
    continuations still says what every stage saw."""
    record = {"max_length": int(max_length), "normalizer": normalizer}
    if continued_from:
        record["continued_from"] = continued_from
    setattr(config, KEY, record)
