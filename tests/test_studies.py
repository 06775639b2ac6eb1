"""`zhbert study modes` and `zhbert study masking` end to end on a tiny encoder and a few
dozen real examples (recipe preset ``tiny``): the tables, plots and claims they write."""

import json

import pytest
import torch
from transformers import AutoModelForMaskedLM

from zhbert.studies.modes import ModeRow, literature_claims


def _row(task, mode, rep, *scores):
    import statistics

    return ModeRow(
        task, task, mode, rep, "f1", list(scores), statistics.fmean(scores), statistics.stdev(scores) if len(scores) > 1 else 0.0
    )


def test_literature_claims_read_the_numbers():
    rows = [
        _row("matching", "finetune", "cls", 0.80, 0.82),
        _row("matching", "finetune", "scalar-mix", 0.805, 0.815),
        _row("matching", "frozen", "cls", 0.60, 0.62),
        _row("ner", "finetune", "last", 0.90, 0.91),
        _row("ner", "finetune", "scalar-mix", 0.92, 0.93),
        _row("ner", "frozen", "last", 0.80, 0.81),
        _row("ner", "frozen", "scalar-mix", 0.79, 0.80),
    ]
    claims = {c["claim"].split(",")[0]: c for c in literature_claims(rows)}
    assert claims["fine-tuning beats feature-based most clearly on sentence pairs"]["holds"] is True  # +20 vs +11
    assert claims["for pairs"]["holds"] is True  # 81.0 vs 81.0
    assert claims["for tagging"]["holds"] == "partly"  # wins fine-tuned, loses frozen
    rows[0] = _row("matching", "finetune", "cls", 0.70, 0.71)
    assert {c["claim"].split(",")[0]: c for c in literature_claims(rows)}["for pairs"]["holds"] is False
    assert literature_claims(rows[3:])[0]["holds"] is None  # no pairs measured: not claimed either way
    assert claims["for single-text classification"]["holds"] is None  # no Weibo tagging measured
    # Weibo tagging: concat-last-4 beats [CLS] by more than the seed spread when fine-tuned, not when frozen
    rows += [
        _row("tagging", "finetune", "cls", 0.66, 0.67),
        _row("tagging", "finetune", "concat-last-4", 0.685, 0.69),
        _row("tagging", "finetune", "last", 0.70, 0.70),  # not a fusion: does not count
        _row("tagging", "frozen", "cls", 0.50, 0.52),
        _row("tagging", "frozen", "scalar-mix", 0.50, 0.53),
    ]
    single = {c["claim"].split(",")[0]: c for c in literature_claims(rows)}["for single-text classification"]
    assert (
        single["holds"] == "partly"
        and "finetune: best fusion concat-last-4 68.75" in single["evidence"]
        and "(+2.25)" in single["evidence"]
    )


def test_study_modes_end_to_end(tiny_encoder, tmp_path):
    from typer.testing import CliRunner

    from zhbert.cli import app

    out = tmp_path / "modes"
    argv = [
        "study",
        "modes",
        "--output",
        str(out),
        "--encoder",
        str(tiny_encoder),
        "--task",
        "ner",
        "--task",
        "matching",
        "--seed",
        "1",
        "--seed",
        "2",
        "--representation",
        "cls",
        "--representation",
        "last",
        "--representation",
        "scalar-mix",
        "--preset",
        "tiny",
        "--finetune-learning-rate",
        "3e-4",
        "--frozen-learning-rate",
        "2e-3",
    ]
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 0, res.output
    report = json.loads((out / "modes.json").read_text(encoding="utf-8"))
    got = {(r["task"], r["mode"], r["representation"]) for r in report["rows"]}
    grid = {("ner", m, r) for m in ("finetune", "frozen") for r in ("last", "scalar-mix")}  # no cls for token heads
    grid |= {("matching", m, r) for m in ("finetune", "frozen") for r in ("cls", "last", "scalar-mix")}
    grid |= {("ner", "frozen", r) for r in ("embeddings", "second-to-last", "scalar-mix-last-4", "concat-last-4")}  # BERT Table 7
    assert got == grid
    for r in report["rows"]:
        assert len(r["scores"]) == 2 and 0 <= r["mean"] <= 1
        run = json.loads((out / r["task"] / f"{r['mode']}-{r['representation']}-seed2" / "metrics.json").read_text())
        assert run["arguments"]["mode"] == r["mode"] and run["arguments"]["representation"] == r["representation"]
        assert run["arguments"]["seed"] == 2 and run["score"] == r["scores"][1]
        # each mode gets its own learning rate (one shared LR would be the frozen heads' LR as well)
        assert run["arguments"]["learning_rate"] == (3e-4 if r["mode"] == "finetune" else 2e-3)
        assert not (out / r["task"] / f"{r['mode']}-{r['representation']}-seed2" / "model").exists()
    table = (out / "modes.md").read_text(encoding="utf-8")
    assert "Weighted Sum Last Four Hidden" in table and "claim from the literature" in table
    assert (out / "modes.png").read_bytes()[:4] == b"\x89PNG"
    # a rerun finds every run done and rewrites the same table
    again = CliRunner().invoke(app, argv)
    assert again.exit_code == 0 and (out / "modes.md").read_text(encoding="utf-8") == table

    # a study run in parts: a second file of the same encoder adds Weibo tagging and replaces one cell
    from dataclasses import asdict

    part = tmp_path / "part" / "modes.json"
    part.parent.mkdir()
    tagging = [_row("tagging", "finetune", "cls", 0.66, 0.67), _row("tagging", "finetune", "concat-last-4", 0.69, 0.70)]
    rerun = _row("matching", "frozen", "cls", 0.61, 0.63)
    part.write_text(json.dumps({"meta": {"encoder": str(tiny_encoder)}, "rows": [asdict(r) for r in tagging + [rerun]]}), encoding="utf-8")
    merged = tmp_path / "merged"
    argv_merge = ["study", "modes-report", "--from", str(out / "modes.json"), "--from", str(part), "--output", str(merged)]
    res = CliRunner().invoke(app, argv_merge)
    assert res.exit_code == 0, res.output
    report_m = json.loads((merged / "modes.json").read_text(encoding="utf-8"))
    cells = {(r["task"], r["mode"], r["representation"]): r for r in report_m["rows"]}
    assert set(cells) == got | {("tagging", "finetune", "cls"), ("tagging", "finetune", "concat-last-4")}
    assert cells["matching", "frozen", "cls"]["scores"] == [0.61, 0.63]  # the later file wins
    single = next(c for c in report_m["claims"] if c["claim"].startswith("for single-text"))
    assert single["holds"] is True and "(+3.00)" in single["evidence"]  # measurable only once merged
    assert [m["file"] for m in report_m["meta"]["merged_from"]] == [str(out / "modes.json"), str(part)]
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"meta": {"encoder": "base"}, "rows": []}), encoding="utf-8")
    res = CliRunner().invoke(app, ["study", "modes-report", "--from", str(part), "--from", str(other), "--output", str(merged)])
    assert res.exit_code == 1 and "other.json: encoder 'base'" in res.output and "do not compare" in res.output


def _fresh_tiny_start():
    """A tiny masked LM built as a from-scratch pretraining run builds it (seed 42, sinusoids)."""
    from zhbert.tokenizer import build_tokenizer
    from zhbert.training.mlm_model import SparseBertForMaskedLM
    from zhbert.training.positions import init_positions_sinusoidal
    from zhbert.training.sizes import bert_config

    torch.manual_seed(42)
    model = SparseBertForMaskedLM(bert_config("tiny", len(build_tokenizer()), max_position_embeddings=512))
    init_positions_sinusoidal(model)
    return model


def test_study_masking_end_to_end(tmp_path, pd_sentences):
    from typer.testing import CliRunner

    from zhbert.cli import app

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join("".join(pd_sentences[i : i + 5]) for i in range(0, 600, 5)) + "\n", encoding="utf-8")
    out = tmp_path / "masking"
    res = CliRunner().invoke(
        app,
        [
            "study",
            "masking",
            "--corpus",
            str(corpus),
            "--output",
            str(out),
            "--masking",
            "char",
            "--masking",
            "wwm",
            "--nsp",
            "no",
            "--size",
            "tiny",
            "--steps",
            "4",
            "--batch-size",
            "4",
            "--max-length",
            "64",
            "--task",
            "ner",
            "--task",
            "matching",
            "--preset",
            "tiny",
            "--fill-mask-sentences",
            "40",
            "--learning-rate",
            "1e-4",
            "--pretrain-learning-rate",
            "1e-3",
        ],
    )
    assert res.exit_code == 0, res.output
    rows = json.loads((out / "masking.json").read_text(encoding="utf-8"))["rows"]
    assert [(r["masking"], r["nsp"]) for r in rows] == [("none", False), ("char", False), ("wwm", False)]
    # the control 'none': the runs' exact starting weights (seed 42, sinusoidal positions), never trained
    untrained, start = AutoModelForMaskedLM.from_pretrained(out / "pretrain" / "none" / "final"), _fresh_tiny_start()
    for name, tensor in start.state_dict().items():
        assert torch.equal(untrained.state_dict()[name], tensor), name
    assert json.loads((out / "pretrain" / "none" / "final" / "zhbert_pretrain.json").read_text())["max_steps"] == 0
    assert rows[0]["steps"] == rows[0]["tokens"] == 0 and rows[0]["final_loss"] is None and set(rows[0]["scores"]) == {"ner", "matching"}
    none_run = json.loads((out / "finetune" / "none" / "ner-seed1" / "metrics.json").read_text())
    assert none_run["arguments"]["encoder"].endswith("pretrain/none/final")
    trained = AutoModelForMaskedLM.from_pretrained(out / "pretrain" / "char" / "final")
    assert not torch.equal(trained.bert.embeddings.word_embeddings.weight, untrained.bert.embeddings.word_embeddings.weight)
    for r in rows[1:]:
        assert r["tokens"] == 4 * 4 * 64 and r["pretrain_seconds"] > 0 and r["final_loss"] > 0
        assert set(r["scores"]) == {"ner", "matching"}
        # whole-word blanks cover more characters than 40 sentences' worth of single blanks would miss
        assert r["fill_mask"]["word"]["blanks"] > 0 and r["fill_mask"]["char"]["blanks"] > 0
        assert all(0 <= r["fill_mask"][u]["accuracy"] <= 1 for u in ("char", "word"))
        run = json.loads((out / "finetune" / r["masking"] / "ner-seed1" / "metrics.json").read_text())
        assert run["arguments"]["encoder"].endswith(f"pretrain/{r['masking']}/final")
        assert run["arguments"]["learning_rate"] == 1e-4
        pretrained = json.loads((out / "pretrain" / r["masking"] / "final" / "zhbert_pretrain.json").read_text())
        assert pretrained["learning_rate"] == 1e-3
    table = (out / "masking.md").read_text(encoding="utf-8")
    assert table.count("\n") == 5 and "| none | no | 0 | 0 |" in table and "| fill-mask char acc | whole-word acc |" in table
    assert (out / "masking.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_study_masking_continues_from_a_checkpoint(tmp_path, pd_sentences, tiny_encoder):
    """--init: every masking continues from the same checkpoint, and the checkpoint itself is
    scored as the row 'init' (no pretraining), so the table shows what each masking added."""
    from transformers import AutoConfig
    from typer.testing import CliRunner

    from zhbert.cli import app

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join("".join(pd_sentences[i : i + 5]) for i in range(0, 300, 5)) + "\n", encoding="utf-8")
    out = tmp_path / "masking"
    res = CliRunner().invoke(
        app,
        [
            "study",
            "masking",
            "--corpus",
            str(corpus),
            "--output",
            str(out),
            "--init",
            str(tiny_encoder),
            "--masking",
            "ernie",
            "--nsp",
            "no",
            "--steps",
            "3",
            "--batch-size",
            "4",
            "--max-length",
            "64",
            "--task",
            "cws",
            "--preset",
            "tiny",
            "--fill-mask-sentences",
            "30",
        ],
    )
    assert res.exit_code == 0, res.output
    report = json.loads((out / "masking.json").read_text(encoding="utf-8"))
    assert report["meta"]["init"] == str(tiny_encoder)
    rows = report["rows"]
    assert [(r["masking"], r["steps"]) for r in rows] == [("init", 0), ("ernie", 3)]
    assert all(set(r["scores"]) == {"cws"} and r["fill_mask"]["word"]["blanks"] > 0 for r in rows)
    # the continued model has the checkpoint's shape (not the --size default) and moved away from it
    final = out / "pretrain" / "ernie" / "final"
    assert AutoConfig.from_pretrained(final).hidden_size == 32
    assert rows[0]["fill_mask"]["char"]["perplexity"] != rows[1]["fill_mask"]["char"]["perplexity"]
    runs = [
        json.loads((out / "finetune" / n / "cws-seed1" / "metrics.json").read_text())["arguments"]["encoder"] for n in ("init", "ernie")
    ]
    assert runs == [str(tiny_encoder), str(final)]
    assert "| init | no | 0 | 0 |" in (out / "masking.md").read_text(encoding="utf-8")


def test_study_masking_names_a_missing_init(tmp_path):
    from typer.testing import CliRunner

    from zhbert.cli import app

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("人民日报社论。\n", encoding="utf-8")
    res = CliRunner().invoke(
        app,
        [
            "study",
            "masking",
            "--corpus",
            str(corpus),
            "--output",
            str(tmp_path / "m"),
            "--init",
            str(tmp_path / "nowhere"),
            "--task",
            "cws",
        ],
    )
    assert res.exit_code != 0 and "nowhere" in res.output


def test_fill_mask_scoring_loads_an_fp16_export_as_fp32(tiny_encoder, tmp_path):
    """Bundled models are stored in fp16; scoring one in fp16 on a CPU took 100x longer."""
    import json

    import torch

    from zhbert.export import export_model
    from zhbert.studies.masking import load_masked_lm

    exported = export_model(tiny_encoder, tmp_path / "fp16")
    from safetensors import safe_open

    with safe_open(str(exported / "model.safetensors"), framework="pt") as f:
        assert {f.get_tensor(k).dtype for k in f.keys()} == {torch.float16}  # stored as halves
    assert json.loads((exported / "config.json").read_text())["dtype"] == "float32"  # run as fp32 everywhere
    assert {p.dtype for p in load_masked_lm(exported).parameters()} == {torch.float32}


def test_study_long_end_to_end(tiny_encoder, tokenizer, tmp_path):
    """`zhbert study long` on real MSRA test sentences joined into long documents: the same
    characters read sentence by sentence, truncated, in windows of four strides and in windows
    aligned to sentences."""
    from typer.testing import CliRunner

    from zhbert.cli import app
    from zhbert.data.peoples_daily import NER_LABELS
    from zhbert.heads import HeadConfig, new_head, save_head
    from zhbert.studies.long_text import long_documents

    model = save_head(
        new_head(tiny_encoder, HeadConfig(kind="token", labels=NER_LABELS, scheme="BIO", window=32)), tokenizer, tmp_path / "ner"
    )
    out = tmp_path / "long"
    res = CliRunner().invoke(
        app, ["study", "long", "--output", str(out), "--model", str(model), "--min-chars", "300", "--max-sentences", "60"]
    )
    assert res.exit_code == 0, res.output
    rows = json.loads((out / "long.json").read_text())["rows"]
    assert [r["stride"] for r in rows] == [None, None, 8, 15, 22, 30, None, None]  # window 32: a body of 30 tokens
    assert [r["align"] for r in rows[-3:]] == ["token", "sentence", "packed"]
    assert len({r["characters"] for r in rows}) == 1  # every setting reads the same characters
    assert rows[0]["texts"] > rows[1]["texts"] == rows[2]["texts"] >= 1
    assert "| documents, truncated to one window | 32 |" in (out / "long.md").read_text()
    docs, used = long_documents([{"text": "甲乙丙", "tags": ["O"] * 3}] * 5, 7)
    assert used == 3 and [d["text"] for d in docs] == ["甲乙丙" * 3]


def test_study_long_classification_end_to_end(tiny_encoder, tmp_path):
    """`zhbert study long-classification` on real 1,000+ character documents (post-in-news: a
    Weibo post hidden in a news transcript): truncation, windows pooled by mean and by mean-max,
    each model also read the other way, every reading also scored by where the post is; a rerun resumes."""
    from typer.testing import CliRunner

    from zhbert.cli import app
    from zhbert.data.tasks import load_task_data

    out = tmp_path / "longcls"
    argv = ["study", "long-classification", "-o", str(out), "--encoder", str(tiny_encoder), "--preset", "tiny", "--seed", "1"]
    argv += ["--learning-rate", "3e-4"]
    res = CliRunner().invoke(app, argv + ["--dataset", "post-in-news"])
    assert res.exit_code == 0, res.output
    rows = json.loads((out / "long_classification.json").read_text(encoding="utf-8"))["rows"]
    assert [(r["setting"], r["read"]) for r in rows] == [
        ("truncated", "as trained"),
        ("windows-mean", "as trained"),
        ("windows-mean-max", "as trained"),
        ("truncated", "every window (half-window stride)"),
        ("windows-mean", "truncated (first window)"),
        ("windows-mean-max", "truncated (first window)"),
        ("truncated", "the post alone"),
        ("windows-mean", "the post alone"),
        ("windows-mean-max", "the post alone"),
    ]
    args = {s: json.loads((out / f"{s}-seed1" / "metrics.json").read_text())["arguments"] for s in ("truncated", "windows-mean-max")}
    assert args["truncated"]["truncate"] and not args["windows-mean-max"]["truncate"]
    assert args["truncated"]["learning_rate"] == args["windows-mean-max"]["learning_rate"] == 3e-4
    assert args["windows-mean-max"]["window_pool"] == "mean-max" and args["truncated"]["dataset"] == "post-in-news"
    rows, alone = rows[:6], rows[6:]
    assert all(r["evidence_first_window"] is None for r in alone)
    # every reading split by where the post sits; the two parts add up to the whole
    scored = load_task_data("tagging", "post-in-news").test[: args["truncated"]["max_eval_samples"]]
    n_first = rows[0]["documents_evidence_first_window"]
    assert 0 <= n_first < len(scored) and all(r["documents_evidence_first_window"] == n_first for r in rows)
    # the tiny encoder's window (64 positions) holds at least 60 characters of this text and at most 200
    assert (
        sum(r["position"] + len(r["post"]) <= 60 for r in scored) <= n_first <= sum(r["position"] + len(r["post"]) <= 200 for r in scored)
    )
    for r in rows:
        assert len(r["accuracy"]) == 1 and 0 <= r["accuracy"][0] <= 1
        parts = (r["evidence_first_window"][0] * n_first if n_first else 0) + r["evidence_later"][0] * (len(scored) - n_first)
        assert parts == pytest.approx(r["accuracy"][0] * len(scored))
    # the saved model keeps the pooling it was trained with (the cross-read changes only truncation)
    from zhbert.heads import load_head

    assert load_head(out / "windows-mean-max-seed1" / "model").head.window_pool == "mean-max"
    table = (out / "long_classification.md").read_text(encoding="utf-8")
    assert f"evidence in the first window ({n_first} documents) | evidence later |" in table
    assert (out / "long_classification.png").read_bytes()[:4] == b"\x89PNG"
    again = CliRunner().invoke(app, argv + ["--dataset", "post-in-news"])
    assert again.exit_code == 0 and (out / "long_classification.md").read_text(encoding="utf-8") == table


def test_study_words_end_to_end(tiny_encoder, tmp_path, pd_sentences):
    """`zhbert study words` on real PKU sentences (preset tiny): every condition is a recipe run with
    its flags (the lexicon and bigram heads, word2vec starts, the word-masked encoder), the table and
    plot are written, and a rerun resumes instead of training again."""
    from typer.testing import CliRunner

    from zhbert.cli import app
    from zhbert.static_embeddings import train_static_embeddings

    vectors = tmp_path / "w2v"
    train_static_embeddings(str(tiny_encoder), vectors, word_dim=50, bigram_dim=8, min_count=1, epochs=1, sentences=pd_sentences[:300])
    out = tmp_path / "words"
    argv = ["study", "words", "-o", str(out), "--encoder", str(tiny_encoder), "--wwm-encoder", str(tiny_encoder)]
    argv += ["--tasks", "cws=pku", "--preset", "tiny", "--seed", "1", "--bigram-dim", "8", "--static-embeddings", str(vectors)]
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 0, res.output
    rows = json.loads((out / "words.json").read_text(encoding="utf-8"))["rows"]
    names = ["neither", "lexicon", "bigrams", "fine-tuning (lexicon + bigrams)", "word2vec start (lexicon + bigrams)"]
    names += ["pretraining (word masking)", "both"]
    assert [r["condition"] for r in rows] == names
    folders = ["neither", "lexicon", "bigrams", "fine-tuning", "word2vec-start", "pretraining", "both"]
    records = {name: json.loads((out / "cws-pku" / f / "seed1" / "metrics.json").read_text()) for name, f in zip(names, folders)}
    heads = {name: r["head"] for name, r in records.items()}
    assert records["word2vec start (lexicon + bigrams)"]["arguments"]["static_embeddings"] == str(vectors)
    assert records["fine-tuning (lexicon + bigrams)"]["arguments"]["static_embeddings"] is None
    assert (heads["neither"]["lexicon"], heads["neither"]["bigram_dim"]) == (None, 0)
    assert (heads["lexicon"]["lexicon"], heads["lexicon"]["bigram_dim"]) == ("jieba", 0)
    assert (heads["bigrams"]["lexicon"], heads["bigrams"]["bigram_dim"]) == (None, 8)
    assert (heads["both"]["lexicon"], heads["both"]["bigram_dim"]) == ("jieba", 8)
    assert (out / "words.png").stat().st_size > 0 and "| cws-pku (zhbert.f1) |" in (out / "words.md").read_text()
    mtime = (out / "cws-pku" / "both" / "seed1" / "metrics.json").stat().st_mtime
    assert CliRunner().invoke(app, argv).exit_code == 0
    assert (out / "cws-pku" / "both" / "seed1" / "metrics.json").stat().st_mtime == mtime
    # --conditions keeps the named ones in the study's order, from the finished runs
    res = CliRunner().invoke(app, argv + ["--conditions", "both,neither"])
    assert res.exit_code == 0, res.output
    rows = json.loads((out / "words.json").read_text(encoding="utf-8"))["rows"]
    assert [r["condition"] for r in rows] == ["neither", "both"]
    assert (out / "cws-pku" / "both" / "seed1" / "metrics.json").stat().st_mtime == mtime
    res = CliRunner().invoke(app, argv + ["--conditions", "neither,lexicon-only"])
    assert res.exit_code != 0 and "--conditions: lexicon-only is not one of neither, lexicon, bigrams" in res.output


def test_recipe_options_are_what_the_flags_give():
    from zhbert.studies import recipe_options

    got = recipe_options("--crf --lexicon jieba --learning-rate 5e-4 --epochs 3 --no-save-model")
    # --epochs 3 repeats the default and is still returned: it must override a bench's own budget
    assert got == {"crf": True, "lexicon": "jieba", "learning_rate": 5e-4, "epochs": 3.0, "save_model": False}
    assert recipe_options("") == {}
    with pytest.raises(SystemExit):  # checked as the command line checks it
        recipe_options("--learning-rate fast")


def test_calibrated_steps_divide_the_budget_by_the_measured_rate():
    from zhbert.studies.objectives import calibrated_steps

    log = [{"step": 2, "cpu_s": 10.0}, {"step": 4, "cpu_s": 11.0}, {"step": 12, "cpu_s": 15.0}]  # 0.5 s a step after warm-up
    assert calibrated_steps(log, 100) == 200
    with pytest.raises(ValueError, match="fewer than two steps"):
        calibrated_steps(log[:1], 100)
    resumed = log + [{"step": 10, "cpu_s": 3.0}, {"step": 14, "cpu_s": 5.0}]  # a new process resumed at step 8: its count restarts
    assert calibrated_steps(resumed, 100) == 200


def test_study_objectives_end_to_end(tmp_path, pd_sentences, tiny_encoder):
    """Both objectives continue the same checkpoint for the same CPU seconds (steps from a calibration
    run each); ELECTRA's fill-mask comes from its generator and from an MLM head trained on it."""
    from typer.testing import CliRunner

    from zhbert.cli import app
    from zhbert.studies.objectives import _log, calibrated_steps

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join("".join(pd_sentences[i : i + 5]) for i in range(0, 300, 5)) + "\n", encoding="utf-8")
    out = tmp_path / "objectives"
    args = ["study", "objectives", "--corpus", str(corpus), "--output", str(out), "--init", str(tiny_encoder), "--cpu-seconds", "2",
            "--calibration-steps", "6", "--mlm-head-steps", "2", "--batch-size", "4", "--max-length", "64", "--task", "cws",
            "--preset", "tiny", "--fill-mask-sentences", "30"]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    rows = json.loads((out / "objectives.json").read_text(encoding="utf-8"))["rows"]
    assert [r["objective"] for r in rows] == ["init", "mlm", "electra"]
    for r in rows[1:]:
        assert r["steps"] == calibrated_steps(_log(out / "calibrate" / r["objective"]), 2) and r["tokens"] == r["steps"] * 4 * 64
        assert 0.5 < r["cpu_seconds"] < 8 and set(r["scores"]) == {
            "cws"
        }  # about the budget of 2 s and r["fill_mask"]["word"]["blanks"] > 0
    assert (out / "pretrain" / "electra" / "final" / "generator" / "config.json").is_file()
    assert rows[2]["fill_mask_head"]["char"]["blanks"] > 0 and not rows[1]["fill_mask_head"]
    assert rows[2]["fill_mask"] != rows[2]["fill_mask_head"]
    table = (out / "objectives.md").read_text(encoding="utf-8")
    assert "| init | 0 | 0 |" in table and "(generator);" in table and "(MLM head)" in table
