"""The console script and ``python -m zhbert`` list the planned subcommands."""
import subprocess
import sys

import pytest

PLANNED = ["info", "demo", "pretrain", "train", "predict", "fill-mask", "probe", "study"]


@pytest.mark.parametrize("argv", [[sys.executable, "-m", "zhbert", "--help"], ["zhbert", "--help"]])
def test_help_lists_subcommands(argv):
    import shutil

    if argv[0] == "zhbert":
        exe = shutil.which("zhbert") or str(__import__("pathlib").Path(sys.executable).parent / "zhbert")
        argv = [exe, "--help"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    for cmd in PLANNED:
        assert cmd in out.stdout


def test_info_on_a_model_folder(tmp_path):
    from transformers import BertConfig, BertForMaskedLM

    BertForMaskedLM(BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)).save_pretrained(tmp_path)
    out = subprocess.run([sys.executable, "-m", "zhbert", "info", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    import json

    info = json.loads(out.stdout)
    p = info["parameters"]
    # BERT-paper accounting: embeddings = (vocab + positions + types) * H + LayerNorm
    assert p["embeddings"] == (100 + 512 + 2) * 32 + 2 * 32
    assert p["attention"] == 2 * (4 * (32 * 32 + 32))
    assert p["feed_forward"] == 2 * (32 * 64 + 64 + 64 * 32 + 32)
    assert p["total"] == sum(v for k, v in p.items() if k != "total")


def test_info_errors_name_the_path(tmp_path):
    out = subprocess.run([sys.executable, "-m", "zhbert", "info", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "config.json is missing" in out.stderr and str(tmp_path) in out.stderr
    out = subprocess.run([sys.executable, "-m", "zhbert", "info", "no-such-model"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "bundled models: base, cws" in out.stderr
