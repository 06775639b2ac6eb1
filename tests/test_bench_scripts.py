"""Every script in bench/ still runs on the current code and bundle: each Python script answers --help
(it imports and parses), those with a size option run end to end on a few sentences, and each shell
script parses and names only scripts, commands and options that exist. A benchmark that breaks
(a plain pipeline on a folder that became zhbert-only, a renamed option) fails here, not in a user's hands."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from command_check import problems_of, quoted_commands

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
PY_SCRIPTS = sorted(p.name for p in BENCH.glob("*.py"))
SH_SCRIPTS = sorted(p.name for p in BENCH.glob("*.sh"))

# script -> arguments of a run of seconds to a minute on the bundled models (every other script: --help only,
# because it needs peers that are not installed in CI, a GPU, a finished pretraining run or minutes at any size)
SMOKE = {
    "agreement.py": ["--n", "10"],
    "api_speed.py": ["--sentences", "40", "--repeats", "3", "--skip-demo"],
    "candidate_rule.py": ["cws", "--bundled", "cws-fast", "--candidate", "cws-fast", "--limit", "20"],
    "domain_continuation.py": [
        "--corpus",
        "{shared}/corpora/weibo_senti_sample/weibo_00.txt",
        "--arms",
        "wwm,electra+held",
        "--output",
        "{tmp}/domain",
        "--steps",
        "2",
        "--eval-steps",
        "2",
        "--eval-chars",
        "800",
        "--batch-size",
        "2",
        "--max-length",
        "32",
        "--warmup",
        "0",
        "--probes",
        "ner/weibo",
        "--probe-seeds",
        "1",
        "--probe-epochs",
        "1",
        "--probe-train-samples",
        "16",
        "--probe-eval-samples",
        "8",
        "--fill-mask-sentences",
        "5",
    ],  # fmt: skip
    "batch_shapes.py": ["cws-fast", "--lines", "40", "--rounds", "1", "--shapes", "2048xnone"],
    "inference_limit.py": ["--threads", "1", "--sentences", "40", "--repeats", "1"],
    "long_text.py": ["--chars", "1500", "--threads", "1"],
    "ner_speed.py": ["ner", "--sentences", "30", "--passes", "1"],
    "matching_transfer.py": [
        "--encoder",
        "cws-fast",
        "--output",
        "{tmp}/transfer",
        "--train-samples",
        "32",
        "--eval-samples",
        "16",
        "--train-request-kinds",
        "alarm,music",
    ],  # fmt: skip
    "ner_sources.py": [
        "--encoder",
        "cws-fast",
        "--output",
        "{tmp}/sources",
        "--train-samples",
        "16",
        "--eval-samples",
        "8",
        "--sources",
        "weibo",
        "--recipe-flags",
        "--crf --learning-rate 1e-3",
    ],
    "onnx_backend.py": ["--models", "cws-fast", "--lines", "30", "--passes", "1", "--threads", "1"],
    "person_names.py": ["--sentences", "30"],
    "simcse_probe.py": ["--encoder", "electra", "--steps", "2", "--batch-size", "4", "--eval-samples", "16", "--output", "{tmp}/simcse"],
    "pos.py": ["--sentences", "30"],
    "user_dict.py": ["--sentences", "30", "--parts", "whole", "--tmp", "{tmp}/user-dict"],
    "t2s_normalisers.py": ["--lines", "50"],
    "vocab_trim.py": ["--sentences", "10"],
    "web_units.py": ["--sentences", "30"],
}


def _run(args, tmp_path, timeout=600):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_smoke_list_names_existing_scripts():
    assert set(SMOKE) <= set(PY_SCRIPTS) and len(PY_SCRIPTS) >= 20 and len(SH_SCRIPTS) >= 3


@pytest.mark.parametrize("script", PY_SCRIPTS)
def test_every_python_bench_answers_help(script, tmp_path):
    r = _run([f"bench/{script}", "--help"], tmp_path)
    assert r.returncode == 0 and "usage:" in r.stdout, r.stderr[-2000:]


@pytest.mark.parametrize("script", sorted(SMOKE))
def test_a_bench_with_a_size_option_runs_on_a_few_sentences(script, tmp_path, shared):
    r = _run([f"bench/{script}", *(a.replace("{shared}", str(shared)) for a in SMOKE[script])], tmp_path)
    assert r.returncode == 0, f"{script}:\n{r.stdout[-1500:]}\n{r.stderr[-3000:]}"
    assert "|" in r.stdout or re.search(r"\d", r.stdout), f"{script} printed no figures:\n{r.stdout[-1500:]}"


def test_encoder_probes_refuses_a_probe_that_is_not_recipe_slash_dataset(tmp_path):
    r = _run(["bench/encoder_probes.py", "--encoder", "base", "--output", str(tmp_path), "--only", "weibo"], tmp_path)
    assert r.returncode != 0 and "--only: 'weibo' is not RECIPE/DATASET" in r.stderr, r.stderr[-2000:]
    assert not (tmp_path / "probes.md").exists()


@pytest.mark.parametrize("script", SH_SCRIPTS)
def test_every_shell_bench_parses_and_names_what_exists(script):
    path = BENCH / script
    r = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.lstrip().startswith("#")]
    text = "```bash\n" + "\n".join(lines) + "\n```"
    commands = [c for c in quoted_commands(text) if "$" not in c.split()[1]]  # a script named by a variable is not checked
    problems = [f"{c}: {p}" for c in commands for p in problems_of(re.sub(r'"?\$\{?[A-Za-z_@\[\]]+\}?"?', "X", c))]
    assert not problems, "\n".join(problems)


def test_bench_readme_lists_every_script():
    listed = (BENCH / "README.md").read_text(encoding="utf-8")
    missing = [s for s in PY_SCRIPTS + SH_SCRIPTS if f"`{s}`" not in listed]
    assert not missing, f"bench/README.md does not list {missing}"


def test_earlier_base_reads_stage_6_from_history():
    """bench/earlier_base.sh rebuilds the stage-6 `base` that several scripts start from out of git history:
    each revision it names must hold that folder, untrimmed and trimmed as the script says."""
    if subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT, capture_output=True, text=True).stdout.strip() != "false":
        pytest.skip("a shallow clone (or no git checkout) lacks the history the script reads")
    script = (BENCH / "earlier_base.sh").read_text(encoding="utf-8")
    revisions = re.findall(r"^earlier_base ([0-9a-f]{40}) ", script, flags=re.M)
    vocab_sizes = []
    for rev in revisions:
        shown = subprocess.run(["git", "show", f"{rev}:zhbert/pretrained/base/config.json"], cwd=ROOT, capture_output=True, text=True)
        assert shown.returncode == 0, f"{rev}: {shown.stderr}"
        config = json.loads(shown.stdout)
        assert config["zhbert_encoder"]["max_length"] == 128 and "continued_from" in config["zhbert_encoder"]
        vocab_sizes.append(config["vocab_size"])
        record = subprocess.run(
            ["git", "show", f"{rev}:zhbert/pretrained/base/zhbert_pretrain.json"], cwd=ROOT, capture_output=True, text=True
        )
        assert json.loads(record.stdout)["output"] == "runs/sop-long", rev  # stage 6's run (bench/default_model.sh)
    assert vocab_sizes == [21128, 13724]  # BASE_STAGE6, then BASE_STAGE6_TRIM
