"""corpora/silver_segmentation.py: a teacher's segmentation of raw corpus text, for self-training."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _silver(out: Path, *extra) -> str:
    cmd = [sys.executable, str(ROOT / "corpora" / "silver_segmentation.py"), "--source", "weibo_senti_sample", "--chars", "3000"]
    r = subprocess.run([*cmd, "--output", str(out), *extra], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_min_word_score_keeps_only_the_sentences_the_teacher_is_sure_of(shared, tmp_path):
    _silver(tmp_path / "all.txt")
    printed = _silver(tmp_path / "sure.txt", "--min-word-score", "0.5")
    every = (tmp_path / "all.txt").read_text(encoding="utf-8").splitlines()
    sure = (tmp_path / "sure.txt").read_text(encoding="utf-8").splitlines()
    assert len(every) > 20 and all(" " in line for line in every)  # real posts, cut into words
    skipped = int(re.search(r"([\d,]+) sentences skipped", printed).group(1).replace(",", ""))
    # the same teacher cuts the same sentences the same way; the filter only leaves some out
    assert 0 < skipped < len(every) and len(sure) == len(every) - skipped and set(sure) <= set(every)
