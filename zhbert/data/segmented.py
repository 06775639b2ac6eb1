"""Word-segmented text (SIGHAN-2005 gold, NLPCC-2016 Weibo): words split by spaces.

SIGHAN files separate words by one or two ASCII spaces, the AS corpus by the
ideographic space U+3000; ``str.split()`` handles all of them. Each example gets
character BMES tags (untyped) for training segmenters. Unsegmented raw files (the
test inputs) are read with :func:`read_lines`.
"""

from __future__ import annotations

import re

from datasets import ClassLabel, Dataset, Features, List, Value

from ..errors import DataFormatError, clip
from ..tags import labels_for
from .build import build_dataset
from .source import iter_lines

__all__ = ["read_segmented", "read_lines", "words_to_bmes", "SEGMENTED_FEATURES", "MAX_LINE_CHARS"]

#: the longest real line (SIGHAN, NLPCC) has a few thousand characters
MAX_LINE_CHARS = 200_000

BMES = labels_for([], "BMES-untyped")
SEGMENTED_FEATURES = Features(
    {
        "id": Value("int32"),
        "text": Value("string"),
        "words": List(Value("string")),
        "tokens": List(Value("string")),
        "tags": List(ClassLabel(names=BMES)),
    }
)


def words_to_bmes(words: list[str]) -> list[str]:
    tags: list[str] = []
    for w in words:
        tags.extend(["S"] if len(w) == 1 else ["B"] + ["M"] * (len(w) - 2) + ["E"])
    return tags


_POS_TAGGED = re.compile(r"\S+/[A-Za-z]{1,5}")
# a word with two or more of / | between Chinese characters: words joined by another separator than a
# space (迈向/充满/希望), which a whitespace split reads as one long word; one such mark (和/或) is a word's own
_OTHER_SEPARATOR = re.compile(r"[\u3400-\u9fff]([/|／｜])[\u3400-\u9fff]+\1[\u3400-\u9fff]")


def _not_segmented(line: str, words: list[str]) -> str | None:
    """Why a line of another format must not pass as segmented text (it would, silently: a
    word/POS file's ``迈向/v`` or a TSV's columns are "words" to a whitespace split)."""
    if "\t" in line:
        return "a tab: this looks like a TSV file (columns), not words separated by spaces"
    tagged = sum(bool(_POS_TAGGED.fullmatch(w)) for w in words)
    if tagged >= 2 and tagged * 2 >= len(words):
        return (
            f"{tagged} of {len(words)} words look like word/POS pairs ({words[0]!r}): a file of word/POS items trains with --format wordtag"
        )
    joined = next((m for m in map(_OTHER_SEPARATOR.search, words) if m), None)
    if joined:
        mark = joined.group(1)
        return f"{clip(joined.string)} looks like words separated by {mark!r}: separate words by spaces instead"
    # 迈向 / 充满 / 希望: the marks would be words of the sentence
    if len(words) >= 5 and len(set(words[1::2])) == 1 and words[1] in ("/", "|", "／", "｜"):
        return f"every other word is {words[1]!r} ({clip(line)}): separate words by spaces alone"
    return None


def _gen_segmented(paths, policy, keep_empty):
    (path,) = paths
    for lineno, line in iter_lines(path):
        if len(line) > MAX_LINE_CHARS:  # before split(): 50 MB of words would take gigabytes as a list
            problem = f"line of {len(line):,} characters: over the {MAX_LINE_CHARS:,} a sentence may have"
            policy.handle(DataFormatError(path, lineno, problem))
            continue
        words = line.split()
        problem = _not_segmented(line, words) if words else None
        if problem:
            policy.handle(DataFormatError(path, lineno, problem))  # raises, or skips with a report (on_error="skip")
            continue
        if not words:
            if keep_empty:
                yield {"id": lineno, "text": "", "words": [], "tokens": [], "tags": []}
            continue
        text = "".join(words)
        yield {"id": lineno, "text": text, "words": words, "tokens": list(text), "tags": words_to_bmes(words)}


def read_segmented(path: str, keep_empty: bool = False, on_error: str = "raise") -> Dataset:
    """One sentence per line, words separated by whitespace.

    ``id`` is the line number. Blank lines carry no words; they are kept as empty
    rows only with ``keep_empty=True`` (so line-aligned files stay aligned).
    """
    return build_dataset(_gen_segmented, SEGMENTED_FEATURES, [str(path)], on_error=on_error, keep_empty=keep_empty)


def _gen_lines(paths, policy, keep_empty):
    (path,) = paths
    for lineno, line in iter_lines(path):
        if not line.strip() and not keep_empty:
            continue
        yield {"id": lineno, "text": line}


def read_lines(path: str, keep_empty: bool = True, on_error: str = "raise") -> Dataset:
    """Raw text, one example per line (``id`` = line number)."""
    features = Features({"id": Value("int32"), "text": Value("string")})
    return build_dataset(_gen_lines, features, [str(path)], on_error=on_error, keep_empty=keep_empty)
