"""bench/fill_mask_probe.py: held-out news sentences only from news documents, and the table it prints."""

from __future__ import annotations

import itertools
import re


def _lines(path, n):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in itertools.islice(f, n)]


def test_modern_sentences_come_only_from_news_documents(shared, tmp_path, repo_script):
    probe = repo_script("bench/fill_mask_probe.py")
    news = _lines(shared / "corpora/cluecorpussmall_sample/cluecorpussmall_sample_00.txt", 40)
    reviews = _lines(shared / "corpora/reviews_sophonplus/reviews_00.txt", 400)
    heldout = tmp_path / "heldout.txt"
    heldout.write_text("\n".join(reviews[:200] + news + reviews[200:]) + "\n", encoding="utf-8")
    sentences = probe.modern_sentences(heldout, 30)
    assert len(sentences) == 30 and len(set(sentences)) == 30
    news_text, review_text = "".join(news), "".join(reviews)
    assert all(s in news_text and 10 <= len(s) <= 120 for s in sentences)
    assert not any(s in review_text for s in sentences)
    assert probe.modern_sentences(heldout, 30) == sentences  # seeded: the same sentences every time


def test_too_few_news_sentences_is_a_clear_error(shared, tmp_path, repo_script):
    probe = repo_script("bench/fill_mask_probe.py")
    heldout = tmp_path / "heldout.txt"
    heldout.write_text("\n".join(_lines(shared / "corpora/reviews_sophonplus/reviews_00.txt", 50)) + "\n", encoding="utf-8")
    try:
        probe.modern_sentences(heldout, 5)
    except SystemExit as e:
        assert str(heldout) in str(e) and "fewer than 5" in str(e)
    else:
        raise AssertionError("no error for a held-out file without news")


def test_the_table_scores_the_bundled_base(shared, tmp_path, repo_script, capsys):
    probe = repo_script("bench/fill_mask_probe.py")
    heldout = tmp_path / "heldout.txt"
    news = _lines(shared / "corpora/cluecorpussmall_sample/cluecorpussmall_sample_00.txt", 40)
    heldout.write_text("\n".join(news) + "\n", encoding="utf-8")
    probe.main(["--heldout", str(heldout), "--model", "base", "--sentences", "20", "--pd-sentences", "20"])
    row = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| base |")]
    assert len(row) == 1
    cells = [c.strip() for c in row[0].strip("|").split("|")]
    assert all(c.endswith("%") and 0 <= float(c[:-1]) < 100 for c in cells[1:7])
    examples = cells[7].split(" / ")
    assert len(examples) == 3  # one top-1 for each example, with the right answer's rank where it is not first
    for cell, (_, answer) in zip(examples, probe.EXAMPLES):
        # `base` ranks each right answer within its top 1,000 (首 #3, 诗 #17, 兴 #317)
        assert re.fullmatch(rf"\S \({answer} #\d+\)", cell), cell


def test_the_example_cell_gives_the_right_answers_rank(repo_script):
    probe = repo_script("bench/fill_mask_probe.py")
    result = {"examples": ["首", "女", "。"], "example_ranks": [1, 61, None]}
    assert probe.example_cell(result) == "首 / 女 (诗 #61) / 。 (兴 not in the top 1,000)"
