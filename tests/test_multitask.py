"""One shared encoder with several heads: saved as one folder, every head in one encoder
pass giving exactly what each head gives alone, trained and scored by `zhbert train
multitask`, compared with single-task runs by `zhbert study multitask`."""

import json

import pytest
import torch

import zhbert
from zhbert.api import Classification, MultiTask, Span
from zhbert.data.peoples_daily import NER_LABELS
from zhbert.heads import HeadConfig, predict_scores, predict_tags
from zhbert.heads.multitask import load_multitask, new_multitask, predict_all, save_multitask

TEXTS = ["江泽民主席在北京会见了克林顿。", "", "长" * 150, "今天心情特别好😀", "ＡＢＣ１２３公司在  上海 开业"]


@pytest.fixture(scope="module")
def folder(tiny_encoder, tokenizer, tmp_path_factory):
    torch.manual_seed(0)
    heads = {
        "ner": HeadConfig(kind="token", labels=NER_LABELS, scheme="BIO", crf=True, window=64),
        "cws": HeadConfig(kind="token", labels=["B", "M", "E", "S"], scheme="BMES-untyped", window=64, representation="scalar-mix"),
        "tagging": HeadConfig(kind="sequence", labels=["a", "b", "c"], window=64),
        "multi": HeadConfig(kind="sequence", labels=["x", "y"], multi_label=True, thresholds=[0.5, 0.5], window=64, window_pool="mean-max"),
    }
    model = new_multitask(tiny_encoder, heads)
    with torch.no_grad():  # heads away from their zero start, so a mix-up between heads would show
        for p in model.tasks.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return save_multitask(model, tokenizer, tmp_path_factory.mktemp("mt") / "model")


def test_one_folder_one_encoder(folder):
    from safetensors import safe_open

    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        keys = list(f.keys())
    assert sum(k.startswith("bert.embeddings.word_embeddings") for k in keys) == 1  # the encoder is stored once
    assert {k.split(".")[1] for k in keys if k.startswith("tasks.")} == {"ner", "cws", "tagging", "multi"}
    assert not any(".bert." in k for k in keys)
    config = json.loads((folder / "config.json").read_text())
    assert config["architectures"] == ["ZhBertMultiTask"] and set(config["zhbert_heads"]) == {"ner", "cws", "tagging", "multi"}


def test_one_pass_equals_each_head_alone(folder, tokenizer):
    model = load_multitask(folder)
    together = predict_all(model, tokenizer, TEXTS, batch_size=3)
    for name in ("ner", "cws"):
        alone = predict_tags(model.tasks[name], tokenizer, TEXTS)
        assert [a.tags for a in alone] == [b.tags for b in together[name]]
        for a, b in zip(alone, together[name]):
            assert max([abs(x - y) for x, y in zip(a.scores, b.scores)] or [0]) < 1e-5
    for name in ("tagging", "multi"):
        assert torch.allclose(predict_scores(model.tasks[name], tokenizer, TEXTS), together[name], atol=1e-5)


def test_load_gives_every_head(folder):
    mt = zhbert.load(str(folder))
    assert isinstance(mt, MultiTask) and set(mt.heads) == {"ner", "cws", "tagging", "multi"}
    out = mt(TEXTS)
    assert len(out) == len(TEXTS) and set(out[0]) == {"ner", "cws", "tagging", "multi"}
    assert [w.text for w in out[0]["cws"]] == [w.text for w in mt["cws"](TEXTS[0])]
    assert out[0]["ner"] == mt["ner"](TEXTS[0]) and all(isinstance(s, Span) for s in out[0]["ner"])
    assert isinstance(out[3]["tagging"], Classification) and out[3]["tagging"] == mt["tagging"](TEXTS[3])
    assert mt(TEXTS[0]) == out[0]  # one text in, one result out
    with pytest.raises(KeyError, match="this model's heads are cws, multi, ner, tagging"):
        mt["matching"]


def test_train_multitask_and_the_study(tiny_encoder, tmp_path):
    from typer.testing import CliRunner

    from zhbert.cli import app
    from zhbert.recipes import RECIPES

    recipe = RECIPES["multitask"]
    args = recipe.arguments(
        encoder=str(tiny_encoder),
        dataset="ner=msra,tagging=usual,matching=lcqmc",
        preset="tiny",
        window=64,
        output_dir=str(tmp_path / "mt"),
    )
    record = recipe.run(args)
    # a token, a sequence and a pair head trained together, each scored by its own recipe
    assert set(record["tasks"]) == {"ner", "tagging", "matching"}
    assert record["tasks"]["ner"]["dataset"] == "ner-msra" and record["tasks"]["tagging"]["headline"] == "macro_f1"
    assert record["tasks"]["matching"]["dataset"] == "matching-lcqmc" and record["tasks"]["matching"]["headline"] == "accuracy"
    mt = zhbert.load(str(tmp_path / "mt" / "model"))
    assert set(mt.heads) == {"ner", "tagging", "matching"}
    assert mt["matching"](("花呗怎么还款", "花呗如何还钱")).label in {"0", "1"}
    with pytest.raises(ValueError, match="recipe=dataset pairs"):
        recipe.run(recipe.arguments(encoder=str(tiny_encoder), dataset="ner=msra,poetry=tang", preset="tiny"))
    single_task = ({"best_epoch_on_dev": True}, {"carried_at_encoder_lr": True}, {"fgm_epsilon": 1.0}, {"rdrop_alpha": 1.0})
    single_task += ({"carry_output_layer": True},)
    for flag in single_task + ({"classifier_dropout": 0.0}, {"hidden_dropout": 0.2}):
        name = "--" + next(iter(flag)).replace("_", "-")
        with pytest.raises(ValueError, match=f"{name}: for one task's recipe, not the multi-task model"):
            recipe.run(recipe.arguments(encoder=str(tiny_encoder), dataset="ner=msra,cws=pku", preset="tiny", **flag))
    res = CliRunner().invoke(
        app,
        [
            "study",
            "multitask",
            "--encoder",
            str(tiny_encoder),
            "--tasks",
            "ner=msra,tagging=usual",
            "--preset",
            "tiny",
            "--learning-rate",
            "3e-4",
            "--output",
            str(tmp_path / "s"),
        ],
    )
    assert res.exit_code == 0, res.output
    # the one learning rate reaches every run, single- and multi-task alike
    runs = [tmp_path / "s" / "single" / f"{t}-seed1" for t in ("ner", "tagging")] + [tmp_path / "s" / "multitask" / "seed1"]
    assert [json.loads((r / "metrics.json").read_text())["arguments"]["learning_rate"] for r in runs] == [3e-4] * 3
    rows = json.loads((tmp_path / "s" / "multitask.json").read_text())["rows"]
    assert [r["task"] for r in rows] == ["ner", "tagging"] and all(0 <= r["multi"]["mean"] <= 1 for r in rows)
    assert "| ner | ner-msra (overall.f1) |" in (tmp_path / "s" / "multitask.md").read_text()
    assert (tmp_path / "s" / "multitask.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_predict_cli_writes_every_head(folder):
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "zhbert", "predict", "--model", str(folder)],
        input="江泽民主席在北京会见了克林顿。\n今天心情特别好\n".encode(),
        capture_output=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    lines = [json.loads(l) for l in r.stdout.decode().splitlines()]
    assert [l["text"] for l in lines] == ["江泽民主席在北京会见了克林顿。", "今天心情特别好"]
    assert set(lines[0]) == {"text", "ner", "cws", "tagging", "multi"}
    assert "".join(w["text"] for w in lines[0]["cws"]["words"]) == lines[0]["text"] and "entities" in lines[0]["ner"]


def test_a_pair_head_is_called_on_its_own(tiny_encoder, tokenizer, tmp_path):
    from zhbert.api import Match

    heads = {
        "ner": HeadConfig(kind="token", labels=NER_LABELS, scheme="BIO", window=64),
        "matching": HeadConfig(kind="pair", labels=["0", "1"], window=64),
    }
    mt = zhbert.load(str(save_multitask(new_multitask(tiny_encoder, heads), tokenizer, tmp_path / "m")))
    out = mt(["花呗怎么还款", "江泽民在北京"])
    assert [set(o) for o in out] == [{"ner"}, {"ner"}]  # one pass over the heads that read single texts
    assert isinstance(mt["matching"](("花呗怎么还款", "花呗如何还钱")), Match)
    only_pairs = zhbert.load(
        str(save_multitask(new_multitask(tiny_encoder, {"m": heads["matching"], "n": heads["matching"]}), tokenizer, tmp_path / "p"))
    )
    with pytest.raises(ValueError, match="every head of this model reads pairs"):
        only_pairs("花呗怎么还款")
