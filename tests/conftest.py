"""Shared fixtures: real data from ../shared (read in place) and People's Daily."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # `make test` runs two pytest-xdist workers on the 2 cores: one torch thread each (and in
    # every subprocess a test starts), or 2 x 2 threads spin against each other
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)

from zhbert.data.paths import shared_dir  # noqa: E402

SHARED = shared_dir(required=False)
ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_script():
    """``repo_script("bench/modern_ner.py")``: a script of the repo (bench/, corpora/) loaded as a module, so a
    test calls its functions; each call loads it afresh, so a test's monkeypatching stays its own."""
    import importlib.util

    def load(relative: str):
        path = ROOT / relative
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


@pytest.fixture(scope="session", autouse=True)
def lexicon_cache_dir(tmp_path_factory):
    """The suite's own lexicon cache (zhbert.lexicon_cache), never the user's ~/.cache: one folder
    for both xdist workers and the subprocesses tests start, gone with the run's temporary files."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "zhbert-cache"
    os.environ["ZHBERT_CACHE_DIR"] = str(folder)
    return folder


@pytest.fixture(scope="session")
def shared():
    if SHARED is None:
        pytest.skip("../shared (datasets and corpora) is absent; set ZHBERT_SHARED to run data tests")
    return SHARED


@pytest.fixture(scope="session")
def datasets_dir(shared):
    return shared / "datasets"


@pytest.fixture(scope="session")
def peoples_daily():
    from zhbert.data import read_peoples_daily

    return read_peoples_daily()


@pytest.fixture(scope="session")
def resume_conll(datasets_dir, tmp_path_factory):
    """The first 80 sentences of Resume NER's train file (BMES, a character and its tag a line): a user's CoNLL file."""
    out = tmp_path_factory.mktemp("conll") / "resume.bmes"
    text = (datasets_dir / "resume_ner" / "train.char.bmes").read_text(encoding="utf-8")
    out.write_text("\n\n".join(text.split("\n\n")[:80]) + "\n", encoding="utf-8")
    return out


@pytest.fixture(scope="session")
def pd_corpus_file(tmp_path_factory, peoples_daily):
    """A pretraining corpus of 300 real People's Daily sentences (every 20th of the first 6,000), one a line."""
    path = tmp_path_factory.mktemp("corpus") / "pd.txt"
    path.write_text("\n".join(peoples_daily.select(range(0, 6000, 20))["text"]) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def pd_heldout_file(tmp_path_factory, peoples_daily):
    """60 People's Daily sentences that pd_corpus_file does not hold (every 20th from the 10th), as held-out text."""
    path = tmp_path_factory.mktemp("heldout") / "pd-heldout.txt"
    path.write_text("\n".join(peoples_daily.select(range(10, 1210, 20))["text"]) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def bind_mount(tmp_path):
    """A bind mount a test can remount read-only (CI runs as root); skipped where the machine refuses it."""
    import subprocess

    source, folder = tmp_path / "bind-source", tmp_path / "bind"
    source.mkdir()
    folder.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "--bind", str(source), str(folder)], capture_output=True).returncode:
        pytest.skip("a bind mount needs root and a machine that allows it")
    yield folder
    subprocess.run(["umount", str(folder)], check=False)


@pytest.fixture(scope="session")
def pd_sentences(peoples_daily):
    """2,500 real People's Daily sentences (every 17th, so the whole month is sampled)."""
    return [t for t in peoples_daily.select(range(0, len(peoples_daily), 17))["text"]][:2500]


@pytest.fixture(scope="session")
def weibo_posts(datasets_dir):
    from zhbert.data import read_smp2020_ewect

    return read_smp2020_ewect(str(datasets_dir / "smp2020_ewect_usual" / "dev.tsv"))["text"]


@pytest.fixture(scope="session")
def tokenizer():
    from zhbert.tokenizer import build_tokenizer

    return build_tokenizer()


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory, tokenizer):
    """A 4-layer, 32-wide BERT with the full Chinese vocabulary, saved like any checkpoint."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny_encoder")
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=4,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    BertForMaskedLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
