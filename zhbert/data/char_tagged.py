"""Character-per-line tagged files (CoNLL style): NER in BIO, BIOES or BMES.

One ``char<sep>tag`` per line, a blank line between sentences (a CoNLL-2003 document marker,
``-DOCSTART-`` and its columns, ends one too). Used by People's
Daily NER (space), MSRA and Weibo NER (tab), Resume NER (space, BMES). Weibo NER's
second-version files write each character followed by a digit (its position in
its word, ``科0``): ``position_digits=True`` strips it.

Unlike ``datasets``' built-in ``conll`` loader, a wrong column count, an unknown
tag or an illegal transition (``I-LOC`` after ``O``, an unclosed ``B-`` in BMES)
is an error naming the file and line, never padded or cut.
"""

from __future__ import annotations

from typing import Iterator

import regex
from datasets import ClassLabel, Dataset, Features, List, Value

from ..errors import DataFormatError, ErrorPolicy, clip, logger
from ..tags import bioes_tag, check_sequence, detect_scheme, labels_for, parse_tag, tags_to_spans
from .build import build_dataset
from .source import iter_lines, read_zip_member

__all__ = ["read_char_tagged", "read_msra_ner", "is_document_marker", "ENTITY_FEATURE", "MSRA_TRAIN_SENTENCES", "DECLARED"]

ENTITY_FEATURE = List({"type": Value("string"), "start": Value("int32"), "end": Value("int32"), "text": Value("string")})

# SOURCES.md, "MSRA NER: train/test rule": dh_msra.txt is zh-NER-TF train_data
# followed by test_data; train is the first 50,658 sentences.
MSRA_TRAIN_SENTENCES = 50658
_CLUSTER = regex.compile(r"\X")
_LEADING_CHAR = regex.compile(r"\ufffd+|\X")

# each public dataset's declared scheme and entity types: anything else in its files is an error
# (an undeclared "B-LCO" would otherwise become an eleventh entity type without a word)
DECLARED = {
    "peoples_daily_ner": ("BIO", ["LOC", "ORG", "PER"]),
    "msra_ner": ("BIO", ["LOC", "ORG", "PER"]),
    "weibo_ner": ("BIO", ["GPE.NAM", "GPE.NOM", "LOC.NAM", "LOC.NOM", "ORG.NAM", "ORG.NOM", "PER.NAM", "PER.NOM"]),
    "resume_ner": ("BMES", ["CONT", "EDU", "LOC", "NAME", "ORG", "PRO", "RACE", "TITLE"]),
}


def _features(labels: list[str]) -> Features:
    return Features(
        {
            "id": Value("int32"),
            "text": Value("string"),
            "tokens": List(Value("string")),
            "tags": List(ClassLabel(names=labels)),
            "entities": ENTITY_FEATURE,
        }
    )


#: the line CoNLL-2003 files put between documents (``-DOCSTART- -X- -X- O``): a break, not a token
DOCUMENT_MARKER = "-DOCSTART-"


def is_document_marker(line: str) -> bool:
    """Whether a line of a CoNLL file is a document marker, read as a sentence break."""
    return line.startswith(DOCUMENT_MARKER) and line.split(maxsplit=1)[0] == DOCUMENT_MARKER


def _split_line(line: str, sep: str | None, name: str, lineno: int, position_digits: bool) -> tuple[str, str]:
    parts = line.split(sep) if sep is not None else line.split()
    if sep is None and len(parts) == 1 and len(line) > 2 and line[0].isspace() and line[1] in " \t":
        # a space of the text as its own token (" O", "\u3000 O"), as `for ch in text: print(ch, tag)` writes it
        parts = [line[0], parts[0]]
    if len(parts) != 2:
        # a CoNLL file with more columns (a POS or word-boundary column between): keep the first and the tag
        more = ': keep the character and its tag (awk \'{print NF ? $1 " " $NF : ""}\' FILE > NEW_FILE)' if len(parts) > 2 else ""
        raise DataFormatError(
            name, lineno, f"expected 2 columns (char{'<TAB>' if sep == chr(9) else ' '}tag), found {len(parts)}: {clip(line)}{more}"
        )
    char, tag = parts[0], bioes_tag(parts[1])
    if position_digits:
        # Weibo NER's second release writes each character with its position in the jieba word,
        # which reaches two digits inside long URLs ("p10"): the character is the first grapheme
        # cluster (or a broken emoji's run of U+FFFD), the rest must be the position
        first = _LEADING_CHAR.match(char)
        position = char[first.end() :] if first else ""
        if not position or not position.isascii() or not position.isdigit():
            raise DataFormatError(name, lineno, f"expected a character followed by its position digits, found {clip(char)}")
        char = first.group()
    # one character per line: a few real lines hold more than one code point for one source
    # character (a grapheme cluster, or Weibo NER's broken emoji as two U+FFFD); it stays one
    # token. Two characters ("中国 B-LOC") would silently give one tag to a whole word.
    if len(char) > 1 and set(char) != {"\ufffd"} and len(_CLUSTER.findall(char)) != 1:
        raise DataFormatError(name, lineno, f"expected one character per line, found {len(char)}: {clip(char)}")
    return char, tag


MAX_SENTENCE_CHARS = 200_000  # as for a line of segmented text; real sentences have at most a few thousand


def _sentences(lines, name: str, sep: str | None, position_digits: bool) -> Iterator[tuple[int, list[str], list[str], list[int]]]:
    chars: list[str] = []
    tags: list[str] = []
    linenos: list[int] = []
    for lineno, line in lines:
        if not line.strip() or is_document_marker(line):
            if chars:
                yield linenos[0], chars, tags, linenos
                chars, tags, linenos = [], [], []
            continue
        if len(chars) >= MAX_SENTENCE_CHARS:  # checked while reading: the sentence is never held whole
            raise DataFormatError(
                name,
                linenos[0],
                f"a sentence of more than {MAX_SENTENCE_CHARS:,} characters (no blank line from here to line {lineno}); "
                "end each sentence with a blank line",
            )
        c, t = _split_line(line, sep, name, lineno, position_digits)
        chars.append(c)
        tags.append(t)
        linenos.append(lineno)
    if chars:
        yield linenos[0], chars, tags, linenos


def _merge_split_spans(sentences, scheme: str, merged: list[int]):
    """Join a sentence that ends inside an open span with the next one.

    Resume NER's release breaks sentences at 。 even inside an organisation name
    (``俄罗斯圣。彼得堡…``); the span continues on the next sentence. ``merged``
    collects the line numbers where this happened so callers can report them.
    """
    pending = None
    for sent in sentences:
        if pending is not None:
            first, chars, tags, linenos = pending
            sent = (first, chars + sent[1], tags + sent[2], linenos + sent[3])
            pending = None
        if scheme != "BIO" and sent[2] and sent[2][-1].partition("-")[0] in ("B", "I", "M"):
            merged.append(sent[3][-1])
            pending = sent
            continue
        yield sent
    if pending is not None:
        yield pending


_PREFIX_OTHER_MARK = regex.compile(r"([BIMESbimes])[_:.](\S+)")  # B_PER, B:PER
_PREFIX_AFTER = regex.compile(r"(\S+?)[-_]([BIMES])")  # PER-B


def _tag_form_hint(tag: str) -> str:
    """How to write ``tag``, when it is a prefix and a type in another form than ``B-PER``."""
    if m := _PREFIX_OTHER_MARK.fullmatch(tag):
        return f": write tags as PREFIX-TYPE ({m[1].upper()}-{m[2]})"
    if m := _PREFIX_AFTER.fullmatch(tag):
        return f": write tags as PREFIX-TYPE, the prefix first ({m[2]}-{m[1]})"
    if len(tag) > 2 and tag[1] == "-" and tag[0] in "bimes":
        return f": prefixes are capitals ({tag[0].upper()}{tag[1:]})"
    if tag in ("o", "0"):  # lower-case tags throughout, or a digit zero typed for the letter
        return ": the tag outside every entity is a capital O"
    return ""


def _repair_bio(tags: list[str], repaired: list[int], linenos: list[int]) -> list[str]:
    """conlleval semantics: an ``I-X`` that continues no ``X`` span starts one."""
    out = list(tags)
    for i, t in enumerate(out):
        if t.startswith("I-"):
            prev = out[i - 1] if i else "O"
            if prev == "O" or prev[2:] != t[2:]:
                out[i] = "B-" + t[2:]
                repaired.append(linenos[i])
    return out


def _examples(
    sentences, name: str, scheme: str, labels: set[str], policy: ErrorPolicy, start_id: int = 0, repaired: list[int] | None = None
):
    for k, (first, chars, tags, linenos) in enumerate(sentences):
        if repaired is not None and scheme == "BIO":
            tags = _repair_bio(tags, repaired, linenos)
        try:
            for t, ln in zip(tags, linenos):
                if t not in labels:
                    problem = f"unknown tag {t!r} for {scheme} (known: {', '.join(sorted(labels))}){_tag_form_hint(t)}"
                    raise DataFormatError(name, ln, problem)
            bad = check_sequence(tags, scheme)
            if bad is not None:
                i, problem = bad
                raise DataFormatError(name, linenos[i], f"invalid {scheme} sequence: {problem}")
        except DataFormatError as e:
            policy.handle(e)
            continue
        text = "".join(chars)
        starts = [0]
        for c in chars:
            starts.append(starts[-1] + len(c))
        entities = []
        for typ, s, e in tags_to_spans(tags, scheme):
            cs, ce = starts[s], starts[e]
            entities.append({"type": typ, "start": cs, "end": ce, "text": text[cs:ce]})
        yield {"id": start_id + k, "text": text, "tokens": chars, "tags": tags, "entities": entities}


def _scan(lines, name, sep, position_digits):
    """Tag set of a file (for ClassLabel names) in one fast pass: ``{tag: (count, first line)}``."""
    found: dict[str, list[int]] = {}
    for lineno, line in lines:
        if line.strip() and not is_document_marker(line):
            tag = _split_line(line, sep, name, lineno, position_digits)[1]
            seen = found.setdefault(tag, [0, lineno])
            seen[0] += 1
    return found


# An entity type read from a file (no types given) that is rare and one edit (or one swap of
# neighbours) away from a common one is almost always a typo (B-LCO among thousands of B-LOC):
# it must be named explicitly (``types=[...]``) to be accepted.
RARE_TYPE_COUNT = 3


def _one_edit_apart(a: str, b: str) -> bool:
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def _check_inferred_types(found: dict[str, list[int]], scheme: str, path: str) -> list[str]:
    per_type: dict[str, list[int]] = {}
    for tag, (count, line) in found.items():
        typ = _type_or_none(tag, scheme, path)
        if typ:
            seen = per_type.setdefault(typ, [0, line])
            seen[0] += count
            seen[1] = min(seen[1], line)
    for typ, (count, line) in sorted(per_type.items(), key=lambda item: item[1][1]):
        if count > RARE_TYPE_COUNT:
            continue
        common = [t for t, (c, _) in per_type.items() if c > 10 * count and _one_edit_apart(typ, t)]
        if common:
            raise DataFormatError(
                path,
                line,
                f"entity type {typ!r} ({count} tagged character(s), first here) looks like a typo of {common[0]!r} "
                f"({per_type[common[0]][0]:,}); pass types=[...] naming it to accept it",
            )
    if per_type:
        counts = ", ".join(f"{t} {c:,}" for t, (c, _) in sorted(per_type.items()))
        logger.info("%s: entity types read from the file (tagged characters): %s", path, counts)
    return sorted(per_type)


def _gen_file(paths, policy, scheme, labels, sep, position_digits, merge_split_spans, repair_bio):
    (path,) = paths
    sentences = _sentences(iter_lines(path), path, sep, position_digits)
    if merge_split_spans:
        merged: list[int] = []
        sentences = _merge_split_spans(sentences, scheme, merged)
    repaired: list[int] | None = [] if repair_bio else None
    yield from _examples(sentences, path, scheme, set(labels), policy, repaired=repaired)
    if repaired:
        logger.info("%s: %d I- tag(s) continuing no span read as B- (lines %s)", path, len(repaired), repaired[:5])
    if merge_split_spans and merged:
        logger.info("%s: joined %d sentence(s) broken inside an entity (lines %s)", path, len(merged), merged[:5])


def read_char_tagged(
    path: str,
    scheme: str = "auto",
    types: list[str] | None = None,
    sep: str | None = None,
    position_digits: bool = False,
    merge_split_spans: bool = False,
    repair_bio: bool = False,
    on_error: str = "raise",
) -> Dataset:
    """Read a char-per-line tagged file into ``id, text, tokens, tags, entities``.

    ``types``: the entity types allowed; when None they are taken from the file.
    ``sep``: the column separator, default any whitespace.
    ``merge_split_spans``: join a sentence that ends inside an open BMES/BIOES span
    with the next one (Resume NER's train file has 2); otherwise it is an error.
    ``repair_bio``: read an ``I-X`` that continues no ``X`` span as ``B-X`` (the
    conlleval convention; Weibo NER's 2nd-version train has 8 such posts);
    otherwise it is an error.
    """
    path = str(path)
    from pathlib import Path

    declared = DECLARED.get(Path(path).parent.name)  # a known public dataset: its declared tags only
    if declared is not None:
        scheme = declared[0] if scheme == "auto" else scheme
        types = declared[1] if types is None else types
    if scheme == "auto" or types is None:
        found = _scan(iter_lines(path), path, sep, position_digits)
        if scheme == "auto":
            scheme = detect_scheme(set(found))
        if types is None:
            types = _check_inferred_types(found, scheme, path)
    labels = labels_for(types, scheme)
    return build_dataset(
        _gen_file,
        _features(labels),
        [path],
        on_error=on_error,
        scheme=scheme,
        labels=labels,
        sep=sep,
        position_digits=position_digits,
        merge_split_spans=merge_split_spans,
        repair_bio=repair_bio,
    )


def _type_or_none(tag: str, scheme: str, path: str) -> str | None:
    try:
        return parse_tag(tag, scheme)[1]
    except ValueError:
        return None  # reported with its line when the file is read


def _gen_msra(paths, policy, split, labels, repair_bio):
    (member_path,) = paths
    zip_path, member = member_path.split("!", 1)
    name, text = read_zip_member(zip_path, member)
    sentences = _sentences(iter_lines(name, text), name, "\t", False)
    # the split counts every sentence of the file, valid or not
    chosen = (sent for k, sent in enumerate(sentences) if (k < MSRA_TRAIN_SENTENCES) == (split == "train"))
    repaired: list[int] | None = [] if repair_bio else None
    yield from _examples(chosen, name, "BIO", set(labels), policy, repaired=repaired)
    if repaired:
        logger.info("%s: %d I- tag(s) continuing no span read as B- (lines %s)", name, len(repaired), repaired[:5])


def read_msra_ner(zip_path: str, split: str, repair_bio: bool = True, on_error: str = "raise") -> Dataset:
    """MSRA NER from SophonPlus ``dh_msra.zip`` split by the rule in SOURCES.md.

    ``split="train"``: the first 50,658 sentences; ``split="test"``: the rest.
    (``msra_test_bio.txt`` is another rendering of the same test set; read it with
    :func:`read_char_tagged`.) ``repair_bio`` as in :func:`read_char_tagged`:
    the release has a few ``I-PER`` tags after ``O``.
    """
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    labels = labels_for(["LOC", "ORG", "PER"], "BIO")
    return build_dataset(
        _gen_msra, _features(labels), [f"{zip_path}!dh_msra.txt"], on_error=on_error, split=split, labels=labels, repair_bio=repair_bio
    )
