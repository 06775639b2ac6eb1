"""Sentence-pair files: LCQMC, BQ, AFQMC, PAWS-X, OCNLI, STS-B.

All become ``id, sentence1, sentence2, label``. Binary and NLI labels are
``ClassLabel``s; a test split without labels gets ``label = -1`` (the
``datasets`` convention for "no label"); STS-B scores are floats. OCNLI's ``-``
(annotators reached no majority) is kept as ``-1`` unless ``drop_no_majority``.
"""

from __future__ import annotations

from datasets import ClassLabel, Dataset, Features, Value

from ..errors import DataFormatError, clip
from .build import build_dataset
from .jsonio import iter_json_records, record_id, require
from .source import iter_lines, read_text

__all__ = ["read_pair_tsv", "read_pawsx", "read_ocnli", "read_sts", "OCNLI_LABELS"]

OCNLI_LABELS = ["entailment", "neutral", "contradiction"]


def _features(label) -> Features:
    return Features({"id": Value("int32"), "sentence1": Value("string"), "sentence2": Value("string"), "label": label})


def _gen_tsv(paths, policy, names, has_label, score):
    (path,) = paths
    ncols = 3 if has_label else 2
    for lineno, line in iter_lines(path):
        try:
            cols = line.split("\t")
            if len(cols) != ncols:
                raise DataFormatError(path, lineno, f"expected {ncols} tab-separated columns, found {len(cols)}")
            s1, s2 = cols[0], cols[1]
            if not s1.strip() or not s2.strip():
                raise DataFormatError(path, lineno, "empty sentence")
            label: int | float = -1
            if has_label:
                raw = cols[2].strip()
                if score:
                    try:
                        label = float(raw)
                    except ValueError:
                        raise DataFormatError(path, lineno, f"score {clip(raw)} is not a number") from None
                    if not 0 <= label <= 5:
                        raise DataFormatError(path, lineno, f"score {clip(raw)} outside 0..5")
                else:
                    if raw not in names:
                        raise DataFormatError(path, lineno, f"unknown label {clip(raw)} (expected one of {', '.join(names)})")
                    label = names.index(raw)
        except DataFormatError as e:
            policy.handle(e)
            continue
        yield {"id": lineno, "sentence1": s1, "sentence2": s2, "label": label}


def read_pair_tsv(path: str, has_label: bool = True, labels: tuple[str, ...] = ("0", "1"), on_error: str = "raise") -> Dataset:
    """``s1<TAB>s2<TAB>label`` (LCQMC, BQ, AFQMC); ``has_label=False`` for test files."""
    feats = _features(ClassLabel(names=list(labels)))
    return build_dataset(_gen_tsv, feats, [str(path)], on_error=on_error, names=list(labels), has_label=has_label, score=False)


def read_sts(path: str, on_error: str = "raise") -> Dataset:
    """STS-B zh: ``s1<TAB>s2<TAB>score`` with scores 0-5 as floats."""
    return build_dataset(_gen_tsv, _features(Value("float32")), [str(path)], on_error=on_error, names=[], has_label=True, score=True)


def _gen_pawsx(paths, policy):
    (path,) = paths
    lines = iter_lines(path)
    _, header = next(lines)
    if header.split("\t") != ["id", "sentence1", "sentence2", "label"]:
        raise DataFormatError(path, 1, f"expected header 'id<TAB>sentence1<TAB>sentence2<TAB>label', found {clip(header)}")
    for lineno, line in lines:
        try:
            cols = line.split("\t")
            if len(cols) != 4:
                raise DataFormatError(path, lineno, f"expected 4 tab-separated columns, found {len(cols)}")
            if cols[3] not in ("0", "1"):
                raise DataFormatError(path, lineno, f"unknown label {cols[3][:40]!r} (expected 0 or 1)")
            rid = record_id(cols[0], path, lineno)
            if not cols[1].strip() or not cols[2].strip():
                raise DataFormatError(path, lineno, "empty sentence")
        except DataFormatError as e:
            policy.handle(e)
            continue
        yield {"id": rid, "sentence1": cols[1], "sentence2": cols[2], "label": int(cols[3])}


def read_pawsx(path: str, on_error: str = "raise") -> Dataset:
    """PAWS-X zh TSV with header ``id sentence1 sentence2 label``."""
    return build_dataset(_gen_pawsx, _features(ClassLabel(names=["0", "1"])), [str(path)], on_error=on_error)


def _gen_ocnli(paths, policy, drop_no_majority):
    (path,) = paths
    for line, rec in iter_json_records(read_text(path), path):
        try:
            s1 = require(rec, "sentence1", str, path, line)
            s2 = require(rec, "sentence2", str, path, line)
            raw = rec.get("label")
            if raw is None:
                label = -1  # the test split has no labels
            elif raw == "-":
                if drop_no_majority:
                    continue
                label = -1
            elif raw in OCNLI_LABELS:
                label = OCNLI_LABELS.index(raw)
            else:
                raise DataFormatError(path, line, f"unknown label {clip(raw)} (expected {', '.join(OCNLI_LABELS)} or -)")
            rid = record_id(rec["id"], path, line) if "id" in rec else line
            if not s1.strip() or not s2.strip():
                raise DataFormatError(path, line, "empty sentence")
        except DataFormatError as e:
            policy.handle(e)
            continue
        yield {"id": rid, "sentence1": s1, "sentence2": s2, "label": label}


def read_ocnli(path: str, drop_no_majority: bool = False, on_error: str = "raise") -> Dataset:
    """OCNLI JSON lines; ``-`` (no majority) is label -1 unless dropped."""
    return build_dataset(
        _gen_ocnli, _features(ClassLabel(names=OCNLI_LABELS)), [str(path)], on_error=on_error, drop_no_majority=drop_no_majority
    )
