"""The hand-labelled modern NER sentences (``bench/data/modern_ner_dev.jsonl``, conventions in
bench/data/README.md), their text read from ``../shared/corpora`` and checked against each record's hash.
``bench/modern_ner.py`` scores models on them; ``corpora/silver_ner.py`` keeps them out of silver text.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

LABELS = Path(__file__).resolve().parents[1] / "bench" / "data" / "modern_ner_dev.jsonl"
TYPES = ("PER", "LOC", "ORG")


def load_sentences(labels: Path = LABELS) -> list[dict]:
    """The labelled sentences, their text read from the corpora: ``{"id", "source", "text", "tags"}``."""
    from zhbert.data import corpora_dir
    from zhbert.tags import spans_to_tags

    root = corpora_dir()
    lines_of: dict[str, list[str]] = {}
    rows = []
    for n, raw in enumerate(labels.read_text(encoding="utf-8").splitlines(), 1):
        rec = json.loads(raw)
        where = f"{labels}:{n}"
        if rec["file"] not in lines_of:
            path = root / rec["file"]
            if not path.is_file():
                raise SystemExit(f"{where}: corpus file {path} is missing")
            lines_of[rec["file"]] = path.read_text(encoding="utf-8").split("\n")
        lines = lines_of[rec["file"]]
        if not 1 <= rec["line"] <= len(lines):
            raise SystemExit(f"{where}: {rec['file']} has {len(lines)} lines, not line {rec['line']}")
        text = lines[rec["line"] - 1][rec["start"] : rec["end"]]
        if hashlib.sha1(text.encode()).hexdigest()[:12] != rec["sha1"]:
            raise SystemExit(f"{where}: {rec['file']} line {rec['line']} no longer holds the labelled sentence (hash differs)")
        spans = [(t, s, e) for s, e, t in rec["entities"]]
        for t, s, e in spans:
            if t not in TYPES or not 0 <= s < e <= len(text):
                raise SystemExit(f"{where}: bad entity {[s, e, t]} for a {len(text)}-character sentence")
        rows.append({"id": rec["id"], "source": rec["file"].split("/")[0], "text": text, "tags": spans_to_tags(len(text), spans, "BIO")})
    return rows
