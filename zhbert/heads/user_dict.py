"""User dictionaries for token heads: words that come out whole (``force``) or that the
model weighs (``prefer``).

Two semantics, as HanLP names them:

* ``force`` (HanLP's ``dict_force``): every dictionary word found in the text is one word
  (segmentation) or one entity of its type (NER), enforced in decoding: the emissions of the
  tags a forced word rules out are set to ``-10000`` before the head's own decoding. With a
  CRF, that is Viterbi: the best path under the model's scores among those that keep each
  forced word whole. Without one, each token takes its best allowed tag, so every token
  outside a forced word keeps the tag of the plain decoding, and the spans read from the tags
  keep the forced word whole and apart from its neighbours. Overlapping dictionary words resolve **longest first**, then leftmost: in
  ``北京大学生``, with ``北京大学`` and ``大学生`` both listed, ``北京大学`` is forced and
  ``大学生`` is not.
* ``prefer`` (HanLP's ``dict_combine`` in spirit): the words join the head's lexicon (a head
  trained with ``--lexicon``) and the model decides; nothing is enforced.

Matching is exact on the caller's text (``pyahocorasick``, one pass; a dictionary of 200,000 words
or more, :class:`CharTrie`, which builds in less than half the time). A forced word whose edge
falls inside one token (``iPhone`` inside the single token ``iphone15``) takes in that whole
token: no head can cut a token. A forced word that crosses a window cut (only possible inside
a sentence longer than a window) is enforced in neither window.
"""

from __future__ import annotations

import bisect
import copy
import functools
import itertools
from typing import NamedTuple

import numpy as np
import torch

from ..crf import FORBIDDEN
from ..dictionary import DictEntry, Dictionary, entity_type_of_tag, gc_paused
from ..errors import warn
from ..tags import SCHEMES, parse_tag

__all__ = ["DICT_MODES", "ForcedWords", "TokenConstraints", "constrained_decode"]

DICT_MODES = ("force", "prefer")


@functools.cache
def _t2s() -> dict[int, str]:
    from ..traditional import read_table

    return str.maketrans(read_table())


@functools.cache
def _t2s_codes() -> np.ndarray:
    """Each code point's simplified one (itself where the table has none), as an array indexed by code point."""
    from ..traditional import read_table

    codes = np.arange(0x110000, dtype=np.uint32)
    table = read_table()
    codes[[ord(t) for t in table]] = [ord(s) for s in table.values()]
    return codes


def fold_traditional(text: str) -> str:
    """``text`` with each traditional character as the simplified one the bundled tokenizers read it as.

    A long text (a dictionary's words joined: 5 M characters for 1 M words) goes through the table
    as an array, in a tenth of the time ``str.translate`` takes with a dict (0.37 s)."""
    if len(text) < 10_000:
        return text.translate(_t2s())
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return _t2s_codes()[codes].tobytes().decode("utf-32-le", "surrogatepass")


class CharTrie:
    """Words over characters for a large dictionary: :class:`~zhbert.lexicon.TokenTrie` over dense
    character ids, walked from every position of a text at once with numpy.

    For a million words it builds in less than half the time of ``pyahocorasick``'s automaton
    (3.6 s against 8.0 s, bench/LOG.md), but each text costs tens of microseconds of numpy calls
    where the automaton takes a few: so :class:`ForcedWords` uses it from :data:`CHAR_TRIE_FROM`
    words on. A word listed twice (after folding) keeps its last entry, as the automaton does."""

    def __init__(self, keys: list[str]):
        from ..lexicon import TokenTrie, unique_inverse

        codes = np.frombuffer("".join(keys).encode("utf-32-le"), dtype=np.uint32)
        sizes = np.fromiter(map(len, keys), dtype=np.int64, count=len(keys))
        self.chars, dense = unique_inverse(codes)
        self.trie, ends = TokenTrie.with_ends(dense.astype(np.int64).ravel(), sizes, len(self.chars))
        self.trie._word[:] = -1
        np.maximum.at(self.trie._word, ends, np.arange(len(keys), dtype=np.int64))  # the last of equal keys

    def find_all(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every occurrence of every word in each of ``texts``, read as one string (positions run on
        from one text into the next) in which no word crosses from one text into the next:
        ``(start, size, word index)`` arrays. One walk for a whole batch: each walk costs tens of
        microseconds of numpy calls, more than a short text's words."""
        codes = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)
        at = np.minimum(np.searchsorted(self.chars, codes), len(self.chars) - 1)
        ids = np.where(self.chars[at] == codes, at, -1).astype(np.int64)  # -1: a character no word has
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        return self.trie.find_all(ids, np.repeat(np.cumsum(lengths), lengths))


CHAR_TRIE_FROM = 200_000  # dictionaries of this many words or more are matched with CharTrie
# Words ending at one character that take part in forcing, longest first: a lattice's bound. Nested
# words (啊, 啊啊, ... 100 of them over a run of 啊) would otherwise make every position a hundred
# candidates (10 M for 100,000 characters: 3 GB); a shorter one is forced only where every longer
# one ending there lost to an overlap, so this changes nothing in ordinary text.
MAX_WORDS_PER_END = 8


def _longest_per_end(end: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Indices of the (at most) :data:`MAX_WORDS_PER_END` longest hits at each end position."""
    if len(end) == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort((-size, end))
    sorted_end = end[order]
    first = np.searchsorted(sorted_end, sorted_end, side="left")
    rank = np.arange(len(order)) - first
    return np.sort(order[rank < MAX_WORDS_PER_END])


class ForcedWords:
    """Dictionary words to force, for a head with ``labels`` in ``scheme``."""

    def __init__(self, dictionary: Dictionary, labels: list[str], scheme: str, units=None):
        """``units``: a :class:`~zhbert.web_units.WebUnits` whose units are forced too, before the
        dictionary's words (segmentation only: an entity model takes units as limits on its spans,
        ``zhbert.web_units.snap_entities``)."""
        self.labels, self.scheme = list(labels), scheme
        self.typed = scheme != "BMES-untyped"
        self._index = {l: i for i, l in enumerate(self.labels)}
        self._labels_of: dict[tuple[str | None, int], list[int]] = {}
        types = sorted({parse_tag(l, scheme)[1] for l in self.labels if l != "O"} - {None})
        self.size = len(dictionary)
        self._automaton = self._trie = None
        with gc_paused():
            keys, self._tags = self._keys_and_tags(dictionary, types)
            if len(keys) >= CHAR_TRIE_FROM:
                self._trie = CharTrie(keys)
            elif keys:
                import ahocorasick

                self._automaton = ahocorasick.Automaton()
                for i, key in enumerate(keys):
                    self._automaton.add_word(key, (len(key), i))  # a key listed twice keeps its last index
                self._automaton.make_automaton()
        self.units = units if units is not None and units.kinds and not self.typed else None

    def with_units(self, units) -> "ForcedWords":
        """The same words (their matcher shared, not built again: a million words take seconds)
        with ``units`` forced before them (``None``: none)."""
        out = copy.copy(self)
        out.units = units if units is not None and units.kinds and not self.typed else None
        return out

    def _keys_and_tags(self, dictionary: Dictionary, types: list[str]) -> tuple[list[str], list[str | None]]:
        """Each word as the matcher reads it (folded to simplified: one character to one, so
        lengths stay), and its type (an entity model; checked against the model's types)."""
        words, _, tags, lines = dictionary.columns()
        keys = fold_traditional("\n".join(words)).split("\n") if words else []  # one pass
        if len(keys) != len(words):  # a word with a line break in it (a list, not a file): one by one
            keys = [fold_traditional(w) for w in words]
        if not self.typed:
            return keys, [None] * len(keys)
        kept_keys, kept_types, untyped = [], [], []
        for key, word, tag, line in zip(keys, words, tags, lines):
            typ = entity_type_of_tag(tag, types)
            if typ is False:
                where = dictionary.where(DictEntry(word, None, tag, line))
                raise ValueError(f"{where}: type {tag!r} of {word!r} is not one of this model's types: {', '.join(types)}")
            if typ is None:
                untyped.append((word, tag, line))
            else:
                kept_keys.append(key)
                kept_types.append(typ)
        if untyped:
            word, tag, line = untyped[0]
            where = dictionary.where(DictEntry(word, None, tag, line))
            what = "has no type" if tag is None else f"is tagged {tag!r}, a part of speech that names none of this model's types"
            typed = f"word<TAB>TYPE, or a name's part of speech nr, ns or nt; this model's types: {', '.join(types)}"
            if not kept_keys:  # the dictionary would change nothing
                raise ValueError(f"{where}: {word!r} {what}; an entity model forces typed words ({typed})")
            warn(
                f"{dictionary.source}: {len(kept_keys):,} of {len(keys):,} words forced as entities; the other "
                f"{len(untyped):,}, which have no entity type (the first: {word!r} at {where}), are left to the model ({typed})"
            )
        return kept_keys, kept_types

    def _found(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every dictionary word's occurrences in ``texts`` (already folded), overlapping ones too:
        ``(start, end, word index)`` arrays, positions counted through the texts end to end."""
        if self._trie is not None:
            start, size, k = self._trie.find_all(texts)
            keep = _longest_per_end(start + size, size)
            return start[keep], (start + size)[keep], k[keep]
        from array import array

        starts, ends, words = array("q"), array("q"), array("q")
        offset = 0
        for text in texts if self._automaton is not None else ():
            last, count = -1, 0
            # the automaton gives the words ending at one character longest first: keep the first few
            for end, (n, k) in self._automaton.iter(text):
                count = count + 1 if end == last else 1
                last = end
                if count <= MAX_WORDS_PER_END:
                    starts.append(offset + end + 1 - n)
                    ends.append(offset + end + 1)
                    words.append(k)
            offset += len(text)
        return tuple(
            np.frombuffer(column, dtype=np.int64).copy() if len(column) else np.zeros(0, dtype=np.int64) for column in (starts, ends, words)
        )

    def __bool__(self) -> bool:
        return bool(self.size or self.units)

    def spans(self, text: str) -> list[tuple[int, int, str | None]]:
        """The forced ``(start, end, type)`` spans of ``text``: web units first, then dictionary words
        longest first, then leftmost, never overlapping."""
        return self.spans_many([text])[0]

    def spans_many(self, texts: list[str]) -> list[list[tuple[int, int, str | None]]]:
        """:meth:`spans` of each of ``texts``, the dictionary's words found in one pass over them all."""
        out: list[list[tuple[int, int, str | None]]] = [[] for _ in texts]
        if not self:
            return out
        row_start = list(itertools.accumulate(map(len, texts), initial=0))
        taken = bytearray(row_start[-1])  # the texts end to end
        for i, text in enumerate(texts if self.units else ()):
            for s, e, _ in self.units.spans(text):
                taken[row_start[i] + s : row_start[i] + e] = b"\x01" * (e - s)
                out[i].append((s, e, None))
        # words and text both read through the traditional -> simplified character table the models
        # read through (one character to one, so positions stay): a simplified list matches 區塊鏈
        start, end, k = self._found([fold_traditional(t) for t in texts])
        order = np.lexsort((start, start - end))  # the longest first, then the leftmost (texts never share a word)
        start, end, k = start[order], end[order], k[order]
        row = (np.searchsorted(np.array(row_start[1:]), start, side="right")).tolist()
        for s, e, w, i in zip(start.tolist(), end.tolist(), k.tolist(), row):
            if taken.find(1, s, e) < 0:
                taken[s:e] = b"\x01" * (e - s)
                out[i].append((s - row_start[i], e - row_start[i], self._tags[w]))
        for spans in out:
            spans.sort()
        return out

    def token_constraints(self, text: str, offsets: list[tuple[int, int]]) -> "TokenConstraints":
        """The tags each token of a forced word of ``text`` may take, so that no decoding cuts it
        (``offsets``: each token's character span in ``text``)."""
        return self.token_constraints_many([text], [offsets])[0]

    def token_constraints_many(self, texts: list[str], offsets: list[list[tuple[int, int]]]) -> list["TokenConstraints"]:
        """:meth:`token_constraints` of each text."""
        return [self._constraints(spans, offs) for spans, offs in zip(self.spans_many(texts), offsets)]

    def _constraints(self, spans: list[tuple[int, int, str | None]], offsets: list[tuple[int, int]]) -> "TokenConstraints":
        if not spans:
            return NO_CONSTRAINTS
        starts = [s for s, _ in offsets]
        ends = [e for _, e in offsets]
        rows: dict[int, int] = {}  # token -> its label (>= 0), or -1 - the label it must not take (BIO's next token)
        for s, e, tag in spans:
            a, b = bisect.bisect_right(ends, s), bisect.bisect_left(starts, e)
            if a >= b:
                continue  # no token inside (e.g. a word of spaces)
            labels = self._word_labels(tag, b - a)
            rows.update(zip(range(a, b), labels))
            inside = f"I-{tag}" if tag else "I"
            # a word that ends on B- or I- (BIO; B/I/S taggers without E) is closed by no tag of its own:
            # the token after it must not continue it
            if self.labels[labels[-1]].partition("-")[0] in ("B", "I") and inside in self._index and b < len(offsets) and b not in rows:
                rows[b] = -1 - self._index[inside]
        if not rows:
            return NO_CONSTRAINTS
        tokens = np.fromiter(sorted(rows), dtype=np.int64, count=len(rows))
        label = np.fromiter((rows[t] for t in tokens.tolist()), dtype=np.int64, count=len(rows))
        allowed = np.zeros((len(tokens), len(self.labels)), dtype=bool)
        inside = label >= 0
        allowed[np.flatnonzero(inside), label[inside]] = True
        allowed[~inside] = True
        allowed[np.flatnonzero(~inside), -1 - label[~inside]] = False
        return TokenConstraints(tokens, allowed)

    def _word_labels(self, tag: str | None, n: int) -> list[int]:
        """The label indices of a forced word of ``n`` tokens and type ``tag``."""
        key = (tag, n)
        if key not in self._labels_of:
            spec = SCHEMES[self.scheme.split("-")[0]]
            name = (lambda p: p) if tag is None else (lambda p: f"{p}-{tag}")

            def held(prefix: str | None) -> str | None:  # a tagger of B/I/S tags without E (CLUENER's) has no E-TYPE
                return prefix if prefix and name(prefix) in self._index else None

            if n == 1:
                wanted = [name(held(spec["single"]) or spec["begin"])]
            else:
                wanted = [name(spec["begin"])] + [name(spec["inside"])] * (n - 2) + [name(held(spec["end"]) or spec["inside"])]
            self._labels_of[key] = [self._index[label] for label in wanted]
        return self._labels_of[key]


class TokenConstraints(NamedTuple):
    """The tokens (ascending) of a text that forced words constrain, and for each the tags it may
    take: a row of ``len(labels)`` booleans."""

    tokens: np.ndarray
    allowed: np.ndarray

    def within(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        """The constrained tokens in ``[a, b)``, counted from ``a``, and their rows."""
        lo, hi = np.searchsorted(self.tokens, (a, b)).tolist()
        return self.tokens[lo:hi] - a, self.allowed[lo:hi]


NO_CONSTRAINTS = TokenConstraints(np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=bool))


def constrained_decode(model, em: torch.Tensor, mask: torch.Tensor, allowed: torch.Tensor) -> list[list[int]]:
    """The head's own decoding of ``em`` (``(B, T, K)``, positions after [CLS]) with the tags outside
    ``allowed`` ruled out: Viterbi under the head's CRF, or, for a softmax head, the argmax of each
    token among its allowed tags. A softmax head's tokens outside the forced words thus keep the tags
    of its plain decoding, and the spans read from the tags (``lenient_spans``: a word starts at every
    ``B``/``S`` and after every ``E``/``S``) keep each forced word whole and apart."""
    em = em.masked_fill(~allowed, FORBIDDEN)
    if model.crf is not None:
        return model.crf.decode(em, mask)
    best = em.argmax(-1).tolist()
    return [row[: int(n)] for row, n in zip(best, mask.sum(-1).tolist())]
