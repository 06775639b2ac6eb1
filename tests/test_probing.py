"""Layer-wise probing: a numeric oracle on planted signal, and `zhbert probe` end to end
on a tiny encoder with real People's Daily sentences and LCQMC pairs."""

import json

import pytest
import torch

from zhbert.probing import centre_of_gravity, probe_examples, train_probe


def test_probe_finds_the_layer_that_holds_the_label():
    """Labels are linearly readable from layer 2 only: its probe is near-perfect, the
    other layers are near chance, and the scalar mix puts its weight on layer 2."""
    g = torch.Generator().manual_seed(0)
    n, layers, hidden = 1200, 4, 8
    y = torch.randint(0, 3, (n,), generator=g)
    x = torch.randn(n, layers, hidden, generator=g)
    x[:, 2, :3] += 4.0 * torch.nn.functional.one_hot(y, 3).float()
    accs, mix_acc, weights = train_probe(x[:800], y[:800], x[800:], y[800:], classes=3, steps=100)
    assert accs[2] > 0.95 and max(accs[:2] + accs[3:]) < 0.5
    assert mix_acc > 0.9
    assert max(range(layers), key=weights.__getitem__) == 2 and abs(sum(weights) - 1) < 1e-5
    assert centre_of_gravity(weights) == pytest.approx(sum(l * w for l, w in enumerate(weights)))
    assert 1.0 < centre_of_gravity(weights) < 3.0


def test_probe_labels_follow_peoples_daily_words():
    rows = {t: probe_examples(t, 5) for t in ("pos", "boundary", "entity")}
    for t, ex in rows.items():
        assert all(len(e["labels"]) == len(e["text"]) for e in ex), t
    text = rows["boundary"][0]["text"]
    # BMES labels cut the sentence into words that concatenate back to it
    words, cur = [], ""
    for ch, tag in zip(text, rows["boundary"][0]["labels"]):
        cur += ch
        if tag in "ES":
            words.append(cur)
            cur = ""
    assert "".join(words) == text and not cur
    assert all(set(e["labels"]) <= {"O", "PER", "LOC", "ORG"} for e in rows["entity"])


def test_probe_cli_writes_table_and_plots(tiny_encoder, tmp_path):
    from typer.testing import CliRunner

    from zhbert.cli import app

    out = tmp_path / "probe"
    res = CliRunner().invoke(
        app, ["probe", str(tiny_encoder), "--output", str(out), "--sentences", "40", "--pairs", "40", "--pca-layer", "1", "--steps", "30"]
    )
    assert res.exit_code == 0, res.output
    results = json.loads((out / "probe.json").read_text(encoding="utf-8"))
    assert {(r["task"], r["model"]) for r in results} == {
        (t, m) for t in ("pos", "entity", "boundary", "pair") for m in (tiny_encoder.name, "random init")
    }
    for r in results:
        assert len(r["accuracy"]) == 5 and all(0 <= a <= 1 for a in r["accuracy"])  # embeddings + 4 layers
        assert 0 <= r["centre_of_gravity"] <= 4 and abs(sum(r["mix_weights"]) - 1) < 1e-5
    pair = next(r for r in results if r["task"] == "pair")
    assert pair["n_train"] == 20 and pair["n_test"] == 20
    table = (out / "probe.md").read_text(encoding="utf-8").splitlines()
    assert len(table) == 2 + 8 and "centre of gravity" in table[0]
    for png in ("probe_layers.png", "pca_layer1.png"):
        data = (out / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    bad = CliRunner().invoke(app, ["probe", str(tmp_path), "--output", str(out)])
    assert bad.exit_code == 1 and "config.json" in bad.output


def test_remove_position_means_centres_each_position(pd_sentences):
    from zhbert.probing import remove_position_means, token_positions
    from zhbert.tokenizer import build_tokenizer

    examples = [{"text": t} for t in pd_sentences[:20]]
    positions = token_positions(build_tokenizer(), examples, max_len=32)
    assert positions.tolist()[:3] == [0, 1, 2] and int(positions.max()) == 29  # capped at max_len - 2
    torch.manual_seed(0)
    x = torch.randn(len(positions), 8) + positions[:, None].float()  # a strong position code
    y = remove_position_means(x, positions)
    for p in positions.unique():
        rows = y[positions == p]
        assert rows.mean(0).abs().max() < 1e-4
        if len(rows) > 1:  # what remains is the within-position spread, untouched
            assert torch.allclose(rows - rows.mean(0), x[positions == p] - x[positions == p].mean(0), atol=1e-5)
