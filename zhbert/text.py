"""Character units of the caller's text: what the tokenizer's offsets cannot express.

Normalisation itself lives in the tokenizer (``zhbert.tokenizer``): the
``tokenizers`` normaliser keeps every token's offsets into the original string.
Three things remain that a token-level offset map does not give, and they are
what every span zhbert returns is built from:

* **characters no token covers**: a removed control or format character (ZWJ,
  BOM, U+200B), a combining mark or variation selector stripped with the
  accents. They stay with their base character instead of falling outside every
  span (``Zoe\u0308`` is one word, not ``Zoe`` plus a stray mark);
* **grapheme clusters**: an emoji ZWJ sequence or a letter with combining marks
  is one user-perceived character, so no span boundary falls inside it;
* **several tokens on one character**: NFKD can expand one character into
  several tokens with identical offsets (``㍿`` -> 株式会社); the unit takes the
  first token's prediction, so spans never overlap or repeat.

Offsets are Python code points, end exclusive: ``text[start:end]`` is the span.
"""

from __future__ import annotations

import operator
from typing import NamedTuple, Sequence

import regex

# The longest text one call takes (API, ``zhbert predict`` line): a text is held whole with its tokens
# and spans, about 0.8-1.0 KB a character for the bundled models (1.6 GB at this size, measured).
MAX_TEXT_CHARS = 1_000_000

__all__ = ["HAN_RANGES", "Unit", "is_cjk", "is_space", "own_unit_bounds", "token_units", "unit_columns"]

#: the Han ideograph blocks; the pre-tokeniser makes each such character a word of its own
HAN_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2CEAF),
    (0x2CEB0, 0x2EBEF),
    (0x30000, 0x3134F),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)

_CLUSTER = regex.compile(r"\X")
# Characters that can join a grapheme cluster with a neighbour (UAX #29: CR LF, extending marks,
# ZWJ, spacing marks, prepend, regional-indicator pairs, Hangul jamo). A text with none of them
# has one cluster per code point (checked over every code point by tests/test_text.py), and
# one search for them costs far less than listing the clusters.
_CAN_JOIN = regex.compile(
    r"[\r\p{GCB=Extend}\p{GCB=ZWJ}\p{GCB=SpacingMark}\p{GCB=Prepend}\p{GCB=Regional_Indicator}"
    r"\p{GCB=L}\p{GCB=V}\p{GCB=T}\p{GCB=LV}\p{GCB=LVT}]"
)


def is_cjk(ch: str) -> bool:
    """True for a Han ideograph (the blocks BERT's tokenizer splits one by one)."""
    cp = ord(ch)
    return any(a <= cp <= b for a, b in HAN_RANGES)


def is_space(ch: str) -> bool:
    """Whitespace as the tokenizer's normaliser treats it (``str.isspace``, which already takes
    in every ``Zs`` character: checked over all code points by tests/test_text.py)."""
    return ch.isspace()


class Unit(NamedTuple):
    """A run of the original text that predictions treat as one character.

    ``token`` is the index of the first token inside it, ``-1`` for a unit no
    token covers (only when it has no neighbour to join, e.g. a text of control
    characters alone). A named tuple: a long text makes one per character.
    """

    start: int
    end: int
    token: int


def _pieces(text: str) -> list[tuple[int, int]]:
    """Grapheme clusters, cut further so that whitespace is never inside a piece and is dropped."""
    out = []
    for m in _CLUSTER.finditer(text):
        a, b = m.span()
        run = -1
        for i in range(a, b):
            if is_space(text[i]):
                if run >= 0:
                    out.append((run, i))
                run = -1
            elif run < 0:
                run = i
        if run >= 0:
            out.append((run, b))
    return out


def own_unit_bounds(
    text: str, offsets: Sequence[tuple[int, int]], word_ids: Sequence[int] | None = None, begin: int = 0, end: int | None = None
) -> tuple[list[int], list[int]] | None:
    """The common case in C-speed checks (most Chinese text, numbers and Latin words included):
    tokens cover disjoint runs of characters, in order, with no whitespace inside a token and
    only whitespace between them, no two tokens share a word and no grapheme cluster joins two
    characters; then each token is its own unit and this gives the units' starts and ends (the
    units are ``(start, end, token)``). ``None``: use :func:`token_units` (it gives the same units
    here, only slower). ``begin``/``end``: the part of ``text`` the tokens cover (a block of a
    long text; default all of it)."""
    end = len(text) if end is None else end
    n = len(offsets)
    if not n:
        return None
    starts = [s for s, _ in offsets]
    ends = [e for _, e in offsets]
    # each token non-empty and ending where the next one starts or before: strictly in order
    if not all(map(operator.lt, starts, ends)) or not all(map(operator.le, ends[:-1], starts[1:])):
        return None
    if word_ids is not None:
        words = [w for w in word_ids if w >= 0]
        if len(set(words)) != len(words):
            return None
    covered = sum(ends) - sum(starts)
    if covered != n and any(e - s > 1 and any(map(str.isspace, text[s:e])) for s, e in offsets):
        return None  # whitespace inside a token: the general construction leaves it out of the unit
    if end - begin != covered:  # the characters between tokens must all be whitespace
        if starts[0] > begin and not text[begin : starts[0]].isspace():
            return None
        if any(s > e and not text[e:s].isspace() for e, s in zip(ends, [*starts[1:], end])):
            return None
    if _CAN_JOIN.search(text, begin, end) and len(_CLUSTER.findall(text, begin, end)) != end - begin:
        return None
    return starts, ends


def token_units(text: str, offsets: Sequence[tuple[int, int]], word_ids: Sequence[int] | None = None) -> list[Unit]:
    """Units of ``text`` for tokens with ``offsets``: every non-whitespace character is
    in exactly one unit, units never contain whitespace, and no unit boundary cuts a
    grapheme cluster, a token or (with ``word_ids``, the pre-tokeniser's words) a word:
    the word pieces of ``Mourinho`` form one unit, so no span ends inside the name."""
    return [Unit(*u) for u in zip(*unit_columns(text, offsets, word_ids))]


BLOCK_TOKENS = 64  # a long text's units are built block by block (see unit_columns)


def unit_columns(
    text: str, offsets: Sequence[tuple[int, int]], word_ids: Sequence[int] | None = None
) -> tuple[list[int], list[int], list[int]]:
    """:func:`token_units` as three lists, the units' starts, ends and first tokens: a long
    text makes one unit per character, and lists cost far less to build than objects.

    A text that is not one unit per token as a whole (:func:`own_unit_bounds`) and is long is
    cut into blocks of about ``BLOCK_TOKENS`` tokens at boundaries nothing joins across, and
    each block takes the one-unit-per-token shortcut when it can: one number in a
    20,000-character text then costs what it costs in a sentence of its own, not a slow pass
    over every token (the units are the same: tests/test_text.py)."""
    n = len(offsets)
    bounds = own_unit_bounds(text, offsets, word_ids)
    if bounds is not None:
        return bounds[0], bounds[1], list(range(n))
    if n <= 2 * BLOCK_TOKENS:
        return _columns(_stretch_units(text, offsets, word_ids))
    clusters = _cluster_starts(text)
    starts, ends, tokens = [], [], []
    k0 = 0
    while k0 < n:
        k1 = min(k0 + BLOCK_TOKENS, n)
        reach = max(e for _, e in offsets[k0:k1])
        while k1 < n and not _independent(text, offsets, word_ids, k1 - 1, reach, clusters):
            reach = max(reach, offsets[k1][1])
            k1 += 1
        begin = 0 if k0 == 0 else offsets[k0][0]
        end = len(text) if k1 == n else offsets[k1][0]
        ids = None if word_ids is None else word_ids[k0:k1]
        block = own_unit_bounds(text, offsets[k0:k1], ids, begin, end)
        if block is not None:
            starts += block[0]
            ends += block[1]
            tokens += range(k0, k1)
        else:
            sub = [(a - begin, b - begin) for a, b in offsets[k0:k1]]
            for a, b, t in _stretch_units(text[begin:end], sub, ids):
                starts.append(a + begin)
                ends.append(b + begin)
                tokens.append(t + k0 if t >= 0 else -1)
        k0 = k1
    return starts, ends, tokens


def _columns(units: list[tuple[int, int, int]]) -> tuple[list[int], list[int], list[int]]:
    return [u[0] for u in units], [u[1] for u in units], [u[2] for u in units]


def _cluster_starts(text: str) -> set[int] | None:
    """Where grapheme clusters start (and the text's end); ``None`` when every code point
    starts one (the text has no character that can join a cluster)."""
    return {m.start() for m in _CLUSTER.finditer(text)} | {len(text)} if _CAN_JOIN.search(text) else None


def _independent(text: str, offsets, word_ids, k: int, reach: int, clusters: set[int] | None) -> bool:
    """Nothing joins token ``k`` (and every token before it, which end by ``reach``) to token
    ``k + 1``: the next token starts after them, on a cluster boundary, in another word, with
    only whitespace between."""
    nxt = offsets[k + 1][0]
    return (
        reach <= nxt
        and (clusters is None or (reach in clusters and nxt in clusters))
        and (word_ids is None or word_ids[k] < 0 or word_ids[k] != word_ids[k + 1])
        and (reach == nxt or text[reach:nxt].isspace())
    )


def _stretch_units(text: str, offsets: Sequence[tuple[int, int]], word_ids: Sequence[int] | None) -> list[tuple[int, int, int]]:
    """The general construction, run only where it is needed: the tokens are cut into
    independent stretches wherever nothing joins across (:func:`_independent`); a stretch of
    one single-character token is its own unit, and the general construction runs on the
    rest. A text with a few numbers or Latin words then costs little more than the shortcut
    (the units are the same: tests/test_text.py)."""
    n = len(offsets)
    if n < 2:
        return _general_units(text, offsets, word_ids)
    clusters = _cluster_starts(text)
    out: list[tuple[int, int, int]] = []
    first, reach = 0, offsets[0][1]  # first token of the open stretch; furthest end so far
    for k in range(n):
        if k + 1 < n:
            reach = max(reach, offsets[k][1])
            if not _independent(text, offsets, word_ids, k, reach, clusters):
                continue
            end = offsets[k + 1][0]
        else:
            end = len(text)
        begin = 0 if first == 0 else offsets[first][0]
        s, e = offsets[first]
        if k == first and e - s == 1 and begin == s and not text[s].isspace() and (e == end or text[e:end].isspace()):
            out.append((s, e, k))
        else:
            sub = [(a - begin, b - begin) for a, b in offsets[first : k + 1]]
            ids = None if word_ids is None else word_ids[first : k + 1]
            out += [(a + begin, b + begin, t + first if t >= 0 else -1) for a, b, t in _general_units(text[begin:end], sub, ids)]
        first = k + 1
    return out


def _general_units(text: str, offsets: Sequence[tuple[int, int]], word_ids: Sequence[int] | None) -> list[tuple[int, int, int]]:
    pieces = _pieces(text)
    if not pieces:
        return []
    piece_of = [-1] * (len(text) + 1)
    for k, (a, b) in enumerate(pieces):
        for i in range(a, b):
            piece_of[i] = k
    # a token spanning several pieces (a Latin word piece such as "iphone") joins them
    joined = [False] * len(pieces)  # joined[k]: piece k and k+1 are one unit
    first_token = [-1] * len(pieces)
    ranges = list(offsets)
    if word_ids is not None:  # a word's range covers all of its pieces
        words: dict[int, list[int]] = {}
        for (s, e), w in zip(offsets, word_ids):
            if w >= 0:
                r = words.setdefault(w, [s, e])
                r[0], r[1] = min(r[0], s), max(r[1], e)
        ranges += [tuple(r) for r in words.values()]
    for t, (s, e) in enumerate(ranges):
        ks = [piece_of[i] for i in range(s, max(e, s + 1)) if i < len(text) and piece_of[i] >= 0]
        if not ks:
            continue
        for k in range(min(ks), max(ks)):
            joined[k] = True
        if t < len(offsets) and first_token[ks[0]] < 0:
            first_token[ks[0]] = t
    units: list[list[int]] = []  # [start, end, token]
    for k, (a, b) in enumerate(pieces):
        if k and joined[k - 1]:
            units[-1][1] = b
            if units[-1][2] < 0:
                units[-1][2] = first_token[k]
        else:
            units.append([a, b, first_token[k]])
    # characters no token covers join the adjacent unit before them, else the one after
    merged: list[list[int]] = []
    for u in units:
        if merged and merged[-1][1] == u[0] and (u[2] < 0 or merged[-1][2] < 0):
            merged[-1][1] = u[1]
            if merged[-1][2] < 0:
                merged[-1][2] = u[2]
        else:
            merged.append(u)
    return [(a, b, t) for a, b, t in merged]
