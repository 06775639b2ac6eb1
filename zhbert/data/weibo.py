"""Labelled Weibo posts for post tagging.

* SMP2020-EWECT ("usual", "virus"): single-label, six emotions. Two forms: UER's
  TSV (header ``label<TAB>text_a``, numeric labels) and the original JSON array
  of ``{"id", "content", "label"}`` (label names; "neural" is the release's
  spelling of neutral).
* NLPCC-2014 Weibo emotion XML: a primary and an optional secondary emotion per
  post, i.e. multi-label (``none`` means no emotion).
* CLUE emotion2020: JSON lines ``{"id", "content", "label"}``, seven emotions.
"""

from __future__ import annotations

import xml.sax
from typing import Iterable

from datasets import ClassLabel, Dataset, Features, List, Value

from ..errors import DataFormatError, clip
from .build import build_dataset
from .jsonio import INT32_MAX, is_ascii_number, iter_json_records, record_id, require
from .peoples_daily import overlap_key
from .source import iter_lines, read_text

__all__ = [
    "EWECT_LABELS",
    "NLPCC2014_LABELS",
    "CLUE_EMOTION_LABELS",
    "read_smp2020_ewect",
    "read_nlpcc2014_emotion",
    "read_clue_emotion",
    "drop_overlap",
]

# order of UER's labels.json: 0 neutral, 1 angry, 2 happy, 3 sad, 4 fear, 5 surprise
EWECT_LABELS = ["neutral", "angry", "happy", "sad", "fear", "surprise"]
NLPCC2014_LABELS = ["anger", "disgust", "fear", "happiness", "like", "sadness", "surprise"]
CLUE_EMOTION_LABELS = ["anger", "disgust", "fear", "happiness", "like", "sadness", "surprise"]
_EWECT_ALIASES = {"neural": "neutral"}


def _single_features(names: list[str]) -> Features:
    return Features({"id": Value("int32"), "text": Value("string"), "label": ClassLabel(names=names)})


def _gen_ewect(paths, policy):
    (path,) = paths
    text = read_text(path)
    if text.lstrip().startswith("["):
        yield from _json_posts(text, path, policy, EWECT_LABELS, _EWECT_ALIASES)
        return
    lines = iter_lines(path, text)
    _, header = next(lines)
    if header.split("\t") != ["label", "text_a"]:
        raise DataFormatError(path, 1, f"expected header 'label<TAB>text_a' or a JSON array, found {clip(header)}")
    for lineno, line in lines:
        try:
            label, sep, content = line.partition("\t")
            if not sep:
                raise DataFormatError(path, lineno, "expected 2 tab-separated columns (label, text), found 1")
            if "\t" in content:
                raise DataFormatError(path, lineno, f"expected 2 tab-separated columns, found {line.count(chr(9)) + 1}")
            if not is_ascii_number(label) or int(label) >= len(EWECT_LABELS):
                raise DataFormatError(path, lineno, f"unknown label {clip(label)} (expected 0-{len(EWECT_LABELS) - 1})")
            if not content.strip():
                raise DataFormatError(path, lineno, "empty post")
        except DataFormatError as e:
            policy.handle(e)
            continue
        yield {"id": lineno, "text": content, "label": int(label)}


def read_smp2020_ewect(path: str, on_error: str = "raise") -> Dataset:
    """SMP2020-EWECT posts (TSV or JSON array) as ``id, text, label``."""
    return build_dataset(_gen_ewect, _single_features(EWECT_LABELS), [str(path)], on_error=on_error)


def _json_posts(text: str, path: str, policy, names: list[str], aliases: dict[str, str]):
    """``{"id", "content", "label"}`` records (JSON lines or one array)."""
    for line, rec in iter_json_records(text, path):
        try:
            content = require(rec, "content", str, path, line)
            raw = require(rec, "label", str, path, line)
            name = aliases.get(raw, raw)
            if name not in names:
                raise DataFormatError(path, line, f"unknown label {clip(raw)} (expected {', '.join(names)})")
            rid = record_id(rec["id"], path, line) if "id" in rec else line
            if not content.strip():
                raise DataFormatError(path, line, "empty post")
        except DataFormatError as e:
            policy.handle(e)
            continue
        yield {"id": rid, "text": content, "label": names.index(name)}


def _gen_clue(paths, policy):
    (path,) = paths
    yield from _json_posts(read_text(path), path, policy, CLUE_EMOTION_LABELS, {})


def read_clue_emotion(path: str, on_error: str = "raise") -> Dataset:
    """CLUE emotion2020 JSON lines as ``id, text, label``."""
    return build_dataset(_gen_clue, _single_features(CLUE_EMOTION_LABELS), [str(path)], on_error=on_error)


class _WeiboHandler(xml.sax.ContentHandler):
    """Collects ``<weibo>`` elements with their line numbers (ElementTree has none)."""

    def __init__(self, path: str, policy):
        super().__init__()
        self.path, self.policy = path, policy
        self.rows: list[dict] = []
        self.cur: dict | None = None
        self.sentence: list[str] | None = None
        self.locator = None

    def setDocumentLocator(self, locator):  # noqa: N802 (SAX API)
        self.locator = locator

    def _line(self) -> int:
        return self.locator.getLineNumber() if self.locator else None

    def startElement(self, name, attrs):  # noqa: N802
        if name == "weibo":
            line = self._line()
            labels, bad = [], None
            for key in ("emotion-type1", "emotion-type2"):
                v = attrs.get(key, "none")
                if v == "none":
                    continue
                if v not in NLPCC2014_LABELS:
                    bad = f"unknown {key} {v!r} (expected {', '.join(NLPCC2014_LABELS)} or none)"
                elif key == "emotion-type2" and not labels:
                    bad = "emotion-type2 is set but emotion-type1 is none"
                elif v in labels:
                    continue  # a few test posts repeat the primary emotion: one label
                else:
                    labels.append(v)
            if attrs.get("id") is None or not is_ascii_number(attrs.get("id")) or int(attrs.get("id")) > INT32_MAX:
                bad = bad or f"weibo without a numeric id (id={attrs.get('id')!r})"
            self.cur = {
                "line": line,
                "id": attrs.get("id"),
                "labels": labels,
                "primary": labels[0] if labels else "none",
                "sentences": [],
                "bad": bad,
            }
        elif name == "sentence":
            if self.cur is None:
                self.policy.handle(DataFormatError(self.path, self._line(), "<sentence> outside <weibo>"))
            self.sentence = []

    def characters(self, content):
        if self.sentence is not None:
            self.sentence.append(content)

    def endElement(self, name):  # noqa: N802
        if name == "sentence" and self.sentence is not None:
            if self.cur is not None:
                self.cur["sentences"].append("".join(self.sentence))
            self.sentence = None
        elif name == "weibo" and self.cur is not None:
            cur, self.cur = self.cur, None
            if cur["bad"] is None and not cur["sentences"]:
                cur["bad"] = "weibo has no sentences"
            if cur["bad"] is not None:
                self.policy.handle(DataFormatError(self.path, cur["line"], cur["bad"]))
                return
            self.rows.append(
                {
                    "id": int(cur["id"]),
                    "text": "".join(cur["sentences"]),
                    "sentences": cur["sentences"],
                    "labels": [NLPCC2014_LABELS.index(x) for x in cur["labels"]],
                    "primary": cur["primary"],
                }
            )


def _gen_nlpcc(paths, policy):
    (path,) = paths
    text = read_text(path)  # validates existence, emptiness and UTF-8 first
    handler = _WeiboHandler(path, policy)
    try:
        xml.sax.parseString(text.encode("utf-8"), handler)
    except xml.sax.SAXParseException as e:
        raise DataFormatError(path, e.getLineNumber(), f"malformed XML: {e.getMessage()}") from None
    yield from handler.rows


def read_nlpcc2014_emotion(path: str, on_error: str = "raise") -> Dataset:
    """NLPCC-2014 Weibo emotion XML: ``id, text, sentences, labels`` (multi-label).

    ``labels`` holds the primary then the secondary emotion (0, 1 or 2 labels);
    ``primary`` is the first emotion's name or ``none``.
    """
    features = Features(
        {
            "id": Value("int32"),
            "text": Value("string"),
            "sentences": List(Value("string")),
            "labels": List(ClassLabel(names=NLPCC2014_LABELS)),
            "primary": Value("string"),
        }
    )
    return build_dataset(_gen_nlpcc, features, [str(path)], on_error=on_error)


def drop_overlap(train: Dataset, others: Iterable[Dataset], column: str = "text") -> tuple[Dataset, int]:
    """Remove train rows whose text occurs in any of ``others``; return (kept, removed)."""
    keys = {overlap_key(t) for d in others for t in d[column]}
    flags = [overlap_key(t) in keys for t in train[column]]
    removed = sum(flags)
    return (train.select([i for i, f in enumerate(flags) if not f]) if removed else train), removed
