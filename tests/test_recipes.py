"""Each recipe end to end on a few dozen real examples with a tiny encoder."""

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _recipe(name, tiny_encoder, out, *extra):
    cmd = [
        sys.executable,
        str(ROOT / "recipes" / f"{name}.py"),
        "--encoder",
        str(tiny_encoder),
        "--preset",
        "tiny",
        "--window",
        "64",
        "--output-dir",
        str(out),
        *extra,
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env={**__import__("os").environ, "OMP_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    return r, json.loads((out / "metrics.json").read_text())


def test_cws_recipe(tiny_encoder, tmp_path):
    r, m = _recipe("cws", tiny_encoder, tmp_path / "cws", "--dataset", "pku")
    assert m["dataset"] == "cws-pku" and m["scored_on"] == "test"
    z, j = m["metrics"]["zhbert"], m["metrics"]["jieba"]
    assert 0 <= z["f1"] <= 1 and z["gold_words"] == j["gold_words"] > 100
    assert 0.7 < j["f1"] < 1.0  # jieba's default model on real PKU test sentences
    assert "| cws-pku |" in r.stdout
    # the saved model re-evaluates to the same score
    r2, m2 = _recipe("cws", tiny_encoder, tmp_path / "again", "--dataset", "pku", "--evaluate-only", str(tmp_path / "cws" / "model"))
    assert m2["metrics"]["zhbert"] == z


@pytest.mark.parametrize(
    "dataset, extra",
    # resume: the BERT paper's feature-based NER head (frozen encoder, two-layer BiLSTM), under a CRF
    # weibo: a small hashed bigram table (kebab-case flags, as the CLI spells them)
    [("resume", ["--crf", "--mode", "frozen", "--bilstm-layers", "2"]), ("weibo", ["--bigram-dim", "8", "--bigram-buckets", "512"])],
)
def test_ner_recipe(dataset, extra, tiny_encoder, tmp_path):
    r, m = _recipe("ner", tiny_encoder, tmp_path / "ner", "--dataset", dataset, *extra)
    head = json.loads((tmp_path / "ner" / "model" / "config.json").read_text())["zhbert_head"]
    crf = "--crf" in extra
    assert (head["crf"], head["mode"], head["bilstm_layers"]) == (crf, "frozen" if crf else "finetune", 2 if crf else 0)
    assert (head["bigram_dim"], head["bigram_buckets"]) == ((0, 65536) if crf else (8, 512))
    assert ("+ 2-layer BiLSTM + CRF |" in r.stdout) == crf
    overall = m["metrics"]["overall"]
    assert m["dataset"] == f"ner-{dataset}" and 0 <= overall["f1"] <= 1 and overall["support"] > 0
    assert set(m["metrics"]["per_type"]) <= {
        "NAME",
        "ORG",
        "TITLE",
        "EDU",
        "CONT",
        "LOC",
        "PRO",
        "RACE",
        "GPE.NAM",
        "GPE.NOM",
        "LOC.NAM",
        "LOC.NOM",
        "ORG.NAM",
        "ORG.NOM",
        "PER.NAM",
        "PER.NOM",
    }


def test_recipe_names_a_missing_dataset_file(tiny_encoder, tmp_path):
    import os
    import shutil

    shared = tmp_path / "shared"
    (shared / "datasets" / "resume_ner").mkdir(parents=True)
    from zhbert.data.paths import shared_dir

    src = shared_dir() / "datasets" / "resume_ner"
    shutil.copy(src / "dev.char.bmes", shared / "datasets" / "resume_ner")
    bad = (src / "train.char.bmes").read_text(encoding="utf-8").splitlines()
    bad[4] = "高 B-NAME extra-column"
    (shared / "datasets" / "resume_ner" / "train.char.bmes").write_text("\n".join(bad) + "\n", encoding="utf-8")
    cmd = [
        sys.executable,
        str(ROOT / "recipes" / "ner.py"),
        "--dataset",
        "resume",
        "--encoder",
        str(tiny_encoder),
        "--preset",
        "tiny",
        "--output-dir",
        str(tmp_path / "out"),
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env={**os.environ, "ZHBERT_SHARED": str(shared)})
    assert r.returncode == 1 and "train.char.bmes:5:" in r.stderr and "Traceback" not in r.stderr
    (shared / "datasets" / "resume_ner" / "train.char.bmes").unlink()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env={**os.environ, "ZHBERT_SHARED": str(shared)})
    assert r.returncode == 1 and "train.char.bmes" in r.stderr and "not found" in r.stderr and "Traceback" not in r.stderr


def test_pos_recipe_and_its_folder(tiny_encoder, tmp_path):
    """POS with the words, one tagger: the held-out People's Daily split, both scores, jieba.posseg beside it;
    the saved folder round-trips and zhbert.load gives words with tags and offsets."""
    import zhbert
    from zhbert.data.tasks import load_task_data

    r, m = _recipe("pos", tiny_encoder, tmp_path / "pos", "--dataset", "peoples_daily")
    assert m["dataset"] == "pos-peoples_daily" and m["headline"] == "zhbert.tagged.overall.f1"
    z, j = m["metrics"]["zhbert"], m["metrics"]["jieba"]
    assert 0 <= z["tagged"]["overall"]["f1"] <= z["words"]["f1"] <= 1  # a right tag needs a right word
    assert 0.75 < j["words"]["f1"] < 0.95 and 0.5 < j["tagged"]["overall"]["f1"] < j["words"]["f1"]
    data = load_task_data("pos", "peoples_daily")
    assert len(data.test) > 1000 and not {r["text"] for r in data.test} & {r["text"] for r in data.train}
    assert {"n", "v", "w", "nr", "ns"} <= {p for r in data.train[:2000] for p in r["pos"]}
    saved = str(tmp_path / "pos" / "model")
    r2, m2 = _recipe("pos", tiny_encoder, tmp_path / "again", "--dataset", "peoples_daily", "--evaluate-only", saved)
    assert m2["metrics"]["zhbert"] == z  # save / load round trip: the same predictions
    tagger = zhbert.load(str(tmp_path / "pos" / "model"), web_units=False)
    text = data.test[0]["text"]
    spans = tagger(text)
    assert all(text[s.start : s.end] == s.text and s.label for s in spans)


@pytest.mark.parametrize("dataset", ["usual", "nlpcc2014"])
def test_tagging_recipe(dataset, tiny_encoder, tmp_path):
    r, m = _recipe("tagging", tiny_encoder, tmp_path / "t", "--dataset", dataset, "--window-pool", "mean-max")
    if dataset == "usual":
        assert 0 <= m["metrics"]["macro_f1"] <= 1 and len(m["metrics"]["per_label_f1"]) == 6
    else:
        assert set(m["metrics"]) == {"test", "extra_test", "thresholds"} and len(m["metrics"]["thresholds"]) == 7
        assert 0 <= m["metrics"]["test"]["exact_match"] <= 1
        # thresholds travel with the model
        from zhbert.heads import load_head

        assert load_head(tmp_path / "t" / "model").head.thresholds == m["metrics"]["thresholds"]


@pytest.mark.parametrize("dataset, encoding", [("afqmc", "cross"), ("lcqmc", "bi"), ("sts", "cross")])
def test_matching_recipe(dataset, encoding, tiny_encoder, tmp_path):
    r, m = _recipe("matching", tiny_encoder, tmp_path / "m", "--dataset", dataset, "--pair-encoding", encoding)
    if dataset == "sts":
        assert -1 <= m["metrics"]["pearson"] <= 1
    else:
        assert 0 <= m["metrics"]["accuracy"] <= 1 and "majority_baseline" in m["metrics"]


def test_bq_splits_its_labelled_dev_set_without_overlap(shared):
    """BQ has no train split here and an unlabelled test: train / dev / scored part come from its dev.tsv."""
    from zhbert.data.tasks import load_task_data

    data = load_task_data("matching", "bq")
    assert (len(data.train), len(data.dev), len(data.test)) == (7200, 800, 2000)
    key = lambda r: (r["text_a"], r["text_b"])  # noqa: E731
    assert not {key(r) for r in data.test} & {key(r) for r in data.train}
    assert {r["label"] for r in data.test} == {0, 1} and "not comparable" in data.notes[0]


def test_pooled_paraphrase_pairs_train_on_no_pair_any_part_scores(shared):
    """`--dataset paraphrase` pools LCQMC, BQ, AFQMC and PAWS-X training parts; the scored part of
    each (LCQMC test, BQ's 20%, AFQMC dev, PAWS-X test) shares no pair with the pool beyond the
    overlaps its own release has (LCQMC dev/test 1 pair, PAWS-X dev/test 14), which the
    single-dataset recipes have too."""
    from zhbert.data.tasks import load_task_data

    pooled = load_task_data("matching", "paraphrase")
    assert pooled.labels == ["different", "paraphrase"] and len(pooled.train) == 7922 + 7200 + 34334 + 1800
    key = lambda r: (r["text_a"], r["text_b"])  # noqa: E731
    trained = {key(r) for r in pooled.train}
    single = {name: load_task_data("matching", name) for name in ("lcqmc", "bq", "afqmc", "pawsx")}
    assert [key(r) for r in pooled.test] == [key(r) for r in single["lcqmc"].test]
    overlaps = {}
    for name, data in single.items():
        scored = {key(r) for r in data.test}
        own = {key(r) for r in data.train + data.dev} if name != "afqmc" else set()  # AFQMC scores its dev
        assert scored & trained <= own, name  # nothing from another dataset
        overlaps[name] = len(scored & trained)
    assert overlaps == {"lcqmc": 1, "bq": 0, "afqmc": 0, "pawsx": 14}
    assert "AFQMC train 34,334" in pooled.notes[0]


def test_transfer_pairs_score_on_lcqmc_and_bq_and_train_on_neither(shared):
    """`--dataset transfer-lcqmc|transfer-bq`: AFQMC, OCNLI (entailment = 1), STS-B (4 or more = 1, 2 or
    less = 0) and PAWS-X as paraphrase pairs; scored on LCQMC's or BQ's whole dev set, no pair of
    which is trained on."""
    from zhbert.data.tasks import load_task_data

    data = load_task_data("matching", "transfer-lcqmc")
    assert data.labels == ["different", "paraphrase"] and data.eval_split == "dev" and len(data.test) == 8802
    assert len(data.train) == 34334 + 50437 + 1800 + sum(1 for r in load_task_data("matching", "sts").train if not 2 < r["label"] < 4)
    assert {r["label"] for r in data.train} == {0, 1}
    texts = {t for r in data.train for t in (r["text_a"], r["text_b"])}
    for scored in (data, load_task_data("matching", "transfer-bq")):
        assert not {(r["text_a"], r["text_b"]) for r in scored.test} & {(r["text_a"], r["text_b"]) for r in data.train}
    assert sum(r["text_a"] in texts for r in data.test) == 0  # not one LCQMC question is trained on
    ocnli = load_task_data("matching", "ocnli").train[0]
    mapped = next(r for r in data.train if (r["text_a"], r["text_b"]) == (ocnli["text_a"], ocnli["text_b"]))
    assert mapped["label"] == int(ocnli["label"] == 0)  # entailment is OCNLI's label 0


def test_small_encoder_and_extra_training_text(tiny_encoder, tmp_path):
    """A fast segmenter's two steps: a narrower encoder whose embeddings are the teacher's
    projected onto their principal directions, then cws training with a segmented file added
    (here real People's Daily sentences, written as a teacher's silver output would be)."""
    import torch
    from safetensors.torch import load_file

    from zhbert.training.small_encoder import small_encoder

    out = small_encoder(tiny_encoder, tmp_path / "small", layers=1, hidden=16, heads=2)
    cfg = json.loads((out / "config.json").read_text())
    assert (cfg["num_hidden_layers"], cfg["hidden_size"], cfg["intermediate_size"]) == (1, 16, 64)
    teacher = load_file(str(Path(tiny_encoder) / "model.safetensors"))["bert.embeddings.word_embeddings.weight"]
    student = load_file(str(out / "model.safetensors"))["embeddings.word_embeddings.weight"]
    centred = teacher - teacher.mean(0)
    # the projection keeps the teacher's strongest directions: 16 of 32 dimensions hold most of the variance
    assert student.shape == (teacher.shape[0], 16) and student.pow(2).sum() > 0.5 * centred.pow(2).sum()
    assert torch.allclose(student.pow(2).sum(), torch.linalg.svdvals(centred)[:16].pow(2).sum(), rtol=1e-3)
    with pytest.raises(ValueError, match="at most the teacher's 32"):
        small_encoder(tiny_encoder, tmp_path / "wide", hidden=64)
    # the random layers come from the seed alone: a recipe's commands rebuild its student's start
    torch.manual_seed(123)
    before = torch.rand(3)
    torch.manual_seed(123)
    again = small_encoder(tiny_encoder, tmp_path / "again", layers=1, hidden=16, heads=2)
    assert torch.equal(torch.rand(3), before)  # the caller's random state is untouched
    other = small_encoder(tiny_encoder, tmp_path / "other", layers=1, hidden=16, heads=2, seed=1)
    layer = "encoder.layer.0.attention.self.query.weight"
    first, second, third = (load_file(str(d / "model.safetensors")) for d in (out, again, other))
    assert first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)
    assert not torch.equal(first[layer], third[layer])
    assert torch.equal(first["embeddings.word_embeddings.weight"], third["embeddings.word_embeddings.weight"])
    # it wrote into any folder: a user's files there are refused, an encoder of its own replaced only when asked
    notes = tmp_path / "project" / "notes.md"
    notes.parent.mkdir()
    notes.write_text("我的笔记", encoding="utf-8")
    with pytest.raises(ValueError, match="project: not empty and not a model folder .it holds notes.md"):
        small_encoder(tiny_encoder, notes.parent, layers=1, hidden=16, heads=2, overwrite=True)
    assert notes.read_text(encoding="utf-8") == "我的笔记" and sorted(p.name for p in notes.parent.iterdir()) == ["notes.md"]
    with pytest.raises(ValueError, match="a model folder is already there; pass --overwrite"):
        small_encoder(tiny_encoder, other, layers=1, hidden=16, heads=2)
    small_encoder(tiny_encoder, other, layers=1, hidden=16, heads=2, overwrite=True)
    assert torch.equal(load_file(str(other / "model.safetensors"))[layer], first[layer])  # seed 0's now

    from zhbert.data import read_peoples_daily

    silver = tmp_path / "silver.txt"
    words = read_peoples_daily()["words"][:40]
    silver.write_text("\n".join(" ".join(w) for w in words) + "\n", encoding="utf-8")
    _, m = _recipe("cws", out, tmp_path / "cws", "--dataset", "pku", "--extra-train", str(silver), "--extra-train-weight", "0.5")
    base_examples = _recipe("cws", out, tmp_path / "cws0", "--dataset", "pku")[1]["train_examples"]
    assert m["train_examples"] == base_examples + 40
    assert any("extra train: 40 sentences" in n and n.endswith(", each weighing 0.5 in the loss") for n in m["notes"])
    from zhbert.recipes.arguments import RecipeArguments
    from zhbert.recipes.common import load_splits

    with pytest.raises(ValueError, match="--extra-train-weight weighs the sentences of --extra-train: give the file"):
        load_splits(RecipeArguments(dataset="pku", extra_train_weight=0.5), "cws")
    with pytest.raises(ValueError, match="at most 1 .a gold sentence's weight., got 2.0"):
        load_splits(RecipeArguments(dataset="pku", extra_train=str(silver), extra_train_weight=2.0), "cws")
    with pytest.raises(ValueError, match=r"character-tagged text .ner. or labelled rows .matching, tagging., not pos"):
        load_splits(RecipeArguments(dataset="peoples_daily", extra_train=str(silver)), "pos")


def test_ner_extra_training_text_in_the_datasets_tags(tmp_path):
    """Self-training for NER: a file of silver tags (here real MSRA test sentences, written as
    corpora/silver_ner.py writes a teacher's output) joins the training split at its weight; a tag
    the dataset does not have, or a segmented file given by mistake, is refused at its line."""
    from zhbert.data import DataFormatError
    from zhbert.data.tasks import load_task_data
    from zhbert.recipes.arguments import RecipeArguments
    from zhbert.recipes.common import load_splits

    gold = load_task_data("ner", "msra").test[:3]
    assert any(t != "O" for r in gold for t in r["tags"])
    silver = tmp_path / "silver.tsv"
    silver.write_text("".join("".join(f"{c}\t{t}\n" for c, t in zip(r["text"], r["tags"])) + "\n" for r in gold), encoding="utf-8")
    plain = load_splits(RecipeArguments(dataset="msra"), "ner")
    data = load_splits(RecipeArguments(dataset="msra", extra_train=str(silver), extra_train_weight=0.5), "ner")
    assert len(data.train) == len(plain.train) + 3
    assert [{k: r[k] for k in ("text", "tags", "weight")} for r in data.train[-3:]] == [{**r, "weight": 0.5} for r in gold]
    assert {r["weight"] for r in data.train[:-3]} == {1.0}
    assert any(n.startswith("extra train: 3 sentences") and n.endswith("each weighing 0.5 in the loss") for n in data.notes)

    lines = silver.read_text(encoding="utf-8").splitlines()
    k = next(i for i, line in enumerate(lines) if "\tB-" in line)
    lines[k] = lines[k][0] + "\tB-GPE"  # a type MSRA does not have
    bad = tmp_path / "bad.tsv"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=rf"bad.tsv:{k + 1}:.*GPE"):
        load_splits(RecipeArguments(dataset="msra", extra_train=str(bad)), "ner")
    segmented = tmp_path / "segmented.txt"
    segmented.write_text("迈向 充满 希望 的 新 世纪\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="segmented.txt:1:"):
        load_splits(RecipeArguments(dataset="msra", extra_train=str(segmented)), "ner")


def test_tagging_extra_training_texts_with_the_datasets_labels(tmp_path):
    """Labelled Weibo posts (here real SMP2020-EWECT test posts, as a user's or a teacher's file) join
    the training split; a label the dataset does not have is refused at its line."""
    from zhbert.data import DataFormatError
    from zhbert.data.tasks import load_task_data
    from zhbert.recipes.arguments import RecipeArguments
    from zhbert.recipes.common import load_splits

    usual = load_task_data("tagging", "usual")
    posts = [r for r in usual.test if "\t" not in r["text"] and "\n" not in r["text"]][:4]
    extra = tmp_path / "posts.tsv"
    extra.write_text("".join(f"{r['text']}\t{usual.labels[r['label']]}\n" for r in posts), encoding="utf-8")
    data = load_splits(RecipeArguments(dataset="usual", extra_train=str(extra)), "tagging")
    assert len(data.train) == len(usual.train) + 4
    assert [(r["text"], r["label"]) for r in data.train[-4:]] == [(r["text"], r["label"]) for r in posts]
    assert any(n.startswith("extra train: 4 sentences") for n in data.notes)
    extra.write_text(f"{posts[0]['text']}\t{usual.labels[0]}\n{posts[1]['text']}\tjoy\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"posts.tsv:2: label 'joy' is not in tagging-usual's labels"):
        load_splits(RecipeArguments(dataset="usual", extra_train=str(extra)), "tagging")


def test_score_on_dev_puts_the_dev_split_in_the_test_splits_place():
    """`--score-on dev`: settings (a learning rate, say) chosen without looking at test."""
    from zhbert.data.tasks import load_task_data
    from zhbert.recipes.arguments import RecipeArguments
    from zhbert.recipes.common import load_splits

    full = load_task_data("tagging", "usual")
    data = load_splits(RecipeArguments(dataset="usual", score_on="dev", max_eval_samples=300), "tagging")
    assert data.test == full.dev[:300] and data.eval_split == "dev" and "scored on the dev split" in data.notes[-1]
    assert load_splits(RecipeArguments(dataset="usual"), "tagging").test == full.test
    with pytest.raises(ValueError, match="--score-on must be test or dev"):
        load_splits(RecipeArguments(dataset="usual", score_on="train"), "tagging")


def test_add_dev_to_train_trains_on_the_dev_split_and_refuses_to_score_on_it():
    """`--add-dev-to-train`: the final fit on train + dev once the settings were chosen on dev; the dev
    split is gone, so nothing can be scored or chosen on it, and a segmenter's OOV words count it as seen."""
    from zhbert.data.tasks import load_task_data
    from zhbert.recipes.arguments import RecipeArguments
    from zhbert.recipes.common import load_splits

    full = load_task_data("ner", "resume")
    data = load_splits(RecipeArguments(dataset="resume", add_dev_to_train=True), "ner")
    assert data.train == full.train + full.dev and data.dev == [] and data.test == full.test
    assert data.notes[-1] == "trained on train + dev (--add-dev-to-train): 3,819 + 463 examples"
    pku = load_task_data("cws", "pku")
    seen = load_splits(RecipeArguments(dataset="pku", add_dev_to_train=True), "cws").train_words
    assert seen == pku.train_words | {w for r in pku.dev for w in r["words"]} and seen > pku.train_words
    refusals = {
        "--score-on dev cannot score on it as well": RecipeArguments(dataset="resume", add_dev_to_train=True, score_on="dev"),
        "--best-epoch-on-dev cannot score on it as well": RecipeArguments(dataset="resume", add_dev_to_train=True, best_epoch_on_dev=True),
        "ner-cluener is scored on its dev split": RecipeArguments(dataset="cluener", add_dev_to_train=True),
        "--evaluate-only m trains nothing": RecipeArguments(dataset="resume", add_dev_to_train=True, evaluate_only="m"),
    }
    for message, args in refusals.items():
        with pytest.raises(ValueError, match=message):
            load_splits(args, "ner")
    with pytest.raises(ValueError, match="label thresholds are tuned on its dev split"):
        load_splits(RecipeArguments(dataset="nlpcc2014", add_dev_to_train=True), "tagging")


def test_flags_that_choose_the_final_weights_refuse_what_they_cannot_do(tiny_encoder):
    """The epoch is chosen on dev, so scoring it on dev again would flatter it; the two ways of choosing
    the final weights exclude each other; no carried layers without a task folder to carry them."""
    from zhbert.recipes.arguments import RecipeArguments
    from zhbert.recipes.common import dev_scorer, fit, load_splits
    from zhbert.recipes.ner import evaluate

    for args in (
        RecipeArguments(dataset="resume", score_on="dev", best_epoch_on_dev=True),
        RecipeArguments(dataset="cluener", best_epoch_on_dev=True),
    ):
        with pytest.raises(ValueError, match="--best-epoch-on-dev chooses the epoch on the dev split.*optimistic"):
            dev_scorer(args, load_splits(args, "ner"), None, None, evaluate)
    both = RecipeArguments(dataset="resume", best_epoch_on_dev=True, average_last_epochs=3)
    with pytest.raises(ValueError, match="each choose the final weights: give one"):
        fit(both, load_splits(both, "ner"), None, None, lambda: [], evaluate)
    plain = RecipeArguments(dataset="resume", encoder=str(tiny_encoder), carried_at_encoder_lr=True)
    with pytest.raises(ValueError, match="--carried-at-encoder-lr: --encoder .* is not a zhbert task folder"):
        fit(plain, load_splits(plain, "ner"), types.SimpleNamespace(carried_head_parameters=()), None, lambda: [], evaluate)


def test_best_epoch_on_dev_scores_every_epoch_with_the_recipes_scorer(tiny_encoder, tmp_path):
    r, m = _recipe(
        "ner", tiny_encoder, tmp_path / "ner", "--dataset", "resume", "--crf", "--epochs", "3", "--max-steps", "12", "--best-epoch-on-dev"
    )
    note = m["notes"][-1]
    assert note.startswith("epoch chosen on dev (--best-epoch-on-dev): ") and " of 3; dev score per epoch: " in note
    per_epoch = [float(x) for x in note.rsplit(": ", 1)[1].split(", ")]
    chosen = int(note.split(": ")[1].split(" of ")[0])
    assert len(per_epoch) == 3 and per_epoch[chosen - 1] == max(per_epoch)
    assert m["scored_on"] == "test" and m["arguments"]["best_epoch_on_dev"] is True


def test_matching_refuses_pairs_longer_than_its_window_before_training(tiny_encoder, tmp_path):
    """Real AFQMC pairs that do not fit a 32-token cross-encoder window are counted per split
    and refused up front (no checkpoint written); --truncate trains on the same data."""
    cmd = [sys.executable, str(ROOT / "recipes" / "matching.py"), "--encoder", str(tiny_encoder), "--preset", "tiny"]
    cmd += ["--dataset", "afqmc", "--window", "32", "--output-dir", str(tmp_path / "m")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert r.returncode != 0
    assert "train pairs (the longest" in r.stderr and "32-token window" in r.stderr and "--truncate" in r.stderr, r.stderr[-2000:]
    assert not (tmp_path / "m" / "checkpoints").exists()
    _, m = _recipe("matching", tiny_encoder, tmp_path / "t", "--dataset", "afqmc", "--window", "32", "--truncate")
    assert 0 <= m["metrics"]["accuracy"] <= 1


def test_evaluate_only_reads_as_its_flags_say(tiny_encoder, tmp_path):
    """``--evaluate-only MODEL --truncate`` scores the saved head on first windows. It used to
    keep the saved head's reading and only record the flag: a "first window" cross-read of a
    windowed `sources` model that scored every window, to the digit."""
    from dataclasses import replace

    import torch

    from zhbert.heads import load_head, predict_scores
    from zhbert.metrics import classification_scores
    from zhbert.recipes import RECIPES
    from zhbert.recipes.common import load_splits
    from zhbert.tokenizer import load_tokenizer

    recipe = RECIPES["tagging"]
    common = dict(dataset="sources", preset="tiny", window=64)
    trained = recipe.run(recipe.arguments(encoder=str(tiny_encoder), output_dir=str(tmp_path / "t"), **common))
    saved = tmp_path / "t" / "model"
    args = recipe.arguments(evaluate_only=str(saved), truncate=True, output_dir=str(tmp_path / "first"), **common)
    first = recipe.run(args)
    assert trained["head"]["truncate"] is False and first["head"]["truncate"] is True
    assert first["head"]["window"] == 64 and first["head"]["window_pool"] == "mean"

    # its score is the saved head's read through the first window only, recomputed by hand
    test = load_splits(args, "tagging").test
    texts, gold = [r["text"] for r in test], [r["label"] for r in test]
    model, tokenizer = load_head(saved), load_tokenizer(saved)
    every_window = predict_scores(model, tokenizer, texts, batch_size=8)
    model.head = replace(model.head, truncate=True)
    first_window = predict_scores(model, tokenizer, texts, batch_size=8)
    assert not torch.allclose(every_window, first_window)  # 1,000-character excerpts: many windows of 64
    assert first["metrics"] == classification_scores(gold, first_window.argmax(-1).tolist(), len(trained["metrics"]["per_label_f1"]))

    # what the weights fix cannot be changed at evaluation: refused, not ignored
    with pytest.raises(ValueError, match="trained with window_pool='mean'"):
        recipe.run(recipe.arguments(evaluate_only=str(saved), window_pool="mean-max", output_dir=str(tmp_path / "x"), **common))
