"""Dictionary words found in token-id rows: the matches SoftLexicon features are built from.

A head with lexicon features must compute them from what the model receives, a window
row of token ids, so training and prediction (and every window of a long text) see them
the same way. Each dictionary word is tokenised once with the model's own tokenizer
(so its normaliser applies: full-width forms, case, traditional characters where the
tokenizer maps them) and stored in a trie over token ids (:class:`TokenTrie`), walked from
every position of a batch at once with numpy.

For every match ``(row, start, end, word)`` the word's token ``start`` *begins* it, ``end - 1``
*ends* it, the tokens between lie in its *middle*, and a one-token word is *single*:
SoftLexicon's B / M / E / S sets (Ma et al., ACL 2020).
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import logging
import math
import zlib
from dataclasses import dataclass

import numpy as np

from .dictionary import DictEntry, Dictionary, gc_paused

__all__ = [
    "TokenLexicon", "TokenTrie", "LexiconMatches", "word_token_ids", "word_token_arrays",
    "SETS", "MAX_WORD_TOKENS", "LEXICON_TAGS", "ENTITY_TAG_ALIASES",
]  # fmt: skip

logger = logging.getLogger(__name__)

SETS = ("B", "M", "E", "S")
MAX_WORD_TOKENS = 12  # longer words are matched but share the last length embedding
# Words longer than this join no feature: they stay in the lexicon but the match walks no deeper. A bound on
# a token's memberships: nested words over a run of one character (啊, 啊啊, ... 100 of them in a user
# dictionary) made every token a member of thousands (2.5 GB and 90 s for 100,000 characters); jieba's
# longest word has 16 characters, so no jieba word is affected.
MAX_MATCH_TOKENS = 32
_BASE = 0xF0000  # Supplementary Private Use Area-A: one code point per token id
_MAX_VOCAB = 0x10FFFE - _BASE
# jieba's part-of-speech tags (dict.txt), index 0 for none or unknown
LEXICON_TAGS = [
    "", "n", "nr", "v", "i", "l", "ns", "m", "nz", "nrt", "zg", "nt", "a", "vn", "z", "d", "t", "j", "b", "g", "r", "s", "c",
    "nrfg", "x", "f", "ng", "o", "q", "vg", "p", "ad", "mq", "y", "ag", "an", "e", "u", "tg", "vq", "vi", "k", "vd", "rr",
    "mg", "h", "dg", "uz", "uv", "ul", "uj", "ug", "ud", "rz", "rg", "df",
]  # fmt: skip
# entity types of a user dictionary read as jieba's name tags, so they share learned vectors
ENTITY_TAG_ALIASES = {"PER": "nr", "LOC": "ns", "ORG": "nt", "GPE": "ns", "NAME": "nr", "ORGANIZATION": "nt", "LOCATION": "ns"}
DEFAULT_FREQ = 100  # the weight of a word given without a frequency (jieba's median is 3-10; common words 10^3-10^6)


@dataclass(frozen=True)
class LexiconMatches:
    """Flat arrays, one entry per (row, position, set, word) membership."""

    rows: np.ndarray
    positions: np.ndarray
    sets: np.ndarray  # index into SETS
    words: np.ndarray  # index into the lexicon's word arrays


def _key(ids) -> str:
    return "".join(chr(_BASE + i) for i in ids)


def _table_fits(values: np.ndarray) -> bool:
    """Whether a lookup table over ``values``' range beats sorting them: small non-negative
    integers (code points, token ids, trie nodes), the table at most about twice their count."""
    return bool(len(values)) and int(values.min()) >= 0 and int(values.max()) < 2 * len(values) + (1 << 21)


def unique_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` of integers: the sorted distinct values and each
    value's index among them. By a table when :func:`_table_fits`: the 5 M characters of a 1 M-word
    dictionary took 1.4 s to sort and take a few hundredths this way."""
    if not _table_fits(values):
        return np.unique(values, return_inverse=True)
    present = np.zeros(int(values.max()) + 1, dtype=bool)
    present[values] = True
    rank = np.cumsum(present) - 1
    return np.flatnonzero(present).astype(values.dtype), rank[values]


def unique_values(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` of integers (:func:`unique_inverse`'s first half: a table, no sort, where it fits)."""
    return unique_inverse(values)[0]


def unique_first(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_index=True)`` of integers: the sorted distinct values and the
    index of each one's first occurrence; by a table when :func:`_table_fits`."""
    if not _table_fits(values):
        return np.unique(values, return_index=True)
    first = np.full(int(values.max()) + 1, len(values), dtype=np.int64)
    np.minimum.at(first, values, np.arange(len(values), dtype=np.int64))
    unique = np.flatnonzero(first < len(values))
    return unique.astype(values.dtype), first[unique]


def stable_bucket(word: str, buckets: int) -> int:
    """The word's embedding row: CRC-32 of its UTF-8 (Python's ``hash`` changes per process)."""
    return zlib.crc32(word.encode("utf-8")) % buckets


def _buckets(tokens: np.ndarray, sizes: np.ndarray, buckets: int) -> np.ndarray:
    """:func:`stable_bucket` of each word's :func:`_key`, from its token ids: the keys' UTF-8
    written at once (each token one code point in plane 15, four bytes), one CRC-32 per word."""
    cp = tokens + _BASE
    utf8 = np.empty((len(cp), 4), dtype=np.uint8)
    utf8[:, 0], utf8[:, 1] = 0xF0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3F)
    utf8[:, 2], utf8[:, 3] = 0x80 | ((cp >> 6) & 0x3F), 0x80 | (cp & 0x3F)
    data = memoryview(utf8.tobytes())
    ends = (np.cumsum(sizes) * 4).tolist()
    starts = [0, *ends[:-1]]
    return np.array([zlib.crc32(data[a:b]) % buckets for a, b in zip(starts, ends)], dtype=np.int64)


def word_token_ids(words: list[str], tokenizer) -> list[list[int]]:
    """Each word's token ids, as the tokenizer gives them (:func:`word_token_arrays`, as lists)."""
    flat, sizes = word_token_arrays(words, tokenizer)
    flat, out, at = flat.tolist(), [], 0
    for n in sizes.tolist():
        out.append(flat[at : at + n])
        at += n
    return out


def word_token_arrays(words: list[str], tokenizer) -> tuple[np.ndarray, np.ndarray]:
    """The words' token ids end to end, and how many each word has.

    A word of Han characters only is the concatenation of its characters' tokens (every BERT
    pre-tokenizer for Chinese makes each Han character a word of its own), so those words are
    assembled from one encoding per distinct character, with numpy over the words' code points:
    a fraction of a second for jieba's 349,046 words instead of 2.6 s through the Rust tokenizer.
    A sample is checked against the tokenizer itself, and any difference (a tokenizer that does
    not split Han characters, or reads one as several tokens) falls back to encoding every word."""
    from .text import HAN_RANGES

    backend = tokenizer.backend_tokenizer
    n = len(words)
    lens = np.fromiter(map(len, words), dtype=np.int64, count=n)
    codes = np.frombuffer("".join(words).encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    han_char = np.zeros(len(codes), dtype=bool)
    for a, b in HAN_RANGES:
        han_char |= (codes >= a) & (codes <= b)
    word_of = np.repeat(np.arange(n, dtype=np.int64), lens)  # the word each character belongs to
    is_han = (np.bincount(word_of[~han_char], minlength=n) == 0) & (lens > 0)
    chars, inverse = unique_inverse(codes[np.repeat(is_han, lens)])
    char_ids = [e.ids for e in backend.encode_batch_fast([chr(c) for c in chars.tolist()], add_special_tokens=False)]
    han_chars = np.zeros(0, dtype=np.int64)  # the tokens of the Han words' characters, in order
    if all(len(ids) == 1 for ids in char_ids):  # one token per character, as BERT's Chinese vocabularies
        han_chars = np.array([ids[0] for ids in char_ids], dtype=np.int64)[inverse]
        han_lens = lens * is_han
        han_starts = np.cumsum(han_lens) - han_lens  # each Han word's first character in han_chars
        han_words = np.flatnonzero(is_han)
        sample = han_words[:: max(1, len(han_words) // 500)].tolist()
        check = backend.encode_batch_fast([words[k] for k in sample], add_special_tokens=False)
        if any(e.ids != han_chars[han_starts[k] : han_starts[k] + lens[k]].tolist() for k, e in zip(sample, check)):
            is_han[:] = False
    else:
        is_han[:] = False
    rest = np.flatnonzero(~is_han)
    encoded = [e.ids for e in backend.encode_batch_fast([words[k] for k in rest.tolist()], add_special_tokens=False)]
    sizes = np.where(is_han, lens, 0)
    sizes[rest] = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    # the output in word order: the Han words' tokens where their words are, the others' between
    han_out = np.repeat(is_han, sizes)
    flat = np.empty(int(sizes.sum()), dtype=np.int64)
    if han_out.any():
        flat[han_out] = han_chars
    flat[~han_out] = np.fromiter(itertools.chain.from_iterable(encoded), dtype=np.int64, count=int((~han_out).sum()))
    return flat, sizes


class TokenTrie:
    """A trie over token ids, walked from every position of a batch at once with numpy.

    Each edge is one sorted int64 key ``parent * vocab + token``; a step of the walk moves every
    live position one token deeper with a single ``searchsorted``, so matching costs as many numpy
    passes as the longest dictionary prefix found, not a Python step per token or per match (an
    Aho-Corasick automaton, ``pyahocorasick``, reports each match to Python and took over twice as
    long on the same rows: bench/LOG.md, thirty-third session). ``words`` are distinct and non-empty."""

    def __init__(self, words: list[list[int]], vocab: int):
        sizes = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        flat = np.fromiter(itertools.chain.from_iterable(words), dtype=np.int64, count=int(sizes.sum()))
        self._build(flat, sizes, vocab)

    @classmethod
    def with_ends(cls, flat: np.ndarray, sizes: np.ndarray, vocab: int) -> tuple["TokenTrie", np.ndarray]:
        """The trie of the rows whose token ids are ``flat``, ``sizes[i]`` of them for row ``i``, and
        the node each row ends at: equal rows end at the same node (the last of them is its word)."""
        trie = cls.__new__(cls)
        ends = trie._build(np.asarray(flat, dtype=np.int64), np.asarray(sizes, dtype=np.int64), vocab)
        return trie, ends

    def _build(self, flat: np.ndarray, sizes: np.ndarray, vocab: int) -> np.ndarray:
        self.vocab = vocab
        depth = int(sizes.max()) if len(sizes) else 0
        if len(flat) != int(sizes.sum()):
            raise ValueError(f"{len(flat):,} token ids for words of {int(sizes.sum()):,} tokens in all")
        if len(sizes) and sizes.min() == 0:
            raise ValueError(f"word {int(np.argmin(sizes))} has no tokens: a trie word needs one or more")
        if len(flat) and (flat.min() < 0 or flat.max() >= vocab):
            raise ValueError(f"token ids must lie in [0, {vocab}) for a trie over a vocabulary of {vocab:,}")
        starts = np.cumsum(sizes) - sizes
        node = np.zeros(len(sizes), dtype=np.int64)  # each word's node so far: the root, 0
        keys, children, count = [], [], 1
        for d in range(depth):  # one level of prefixes at a time: their distinct (parent, token) pairs
            live = np.flatnonzero(sizes > d)
            key = node[live] * vocab + flat[starts[live] + d]
            unique, inverse = unique_inverse(key)  # a table at the first level (keys are token ids), else a sort
            keys.append(unique)
            children.append(count + np.arange(len(unique), dtype=np.int64))
            node[live] = count + inverse
            count += len(unique)
        keys = np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64)
        order = np.argsort(keys, kind="stable")
        self._keys = keys[order]
        self._children = np.concatenate(children)[order] if children else keys
        self._word = np.full(count, -1, dtype=np.int64)  # the word that ends at a node, -1 for none
        self._word[node] = np.arange(len(sizes), dtype=np.int64)
        # the first step, from the root, by a table (every position takes it)
        self._root = np.full(vocab, -1, dtype=np.int64)
        self._root[self._keys[self._keys < vocab]] = self._children[self._keys < vocab]
        return node

    def arrays(self) -> dict[str, np.ndarray]:
        """The trie as flat arrays (see :meth:`from_arrays`)."""
        return {"keys": self._keys, "children": self._children, "word": self._word, "root": self._root}

    @classmethod
    def from_arrays(cls, vocab: int, arrays: dict[str, np.ndarray]) -> "TokenTrie":
        """The trie :meth:`arrays` gave, without walking its words again."""
        trie = cls.__new__(cls)
        trie.vocab = vocab
        trie._keys, trie._children, trie._word, trie._root = (arrays[k] for k in ("keys", "children", "word", "root"))
        if len(trie._root) != vocab or len(trie._keys) != len(trie._children):
            raise ValueError(f"trie arrays do not fit a vocabulary of {vocab:,} (root {len(trie._root):,})")
        return trie

    def _step(self, node: np.ndarray, token: np.ndarray):
        """The child of each ``node`` along ``token``, and whether there is one."""
        if not len(self._keys):
            return node, np.zeros(len(node), dtype=bool)
        key = node * self.vocab + token
        at = np.minimum(np.searchsorted(self._keys, key), len(self._keys) - 1)
        return self._children[at], self._keys[at] == key

    def find(self, ids: list[int]) -> int | None:
        """The index of the word with exactly these token ids, None if there is none."""
        if not ids or min(ids) < 0 or max(ids) >= self.vocab:
            return None
        node = np.zeros(1, dtype=np.int64)
        for t in ids:
            node, found = self._step(node, np.array([t], dtype=np.int64))
            if not found[0]:
                return None
        k = int(self._word[node[0]])
        return k if k >= 0 else None

    def _deeper(self, tokens, valid, limit, live, node, size):
        """The walks of ``live`` starts one token further, to ``size`` tokens: those that go on."""
        pos = live + size - 1
        ok = pos < limit[live]
        ok[ok] = valid[pos[ok]]
        live, node, pos = live[ok], node[ok], pos[ok]
        node, found = self._step(node, tokens[pos])
        return live[found], node[found]

    def find_all(self, tokens: np.ndarray, limit: np.ndarray, max_size: int | None = None):
        """Every word in ``tokens`` (of at most ``max_size`` tokens, if given): ``(start, size, word)``
        arrays, a word starting at index ``start`` and ending before ``limit[start]`` (the end of its row)."""
        valid = (tokens >= 0) & (tokens < self.vocab)  # a token outside the vocabulary ends every word
        live = np.flatnonzero(valid)
        node = self._root[tokens[live]]
        live, node = live[node >= 0], node[node >= 0]
        out_start, out_size, out_word = [], [], []
        size = 1
        while len(live) and (max_size is None or size <= max_size):
            if size > 1:
                live, node = self._deeper(tokens, valid, limit, live, node, size)
            word = self._word[node]
            ends = word >= 0
            out_start.append(live[ends])
            out_size.append(np.full(int(ends.sum()), size, dtype=np.int64))
            out_word.append(word[ends])
            size += 1
        if not out_start:
            return tuple(np.zeros(0, dtype=np.int64) for _ in range(3))
        return np.concatenate(out_start), np.concatenate(out_size), np.concatenate(out_word)


class TokenLexicon:
    """Dictionary words over token ids, with each word's length, tag and weight.

    ``tags``: the tag vocabulary (index 0 = no or unknown tag); ``buckets``: rows of the hashed
    word-embedding table. Words the tokenizer cannot read (an ``[UNK]`` inside) are left out and
    counted in ``unreadable``; two spellings that tokenise alike (``臺灣``/``台湾`` under a
    traditional-to-simplified normaliser, ``iPhone``/``iphone``) become one entry, frequencies summed.
    """

    # the per-word arrays; with the trie's and the dictionary's columns they are the whole lexicon:
    # length (capped), tag, log weight, hashed row, tokens, summed frequency, first entry
    _ARRAYS = ("lengths", "tag_ids", "weights", "buckets", "_sizes", "_freqs", "_first")
    # and per dictionary entry, its word's index (-1: unreadable); the words' token ids, end to end
    _ENTRY_ARRAYS = ("_entry_word",)
    _FLAT_ARRAYS = ("_tokens",)

    def __init__(self, dictionary: Dictionary, tokenizer, buckets: int, tags: list[str] = LEXICON_TAGS):
        with gc_paused():  # millions of acyclic lists and tuples: the collector's passes over them found nothing
            self._build(dictionary, tokenizer, buckets, tags)

    def _build(self, dictionary: Dictionary, tokenizer, buckets: int, tags: list[str]) -> None:
        if len(tokenizer) > _MAX_VOCAB:
            raise ValueError(f"a vocabulary of {len(tokenizer):,} tokens is too large for the lexicon matcher ({_MAX_VOCAB:,})")
        self.bucket_count = buckets
        self.source = dictionary.source
        self.tags = list(tags)
        # the entries kept as plain columns, not 349,046 DictEntry tuples: the garbage collector
        # walks every tracked object on each full pass, in every process that loads a lexicon head
        # (prediction calls pause it: zhbert.api; training and the caller's own code do not)
        self._columns = tuple(list(column) for column in dictionary.columns())
        self._counts = (dictionary.duplicates, dictionary.blank_lines)
        self.unreadable = 0
        for name in (*self._ARRAYS, *self._ENTRY_ARRAYS, *self._FLAT_ARRAYS):
            setattr(self, name, np.zeros(0, dtype=np.float32 if name == "weights" else np.int64))
        self._add_entries(*self._columns[:3], tokenizer)

    def _tag_ids(self, tags: list[str | None]) -> list[int]:
        """Each tag's index in ``self.tags`` (an entity type as jieba's name tag), 0 for none or unknown."""
        index = {t: i for i, t in enumerate(self.tags)}
        ids = {t: index.get(ENTITY_TAG_ALIASES.get(t, t), 0) if t else 0 for t in set(tags)}  # a few dozen distinct tags
        return list(map(ids.__getitem__, tags))

    def _add_entries(self, words: list[str], freqs: list[int | None], tags: list[str | None], tokenizer, first_entry: int = 0) -> None:
        """Add entries (the dictionary's entries from index ``first_entry`` on, not in the word
        arrays yet; as columns) to the word arrays and the trie. A word that tokenises like a word already in
        the lexicon adds its frequency to that word; the first entry of each new word gives its tag.

        Vectorised: one trie is built over the lexicon's words and every new row together, and rows
        with the same token ids end at the same node, which is what identifies a word."""
        flat_all, sizes_all = word_token_arrays(words, tokenizer)
        readable = sizes_all > 0
        if tokenizer.unk_token_id is not None:  # a word with an [UNK] inside is left out
            readable[np.repeat(np.arange(len(words)), sizes_all)[flat_all == tokenizer.unk_token_id]] = False
        self.unreadable += int((~readable).sum())
        rows = np.flatnonzero(readable)  # the readable entries, by index in ``words``
        n = len(self.lengths)
        trie, ends = TokenTrie.with_ends(
            np.concatenate([self._tokens, flat_all[np.repeat(readable, sizes_all)]]),
            np.concatenate([self._sizes, sizes_all[rows]]),
            len(tokenizer),
        )
        word_at = trie._word  # the word ending at each node, -1 for none: the lexicon's words first
        word_at[:] = -1
        word_at[ends[:n]] = np.arange(n, dtype=np.int64)
        row_end = ends[n:]
        fresh = word_at[row_end] < 0
        nodes, first_seen = unique_first(row_end[fresh])
        order = np.argsort(first_seen, kind="stable")  # new words in the order of their first entry
        word_at[nodes[order]] = n + np.arange(len(nodes), dtype=np.int64)
        trie._word = word_at
        word = word_at[row_end]  # each readable entry's word
        first = rows[fresh][first_seen[order]]  # each new word's first entry
        sizes = sizes_all[first]
        starts = (np.cumsum(sizes_all) - sizes_all)[first]
        tokens = flat_all[np.repeat(starts - (np.cumsum(sizes) - sizes), sizes) + np.arange(int(sizes.sum()), dtype=np.int64)]

        summed = np.concatenate([self._freqs, np.zeros(len(first), dtype=np.int64)])
        np.add.at(summed, word, np.array([freqs[j] or DEFAULT_FREQ for j in rows.tolist()], dtype=np.int64))
        # log-frequency weights: jieba's frequencies span 1 to 10^6, and raw counts would let one
        # common word drown every other word matched at a character (math.log1p of each summed
        # count, so a lexicon grown from another equals one built at once, bit for bit)
        changed = unique_values(word)
        weights = np.concatenate([self.weights, np.zeros(len(first), dtype=np.float32)])
        weights[changed] = np.array([math.log1p(f) for f in summed[changed].tolist()], dtype=np.float32)
        self.weights, self._freqs = weights, summed
        if (sizes > MAX_MATCH_TOKENS).any():
            logger.warning(
                "%s: %d word(s) of more than %d tokens join no lexicon feature (such as %r)",
                self.source, int((sizes > MAX_MATCH_TOKENS).sum()), MAX_MATCH_TOKENS, words[int(first[sizes > MAX_MATCH_TOKENS][0])][:40],
            )  # fmt: skip
        self.lengths = np.concatenate([self.lengths, np.minimum(sizes, MAX_WORD_TOKENS)])
        self.tag_ids = np.concatenate([self.tag_ids, np.array(self._tag_ids([tags[j] for j in first.tolist()]), dtype=np.int64)])
        self.buckets = np.concatenate([self.buckets, _buckets(tokens, sizes, self.bucket_count)])
        self._sizes = np.concatenate([self._sizes, sizes])
        self._tokens = np.concatenate([self._tokens, tokens])
        self._first = np.concatenate([self._first, first_entry + first])
        entry_word = np.full(len(words), -1, dtype=np.int64)
        entry_word[rows] = word
        self._entry_word = np.concatenate([self._entry_word, entry_word])
        self._trie = trie
        self._empty = not len(self.lengths)

    def __len__(self) -> int:
        return len(self.lengths)

    def to_arrays(self) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        """The lexicon as arrays and string metadata (a safetensors file's contents), so a process
        can read it back in a fraction of the seconds building it takes (:mod:`zhbert.lexicon_cache`).

        The dictionary's columns are stored too (:attr:`dictionary` is what a user's words are
        merged into): words as one UTF-8 string, joined by newlines (no word holds one: the
        readers split lines), frequency and line as int64 (-1 for none), tag as an index into a
        list kept in the metadata (-1 for none)."""
        words, freqs, tags, lines = self._columns
        if any("\n" in w for w in words):
            raise ValueError("a dictionary word holds a newline: this lexicon cannot be stored as arrays")
        tag_names = sorted({t for t in tags if t is not None})
        tag_index = {t: i for i, t in enumerate(tag_names)}
        arrays = {name.lstrip("_"): getattr(self, name) for name in (*self._ARRAYS, *self._ENTRY_ARRAYS, *self._FLAT_ARRAYS)}
        arrays.update({f"trie.{k}": v for k, v in self._trie.arrays().items()})
        arrays["dict.words"] = np.frombuffer("\n".join(words).encode("utf-8"), dtype=np.uint8)
        arrays["dict.freqs"] = np.array([-1 if f is None else f for f in freqs], dtype=np.int64)
        arrays["dict.tags"] = np.array([tag_index.get(t, -1) for t in tags], dtype=np.int64)
        arrays["dict.lines"] = np.array([-1 if n is None else n for n in lines], dtype=np.int64)
        metadata = {
            "source": self.source, "bucket_count": str(self.bucket_count), "tags": json.dumps(self.tags),
            "tag_names": json.dumps(tag_names), "vocab": str(self._trie.vocab), "unreadable": str(self.unreadable),
            "duplicates": str(self._counts[0]), "blank_lines": str(self._counts[1]), "words": str(len(words)),
        }  # fmt: skip
        return arrays, metadata

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> "TokenLexicon":
        """The lexicon :meth:`to_arrays` gave: the same arrays, so the same features, bit for bit."""
        lex = cls.__new__(cls)
        for name in (*cls._ARRAYS, *cls._ENTRY_ARRAYS, *cls._FLAT_ARRAYS):
            setattr(lex, name, arrays[name.lstrip("_")])
        lex._trie = TokenTrie.from_arrays(int(metadata["vocab"]), {k: arrays[f"trie.{k}"] for k in ("keys", "children", "word", "root")})
        lex.source, lex.bucket_count, lex.tags = metadata["source"], int(metadata["bucket_count"]), json.loads(metadata["tags"])
        lex.unreadable = int(metadata["unreadable"])
        lex._counts = (int(metadata["duplicates"]), int(metadata["blank_lines"]))
        n = int(metadata["words"])
        words = arrays["dict.words"].tobytes().decode("utf-8").split("\n") if n else []
        tag_names = json.loads(metadata["tag_names"]) + [None]  # index -1: no tag
        columns = (words, arrays["dict.freqs"].tolist(), arrays["dict.tags"].tolist(), arrays["dict.lines"].tolist())
        if (
            any(len(c) != n for c in (*columns, lex._entry_word))
            or any(len(getattr(lex, a)) != len(lex.lengths) for a in cls._ARRAYS)
            or len(lex._tokens) != int(lex._sizes.sum())
        ):
            raise ValueError("lexicon arrays of different lengths")
        with gc_paused():
            lex._columns = (
                words,
                [None if f < 0 else f for f in columns[1]],
                [tag_names[t] for t in columns[2]],
                [None if k < 0 else k for k in columns[3]],
            )
        lex._empty = not len(lex.lengths)
        return lex

    @property
    def dictionary(self) -> Dictionary:
        """The dictionary this lexicon was built from (made again from its columns: see ``__init__``)."""
        return Dictionary(self.source, None, *self._counts, columns=self._columns)

    def index_of(self, ids) -> int | None:
        """The word's index in the lexicon's arrays, None if it is not in the lexicon."""
        return self._trie.find(list(ids))

    def row_of(self, ids) -> int | None:
        """The hashed embedding row of the word with these token ids, None if it is not in the lexicon."""
        return None if self.index_of(ids) is None else stable_bucket(_key(ids), self.bucket_count)

    def match(self, input_ids, lengths) -> LexiconMatches:
        """Every dictionary word in each row's first ``lengths[r]`` tokens, as set memberships.

        Words come by row, then by their last token, the longest first (the order an Aho-Corasick
        automaton reports them in), and each word's entries as B (its first token), E (its last),
        then M (the tokens between), or S alone: the order the feature sums add them in."""
        none = LexiconMatches(*(np.zeros(0, dtype=np.int64) for _ in range(4)))
        rows = [row[:m] for row, m in zip(input_ids, lengths)]
        n = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
        if self._empty or not n.sum():
            return none
        tokens = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=int(n.sum()))
        row_end = np.repeat(np.cumsum(n), n)  # each token's row's end in ``tokens``
        start, size, k = self._trie.find_all(tokens, row_end, MAX_MATCH_TOKENS)
        order = np.lexsort((-size, start + size))  # by last token, then the longest first
        start, size, k = start[order], size[order], k[order]
        row_start = np.cumsum(n) - n
        r = np.searchsorted(row_start, start, side="right") - 1
        end = start - row_start[r] + size - 1  # the word's last token, as a position in its row
        first = np.cumsum(size) - size  # each word's first entry
        j = np.arange(int(size.sum()), dtype=np.int64) - np.repeat(first, size)  # entry's index within its word
        s = np.repeat(size, size)
        offset = np.where(j == 0, 0, np.where(j == 1, s - 1, j - 1))  # B, E, then the M's in order
        sets = np.where(s == 1, 3, np.where(j == 0, 0, np.where(j == 1, 2, 1)))  # S; else B, E, M by that order
        return LexiconMatches(np.repeat(r, size), np.repeat(end - size + 1, size) + offset, sets, np.repeat(k, size))

    def with_words(self, extra: Dictionary, tokenizer) -> "TokenLexicon":
        """A new lexicon with ``extra``'s words added (a user dictionary in ``prefer`` mode);
        ``self`` is unchanged, so predictors never share a dictionary.

        The same lexicon as one built from ``self.dictionary.merged(extra)``, bit for bit
        (``tests/test_word_features.py``), but grown from this one: only ``extra``'s words are
        tokenised and looked up, so a short word list takes a fraction of a second, not the
        seconds jieba's 349,046 words take to build."""
        with gc_paused():
            return self._merged(extra, tokenizer)

    def _merged(self, extra: Dictionary, tokenizer) -> "TokenLexicon":
        out = copy.copy(self)
        words, freqs, tags, lines = (list(c) for c in self._columns)
        position = {w: i for i, w in enumerate(words)}
        out._freqs, out.tag_ids, out.weights = self._freqs.copy(), self.tag_ids.copy(), self.weights.copy()
        columns = extra.columns()
        found = list(map(position.get, columns[0]))  # each entry's index in this dictionary, None if new
        is_new = [i is None for i in found]
        added = [list(itertools.compress(c, is_new)) for c in columns]
        replaced, at = [], []  # known words given again with a frequency or tag: (freq, tag, line), and where
        for i, f, t, n in zip(found, *columns[1:]) if not all(is_new) else ():  # Dictionary.merged's rule
            if i is not None and (f is not None or t is not None):  # a bare word the dictionary has keeps its entry
                replaced.append((f, t, n))
                at.append(i)
        if replaced:
            # a replaced entry's frequency moves its word's sum; its tag counts if it is the word's first entry
            i = np.array(at, dtype=np.int64)
            k = self._entry_word[i]
            ok = k >= 0  # an unreadable word stays unreadable
            delta = np.array([f or DEFAULT_FREQ for f, _, _ in replaced], dtype=np.int64)
            delta -= np.array([freqs[j] or DEFAULT_FREQ for j in at], dtype=np.int64)
            np.add.at(out._freqs, k[ok], delta[ok])
            changed = unique_values(k[ok])
            out.weights[changed] = np.array([math.log1p(f) for f in out._freqs[changed].tolist()], dtype=np.float32)
            first = np.flatnonzero(ok & (self._first[np.maximum(k, 0)] == i))
            out.tag_ids[k[first]] = out._tag_ids([replaced[j][1] for j in first.tolist()])
            for j, (f, t, n) in zip(at, replaced):
                freqs[j], tags[j], lines[j] = f, t, n
        out.source = f"{self.source}+{extra.source}"
        out._columns = (words + added[0], freqs + added[1], tags + added[2], lines + added[3])
        out._add_entries(*added[:3], tokenizer, first_entry=len(words))
        return out


def read_jieba_dict(path) -> "Dictionary | None":
    """jieba's own ``dict.txt`` (``word freq tag`` on every line) without the per-line checks a
    user's file gets: 0.4 s instead of 2 s. None if any line is not in that form (then the
    validating reader reads it and names the line)."""
    entries, duplicates = {}, 0
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.split(" ")
        if len(parts) != 3 or not parts[1].isdigit():
            return None
        if parts[0] in entries:  # jieba's file lists a few words twice: the first is kept, as the checked reader does
            if entries[parts[0]].tag != parts[2]:
                return None
            duplicates += 1
            continue
        entries[parts[0]] = DictEntry(parts[0], int(parts[1]), parts[2], n)
    return Dictionary(str(path), entries, duplicates)


def tokenizer_sha256(tokenizer) -> str:
    """SHA-256 of the tokenizer's full definition (vocabulary, normaliser, pre-tokeniser)."""
    return hashlib.sha256(tokenizer.backend_tokenizer.to_str().encode("utf-8")).hexdigest()


def file_sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
