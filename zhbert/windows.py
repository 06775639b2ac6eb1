"""Overlapping sliding windows over a token sequence longer than the model's input.

A window holds ``size`` tokens (the model's length minus ``[CLS]``/``[SEP]``) and
windows start every ``stride`` tokens (default ``size // 2``); the last one is
aligned to the end, so every token is in at least one window and nothing is
truncated. A token's prediction comes from its *owner*: the window in which it
sits farthest from an edge (most context on both sides); ties go to the earlier
window. A text that fits gets exactly one window, so windowed and un-windowed
outputs are identical.

Windows can also be *aligned to sentences* (``breaks``: token indices where a sentence
starts): each sentence gets a window of its own, or (``pack``) as many consecutive whole
sentences as fit share one, so no sentence is cut and no token is read twice; only a
sentence longer than a window gets overlapping windows of its own. Models fine-tuned on
single sentences read a long document best one sentence per window (the long-text study:
MSRA NER 82.25 F1 one per window, 81.81 packed, 81.35 with half-window overlap, and both
aligned settings run as fast as separate sentences; bench/LOG.md).
"""

from __future__ import annotations

import bisect
import re

__all__ = ["windows", "owners", "owner_groups", "sentence_breaks", "SENTENCE_ENDS"]

# A sentence ends after one of these (or a run of them, "？！", "……") and any closing
# quotes or brackets that follow ("。」"); a line break ends one too.
SENTENCE_ENDS = frozenset("。！？!?；;…")
_CLOSERS = frozenset("”’」』）)》】〕〉\"'")
_CLOSERS_AND_ENDS = _CLOSERS | SENTENCE_ENDS


def windows(
    n_tokens: int, size: int, stride: int | None = None, breaks: list[int] | None = None, pack: bool = True
) -> list[tuple[int, int]]:
    """Token ranges ``[start, end)`` covering ``0..n_tokens``; one empty window for 0 tokens.
    With ``breaks`` (sorted token indices where a sentence starts), windows are aligned to
    sentences: several whole sentences per window (``pack``) or one each (module docstring)."""
    if size < 1:
        raise ValueError(f"window size must be at least 1 token, got {size}")
    stride = stride or max(1, size // 2)
    if not 1 <= stride <= size:
        raise ValueError(f"stride must be between 1 and the window size ({size}), got {stride}")
    if n_tokens <= size:
        return [(0, n_tokens)]
    if breaks is not None:
        return _aligned(n_tokens, size, stride, breaks, pack)
    out, start = [], 0
    while True:
        if start + size >= n_tokens:
            out.append((n_tokens - size, n_tokens))
            return out
        out.append((start, start + size))
        start += stride


def _aligned(n_tokens: int, size: int, stride: int, breaks: list[int], pack: bool) -> list[tuple[int, int]]:
    cuts = [b for b in breaks if 0 < b < n_tokens] + [n_tokens]
    out, start = [], 0
    while start < n_tokens:
        if pack:  # the farthest sentence end within a window
            k = bisect.bisect_right(cuts, start + size) - 1
        else:  # this sentence's end, if the sentence fits
            k = bisect.bisect_right(cuts, start)
            k = k if cuts[k] <= start + size else -1
        if k >= 0 and cuts[k] > start:
            out.append((start, cuts[k]))
            start = cuts[k]
            continue
        end = cuts[bisect.bisect_right(cuts, start)]  # one sentence longer than a window
        out += [(start + a, start + b) for a, b in windows(end - start, size, stride)]
        start = end
    return out


_BREAK_CHARS = re.compile("[" + re.escape("".join(sorted(SENTENCE_ENDS))) + "\n]")


def sentence_breaks(text: str, offsets) -> list[int]:
    """Token indices where a new sentence starts: after a sentence-ending mark (with the
    closing quotes/brackets that follow it) or where a line break separates two tokens.

    The marks and line breaks are found by one regular-expression scan of the text and
    mapped to tokens by bisection, so a long text costs little more than its marks (the
    token-by-token reading, :func:`_sentence_breaks_by_token`, gives the same breaks:
    tests/test_windows.py)."""
    n = len(offsets)
    starts = [s for s, _ in offsets]
    ends = [e for _, e in offsets]
    if n < 2 or ends != sorted(ends):
        return _sentence_breaks_by_token(text, offsets)
    events = set()  # (token, 0: it ends with a mark / 1: a line break follows it)
    for m in _BREAK_CHARS.finditer(text):
        p = m.start()
        if text[p] == "\n":
            k = bisect.bisect_right(starts, p) - 1  # the last token starting before the break
            if 0 <= k < n - 1 and ends[k] <= p < starts[k + 1]:
                events.add((k, 1))
        else:
            k = bisect.bisect_left(ends, p + 1)  # the tokens whose last character is the mark
            while k < n and ends[k] == p + 1:
                if starts[k] < ends[k]:
                    events.add((k, 0))
                k += 1
    out: list[int] = []
    resume = 0  # the token the reading goes on from (a mark and its closing run are passed over)
    for k, kind in sorted(events):  # a mark at k comes before a line break after k, and wins
        if k < resume or k >= n - 1:
            continue
        j = k + 1
        if kind == 0:
            while j < n and ends[j] > starts[j] and text[starts[j]] in _CLOSERS_AND_ENDS:
                j += 1
        if j < n:
            out.append(j)
        resume = j
    return out


def _sentence_breaks_by_token(text: str, offsets) -> list[int]:
    out = []
    n = len(offsets)
    k = 0
    while k < n - 1:
        s, e = offsets[k]
        if e > s and text[e - 1] in SENTENCE_ENDS:
            j = k + 1
            while j < n and offsets[j][1] > offsets[j][0] and text[offsets[j][0]] in _CLOSERS_AND_ENDS:
                j += 1
            if j < n:
                out.append(j)
            k = j
            continue
        if "\n" in text[e : offsets[k + 1][0]]:
            out.append(k + 1)
        k += 1
    return out


def owners(n_tokens: int, spans: list[tuple[int, int]]) -> list[int]:
    """For each token, the index of the window where it is farthest from an edge."""
    best = [-1] * n_tokens
    if all(b <= a for (_, b), (a, _) in zip(spans, spans[1:])):  # disjoint, in order: no choice to make
        for w, (a, b) in enumerate(spans):
            best[a:b] = [w] * (b - a)
        return best
    margin = [-1] * n_tokens
    for w, (a, b) in enumerate(spans):
        for k in range(a, b):
            m = min(k - a, b - 1 - k)
            if m > margin[k]:
                margin[k], best[k] = m, w
    return best


def owner_groups(spans: list[tuple[int, int]]) -> list[tuple[int, list[tuple[int, int]], list[int] | None]]:
    """The windows of one text (in order) as groups of windows that overlap one another:
    ``(first token, the group's windows, owner)``, where ``owner`` gives, for each token of the
    group from its first, the index (in the group) of the window it is read from, or is
    ``None`` for a window that overlaps nothing (all its tokens are its own). Sentence-aligned
    windows are all groups of one, so a caller copies each window whole and only a sentence
    longer than a window pays the per-token choice of :func:`owners`."""
    out = []
    g = 0
    while g < len(spans):
        h, end = g + 1, spans[g][1]
        while h < len(spans) and spans[h][0] < end:
            end = max(end, spans[h][1])
            h += 1
        group, first = spans[g:h], spans[g][0]
        own = None if h == g + 1 else owners(end - first, [(a - first, b - first) for a, b in group])
        out.append((first, group, own))
        g = h
    return out
