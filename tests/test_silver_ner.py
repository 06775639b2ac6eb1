"""corpora/silver_ner.py: a teacher's entity tags on raw news text, for self-training `ner`."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _silver(out: Path, *extra) -> str:
    cmd = [sys.executable, str(ROOT / "corpora" / "silver_ner.py"), "--chars", "4000", "--output", str(out), *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_silver_tags_are_the_teachers_entities_and_read_back_as_training_text(shared, tmp_path):
    import zhbert
    from zhbert.data import read_char_tagged

    printed = _silver(tmp_path / "all.tsv")
    rows = read_char_tagged(str(tmp_path / "all.tsv"), scheme="BIO", types=["LOC", "ORG", "PER"])
    kept = int(re.search(r"([\d,]+) sentences \(", printed).group(1).replace(",", ""))
    assert len(rows) == kept > 20
    # the teacher's own spans on the same news sentences (CCTV transcripts: 习近平, 长江, 党中央 ...)
    ner = zhbert.load("ner")
    for row in rows.select(range(20)):
        found = [(e.label, e.start, e.end) for e in ner(row["text"])]
        assert [(e["type"], e["start"], e["end"]) for e in row["entities"]] == found
    assert sum(len(r) for r in rows["entities"]) > 20

    printed = _silver(tmp_path / "sure.tsv", "--min-span-score", "0.9")
    unsure = int(re.search(r"([\d,]+) with an entity under", printed).group(1).replace(",", ""))
    sure = read_char_tagged(str(tmp_path / "sure.tsv"), scheme="BIO", types=["LOC", "ORG", "PER"])
    assert 0 < unsure < kept and len(sure) == kept - unsure and set(sure["text"]) <= set(rows["text"])


def test_a_segmenter_is_refused_as_teacher(shared, tmp_path):
    r = subprocess.run(
        [sys.executable, str(ROOT / "corpora" / "silver_ner.py"), "--teacher", "cws", "--chars", "100", "--output", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode != 0 and "a tagger of typed spans (ner) is needed" in r.stderr
