"""Per-label decision thresholds for multi-label heads, tuned on dev data.

For each label independently, the threshold maximising that label's F1 on the
dev set is chosen among the midpoints between consecutive distinct predicted
probabilities (plus 0.5 as the default when a label never occurs in dev). Ties go
to the threshold nearest 0.5, so a label with little evidence stays near default.
"""

from __future__ import annotations

import torch

__all__ = ["tune_thresholds", "apply_thresholds"]


def _f1(pred: torch.Tensor, gold: torch.Tensor) -> float:
    tp = float((pred & gold).sum())
    fp = float((pred & ~gold).sum())
    fn = float((~pred & gold).sum())
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def tune_thresholds(probs: torch.Tensor, gold: torch.Tensor) -> list[float]:
    """``probs``, ``gold``: ``(N, K)`` probabilities and 0/1 labels; returns K thresholds."""
    if probs.shape != gold.shape:
        raise ValueError(f"probs {tuple(probs.shape)} and gold {tuple(gold.shape)} differ in shape")
    gold = gold.bool()
    out = []
    for k in range(probs.size(1)):
        p, g = probs[:, k], gold[:, k]
        if not g.any():
            out.append(0.5)
            continue
        values = torch.unique(p)
        candidates = [0.5] + ((values[1:] + values[:-1]) / 2).tolist() + [float(values[0]) / 2]
        best = max(candidates, key=lambda t: (_f1(p >= t, g), -abs(t - 0.5)))
        out.append(float(best))
    return out


def apply_thresholds(probs: torch.Tensor, thresholds: list[float] | None) -> torch.Tensor:
    t = torch.tensor(thresholds if thresholds is not None else [0.5] * probs.size(1), dtype=probs.dtype)
    return probs >= t
