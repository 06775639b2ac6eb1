"""Overlapping sliding windows over a token sequence longer than the model's input.

A window holds ``size`` tokens (the model's length minus ``[CLS]``/``[SEP]``) and
windows start every ``stride`` tokens (default ``size // 2``); the last one is
aligned to the end, so every token is in at least one window and nothing is
truncated. A token's prediction comes from its *owner*: the window in which it
sits farthest from an edge (most context on both sides); ties go to the earlier
window. A text that fits gets exactly one window, so windowed and un-windowed
outputs are identical.
"""

from __future__ import annotations

__all__ = ["windows", "owners"]


def windows(n_tokens: int, size: int, stride: int | None = None) -> list[tuple[int, int]]:
    """Token ranges ``[start, end)`` covering ``0..n_tokens``; one empty window for 0 tokens."""
    if size < 1:
        raise ValueError(f"window size must be at least 1 token, got {size}")
    stride = stride or max(1, size // 2)
    if not 1 <= stride <= size:
        raise ValueError(f"stride must be between 1 and the window size ({size}), got {stride}")
    if n_tokens <= size:
        return [(0, n_tokens)]
    out, start = [], 0
    while True:
        if start + size >= n_tokens:
            out.append((n_tokens - size, n_tokens))
            return out
        out.append((start, start + size))
        start += stride


def owners(n_tokens: int, spans: list[tuple[int, int]]) -> list[int]:
    """For each token, the index of the window where it is farthest from an edge."""
    best = [-1] * n_tokens
    margin = [-1] * n_tokens
    for w, (a, b) in enumerate(spans):
        for k in range(a, b):
            m = min(k - a, b - 1 - k)
            if m > margin[k]:
                margin[k], best[k] = m, w
    return best
