"""corpora/training_entity_words.py and `--lexicon-words`: a domain word list from a training
split's entities, trained into a lexicon head and kept in its folder."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "corpora"))

from training_entity_words import entity_words  # noqa: E402


def test_entity_words_of_real_resume_sentences(shared):
    from zhbert.data.tasks import load_task_data
    from zhbert.dictionary import read_dictionary

    data = load_task_data("ner", "resume")
    words = entity_words(data.train, data.scheme)
    counts = {w: n for w, _, n in words}
    types = {w: t for w, t, _ in words}
    assert types["董事"] == "TITLE" and types["汉族"] == "RACE" and types["中国国籍"] == "CONT"
    assert [n for _, _, n in words] == sorted(counts.values(), reverse=True)  # most frequent first
    # the first training sentence: 高勇：男，中国国籍，无境外居留权，... : its name is a word of the list
    assert data.train[0]["text"].startswith("高勇") and types["高勇"] == "NAME"
    twice = entity_words(data.train, data.scheme, min_count=2)
    assert {w for w, _, _ in twice} == {w for w, n in counts.items() if n >= 2} and len(twice) < len(words) / 2
    assert "高勇" not in {w for w, _, _ in twice}  # a person named once
    titles = entity_words(data.train, data.scheme, types={"TITLE", "EDU"})
    assert {t for _, t, _ in titles} == {"TITLE", "EDU"} and [w for w, t, _ in words if t in ("TITLE", "EDU")] == [w for w, _, _ in titles]
    # a word with two types keeps its most frequent one, so the file reads without a type conflict
    lines = "".join(f"{w}\t{t}\n" for w, t, _ in words).splitlines()
    assert len(read_dictionary(lines, name="resume-words")) == len(words)


def test_a_recipe_trains_with_the_word_list_and_evaluates_from_its_folder(shared, tiny_encoder, tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    words = tmp_path / "resume-words.txt"
    cmd = [sys.executable, str(ROOT / "corpora" / "training_entity_words.py"), "--dataset", "resume", "--output", str(words)]
    r = subprocess.run([*cmd, "--min-count", "2"], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "entities of 3,819 training sentences (ORG " in r.stdout and words.read_text(encoding="utf-8").startswith("董事\tTITLE\n")
    recipe = [sys.executable, str(ROOT / "recipes" / "ner.py"), "--dataset", "resume", "--preset", "tiny", "--crf"]
    train = [*recipe, "--encoder", str(tiny_encoder), "--output-dir", str(tmp_path / "t"), "--lexicon-words", str(words)]
    r = subprocess.run([*train, "--lexicon", "jieba", "--lexicon-dim", "8"], capture_output=True, text=True, timeout=900, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "+ lexicon jieba + resume-words.txt |" in r.stdout
    assert (tmp_path / "t" / "model" / "lexicon_words.txt").read_bytes() == words.read_bytes()
    again = [*recipe, "--evaluate-only", str(tmp_path / "t" / "model"), "--output-dir", str(tmp_path / "e")]
    r = subprocess.run([*again, "--lexicon-words", str(words)], capture_output=True, text=True, timeout=900, env=env)
    assert r.returncode == 1 and "--lexicon-words is a training option" in r.stderr
    r = subprocess.run(again, capture_output=True, text=True, timeout=900, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run(train, capture_output=True, text=True, timeout=900, env=env)
    assert r.returncode == 1 and "resume-words.txt: a word list is added to a lexicon; give the head one (--lexicon jieba)" in r.stderr
