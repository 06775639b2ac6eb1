"""The zhbert tokenizer: a plain ``BertTokenizerFast`` plus offset-exact encoding.

The tokenizer object itself is stock transformers (it loads with ``AutoTokenizer``
from any saved zhbert model folder). What zhbert adds is the path around it:
``normalize`` (``zhbert.text``) -> pre-tokenise into words (each Han character, each
run of letters/digits, each other symbol) -> WordPiece per word -> offsets mapped
back to the caller's original string.

Pre-tokenising ourselves keeps an emoji or a rare symbol from turning a whole
Latin word into ``[UNK]`` (BERT's basic tokenizer glues ``abc123😀`` into one word).

Transformers 5 trap: ``BertTokenizerFast(vocab_file=...)`` ignores the file and
builds a 5-token vocabulary, so we always build from a ``vocab`` dict.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from transformers import BertTokenizerFast, PreTrainedTokenizerBase

from .errors import DataFormatError, ModelLoadError
from .text import NormalizedText, is_cjk, normalize

RESOURCES = Path(__file__).parent / "resources"
DEFAULT_VOCAB = RESOURCES / "vocab.txt"
SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

__all__ = [
    "DEFAULT_VOCAB",
    "Encoding",
    "build_tokenizer",
    "load_tokenizer",
    "read_vocab",
    "pre_tokenize",
    "encode",
    "unk_rate",
]


def read_vocab(path: str | os.PathLike) -> list[str]:
    """Read a one-token-per-line vocabulary, checking for duplicates and specials."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: vocabulary file not found")
    tokens: list[str] = []
    seen: dict[str, int] = {}
    with open(path, encoding="utf-8-sig") as f:
        for lineno, line in enumerate(f, 1):
            tok = line.rstrip("\r\n")
            if not tok:
                raise DataFormatError(str(path), lineno, "empty vocabulary entry")
            if tok in seen:
                raise DataFormatError(str(path), lineno, f"duplicate token {tok!r} (first on line {seen[tok]})")
            seen[tok] = lineno
            tokens.append(tok)
    missing = [t for t in SPECIAL_TOKENS if t not in seen]
    if missing:
        raise DataFormatError(str(path), None, f"vocabulary lacks special tokens {missing}")
    return tokens


def build_tokenizer(vocab: str | os.PathLike | Sequence[str] | None = None) -> BertTokenizerFast:
    """A standard uncased Chinese ``BertTokenizerFast`` over ``vocab`` (path or list)."""
    if vocab is None:
        vocab = DEFAULT_VOCAB
    tokens = read_vocab(vocab) if isinstance(vocab, (str, os.PathLike)) else list(vocab)
    return BertTokenizerFast(
        vocab={t: i for i, t in enumerate(tokens)},
        do_lower_case=True,
        tokenize_chinese_chars=True,
        strip_accents=None,
        model_max_length=512,
    )


def load_tokenizer(path: str | os.PathLike) -> PreTrainedTokenizerBase:
    """Load the tokenizer saved in a model folder (no remote code, local files only)."""
    from transformers import AutoTokenizer

    path = Path(path)
    if not path.is_dir():
        raise ModelLoadError(f"{path}: not a directory with a saved tokenizer")
    if not any((path / f).is_file() for f in ("tokenizer.json", "vocab.txt")):
        raise ModelLoadError(f"{path}: no tokenizer.json or vocab.txt in the folder")
    return AutoTokenizer.from_pretrained(str(path), local_files_only=True, trust_remote_code=False)


def pre_tokenize(text: str) -> list[tuple[int, int]]:
    """Split a *normalised* string into word spans: Han chars, alnum runs, symbols."""
    spans: list[tuple[int, int]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == " ":
            i += 1
            continue
        if ch.isalnum() and not is_cjk(ch):
            j = i + 1
            while j < n and text[j].isalnum() and not is_cjk(text[j]):
                j += 1
            spans.append((i, j))
            i = j
        else:
            spans.append((i, i + 1))
            i += 1
    return spans


@dataclass(frozen=True)
class Encoding:
    """Token ids with offsets into the caller's *original* text (no [CLS]/[SEP])."""

    text: str
    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    offsets: tuple[tuple[int, int], ...]
    word_ids: tuple[int, ...]  # index of the pre-tokenised word each token belongs to
    normalized: NormalizedText

    def __len__(self) -> int:
        return len(self.ids)


def encode(tokenizer: PreTrainedTokenizerBase, texts: str | Iterable[str]) -> Encoding | list[Encoding]:
    """Tokenise one text or a list, offsets into the original strings, no truncation."""
    single = isinstance(texts, str)
    batch = [texts] if single else list(texts)
    normed = [normalize(t) for t in batch]
    spans = [pre_tokenize(n.text) for n in normed]
    words = [[n.text[s:e] for s, e in sp] for n, sp in zip(normed, spans)]
    out: list[Encoding] = []
    nonempty = [i for i, w in enumerate(words) if w]
    enc = (
        tokenizer(
            [words[i] for i in nonempty],
            is_split_into_words=True,
            add_special_tokens=False,
            return_offsets_mapping=True,
            truncation=False,
            verbose=False,
        )
        if nonempty
        else None
    )
    row = {i: k for k, i in enumerate(nonempty)}
    for i, (norm, sp) in enumerate(zip(normed, spans)):
        if i not in row:
            out.append(Encoding(norm.original, (), (), (), (), norm))
            continue
        e = enc[row[i]]
        ids, wids = e.ids, e.word_ids
        offsets = []
        for (s, t), w in zip(e.offsets, wids):
            ws = sp[w][0]
            offsets.append(norm.original_span(ws + s, ws + t))
        out.append(
            Encoding(
                norm.original,
                tuple(ids),
                tuple(e.tokens),
                tuple(offsets),
                tuple(wids),
                norm,
            )
        )
    return out[0] if single else out


def unk_rate(tokenizer: PreTrainedTokenizerBase, texts: Iterable[str], batch_size: int = 1000) -> tuple[float, int, int]:
    """Share of tokens that are ``[UNK]`` over ``texts``: (rate, n_unk, n_tokens)."""
    unk_id = tokenizer.unk_token_id
    n_unk = n_tok = 0
    buf: list[str] = []

    def flush():
        nonlocal n_unk, n_tok
        for e in encode(tokenizer, buf):
            n_tok += len(e.ids)
            n_unk += sum(1 for i in e.ids if i == unk_id)
        buf.clear()

    for t in texts:
        buf.append(t)
        if len(buf) >= batch_size:
            flush()
    if buf:
        flush()
    return (n_unk / n_tok if n_tok else 0.0), n_unk, n_tok
