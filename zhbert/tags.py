"""Tag schemes for character tagging: BIO (IOB2), BIOES and BMES.

One place knows which transitions are legal, how tags become spans and spans
become tags; readers, the CRF's constrained decoding and metrics all use it.
Tags are ``O`` or ``<prefix>-<TYPE>``; untyped BMES (word segmentation) uses bare
``B``/``M``/``E``/``S``.
"""

from __future__ import annotations

import bisect
from typing import Iterable, Sequence

SCHEMES = {
    "BIO": {"begin": "B", "inside": "I", "end": None, "single": None},
    "BIOES": {"begin": "B", "inside": "I", "end": "E", "single": "S"},
    "BMES": {"begin": "B", "inside": "M", "end": "E", "single": "S"},
}

__all__ = [
    "SCHEMES",
    "parse_tag",
    "labels_for",
    "check_sequence",
    "tags_to_spans",
    "spans_to_tags",
    "detect_scheme",
    "allowed_transitions",
    "continues_span",
    "token_tags",
    "bioes_tag",
]

#: BILOU (spaCy's Last and Unit) is BIOES under two other letters; files in it are read as BIOES
_BILOU_AS_BIOES = {"L": "E", "U": "S"}


def bioes_tag(tag: str) -> str:
    """``tag`` with BILOU's ``L-`` and ``U-`` prefixes written as BIOES's ``E-`` and ``S-``; any other tag as it is."""
    if len(tag) > 2 and tag[1] == "-" and tag[0] in _BILOU_AS_BIOES:
        return _BILOU_AS_BIOES[tag[0]] + tag[1:]
    return tag


def parse_tag(tag: str, scheme: str) -> tuple[str, str | None]:
    """Split a tag into (prefix, type); raise ``ValueError`` if not of the scheme."""
    if tag == "O" and scheme != "BMES-untyped":
        return "O", None
    if scheme == "BMES-untyped":
        if tag in ("B", "M", "E", "S"):
            return tag, None
        raise ValueError(f"tag {tag!r} is not one of B, M, E, S")
    spec = SCHEMES[scheme]
    prefixes = {p for p in spec.values() if p}
    prefix, sep, typ = tag.partition("-")
    if not sep or prefix not in prefixes or not typ:
        raise ValueError(f"tag {tag!r} is not valid in {scheme} (expected O or {'/'.join(sorted(prefixes))}-TYPE)")
    return prefix, typ


def labels_for(types: Iterable[str], scheme: str) -> list[str]:
    """All tags of a scheme over ``types``, ``O`` first, stable order."""
    if scheme == "BMES-untyped":
        return ["B", "M", "E", "S"]
    spec = SCHEMES[scheme]
    prefixes = [spec[k] for k in ("begin", "inside", "end", "single") if spec[k]]
    return ["O"] + [f"{p}-{t}" for t in sorted(set(types)) for p in prefixes]


def entity_types(labels: Iterable[str]) -> list[str]:
    """The entity types a label list names (``B-PER``, ``I-PER``, ``S-ORG`` -> ``["ORG", "PER"]``): the inverse of :func:`labels_for`."""
    return sorted({label.split("-", 1)[1] for label in labels if "-" in label})


def _state(prefix: str, scheme: str) -> str:
    """'open' if a span continues after this tag, 'closed' otherwise."""
    if scheme == "BIO":
        return "closed" if prefix == "O" else "open-bio"
    if prefix in ("B", "I", "M"):
        return "open"
    return "closed"


def check_sequence(tags: Sequence[str], scheme: str) -> tuple[int, str] | None:
    """First illegal position ``(index, problem)`` in a tag sequence, or None."""
    scheme_key = scheme
    prev_prefix, prev_type = "O" if scheme != "BMES-untyped" else "S", None
    for i, tag in enumerate(tags):
        try:
            prefix, typ = parse_tag(tag, scheme_key)
        except ValueError as e:
            return i, str(e)
        prev_open = scheme != "BIO" and prev_prefix in ("B", "I", "M")
        if scheme == "BIO":
            if prefix == "I" and (prev_prefix == "O" or prev_type != typ):
                return i, f"{tag} follows {'O' if prev_prefix == 'O' else prev_prefix + '-' + str(prev_type)}; I-X must continue B-X or I-X"
        else:
            inside = SCHEMES["BMES" if scheme.startswith("BMES") else scheme]["inside"]
            if prefix in (inside, "E"):
                if not prev_open or prev_type != typ:
                    return i, f"{tag} does not continue an open span (previous tag {tags[i - 1] if i else 'start'})"
            elif prev_open:
                return i, f"{tag} starts before the span opened by {tags[i - 1]} is closed with E"
        prev_prefix, prev_type = prefix, typ
    if scheme != "BIO" and prev_prefix in ("B", "I", "M"):
        return len(tags) - 1, f"sequence ends inside an open span ({tags[-1]}); expected E or S"
    return None


def tags_to_spans(tags: Sequence[str], scheme: str) -> list[tuple[str | None, int, int]]:
    """Spans ``(type, start, end)`` (end exclusive) of a *valid* tag sequence."""
    spans: list[tuple[str | None, int, int]] = []
    start, cur = -1, None
    for i, tag in enumerate(tags):
        prefix, typ = parse_tag(tag, scheme)
        if prefix in ("B", "S") or prefix == "O" or (scheme == "BIO" and prefix == "I" and (start < 0 or typ != cur)):
            if start >= 0 and scheme == "BIO":
                spans.append((cur, start, i))
            start, cur = -1, None
        if prefix == "S":
            spans.append((typ, i, i + 1))
        elif prefix == "B" or (scheme == "BIO" and prefix == "I" and start < 0):
            start, cur = i, typ
        elif prefix == "E" and start >= 0:
            spans.append((cur, start, i + 1))
            start, cur = -1, None
    if start >= 0 and scheme == "BIO":
        spans.append((cur, start, len(tags)))
    return spans


def spans_to_tags(length: int, spans: Iterable[tuple[str | None, int, int]], scheme: str) -> list[str]:
    """Tags for ``length`` positions from non-overlapping spans (end exclusive)."""
    untyped = scheme == "BMES-untyped"
    tags = ["S" if untyped else "O"] * length
    spec = SCHEMES["BMES" if untyped else scheme]
    for typ, s, e in sorted(spans, key=lambda x: x[1]):
        if not 0 <= s < e <= length:
            raise ValueError(f"span ({s}, {e}) outside 0..{length}")
        if any((t != ("S" if untyped else "O")) for t in tags[s:e]):
            raise ValueError(f"span ({typ}, {s}, {e}) overlaps another span")
        suffix = "" if untyped else f"-{typ}"
        if e - s == 1 and spec["single"]:
            tags[s] = spec["single"] + suffix
            continue
        tags[s] = spec["begin"] + suffix
        for k in range(s + 1, e):
            tags[k] = spec["inside"] + suffix
        if spec["end"]:
            tags[e - 1] = spec["end"] + suffix
    return tags


def continues_span(label: str, scheme: str) -> bool:
    """Whether a tag continues a span opened before it (``I``/``M``/``E``): no window may start there."""
    return parse_tag(label, scheme)[0] in ("I", "M", "E")


def token_tags(char_tags: Sequence[str], token_starts: Sequence[int], scheme: str) -> list[str]:
    """Tags for tokens from tags for characters; ``token_starts``: each token's first character, ascending.

    A token takes the span its first character lies in, so a word piece covering a whole word
    (``1998``, ``wto``) is ``S``, not ``B`` followed by the next word's tag: taking the first
    character's tag alone made a gold sequence a CRF forbids (B, S) in 14% of the PKU + Weibo
    training windows, and the CRF could never fit them. The token tags are valid whenever the
    character tags are. A span all of whose characters lie inside a token that starts in an
    earlier span has no token of its own and joins that one (a piece cannot be cut).
    """
    spans = []
    for typ, s, e in lenient_spans(char_tags, scheme):
        a, b = bisect.bisect_left(token_starts, s), bisect.bisect_left(token_starts, e)
        if a < b:
            spans.append((typ, a, b))
    return spans_to_tags(len(token_starts), spans, scheme)


def detect_scheme(tags: Iterable[str]) -> str:
    """Guess BIO / BIOES / BMES from the prefixes used in a file's tags."""
    prefixes = {t.partition("-")[0] for t in tags if t != "O"}
    if "M" in prefixes:
        return "BMES"
    if "E" in prefixes or ("S" in prefixes and "I" not in prefixes):
        return "BIOES"
    # B and I without any E: BIO, so a stray S- is reported on its own line as an unknown tag
    # instead of switching the whole file to BIOES and blaming the first unclosed B-
    return "BIO"


def allowed_transitions(labels: Sequence[str], scheme: str) -> tuple[list[bool], list[list[bool]], list[bool]]:
    """Masks for constrained decoding: (allowed first label, allowed i->j, allowed last label)."""
    start = [_legal_pair_from_start(l, scheme) for l in labels]
    trans = [[_legal_pair(a, b, scheme) for b in labels] for a in labels]
    end = [not (scheme != "BIO" and _opens(l, scheme)) for l in labels]
    return start, trans, end


def _opens(label: str, scheme: str) -> bool:
    return parse_tag(label, scheme)[0] in ("B", "I", "M")


def _legal_pair_from_start(label: str, scheme: str) -> bool:
    prefix, _ = parse_tag(label, scheme)
    if scheme == "BIO":
        return prefix != "I"
    return prefix not in ("I", "M", "E")


def _legal_pair(a: str, b: str, scheme: str) -> bool:
    # with a valid a, the pair is legal iff b is legal after a; a may itself open a span
    pa, ta = parse_tag(a, scheme)
    pb, tb = parse_tag(b, scheme)
    if scheme == "BIO":
        return pb != "I" or (pa in ("B", "I") and ta == tb)
    a_open = pa in ("B", "I", "M")
    if pb in ("I", "M", "E"):
        return a_open and ta == tb
    return not a_open


def lenient_spans(tags: Sequence[str], scheme: str) -> list[tuple[str | None, int, int]]:
    """Spans of a possibly *invalid* predicted sequence (softmax decoding), conlleval-style.

    An ``I``/``M`` that continues no open span of its type starts one; an ``E``
    that closes none is a one-token span; ``B`` closes any open span. For valid
    sequences the result equals :func:`tags_to_spans`.
    """
    if scheme == "BMES-untyped" and set(tags) <= _BMES:
        return _word_spans(tags)
    return _lenient_loop(tags, scheme)


_BMES = frozenset("BMES")


def _word_spans(tags: Sequence[str]) -> list[tuple[None, int, int]]:
    """:func:`lenient_spans` for segmentation tags in one pass: a word starts at every ``B``
    or ``S`` and after every ``E`` or ``S`` (an ``M``/``E`` after a closed word opens one),
    so the words are the runs between those cuts (tests/test_tags.py checks it equals the
    general rules on random sequences)."""
    n = len(tags)
    cuts = [0, *(i for i in range(1, n) if tags[i] in "BS" or tags[i - 1] in "ES"), n] if n else []
    return [(None, a, b) for a, b in zip(cuts, cuts[1:])]


def _lenient_loop(tags: Sequence[str], scheme: str) -> list[tuple[str | None, int, int]]:
    spans: list[tuple[str | None, int, int]] = []
    open_type: str | None = None
    open_start = -1

    def close(end: int) -> None:
        nonlocal open_start
        if open_start >= 0:
            spans.append((open_type, open_start, end))
        open_start = -1

    parsed = {t: parse_tag(t, scheme) for t in set(tags)}  # a handful of distinct tags, parsed once
    for i, tag in enumerate(tags):
        prefix, typ = parsed[tag]
        if prefix == "O":
            close(i)
        elif prefix == "B":
            close(i)
            open_type, open_start = typ, i
        elif prefix in ("I", "M"):
            if open_start < 0 or open_type != typ:
                close(i)
                open_type, open_start = typ, i
        elif prefix == "E":
            if open_start >= 0 and open_type == typ:
                close(i + 1)
            else:
                close(i)
                spans.append((typ, i, i + 1))
        else:  # S
            close(i)
            spans.append((typ, i, i + 1))
    close(len(tags))
    return spans
