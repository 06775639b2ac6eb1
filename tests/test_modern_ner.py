"""bench/modern_ner.py and corpora/modern_ner_labels.py: hand-labelled modern sentences, kept as offsets into ../shared/corpora."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "bench" / "data" / "modern_ner_dev.jsonl"


def test_the_labelled_sentences_read_back_from_the_corpora(shared, repo_script):
    from zhbert.tags import tags_to_spans

    rows = repo_script("corpora/modern_ner_labels.py").load_sentences()
    assert len(rows) == 400 and {r["source"] for r in rows} == {"xinwenlianbo_cctv", "bedtimenews_transcripts", "cluecorpussmall_sample"}
    entities = {r["id"]: [(r["text"][a:b], t) for t, a, b in tags_to_spans(r["tags"], "BIO")] for r in rows}
    assert sum(map(len, entities.values())) == 548
    # CCTV news of the 2020s, under MSRA's conventions: organisations whole, 中方's 中 a place
    by_id = {r["id"]: r["text"] for r in rows}
    assert by_id[27].startswith("习近平主席夫人彭丽媛")
    assert entities[27][:3] == [("习近平", "PER"), ("彭丽媛", "PER"), ("中共中央政治局", "ORG")]
    assert ("中", "LOC") in entities[10] and ("联合国大会", "ORG") in entities[10]
    assert entities[329][-1] == ("小米", "ORG")  # a company named bare, as modern news does


def test_a_corpus_line_that_no_longer_holds_its_sentence_is_named(shared, repo_script, tmp_path):
    records = LABELS.read_text(encoding="utf-8").splitlines()
    moved = json.loads(records[2])
    moved["start"] += 1
    bad = tmp_path / "labels.jsonl"
    bad.write_text("\n".join([*records[:2], json.dumps(moved)]) + "\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=rf"{re.escape(str(bad))}:3: {moved['file']} line {moved['line']} no longer holds"):
        repo_script("corpora/modern_ner_labels.py").load_sentences(bad)


def test_the_bench_scores_the_bundled_ner_and_lists_its_errors(shared, tmp_path):
    errors = tmp_path / "errors.tsv"
    cmd = [sys.executable, str(ROOT / "bench" / "modern_ner.py"), "--models", "ner", "--errors", str(errors)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "400 sentences, 548 entities (PER 119, LOC 314, ORG 115)" in r.stdout
    f1 = float(re.search(r"^\| ner \| ([\d.]+) \|", r.stdout, re.M).group(1))
    lines = errors.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "id\tsystem\tmissed\textra" and all(line.split("\t")[1] == "ner" for line in lines[1:])
    # every sentence it got wrong is listed once; it is right on most of them (F1 81.66 on 2026-12-05)
    assert 60 < f1 < 100 and 20 < len(lines) - 1 < 200
