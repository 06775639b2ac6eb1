"""Model folders are input: hostile or damaged ones are refused before use, with the file named,
on every path that takes a model (load, info, pretrain --init, probe, export)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

import zhbert
from zhbert.errors import ModelLoadError
from zhbert.model_folder import check_model_folder


def _copy(src, tmp_path, name="m"):
    dst = tmp_path / name
    shutil.copytree(src, dst)
    return dst


def _edit_json(file, change):
    doc = json.loads(file.read_text(encoding="utf-8"))
    change(doc)
    file.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")


def test_the_bundled_and_a_fresh_folder_pass(tiny_encoder):
    from zhbert.models_registry import BUNDLED_DIR

    for name in ("base", "electra", "cws", "ner", "cws-fast", "tagging", "matching"):
        check_model_folder(BUNDLED_DIR / name)
    check_model_folder(tiny_encoder)


def test_a_token_id_past_the_embedding_rows_is_refused(tiny_encoder, tmp_path):
    folder = _copy(tiny_encoder, tmp_path)
    _edit_json(folder / "tokenizer.json", lambda d: d["model"]["vocab"].__setitem__("北", 5_000_000))
    with pytest.raises(ModelLoadError, match=r"tokenizer.json: token id 5000000 is outside the 21,128 rows"):
        zhbert.load(str(folder))


def test_a_foreign_regex_is_refused_before_it_can_run(tiny_encoder, tmp_path):
    folder = _copy(tiny_encoder, tmp_path)
    evil = {"type": "Replace", "pattern": {"Regex": "(a|aa)+$"}, "content": "b"}
    _edit_json(folder / "tokenizer.json", lambda d: d["normalizer"]["normalizers"].append(evil))
    with pytest.raises(ModelLoadError, match=r"tokenizer.json: a regex zhbert did not write \('\(a\|aa\)\+\$'\)"):
        zhbert.load(str(folder))
    _edit_json(folder / "tokenizer.json", lambda d: d.__setitem__("decoder", {"type": "ByteLevel"}))
    with pytest.raises(ModelLoadError, match="decoder type 'ByteLevel' is not one zhbert reads"):
        check_model_folder(folder)


@pytest.mark.parametrize(
    "key, value, message",
    [("vocab_size", 1_000_000_000, "vocab_size is 1000000000; expected a whole number from 1 to 1,000,000"),
     ("hidden_size", "32", "hidden_size is '32'"), ("num_hidden_layers", 0, "num_hidden_layers is 0")],
)  # fmt: skip
def test_config_sizes_are_bounded(tiny_encoder, tmp_path, key, value, message):
    folder = _copy(tiny_encoder, tmp_path)
    _edit_json(folder / "config.json", lambda d: d.__setitem__(key, value))
    with pytest.raises(ModelLoadError, match=f"config.json: {message}"):
        check_model_folder(folder)


def test_weights_that_disagree_with_the_config_or_pickles_are_refused(tiny_encoder, tmp_path):
    folder = _copy(tiny_encoder, tmp_path)
    _edit_json(folder / "config.json", lambda d: d.__setitem__("vocab_size", 30_000))
    with pytest.raises(ModelLoadError, match="word embeddings are 21,128 x 32, but config.json says vocab_size 30,000"):
        check_model_folder(folder)
    folder = _copy(tiny_encoder, tmp_path, "pickled")
    (folder / "model.safetensors").rename(folder / "pytorch_model.bin")
    with pytest.raises(ModelLoadError, match="pytorch_model.bin \\(pickle, which can run code"):
        check_model_folder(folder)


def test_weights_saved_in_shards_load_and_a_missing_shard_is_named(tiny_encoder, tokenizer, tmp_path):
    """An encoder saved in shards (``model.safetensors.index.json``, as save_pretrained writes one past
    max_shard_size): before, "model.safetensors is missing" from fill-mask and as a head's encoder;
    now it answers as the same weights in one file do, and a damaged index is named."""
    import torch
    from transformers import BertForMaskedLM

    from zhbert.heads.config import HeadConfig
    from zhbert.heads.io import new_head

    sharded = tmp_path / "sharded"
    BertForMaskedLM.from_pretrained(str(tiny_encoder)).save_pretrained(sharded, max_shard_size="1MB")
    tokenizer.save_pretrained(sharded)
    index = json.loads((sharded / "model.safetensors.index.json").read_text(encoding="utf-8"))
    shards = sorted(set(index["weight_map"].values()))
    assert len(shards) >= 2 and not (sharded / "model.safetensors").exists()
    check_model_folder(sharded)
    text = "北京是中国的[MASK]都，李白是唐代著名的[MASK]人。"
    assert zhbert.load(str(sharded)).fill_mask(text) == zhbert.load(str(tiny_encoder)).fill_mask(text)
    head = HeadConfig(kind="token", labels=["O", "B-PER", "I-PER"], scheme="BIO", window=64)
    torch.testing.assert_close(
        new_head(sharded, head).get_input_embeddings().weight,
        new_head(tiny_encoder, head).get_input_embeddings().weight,
    )
    from zhbert.export import export_model  # shipped as one file, the same as the one-file folder's export

    one, many = export_model(tiny_encoder, tmp_path / "one"), export_model(sharded, tmp_path / "many")
    assert sorted(p.name for p in many.iterdir()) == sorted(p.name for p in one.iterdir())
    assert zhbert.load(str(many)).fill_mask(text) == zhbert.load(str(one)).fill_mask(text)
    _edit_json(sharded / "config.json", lambda d: d.__setitem__("vocab_size", 30_000))
    holder = index["weight_map"]["bert.embeddings.word_embeddings.weight"]
    with pytest.raises(ModelLoadError, match=f"{holder}: the word embeddings are 21,128 x 32, but config.json says vocab_size 30,000"):
        check_model_folder(sharded)
    _edit_json(sharded / "config.json", lambda d: d.__setitem__("vocab_size", 21_128))
    (sharded / shards[-1]).rename(tmp_path / shards[-1])
    for attempt in (lambda: zhbert.load(str(sharded)), lambda: new_head(sharded, head)):
        with pytest.raises(ModelLoadError, match=f"{sharded / shards[-1]}: missing \\(a shard of the weights"):
            attempt()
    (tmp_path / shards[-1]).rename(sharded / shards[-1])
    _edit_json(
        sharded / "model.safetensors.index.json", lambda d: d["weight_map"].__setitem__("bert.pooler.dense.bias", "../x.safetensors")
    )
    with pytest.raises(ModelLoadError, match="names '../x.safetensors'; a shard is a .safetensors file in the folder itself"):
        zhbert.load(str(sharded))


@pytest.mark.parametrize("command", [["info"], ["pretrain", "--init"], ["probe"], ["export"], ["predict", "--model"]], ids=" ".join)
def test_every_command_refuses_in_one_line(tiny_encoder, tmp_path, command):
    folder = _copy(tiny_encoder, tmp_path)
    _edit_json(folder / "config.json", lambda d: d.__setitem__("vocab_size", 1_000_000_000))
    tail = {"pretrain": ["--corpus", str(folder / "config.json"), "--output-dir", str(tmp_path / "o")],
            "probe": ["--output-dir", str(tmp_path / "o")], "export": [str(tmp_path / "o")], "predict": ["-"]}  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-m", "zhbert", *command, str(folder), *tail.get(command[0], [])],
        input="北京\n", capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode != 0
    assert "vocab_size is 1000000000" in out.stderr and "Traceback" not in out.stderr, out.stderr[-1500:]


def test_a_tokenizer_panic_is_one_error_not_a_base_exception():
    """A tokenizer built in Python (no folder check) whose regex panics the Rust side: a ValueError, not pyo3's PanicException."""
    from tokenizers import Regex, normalizers

    from zhbert.tokenizer import build_tokenizer, encode

    tok = build_tokenizer()
    tok.backend_tokenizer.normalizer = normalizers.Sequence([normalizers.Replace(Regex("(a|aa)+$"), "b")])
    with pytest.raises(ValueError, match=r"the tokenizer crashed \(Rust panic"):
        encode(tok, "a" * 34 + "!")


def test_a_head_whose_labels_do_not_fit_its_weights_says_so(tiny_encoder, tokenizer, tmp_path):
    from zhbert.heads.config import HeadConfig
    from zhbert.heads.io import new_head, save_head

    folder = save_head(
        new_head(tiny_encoder, HeadConfig(kind="token", labels=["O", "B-PER", "I-PER"], scheme="BIO", window=64)),
        tokenizer,
        tmp_path / "ner",
    )
    _edit_json(folder / "config.json", lambda c: c["zhbert_head"].update(labels=["O", "B-PER"]))
    with pytest.raises(ModelLoadError) as info:
        zhbert.load(str(folder))
    message = str(info.value)
    assert "classifier" in message and "[3]" in message and "2 labels" in message and "above report" not in message
    _edit_json(folder / "config.json", lambda c: c["zhbert_head"].pop("labels"))
    with pytest.raises(ModelLoadError, match=r"config.json: its zhbert_head settings are not a head: labels must not be empty"):
        zhbert.load(str(folder))


def test_a_zhbert_only_folder_says_so_where_plain_transformers_users_look(tiny_encoder, tokenizer, tmp_path):
    """config.json's zhbert_only, a README.md model card, and `zhbert export`'s own line; a stock head says it opens."""
    from zhbert.heads.config import HeadConfig
    from zhbert.heads.io import new_head, save_head

    crf = save_head(
        new_head(tiny_encoder, HeadConfig(kind="token", labels=["O", "B-PER", "I-PER"], scheme="BIO", crf=True, window=64)),
        tokenizer,
        tmp_path / "crf",
    )
    stock = save_head(
        new_head(tiny_encoder, HeadConfig(kind="token", labels=["O", "B-PER", "I-PER"], scheme="BIO", window=64)),
        tokenizer,
        tmp_path / "stock",
    )
    config = json.loads((crf / "config.json").read_text(encoding="utf-8"))
    assert "needs zhbert" in config["zhbert_only"] and "a CRF over the tags" in config["zhbert_only"]
    assert "**This folder needs zhbert.**" in (crf / "README.md").read_text(encoding="utf-8")
    assert "zhbert_only" not in json.loads((stock / "config.json").read_text(encoding="utf-8"))
    assert "opens in plain transformers" in (stock / "README.md").read_text(encoding="utf-8")
    r = subprocess.run(
        [sys.executable, "-m", "zhbert", "export", str(crf), str(tmp_path / "shipped")], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0 and f"note: {tmp_path / 'shipped'} needs zhbert" in r.stdout, r.stderr[-2000:]
    assert (tmp_path / "shipped" / "README.md").is_file()
