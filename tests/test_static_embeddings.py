"""Static (word2vec) embeddings: trained on real sentences, read back without pickle, and seeding a
lexicon head's hashed tables with the count-weighted means the module's docstring gives."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from zhbert.heads import HeadConfig, new_head
from zhbert.heads.word_features import bigram_rows
from zhbert.lexicon import word_token_ids
from zhbert.static_embeddings import MANIFEST, seed_word_features, train_static_embeddings


@pytest.fixture(scope="module")
def vectors(tmp_path_factory, tiny_encoder, pd_sentences):
    out = tmp_path_factory.mktemp("w2v")
    sentences = pd_sentences[:800]
    manifest = train_static_embeddings(str(tiny_encoder), out, word_dim=8, bigram_dim=6, min_count=2, epochs=1, sentences=sentences)
    return out, manifest


def test_a_folder_holding_someone_elses_vectors_is_refused_and_its_own_rewritten(vectors, tiny_encoder, pd_sentences, tmp_path):
    theirs = tmp_path / "words.bin"
    theirs.write_bytes(b"3 2\nmy own vectors")
    with pytest.raises(ValueError, match=f"{theirs}: already there, and {tmp_path} is not a folder of vectors zhbert wrote"):
        train_static_embeddings(str(tiny_encoder), tmp_path, word_dim=8, bigram_dim=6, sentences=pd_sentences[:50])
    assert theirs.read_bytes() == b"3 2\nmy own vectors" and [p.name for p in tmp_path.iterdir()] == ["words.bin"]
    out, _ = vectors
    copy = tmp_path / "again"
    copy.mkdir()
    (copy / MANIFEST).write_bytes((out / MANIFEST).read_bytes())
    again = train_static_embeddings(str(tiny_encoder), copy, word_dim=4, bigram_dim=4, min_count=1, epochs=1, sentences=pd_sentences[:50])
    assert again["words"]["dim"] == 4 and (copy / "words.bin").read_bytes().split(b"\n", 1)[0].endswith(b" 4")


def _head(**kw) -> HeadConfig:
    return HeadConfig(kind="token", labels=["B", "M", "E", "S"], scheme="BMES-untyped", **kw)


def test_vectors_are_written_in_word2vec_format_with_counts(vectors, pd_sentences):
    out, manifest = vectors
    assert manifest["sentences"] == 800 and manifest["chars"] == sum(map(len, pd_sentences[:800]))
    assert manifest["words"]["dim"] == 8 and manifest["bigrams"]["dim"] == 6
    assert manifest["words"]["items"] > 1000 and manifest["bigrams"]["items"] > 2000
    assert (out / MANIFEST).is_file()
    # word2vec's binary format: a text header "items dim", no pickle anywhere in the folder
    assert (out / "words.bin").read_bytes().split(b"\n", 1)[0] == f"{manifest['words']['items']} 8".encode()
    assert not any(f.suffix in (".pkl", ".model", ".npy") for f in out.iterdir())
    counts = dict(line.split(" ") for line in (out / "words.counts.txt").read_text(encoding="utf-8").splitlines())
    assert int(counts["的"]) > 500  # People's Daily's commonest word


def _rows_by_hand(items, rows, vecs, counts, n):
    sums, mass = np.zeros((n, vecs.shape[1])), np.zeros(n)
    for r, v, c in zip(rows, vecs, counts):
        sums[r] += c * v
        mass[r] += c
    filled = mass > 0
    return filled, sums[filled] / mass[filled, None]


def test_seeding_sets_each_row_to_the_count_weighted_mean_of_its_items(vectors, tiny_encoder, tokenizer):
    from gensim.models import KeyedVectors

    out, _ = vectors
    torch.manual_seed(0)
    model = new_head(tiny_encoder, _head(lexicon="jieba", lexicon_dim=8, lexicon_buckets=512, bigram_dim=6, bigram_buckets=1024))
    wf = model.word_features
    before_words, before_bigrams = wf.word_embeddings.weight.detach().clone(), wf.bigram_embeddings.weight.detach().clone()
    report = seed_word_features(model, tokenizer, out)

    # bigrams: every item is a pair of token ids, hashed as the head hashes its input
    kv = KeyedVectors.load_word2vec_format(str(out / "bigrams.bin"), fvocab=str(out / "bigrams.counts.txt"), binary=True)
    pairs = np.array([[int(x) for x in k.split("_")] for k in kv.index_to_key])
    counts = [kv.get_vecattr(k, "count") for k in kv.index_to_key]
    filled, means = _rows_by_hand(kv.index_to_key, bigram_rows(pairs[:, 0], pairs[:, 1], 1024), kv.vectors, counts, 1024)
    seeded = wf.bigram_embeddings.weight.detach().numpy()
    assert report["bigrams"] == {"rows": int(filled.sum()), "items": len(kv)}
    scale = seeded[filled][:, 0] / means[:, 0]
    np.testing.assert_allclose(seeded[filled], means * scale[0], rtol=1e-4, atol=1e-5)  # one scale for the table
    assert abs(seeded[filled].std() - before_bigrams[torch.as_tensor(filled)].std().item()) < 1e-3
    assert torch.equal(wf.bigram_embeddings.weight[torch.as_tensor(~filled)], before_bigrams[torch.as_tensor(~filled)])

    # words: only dictionary words reach the table; 的 and 中国 are in jieba's dictionary, the rows they hash to move
    kv = KeyedVectors.load_word2vec_format(str(out / "words.bin"), fvocab=str(out / "words.counts.txt"), binary=True)
    lex = wf.lexicon
    for word in ("的", "中国"):
        row = lex.row_of(word_token_ids([word], tokenizer)[0])
        assert row is not None and not torch.equal(wf.word_embeddings.weight[row], before_words[row])
    assert lex.row_of(word_token_ids(["的中国"], tokenizer)[0]) is None  # not a dictionary word
    assert 0 < report["lexicon"]["rows"] <= 512 and report["lexicon"]["items"] <= len(kv)


def test_tables_trained_in_a_task_folder_are_kept_and_new_ones_seeded(vectors, tiny_encoder, tokenizer, tmp_path):
    """`--encoder ner --bigram-dim 6 --static-embeddings ...`: the lexicon table the `ner` folder
    trained carries over untouched; only the bigram table, new in this head, starts from word2vec."""
    from zhbert.heads import save_head

    out, _ = vectors
    torch.manual_seed(0)
    first = new_head(tiny_encoder, _head(lexicon="jieba", lexicon_dim=8, lexicon_buckets=512))
    with torch.no_grad():
        first.word_features.word_embeddings.weight.add_(1.0)  # "trained": unlike any fresh draw
    save_head(first, tokenizer, tmp_path / "task")
    second = new_head(tmp_path / "task", _head(lexicon="jieba", lexicon_dim=8, lexicon_buckets=512, bigram_dim=6, bigram_buckets=1024))
    assert second.carried_word_tables == ("word_embeddings",)
    bigrams = second.word_features.bigram_embeddings.weight.detach().clone()
    report = seed_word_features(second, tokenizer, out)
    assert report["lexicon"] == "kept: trained in the --encoder task folder" and report["bigrams"]["rows"] > 0
    assert torch.equal(second.word_features.word_embeddings.weight, first.word_features.word_embeddings.weight)
    assert not torch.equal(second.word_features.bigram_embeddings.weight, bigrams)
    # from a plain encoder nothing is carried: both tables are seeded
    fresh = new_head(tiny_encoder, _head(lexicon="jieba", lexicon_dim=8, lexicon_buckets=512))
    assert fresh.carried_word_tables == () and seed_word_features(fresh, tokenizer, out)["lexicon"]["rows"] > 0
    # `--carried-at-encoder-lr`: the carried lexicon tables train at the encoder's rate, the new
    # bigram table, output layer and CRF at the head's
    from zhbert.training.finetune import FinetuneConfig, _param_groups

    carried = set(second.carried_head_parameters)
    assert "word_features.word_embeddings.weight" in carried and not any(n.startswith(("bigram", "classifier", "crf")) for n in carried)
    assert "word_features.bigram_embeddings.weight" not in carried
    names = {id(p): n for n, p in second.named_parameters()}
    slow, fast = _param_groups(second, FinetuneConfig(learning_rate=1e-4, carried_at_encoder_lr=True), frozen=False)
    assert (slow["lr"], fast["lr"]) == (1e-4, 2e-3)
    assert carried <= {names[id(p)] for p in slow["params"]} and "classifier.weight" in {names[id(p)] for p in fast["params"]}
    _, default_fast = _param_groups(second, FinetuneConfig(learning_rate=1e-4), frozen=False)
    assert carried <= {names[id(p)] for p in default_fast["params"]}  # off by default: every head layer at the head's rate
    assert fresh.carried_head_parameters == ()


def test_seeding_errors_name_the_folder_and_the_problem(vectors, tiny_encoder, tokenizer, tmp_path):
    out, _ = vectors
    with pytest.raises(ValueError, match=r"word vectors have 8 dimensions, the head's table 16"):
        seed_word_features(new_head(tiny_encoder, _head(lexicon="jieba", lexicon_dim=16)), tokenizer, out)
    with pytest.raises(ValueError, match="give the head --lexicon and/or --bigram-dim"):
        seed_word_features(new_head(tiny_encoder, _head()), tokenizer, out)
    with pytest.raises(FileNotFoundError, match=f"{tmp_path}/{MANIFEST}: missing"):
        seed_word_features(new_head(tiny_encoder, _head(bigram_dim=6)), tokenizer, tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    for f in out.iterdir():
        text = f.read_bytes()
        (other / f.name).write_bytes(text.replace(b'"tokenizer_sha256": "', b'"tokenizer_sha256": "0') if f.name == MANIFEST else text)
    with pytest.raises(ValueError, match="over another tokenizer's ids"):
        seed_word_features(new_head(tiny_encoder, _head(bigram_dim=6)), tokenizer, other)
    (other / "words.bin").write_bytes(b"3 8\nnot vectors")
    with pytest.raises(ValueError, match=r"words.bin: not a word2vec binary file"):
        seed_word_features(new_head(tiny_encoder, _head(lexicon="jieba", lexicon_dim=8)), tokenizer, other)


def test_the_recipe_starts_its_tables_from_the_vectors(vectors, tiny_encoder, tmp_path):
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    out, _ = vectors
    recipe = Path(__file__).resolve().parents[1] / "recipes" / "ner.py"
    common = [sys.executable, str(recipe), "--dataset", "weibo", "--encoder", str(tiny_encoder), "--preset", "tiny", "--window", "64"]
    features = ["--lexicon", "jieba", "--lexicon-dim", "8", "--bigram-dim", "6", "--static-embeddings", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    r = subprocess.run([*common, *features, "--output-dir", str(tmp_path / "run")], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"word features seeded from {out}: {{'lexicon': {{'rows': " in r.stdout
    assert "+ lexicon jieba + bigrams 6 (word2vec start) |" in r.stdout
    record = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert record["arguments"]["static_embeddings"] == str(out)
    model = str(tmp_path / "run" / "model")
    r = subprocess.run(
        [*common, *features, "--evaluate-only", model, "--output-dir", str(tmp_path / "again")], capture_output=True, text=True, env=env
    )
    assert r.returncode != 0 and "--evaluate-only trains nothing" in r.stderr
