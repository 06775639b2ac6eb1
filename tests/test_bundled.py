"""The bundled models: each loads with zhbert.load, and re-evaluating it with its recipe
(`--evaluate_only`) reproduces the scores recorded next to it and in bench/RESULTS.md."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

import zhbert
from zhbert.models_registry import BUNDLED, BUNDLED_DIR

ROOT = Path(__file__).resolve().parents[1]
RECIPES = {"cws": "cws.py", "ner": "ner.py", "tagging": "weibo_tagging.py", "matching": "matching.py"}


def test_every_bundled_model_is_there_and_small():
    sizes = {}
    for name, (folder, how) in BUNDLED.items():
        path = BUNDLED_DIR / folder
        assert (path / "config.json").is_file() and (path / "model.safetensors").is_file(), f"{name} missing: {how}"
        sizes[name] = sum(f.stat().st_size for f in path.iterdir())
    assert sum(sizes.values()) < 100e6, sizes  # the repository's budget for all bundled weights


@pytest.mark.parametrize("name", list(RECIPES))
def test_bundled_model_reproduces_its_recorded_score(name, shared, tmp_path):
    recorded = json.loads((BUNDLED_DIR / name / "metrics.json").read_text(encoding="utf-8"))
    dataset = recorded["arguments"]["dataset"]
    out = subprocess.run([sys.executable, str(ROOT / "recipes" / RECIPES[name]), "--dataset", dataset,
                          "--evaluate_only", str(BUNDLED_DIR / name), "--output_dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    again = json.loads((tmp_path / "metrics.json").read_text(encoding="utf-8"))
    assert again["headline"] == recorded["headline"] and again["score"] == pytest.approx(recorded["score"], abs=5e-4)  # one flipped argmax in 2,000 examples at most
    pred = zhbert.load(name)
    example = ("花呗怎么还款", "花呗如何还钱") if name == "matching" else "江泽民主席在北京会见了美国总统克林顿。"
    assert pred(example) is not None
