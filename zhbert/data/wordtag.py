"""Files of ``word/TAG`` items, People's Daily's form: one sentence (or paragraph) a line, items separated by
spaces, a compound in brackets with its own tag after the closing one: ``[中央/n 电视台/n]nt`` in the 1998
release, ``[纽约/nsf 时报/n]/nz`` in the 2014 one. The PKU release's line id (``19980101-01-001-001/m``) is
an id, not a word of the sentence.

The same file trains part-of-speech tagging (each word's tag) and NER (:func:`name_entities`: the names its
tags mark, ``nr`` a person, ``ns`` a place, ``nt`` an organisation, a bracketed ``[...]nt`` one organisation),
as the People's Daily NER release was made from the 1998 corpus.
"""

from __future__ import annotations

import re
from typing import Iterator, NamedTuple

from ..dictionary import NAME_TAGS
from ..errors import DataFormatError, clip
from .source import head_lines, iter_lines

__all__ = ["WordTagLine", "read_word_tag_lines", "name_entities", "ENTITY_OF_TAG", "PD_LINE_ID"]

#: a sentence of more characters is refused at its line (the longest People's Daily paragraph has a few thousand)
MAX_LINE_CHARS = 200_000
#: the line id the PKU release of People's Daily 1998 starts each line with (19980101-01-001-001/m)
PD_LINE_ID = re.compile(r"\d{8}-\d{2}-\d{3}-\d{3}/m")
# one item: an optional "[" that opens a compound, the word (which may itself hold a "/": 1/2/m), its tag (a
# letter first), and an optional "]" that closes the compound with the compound's tag, written "]nt" or "]/nz"
_ITEM = re.compile(r"(\[?)(.+?)/([A-Za-z][^/\s\[\]]*)(?:\]/?([A-Za-z][^/\s\[\]]*)?)?")
#: the entity type a name's part of speech marks (nr and its kinds PER, ns LOC, nt and its kinds ORG)
ENTITY_OF_TAG = {tag: types[0] for tag, types in NAME_TAGS.items()}


class WordTagLine(NamedTuple):
    line: int
    words: list[str]
    tags: list[str]
    #: bracketed compounds as (first word, end word exclusive, the compound's tag or "" when it has none)
    compounds: list[tuple[int, int, str]]
    #: whether the line began with People's Daily 1998's line id (not one of ``words``)
    had_id: bool

    @property
    def text(self) -> str:
        return "".join(self.words)


def _parse(line: str, path: str, lineno: int) -> WordTagLine | None:
    if len(line) > MAX_LINE_CHARS:
        raise DataFormatError(path, lineno, f"line of {len(line):,} characters: over the {MAX_LINE_CHARS:,} a sentence may have")
    items = line.split()
    had_id = bool(PD_LINE_ID.fullmatch(items[0]))
    if had_id:
        items = items[1:]
        if not items:
            return None
    words, tags, compounds = [], [], []
    opened: int | None = None
    for item in items:
        m = _ITEM.fullmatch(item)
        if m is None:
            raise DataFormatError(path, lineno, f"{clip(item)} is not word/TAG (items separated by spaces)")
        opens, word, tag, compound_tag = m.groups()
        closes = m.group(0).endswith("]") or compound_tag is not None
        if opens:
            if opened is not None:
                raise DataFormatError(
                    path, lineno, f"{clip(item)} opens a compound inside the one its '[' opened: close it with ']TAG' first"
                )
            opened = len(words)
        words.append(word)
        tags.append(tag)
        if closes:
            if opened is None:
                raise DataFormatError(path, lineno, f"{clip(item)} closes a compound that no '[' opened")
            compounds.append((opened, len(words), compound_tag or ""))
            opened = None
    if opened is not None:
        raise DataFormatError(path, lineno, f"the compound that {clip(words[opened])} opens is never closed (']TAG' after its last word)")
    return WordTagLine(lineno, words, tags, compounds, had_id)


def read_word_tag_lines(path: str) -> Iterator[WordTagLine]:
    """The file's non-blank lines, parsed; a bad item, or a bracket that opens or closes nothing, is an error
    naming ``path:line``."""
    for lineno, line in iter_lines(path):
        if line.strip():
            parsed = _parse(line, path, lineno)
            if parsed is not None:
                yield parsed


def name_entities(sentence: WordTagLine) -> list[tuple[str, int, int]]:
    """``(type, start, end)`` character spans of the names ``sentence``'s tags mark (:data:`ENTITY_OF_TAG`).
    A compound whose own tag is a name's (``[中央/n 电视台/n]nt``) is one entity, its words none of their own;
    another compound's words (``[纽约/nsf 时报/n]/nz``) are entities by their own tags. Persons written as
    surname and given name (``江/nr 泽民/nr``, People's Daily 1998) are one: adjacent person words join."""
    starts = [0]
    for word in sentence.words:
        starts.append(starts[-1] + len(word))
    whole = {first: (end, ENTITY_OF_TAG[tag]) for first, end, tag in sentence.compounds if tag in ENTITY_OF_TAG}
    spans: list[tuple[str, int, int]] = []
    i = 0
    while i < len(sentence.words):
        if i in whole:
            end, typ = whole[i]
            spans.append((typ, starts[i], starts[end]))
            i = end
            continue
        typ = ENTITY_OF_TAG.get(sentence.tags[i])
        if typ == "PER" and spans and spans[-1][0] == "PER" and spans[-1][2] == starts[i]:
            spans[-1] = ("PER", spans[-1][1], starts[i + 1])
        elif typ is not None:
            spans.append((typ, starts[i], starts[i + 1]))
        i += 1
    return spans


def looks_word_tagged(path: str) -> bool:
    """Whether the file's first non-blank line is ``word/TAG`` items, more than one (a CoNLL line, ``张 B-PER``, is
    not; nor a line of segmented words, unless each holds a slash before a letter)."""
    first = head_lines(path, 1)
    items = first[0].split() if first else []
    return len(items) > 1 and all(_ITEM.fullmatch(item) for item in items)
