"""corpora/paraphrase_pairs.py: question paraphrase pairs from the medical consultation corpus, for `matching`."""

from collections import Counter

import pytest


@pytest.fixture(scope="module")
def pairs_module(repo_script):
    return repo_script("corpora/paraphrase_pairs.py")


@pytest.fixture(scope="module")
def consultations(shared, pairs_module):
    """The first 300 consultations of the corpus, as ``(title, question)``."""
    path = shared / "corpora" / "medical_qa_toyhom" / "medical_qa_00.txt"
    docs = []
    for _, fields in pairs_module.consultations(path):
        docs.append(fields)
        if len(docs) == 300:
            break
    assert all(fields is not None for fields in docs)
    return docs


def test_the_title_asked_again_in_other_words(pairs_module):
    p = pairs_module
    assert p.bigram_dice("今天天气怎么样", "今天天气怎么样？") == 1.0  # punctuation is not compared
    assert p.bigram_dice("花呗怎么还款", "蚂蚁花呗如何还钱") == pytest.approx(2 / 12)  # 花呗 of 5 + 7 bigrams
    question = "我有高血压这两天女婿来的时候给我拿了些党参泡水喝，您好高血压可以吃党参吗？"
    assert p.asked_again("高血压患者能吃党参吗？", question) == "您好高血压可以吃党参吗？"
    assert p.asked_again("高血压患者能吃党参吗？", "我有高血压。女婿拿了些党参。") is None  # nothing asked
    assert p.is_paraphrase("轻度脂肪肝怎样医治更好呢", "轻度脂肪肝怎么治疗;", 0.4, 0.25)
    assert p.is_paraphrase("怎样诊断肾病综合征？", "如何确诊肾病综合症？", 0.4, 0.25)  # Dice 0.38, asked, the same length
    assert not p.is_paraphrase("高血压能泡脚吗?", "高血压能泡脚吗？", 0.4, 0.25)  # the same words
    assert not p.is_paraphrase("大三阳可以用护肝片吗?", "我本人有大三阳，", 0.4, 0.25)  # a statement of the case


def test_pairs_from_real_consultations(pairs_module, consultations):
    """One paraphrase and one different pair per title kept: the labels are equal in number and a
    title alone never tells them apart; a different pair's consultation is near and asks another thing."""
    p = pairs_module
    counts = Counter()
    pairs = list(p.build_pairs(iter(consultations), lambda text: False, counts))
    paraphrases = [(a, b) for a, b, label in pairs if label == "paraphrase"]
    different = [(a, b) for a, b, label in pairs if label == "different"]
    assert len(paraphrases) == len(different) == counts["paraphrase"] == counts["different"] > 100
    assert [a for a, _ in paraphrases] == [a for a, _ in different]
    assert ("轻度脂肪肝怎样医治更好呢", "轻度脂肪肝怎么治疗;") in paraphrases
    titles = [t for t, _ in consultations]
    asked = {p.asked_again(t, q): i for i, (t, q) in enumerate(consultations)}
    for title, other in different:
        i, j = titles.index(title), asked[other]
        assert 0 < abs(i - j) <= 10 and p.bigram_dice(title, titles[j]) < 0.3
    assert counts["paraphrase"] + counts["no paraphrase in the question"] + counts["no other question near it"] == len(consultations)
    assert all("\t" not in a + b for a, b, _ in pairs)

    skipped = Counter()
    kept = list(p.build_pairs(iter(consultations), lambda text: text == "轻度脂肪肝怎样医治更好呢", skipped))
    assert skipped["a text in a dataset split"] == 1 and not any(a == "轻度脂肪肝怎样医治更好呢" for a, _, _ in kept)
    assert all(b != "轻度脂肪肝怎样医治更好呢" for _, b, _ in kept)


def test_the_script_writes_every_pair_or_no_file(pairs_module, shared, tmp_path, monkeypatch, capsys):
    """The pairs stream to a file of their own, renamed to --output at the end: an interrupted run leaves
    nothing behind and its error goes on; an existing --output is never overwritten."""
    import zhbert.data.paths

    corpus = tmp_path / "corpora" / "qa"
    corpus.mkdir(parents=True)
    lines = (shared / "corpora" / "medical_qa_toyhom" / "medical_qa_00.txt").read_text(encoding="utf-8").splitlines()[:80]
    (corpus / "part.txt").write_text("\n".join(lines) + "\nno-fields-here\n", encoding="utf-8")
    monkeypatch.setattr(zhbert.data.paths, "corpora_dir", lambda: tmp_path / "corpora")
    monkeypatch.setattr(pairs_module, "dataset_text_keys", lambda: set())
    out = tmp_path / "out" / "pairs.tsv"
    pairs_module.main(["--output", str(out), "--source", "qa"])
    docs = [fields for _, fields in pairs_module.consultations(corpus / "part.txt") if fields]
    want = list(pairs_module.build_pairs(docs, lambda text: False, Counter()))
    assert len(docs) == 80 and len(want) > 20
    assert "80 consultations in qa (1 lines without title, question and answer, not read)" in capsys.readouterr().out
    assert out.read_text(encoding="utf-8") == "".join(f"{a}\t{b}\t{label}\n" for a, b, label in want)

    with pytest.raises(SystemExit, match="exists"):
        pairs_module.main(["--output", str(out), "--source", "qa"])
    assert out.read_text(encoding="utf-8").count("\n") == len(want)

    def interrupted(*args, **kwargs):
        yield want[0]
        raise KeyboardInterrupt

    monkeypatch.setattr(pairs_module, "build_pairs", interrupted)
    with pytest.raises(KeyboardInterrupt):
        pairs_module.main(["--output", str(tmp_path / "cut.tsv"), "--source", "qa"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpora", "out"]


def test_pairs_join_matching_training_with_the_datasets_labels(pairs_module, consultations, tmp_path):
    """`zhbert train matching --extra-train`: the pairs join the training split with the dataset's
    labels; a set labelled otherwise, a regression set, or a weight is refused, naming the problem."""
    from zhbert.data import DataFormatError
    from zhbert.recipes.arguments import RecipeArguments
    from zhbert.recipes.common import load_splits

    pairs = list(pairs_module.build_pairs(consultations[:60], lambda text: False, Counter()))
    path = tmp_path / "medical.tsv"
    path.write_text("".join(f"{a}\t{b}\t{label}\n" for a, b, label in pairs), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"medical.tsv:1: label 'paraphrase' is not in matching-pawsx's labels \(0, 1\)"):
        load_splits(RecipeArguments(dataset="pawsx", extra_train=str(path)), "matching")
    data = load_splits(RecipeArguments(dataset="transfer-lcqmc", extra_train=str(path)), "matching")
    added = data.train[-len(pairs) :]
    assert [(r["text_a"], r["text_b"], data.labels[r["label"]]) for r in added] == pairs
    assert any(n == f"extra train: {len(pairs)} pairs from {path}" for n in data.notes)
    with pytest.raises(ValueError, match="a similarity score"):
        load_splits(RecipeArguments(dataset="sts", extra_train=str(path)), "matching")
    with pytest.raises(ValueError, match="annotation standard .cws, ner., not matching's"):
        load_splits(RecipeArguments(dataset="transfer-lcqmc", extra_train=str(path), extra_train_criterion="pku"), "matching")
    with pytest.raises(ValueError, match="matching rows weigh 1"):
        load_splits(RecipeArguments(dataset="transfer-lcqmc", extra_train=str(path), extra_train_weight=0.5), "matching")
