"""One command line: the same output flag everywhere, bundled names wherever a model folder goes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

FOLDER_WRITERS = [
    ["small-encoder"],
    ["probe"],
    ["study", "modes"],
    ["study", "modes-report"],
    ["study", "masking"],
    ["study", "long"],
    ["study", "long-classification"],
    ["study", "multitask"],
    ["study", "words"],
    ["pretrain"],
    ["train", "ner"],
]


def _zhbert(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "zhbert", *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("command", FOLDER_WRITERS, ids=" ".join)
def test_every_folder_writer_takes_output_dir_and_the_old_spellings(command):
    out = _zhbert(*command, "--help")
    assert out.returncode == 0, out.stderr[-500:]
    text = out.stdout.replace("\n", " ")
    assert "--output-dir" in text, command
    assert "--output" in text and ("-o" in text or "--output_dir" in text)


def test_bundled_names_where_a_folder_goes(tmp_path, shared):
    corpus = shared / "corpora" / "cluecorpussmall_sample"
    out = _zhbert("pretrain", "--init", "base", "--corpus", str(corpus), "--output-dir", str(tmp_path / "pt"),
                  "--max_steps", "1", "--batch-size", "2", "--max_docs", "8", "--max_length", "64")  # fmt: skip
    assert out.returncode == 0, out.stderr[-1500:]
    record = json.loads((tmp_path / "pt" / "final" / "config.json").read_text(encoding="utf-8"))["zhbert_encoder"]
    assert record["continued_from"]["normalizer"] == "zhbert-2"  # continued from the bundled base, not a fresh model
    out = _zhbert("export", "base", str(tmp_path / "copy"))
    assert out.returncode == 0 and (tmp_path / "copy" / "model.safetensors").is_file(), out.stderr[-500:]
    out = _zhbert("export", "bsae", str(tmp_path / "typo"))
    assert out.returncode == 1 and "unknown model 'bsae'; bundled models: base" in out.stderr and "Traceback" not in out.stderr
    out = _zhbert("prepare-corpus", "--corpus", str(corpus), "--output", str(tmp_path / "c.zhcorpus"), "--tokenizer-from", "cws",
                  "--max-docs", "4", "--num-proc", "1")  # fmt: skip
    assert out.returncode == 0, out.stderr[-800:]


@pytest.mark.parametrize("command", [["train", "ner"], ["pretrain"]], ids=" ".join)
def test_one_help_format_kebab_flags_and_an_unknown_flag_is_one_line_with_the_nearest(command):
    out = _zhbert(*command, "--help")
    assert out.returncode == 0 and out.stdout.startswith(f"Usage: zhbert {' '.join(command)} [OPTIONS]\n"), out.stdout[:300]
    options = out.stdout.split("\nOptions:\n")[1]
    assert "  --max-steps <int>" in options and "--max_steps" not in out.stdout, options
    # laid out as the typer commands' help: Usage, the description indented, Options
    typer_help = _zhbert("predict", "--help").stdout
    assert typer_help.startswith("Usage: ") and "\nOptions:\n  --model <str>" in typer_help and "╭" not in typer_help, typer_help[:300]
    out = _zhbert(*command, "--max_stepz", "3")
    assert out.returncode == 2 and out.stderr == "zhbert: error: unknown option --max_stepz; did you mean --max-steps?\n", out.stderr
    out = _zhbert(*command, "--max_steps", "1", "stray")  # both spellings still parse; a stray word is named
    assert out.returncode == 2 and "unexpected argument 'stray'" in out.stderr and out.stderr.count("\n") == 1, out.stderr
