"""The bundled models: each loads with zhbert.load, and re-evaluating it with its recipe
(`--evaluate-only`) reproduces the scores recorded next to it and in bench/RESULTS.md."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import zhbert
from zhbert.models_registry import BUNDLED, BUNDLED_DIR

ROOT = Path(__file__).resolve().parents[1]
RECIPES = {"cws": "cws.py", "cws-fast": "cws.py", "ner": "ner.py", "tagging": "tagging.py", "matching": "matching.py"}


def test_every_bundled_model_is_there_and_small():
    sizes = {}
    for name, (folder, how) in BUNDLED.items():
        path = BUNDLED_DIR / folder
        weights = ("zhbert_pos.json", "pos_head.safetensors") if name == "pos" else ("config.json", "model.safetensors")
        assert all((path / f).is_file() for f in weights), f"{name} missing: {how}"
        sizes[name] = sum(f.stat().st_size for f in path.iterdir())
    assert sum(sizes.values()) < 100e6, sizes  # the repository's budget for all bundled weights
    assert sizes["pos"] < 0.3e6  # a head over cws's features, not a model of its own


@pytest.mark.parametrize("name", list(RECIPES))
def test_bundled_model_reproduces_its_recorded_score(name, shared, tmp_path):
    recorded = json.loads((BUNDLED_DIR / name / "metrics.json").read_text(encoding="utf-8"))
    dataset = recorded["arguments"]["dataset"]
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "recipes" / RECIPES[name]),
            "--dataset",
            dataset,
            "--evaluate-only",
            str(BUNDLED_DIR / name),
            "--output-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    again = json.loads((tmp_path / "metrics.json").read_text(encoding="utf-8"))
    assert again["headline"] == recorded["headline"] and again["score"] == pytest.approx(
        recorded["score"], abs=5e-4
    )  # one flipped argmax in 2,000 examples at most
    pred = zhbert.load(name)
    example = ("手机没电了怎么办", "手机没电了该怎么办") if name == "matching" else "江泽民主席在北京会见了美国总统克林顿。"
    assert pred(example) is not None


def test_bundled_pos_reproduces_its_recorded_score(shared):
    """The POS head over cws: cws's words and the head's tags on the held-out People's Daily
    sentences score what its metrics.json says (the same scorer as bench/pos.py)."""
    from zhbert.pos_on_segmenter import evaluate

    recorded = json.loads((BUNDLED_DIR / "pos" / "metrics.json").read_text(encoding="utf-8"))
    metrics, sentences = evaluate(zhbert.load("pos"))
    assert sentences == recorded["test_sentences"] == 2170
    assert metrics["tagged"]["overall"]["f1"] == pytest.approx(recorded["score"], abs=5e-4)
    assert metrics["words"]["f1"] == pytest.approx(recorded["metrics"]["words"]["f1"], abs=5e-4)


def test_zhbert_demo_serves_the_bundled_models():
    """The README's main command: `zhbert demo` on the bundled models answers on every tab."""
    import socket
    import time

    from gradio_client import Client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "zhbert", "demo", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        for _ in range(180):
            try:
                client = Client(f"http://127.0.0.1:{port}/", verbose=False)
                break
            except Exception:
                assert proc.poll() is None, proc.stderr.read()[-2000:]
                time.sleep(0.5)
        else:
            pytest.fail("zhbert demo did not answer within 90 s")
        text = "国务院总理李鹏在人民大会堂会见了日本首相桥本龙太郎。"
        words, spans = client.predict(text, "", api_name="/segment")
        assert "".join(s["text"] for s in spans) == text
        _, ents = client.predict(text, "", api_name="/ner")
        assert all(text[e["start"] : e["end"]] == e["text"] for e in ents)
        assert client.predict("今天心情特别好", api_name="/tagging")["label"]
        assert client.predict("手机没电了怎么办", "手机没电了该怎么办", api_name="/matching")["label"] == "paraphrase"
        filled, cands = client.predict("中国的首都是[MASK][MASK]。", api_name="/fill_mask")
        assert len(cands) == 2 and "[MASK]" not in filled
        heatmap, table = client.predict(text, 4, 1, api_name="/attention")
        assert len(table["data"]) == 4 and "layer 4, head 1" in heatmap
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_person_names_whole_or_split():
    """The PKU standard splits a name into surname and given name; person_names="whole" joins
    the words inside each PER entity of the bundled ner model, never cutting a word."""
    from zhbert.api import Span, join_words

    seg = zhbert.load("cws")
    text = "国务院总理李鹏在人民大会堂会见了日本首相桥本龙太郎。"
    split = [w.text for w in seg(text)]
    whole = [w.text for w in seg(text, person_names="whole")]
    assert "李" in split and "鹏" in split and "李鹏" not in split
    assert "李鹏" in whole and "".join(whole) == text and "国务院" in whole
    assert [[w.text for w in ws] for ws in seg(["江泽民主席在北京会见了克林顿。", text], person_names="whole")][1] == whole
    with pytest.raises(ValueError, match="person_names must be one of split, whole"):
        seg(text, person_names="merged")
    # an entity that does not start and end on word boundaries leaves the words alone
    words = [Span("王小", 0, 2), Span("明天", 2, 4)]
    assert join_words("王小明天", words, [(0, 3)]) == words
    assert [w.text for w in join_words("王小明天", words, [(0, 4)])] == ["王小明天"]


def test_evaluate_only_takes_a_bundled_name(shared, tmp_path):
    """``zhbert train ner --evaluate-only ner`` scores the bundled folder, as ``--encoder ner`` trains on it."""
    by_name = zhbert.train("ner", dataset="weibo-per-loc-org", evaluate_only="ner", max_eval_samples=60, output_dir=str(tmp_path / "a"))
    by_path = zhbert.train(
        "ner", dataset="weibo-per-loc-org", evaluate_only=str(BUNDLED_DIR / "ner"), max_eval_samples=60, output_dir=str(tmp_path / "b")
    )
    assert by_name["score"] == by_path["score"] > 0.2
    with pytest.raises(zhbert.errors.ZhbertError, match="unknown model 'nerr'"):
        zhbert.train("ner", dataset="weibo-per-loc-org", evaluate_only="nerr", output_dir=str(tmp_path / "c"))
