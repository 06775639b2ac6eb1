"""Normalisation of Chinese text with an exact map back to the caller's string.

Why our own layer: BERT's vocabulary holds half-width ASCII, lower-case letters and
characters without accents, while real Chinese text mixes full-width forms
(``ＡＢＣ１２３``), ideographic spaces, zero-width joiners, emoji and control
characters. We normalise to what the vocabulary expects and keep, for every
normalised character, the ``(start, end)`` span of the original string it came
from. Offsets are Python code-point indices, end exclusive, so
``original[start:end]`` is always the source of a token.

Rules, applied one original character at a time (so no normalised character ever
straddles two original characters):

* full-width ASCII U+FF01-FF5E becomes half-width; other compatibility forms are
  NFKC-folded when the fold is a single character (``①`` stays one character);
* letters are lower-cased and accents stripped (the Chinese BERT vocabulary is
  uncased), again only when the result is one character;
* typographic punctuation the Chinese BERT vocabulary lacks (curly quotes, em
  and en dashes, the ellipsis) maps to its ASCII counterpart (``PUNCT_MAP``);
  without this, every ``“`` and ``”`` of People's Daily becomes ``[UNK]``;
* control and format characters (Unicode category ``C*``: NUL, zero-width joiner,
  BOM, private use, unassigned) and lone combining marks are removed;
* every run of whitespace (including U+3000 and NBSP) becomes one ASCII space that
  maps to the whole run; leading and trailing whitespace is dropped.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["NormalizedText", "normalize", "normalize_char", "is_cjk", "char_units"]


def _is_whitespace(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch) == "Zs"


def is_cjk(ch: str) -> bool:
    """True for a Han ideograph (the blocks BERT's tokenizer splits one by one)."""
    cp = ord(ch)
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2CEAF
        or 0x2CEB0 <= cp <= 0x2EBEF
        or 0x30000 <= cp <= 0x3134F
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


PUNCT_MAP = {
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"',
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
    "\u2014": "-", "\u2013": "-", "\u2015": "-", "\u2012": "-",
    "\u2026": ".",
}


@lru_cache(maxsize=65536)
def normalize_char(ch: str) -> str:
    """Normalise one non-whitespace character to zero or one character."""
    cp = ord(ch)
    if ch == "\ufffd" or unicodedata.category(ch).startswith("C"):
        return ""
    if ch in PUNCT_MAP:
        return PUNCT_MAP[ch]
    if 0xFF01 <= cp <= 0xFF5E:
        ch = chr(cp - 0xFEE0)
    elif cp > 0x7F:
        folded = unicodedata.normalize("NFKC", ch)
        if len(folded) == 1 and not _is_whitespace(folded):
            ch = folded
    lowered = ch.lower()
    if len(lowered) == 1:
        ch = lowered
    if ord(ch) > 0x7F:
        stripped = "".join(c for c in unicodedata.normalize("NFD", ch) if unicodedata.category(c) != "Mn")
        if len(stripped) == 1:
            ch = stripped
        elif not stripped:  # a lone combining mark or variation selector
            return ""
    if unicodedata.category(ch).startswith("C"):
        return ""
    return ch


@dataclass(frozen=True)
class NormalizedText:
    """A normalised string plus, per normalised character, its source span."""

    original: str
    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """Map a normalised span ``[start, end)`` to the original string."""
        if not 0 <= start <= end <= len(self.text):
            raise IndexError(f"span ({start}, {end}) outside normalised text of length {len(self.text)}")
        if start == end:
            pos = self.starts[start] if start < len(self.starts) else len(self.original)
            return pos, pos
        return self.starts[start], self.ends[end - 1]

    def __len__(self) -> int:
        return len(self.text)


def normalize(text: str) -> NormalizedText:
    """Normalise ``text`` for a Chinese BERT vocabulary, keeping exact offsets."""
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    ws_start = -1  # start of the current whitespace run, -1 when not in one
    for i, ch in enumerate(text):
        if _is_whitespace(ch):
            if ws_start < 0:
                ws_start = i
            continue
        norm = normalize_char(ch)
        if not norm:
            continue  # removed characters do not end a whitespace run
        if ws_start >= 0:
            if out:  # collapse the run into one space; leading runs vanish
                out.append(" ")
                starts.append(ws_start)
                ends.append(i)
            ws_start = -1
        out.append(norm)
        starts.append(i)
        ends.append(i + 1)
    # a trailing whitespace run is dropped
    if out and ws_start >= 0 and out[-1] == " ":  # pragma: no cover - defensive
        out.pop(), starts.pop(), ends.pop()
    return NormalizedText(text, "".join(out), tuple(starts), tuple(ends))


def char_units(text: str) -> list[tuple[str, int, int]]:
    """The normalised non-space characters of ``text`` with original offsets.

    These are the units of zhbert's character-level heads (segmentation, NER):
    one unit per visible original character, in order.
    """
    norm = normalize(text)
    return [
        (c, norm.starts[i], norm.ends[i])
        for i, c in enumerate(norm.text)
        if c != " "
    ]
