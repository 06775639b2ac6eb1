"""Word lists: jieba's ``dict.txt`` and user dictionaries, read and validated.

A dictionary line is what users of jieba, pkuseg, HanLP and LTP already write::

    word                      a word alone
    word FREQ                 with a frequency (jieba's ``load_userdict`` format)
    word FREQ TAG             jieba's own dict.txt: frequency and part of speech
    word TAG FREQ [TAG FREQ]  HanLP's CustomDictionary: its commonest tag, the frequencies summed
    word<TAB>TYPE             a typed word for NER (PER, LOC, ORG, ... of the model)

An entity model reads a name's part of speech as its type (``nr``: PER, ``ns``: LOC, ``nt``: ORG).

Columns are split at tabs when the line has one (so a word may then hold spaces), at
whitespace otherwise. A column of digits is the frequency, a name is the tag; each at most
once, in either order. What other toolkits silently get wrong is handled on purpose: a
BOM at the start and CRLF line ends are accepted; blank lines are skipped and counted;
words with digits, hyphens, Latin letters or ``#``/``@`` are words like any other; a
repeated word is merged (counted), unless its tag contradicts the first one. Anything
else (a bad frequency, a third column, control characters, invalid UTF-8, a word over
100 characters) is a :class:`~zhbert.errors.DataFormatError` naming ``file:line``.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import re
import unicodedata
from pathlib import Path
from typing import Iterable, NamedTuple

from .errors import DataFormatError, clip
from .file_encoding import SNIFF_BYTES, binary_file_kind, not_utf8_advice, utf16_problem

__all__ = ["DictEntry", "Dictionary", "read_dictionary", "jieba_dictionary_path", "entity_type_of_tag", "MAX_WORD_CHARS"]

MAX_WORD_CHARS = 100  # longer "words" are almost always a misplaced sentence
MAX_DICTIONARY_BYTES = 512 * 2**20  # 512 MB: about 40 M entries; a bigger file is refused before it is read
_TAG = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,31}$")
# ZWJ, variation selectors and emoji tag characters (subdivision flags) belong inside emoji words
_ALLOWED_FORMAT = {"\u200d", "\ufe0f", "\ufe0e", *map(chr, range(0xE0020, 0xE0080))}
# the common line, ``word [FREQ] [TAG]`` without a tab, in one regex match (1 M lines in about 3 s)
_SIMPLE = r"(\S+)(?:[ ]+([1-9][0-9]*))?(?:[ ]+([A-Za-z_][A-Za-z0-9_.\-]{0,31}))?[ ]*"
_SIMPLE_LINE = re.compile(_SIMPLE)
# every line of a file in that form, CRLF or not: one findall over the whole text
_SIMPLE_LINES = re.compile(rf"^{_SIMPLE}\r*$", re.M)


@functools.cache
def _is_bad_char(ch: str) -> bool:
    """A control, format or surrogate character (Unicode categories Cc, Cf, Cs), bar the joiners,
    variation selectors and tag characters emoji are written with."""
    return unicodedata.category(ch) in ("Cc", "Cf", "Cs") and ch not in _ALLOWED_FORMAT


def _has_bad_char(text: str, allowed: str = "") -> bool:
    """Whether ``text`` holds such a character outside ``allowed``: each distinct character looked
    up once (a million-word file has a few thousand), where a regex of every such character in
    Unicode took 0.4 s to build in each process, most of an 8-word dictionary's load time."""
    printable = text
    for c in allowed + "\u3000":  # allowed, or not such a character, yet not printable to Python
        printable = printable.replace(c, "")
    if printable.isprintable():
        return False  # every Cc, Cf and Cs character is unprintable: the common case, in C
    return any(_is_bad_char(c) for c in set(text) if c not in allowed)


@contextlib.contextmanager
def gc_paused():
    """The cyclic garbage collector off while a million acyclic entries are built: its passes over
    every object made so far took a quarter of a 1 M-entry dictionary's load time (bench/user_dict.py)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class DictEntry(NamedTuple):  # a named tuple: built 3.5x faster than a frozen dataclass, and a file may hold millions
    word: str
    freq: int | None = None
    tag: str | None = None  # part of speech (jieba) or entity type (ner)
    line: int | None = None  # 1-based line in its file, or position in a list


class Dictionary:
    """Validated entries, one per distinct word (first occurrence kept), in file order.

    Held either as ``entries`` (a dict of :class:`DictEntry`) or, as the one-pass file reader
    makes it, as four columns (words, frequencies, tags, lines) whose entries are only built
    when asked for: a million ``DictEntry`` tuples took 1.3 s to make, and the lexicon and the
    forced-word matcher read the columns (:meth:`columns`)."""

    def __init__(
        self,
        source: str,
        entries: dict[str, DictEntry] | None = None,
        duplicates: int = 0,
        blank_lines: int = 0,
        columns: tuple[list, list, list, list] | None = None,
    ):
        self.source = source
        self.duplicates = duplicates  # repeated words merged into their first entry
        self.blank_lines = blank_lines
        if entries is None and columns is None:
            entries = {}
        self._entries = entries  # None while the entries are only columns
        self._columns = columns if entries is None else None

    @property
    def entries(self) -> dict[str, DictEntry]:
        if self._entries is None:
            with gc_paused():
                self._entries = {w: DictEntry(w, f, t, n) for w, f, t, n in zip(*self._columns)}
            self._columns = None  # the dict is the one copy from now on (a reader adds to it)
        return self._entries

    def columns(self) -> tuple[list[str], list[int | None], list[str | None], list[int | None]]:
        """Words, frequencies, tags and lines, one item per entry in order (do not change them)."""
        if self._entries is None:
            return self._columns
        entries = self._entries.values()
        return [e.word for e in entries], [e.freq for e in entries], [e.tag for e in entries], [e.line for e in entries]

    def __len__(self) -> int:
        return len(self._columns[0]) if self._entries is None else len(self._entries)

    def __iter__(self):
        return iter(self.entries.values())

    def __repr__(self) -> str:
        return f"Dictionary({self.source!r}, {len(self):,} entries)"

    def summary(self) -> str:
        """What was read, including what was merged or skipped: nothing leaves a file unsaid."""
        text = f"{self.source}: {len(self):,} entr{'y' if len(self) == 1 else 'ies'}"
        if self.duplicates:
            text += f"; {self.duplicates:,} repeated word{'s' if self.duplicates > 1 else ''} merged into the first entry"
        if self.blank_lines:
            text += f"; {self.blank_lines:,} blank line{'s' if self.blank_lines > 1 else ''} skipped"
        return text

    def where(self, entry: DictEntry) -> str:
        """``file:line`` (or ``input N``) of an entry, for error messages."""
        if self.source == "<list>":
            return f"input {entry.line}"
        return f"{self.source}:{entry.line}"

    def merged(self, other: "Dictionary") -> "Dictionary":
        """``self`` with ``other``'s words added. A word in both keeps ``self``'s entry unless
        ``other``'s line gives a frequency or a tag: a bare word the default dictionary knows keeps
        the weight the head learned it with (bench/user_dict.py measured the cost of overriding
        18,909 known words with the default frequency: -1.49 word F1 on Weibo)."""
        out = Dictionary(f"{self.source}+{other.source}", dict(self.entries), self.duplicates, self.blank_lines)
        for word, entry in other.entries.items():
            if word not in out.entries or entry.freq is not None or entry.tag is not None:
                out.entries[word] = entry
        return out


#: part-of-speech tags as user dictionaries carry them: jieba's, People's Daily's (PKU) and ICTCLAS / HanLP's
POS_TAGS = frozenset(
    "a ad ag al an b bl c cc d df dg dl e eng f g gb gbc gc gg gi gm gp h i j k l m mg mq n nb nba nbc nbp nf ng nh "
    "nhd nhm ni nic nis nit nl nm nmc nn nnd nnt nr nr1 nr2 nrf nrfg nrj nrt ns nsf nt ntc ntcb ntcf ntch nth nto "
    "nts ntu nx nz o p pba pbei q qg qt qv r rg rr ry rys ryt ryv rz rzs rzt rzv s t tg u ud ude1 ude2 ude3 udeng "
    "udh ug uguo uj ul ule ulian uls usuo uv uyy uz uzhe uzhi v vd vf vg vi vl vn vq vshi vx vyou w x xe xs xu xx "
    "y yg z zg".split()
)
#: the tags of whole names among them (jieba, PKU, ICTCLAS and HanLP agree on nr, ns and nt), and the entity types
#: a model may call them; nr1 and nr2 (a surname alone, a given name alone) name no entity
NAME_TAGS = {
    **dict.fromkeys(("nr", "nrf", "nrfg", "nrj", "nrt"), ("PER", "name")),
    **dict.fromkeys(("ns", "nsf"), ("LOC", "address")),
    **dict.fromkeys(("nt", "ntc", "ntcb", "ntcf", "ntch", "nth", "nto", "nts", "ntu"), ("ORG", "organization")),
}


def entity_type_of_tag(tag: str | None, types) -> str | None | bool:
    """What an entity model makes of a dictionary word's ``tag``: one of its ``types`` (the tag itself, or the type
    a name's part of speech stands for, as ``字节跳动 3 nt`` in a jieba dictionary), ``None`` for a word it does not
    force (no tag, or a part of speech that names no entity of the model), ``False`` for a tag it cannot read."""
    if tag is None or tag in types:
        return tag
    if tag.lower() not in POS_TAGS:  # Ng, Vg: People's Daily capitalises the morphemes
        return False
    return next((t for t in NAME_TAGS.get(tag, ()) if t in types), None)


def jieba_dictionary_path() -> Path:
    """jieba's installed ``dict.txt``: 349,046 words with frequency and part of speech."""
    import jieba

    return Path(os.path.dirname(jieba.__file__)) / "dict.txt"


def _problem_in_word(word: str) -> str | None:
    if len(word) > MAX_WORD_CHARS:
        return f"word of {len(word):,} characters (at most {MAX_WORD_CHARS}): is this a sentence?"
    for i, ch in enumerate(word):
        cat = unicodedata.category(ch)
        if cat == "Cc" or (cat == "Cf" and ch not in _ALLOWED_FORMAT) or cat == "Cs":
            return f"control or format character U+{ord(ch):04X} at character {i + 1} of the word"
    return None


def parse_line(line: str) -> tuple[str, int | None, str | None] | str:
    """``(word, freq, tag)`` of one non-blank dictionary line, or the problem as a string."""
    m = _SIMPLE_LINE.fullmatch(line)
    if m and len(m.group(1)) <= MAX_WORD_CHARS and not _has_bad_char(m.group(1)):
        word, freq, tag = m.groups()
        return word, int(freq) if freq else None, tag
    cols = [c.strip() for c in line.split("\t")] if "\t" in line else line.split()
    cols = [c for c in cols if c] if "\t" not in line else cols
    if not cols or not cols[0]:
        return "empty word before the tab"
    word, rest = cols[0], cols[1:]
    if len(rest) > 2:
        pairs = _tag_frequency_pairs(rest)
        if pairs is None:
            return f"{len(cols)} columns: expected word, then at most a frequency and a tag (or HanLP's TAG FREQ pairs)"
        problem = _problem_in_word(word)
        # HanLP's CustomDictionary: the word's parts of speech with their frequencies; its commonest, their total
        return problem or (word, sum(f for _, f in pairs), max(pairs, key=lambda pair: pair[1])[0])
    freq = tag = None
    for c in rest:
        if c.isascii() and c.isdigit():  # ASCII digits only: a frequency
            if freq is not None:
                return f"two frequencies ({freq} and {c})"
            value = int(c)
            if value < 1:
                return f"frequency must be a positive whole number, got {c!r}"
            freq = value
        elif re.fullmatch(r"[+-]?\d+(\.\d*)?([eE][+-]?\d+)?", c):
            return f"frequency must be a positive whole number, got {c!r}"
        elif _TAG.match(c):
            if tag is not None:
                return f"two tags ({tag} and {c})"
            tag = c
        else:
            return f"column {c!r} is neither a frequency (digits) nor a tag (e.g. nz, PER)"
    problem = _problem_in_word(word)
    return problem or (word, freq, tag)


def _tag_frequency_pairs(cells: list[str]) -> list[tuple[str, int]] | None:
    """``[(tag, freq), ...]`` of cells ``TAG FREQ TAG FREQ ...`` (HanLP's ``苹果 n 100 nz 50``), else None."""
    if len(cells) % 2:
        return None
    pairs = list(zip(cells[::2], cells[1::2]))
    if not all(_TAG.match(t) and not t.isdigit() and f.isascii() and f.isdigit() and int(f) > 0 for t, f in pairs):
        return None
    return [(t, int(f)) for t, f in pairs]


def read_dictionary(source: str | os.PathLike | Iterable, name: str | None = None) -> Dictionary:
    """A validated :class:`Dictionary` from a file path, or from a list of entries.

    A list holds strings (each read like a file line: ``"word"``, ``"word\\tPER"``, ``"word 5 nz"``)
    or ``(word, tag)`` pairs; errors then name ``input N`` (1-based) instead of ``file:line``."""
    if isinstance(source, (str, os.PathLike)):
        return _read_file(Path(source))
    if isinstance(source, (bytes, bytearray)) or not hasattr(source, "__iter__"):
        raise TypeError(f"user_dict must be a file path or a list of words, got {type(source).__name__}")
    out = Dictionary(name or "<list>")
    for n, item in enumerate(source, start=1):
        if isinstance(item, tuple) and len(item) == 2 and all(isinstance(x, str) for x in item):
            item = f"{item[0]}\t{item[1]}"
        if not isinstance(item, str):
            raise TypeError(f"user_dict input {n}: expected a string or a (word, type) pair, got {type(item).__name__}")
        if not item.strip():
            raise ValueError(f"user_dict input {n}: empty word")
        _add(out, item, n, lambda n, p: ValueError(f"user_dict input {n}: {p}"))
    return out


def _read_file(path: Path) -> Dictionary:
    if not path.exists():
        raise FileNotFoundError(f"{path}: dictionary file not found")
    if path.is_dir():
        raise DataFormatError(str(path), None, "is a folder, not a dictionary file")
    size = path.stat().st_size
    if size > MAX_DICTIONARY_BYTES:
        raise DataFormatError(str(path), None, f"{size:,} bytes: over the {MAX_DICTIONARY_BYTES:,}-byte limit for a dictionary")
    data = path.read_bytes()  # at most MAX_DICTIONARY_BYTES
    problem = sniff_not_utf8_text(data)
    if problem:
        raise DataFormatError(str(path), None, problem)
    with gc_paused():
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None  # read line by line, which names the line and the byte
        clean = _clean_file(path, text.removeprefix("\ufeff")) if text is not None else None  # a BOM is no part of a word
        return clean if clean is not None else _read_lines(path)


_MAX_LINE_BYTES = 4 * MAX_WORD_CHARS + 200


def sniff_not_utf8_text(data: bytes) -> str | None:
    """Why ``data`` is not a UTF-8 text file, or None: UTF-16 with or without a byte-order mark
    (Windows Notepad's "Unicode"), or binary content."""
    problem = utf16_problem(data)
    if problem:
        return problem
    head = data[:SNIFF_BYTES]
    kind = binary_file_kind(head)
    if kind and (b"\x00" in head or not head.decode("utf-8", "ignore").encode() == head):  # a spreadsheet, a zip: named
        return kind
    if b"\x00" in head:
        return "a binary file (it holds NUL bytes), not a UTF-8 text dictionary"
    controls = sum(b < 0x20 and b not in (0x09, 0x0A, 0x0D) for b in head)
    if controls > max(8, len(head) // 100):
        return f"a binary file ({controls:,} control bytes in its first {len(head):,}), not a UTF-8 text dictionary"
    return None


def _clean_file(path: Path, text: str) -> Dictionary | None:
    """The entries of a file whose every line is ``word [FREQ] [TAG]`` (no tab, no blank line),
    whose words are short enough, hold no control character and never repeat: found by one regex
    pass over the whole text (a 1 M-entry file in under a second). None for any other file, which
    :func:`_read_lines` then reads with every check and names the line of a problem."""
    if not text or "\t" in text or _has_bad_char(text, "\r\n"):
        return None
    lines = text.count("\n") + (not text.endswith("\n"))
    if max(map(len, text.split("\n"))) * 4 + 1 > _MAX_LINE_BYTES:
        return None  # a line that may be over the byte limit: counted exactly, line by line
    found = _SIMPLE_LINES.findall(text)
    if len(found) != lines:
        return None
    words = [w for w, _, _ in found]
    if max(map(len, words)) > MAX_WORD_CHARS or len(set(words)) != lines:
        return None  # a word listed twice: merged, and counted, line by line
    freqs = [int(f) if f else None for _, f, _ in found]
    tags = [t or None for _, _, t in found]
    return Dictionary(str(path), columns=(words, freqs, tags, list(range(1, lines + 1))))


def _read_lines(path: Path) -> Dictionary:
    out = Dictionary(str(path))
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, start=1):
            if len(raw) > _MAX_LINE_BYTES:
                raise DataFormatError(str(path), n, f"line of {len(raw):,} bytes: a dictionary line is a word and at most two columns")
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                advice = not_utf8_advice(raw + fh.read(SNIFF_BYTES))  # the lines after it help tell GB18030 from Big5
                raise DataFormatError(str(path), n, f"not valid UTF-8 (byte {e.start + 1} of the line){advice}") from None
            if n == 1 and line.startswith("\ufeff"):
                line = line[1:]  # a BOM, as Windows editors write: not part of the first word
            line = line.rstrip("\r\n")
            if not line.strip():
                out.blank_lines += 1
                continue
            _add(out, line, n, lambda n, p: DataFormatError(str(path), n, p))
    return out


def _add(out: Dictionary, line: str, n: int, error) -> None:
    parsed = parse_line(line)
    if isinstance(parsed, str):
        raise error(n, f"{parsed}: {clip(line)}")
    word, freq, tag = parsed
    first = out.entries.get(word)
    if first is None:
        out.entries[word] = DictEntry(word, freq, tag, n)
        return
    if tag is not None and first.tag is not None and tag != first.tag:
        raise error(n, f"{word!r} is tagged {tag} here but {first.tag} on {'input' if out.source == '<list>' else 'line'} {first.line}")
    out.duplicates += 1
    if first.tag is None and tag is not None or first.freq is None and freq is not None:
        out.entries[word] = DictEntry(word, first.freq or freq, first.tag or tag, first.line)
