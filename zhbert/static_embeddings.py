"""Static word and bigram embeddings trained on raw text in minutes (gensim word2vec), to start
a token head's word-feature tables from instead of random vectors.

Two word2vec models over the same corpus sentences (``zhbert.data.corpus_sample``, never a
dev/test sentence):

* **words**: jieba's segmentation of each sentence (``zhbert.masking.units.word_spans``);
  their vectors seed the lexicon's hashed word table (``WordFeatures.word_embeddings``);
* **bigrams**: the pairs of consecutive token ids the model's own tokenizer gives, ``[CLS]``
  and ``[SEP]`` included, so every pair the head embeds (``WordFeatures._bigrams``) is a
  word2vec item; they seed the hashed bigram table.

Both tables are hashed, so a row stands for several items. Seeding sets row ``r`` to the
count-weighted mean of the vectors of the items hashed to it::

    E[r] = a * sum_{i: row(i) = r} c_i v_i / sum_{i: row(i) = r} c_i

(for words, only dictionary words: the others never reach the table), with one scale ``a``
for the whole table that gives the seeded rows the element standard deviation of the random
rows they replace. Rows no corpus item reaches keep their random start.

Files (word2vec's binary format and a count file: gensim reads them without pickle, so
loading runs no code from the folder): ``words.bin``, ``words.counts.txt``, ``bigrams.bin``,
``bigrams.counts.txt`` and ``static_embeddings.json`` (sizes, corpus, the tokenizer's SHA-256:
bigram items are token ids, so they seed only a model with the same tokenizer).
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import numpy as np
import torch

from .lexicon import tokenizer_sha256

__all__ = ["train_static_embeddings", "seed_word_features", "MANIFEST"]

MANIFEST = "static_embeddings.json"
log = logging.getLogger(__name__)


def _gensim():
    try:
        import gensim.models
    except ImportError as e:
        raise ValueError(f"static embeddings need gensim ({e}); install it with: pip install 'zhbert[static]'") from e
    return gensim.models


_BATCH = 10_000  # sentences tokenised at a time


class _Lines:
    """A corpus gensim reads once per epoch: one space-joined string per sentence, split on each
    pass. With lists of token strings, 10 M characters took 3.9 GB; with these the whole command
    peaks at 1.0 GB (bench/LOG.md, seventeenth session)."""

    def __init__(self):
        self.lines: list[str] = []

    def __iter__(self):
        return (line.split(" ") for line in self.lines if line)


def train_static_embeddings(
    tokenizer_path: str,
    output: str | Path,
    word_dim: int = 50,
    bigram_dim: int = 50,
    chars: int = 10_000_000,
    window: int = 5,
    min_count: int = 3,
    epochs: int = 5,
    seed: int = 42,
    workers: int = 2,
    sentences: list[str] | None = None,
) -> dict:
    """Train both word2vec models on ``chars`` characters of the shared corpora (or on
    ``sentences``); returns the manifest, also written to ``output``."""
    Word2Vec = _gensim().Word2Vec

    from .data.corpus_sample import mixed_sentences
    from .masking.units import word_spans
    from .models_registry import resolve_model_path
    from .tokenizer import load_tokenizer

    if word_dim < 1 or bigram_dim < 1 or chars < 1:
        raise ValueError(f"word_dim, bigram_dim and chars must be positive, got {word_dim}, {bigram_dim}, {chars}")
    _check_output(Path(output))  # before minutes of reading and training
    tokenizer = load_tokenizer(resolve_model_path(tokenizer_path))
    start = time.perf_counter()
    source = "given sentences" if sentences is not None else "../shared/corpora (zhbert.data.corpus_sample)"
    if sentences is None:
        sentences = list(mixed_sentences(chars))  # ~4 bytes a character: 10 M characters hold ~40 MB
    if not sentences:
        raise ValueError(f"no sentence to train on from {source}")
    words, bigrams = _Lines(), _Lines()
    for k in range(0, len(sentences), _BATCH):
        batch = sentences[k : k + _BATCH]
        words.lines += [" ".join(w for w in (s[a:b] for a, b in word_spans(s)) if w.split() == [w]) for s in batch]
        ids = tokenizer(batch, add_special_tokens=True)["input_ids"]
        bigrams.lines += [" ".join(f"{a}_{b}" for a, b in zip(row, row[1:])) for row in ids]
    read = time.perf_counter() - start
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    manifest = {
        "source": source,
        "chars": sum(map(len, sentences)),
        "sentences": len(sentences),
        "tokenizer": str(tokenizer_path),
        "tokenizer_sha256": tokenizer_sha256(tokenizer),
        "word2vec": {"window": window, "min_count": min_count, "epochs": epochs, "seed": seed, "sg": 0},
        "seconds_reading": round(read, 1),
    }
    for name, items, dim in (("words", words, word_dim), ("bigrams", bigrams, bigram_dim)):
        t = time.perf_counter()
        model = Word2Vec(items, vector_size=dim, window=window, min_count=min_count, workers=workers, epochs=epochs, seed=seed)
        model.wv.save_word2vec_format(str(out / f"{name}.bin"), fvocab=str(out / f"{name}.counts.txt"), binary=True)
        manifest[name] = {"dim": dim, "items": len(model.wv), "seconds": round(time.perf_counter() - t, 1)}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


#: every file train_static_embeddings writes into its folder
WRITTEN = (MANIFEST, "words.bin", "words.counts.txt", "bigrams.bin", "bigrams.counts.txt")


def _check_output(out: Path) -> None:
    """A folder of vectors this module wrote is rewritten; one of the names it writes, of anyone else's, is refused."""
    from .destination import foreign_file

    if out.exists() and not out.is_dir():
        raise ValueError(f"{out}: exists and is not a folder; choose a new folder for the vectors")
    theirs = foreign_file(out, WRITTEN, MANIFEST, lambda record: isinstance(record, dict) and "word2vec" in record)
    if theirs is not None:
        raise ValueError(f"{theirs}: already there, and {out} is not a folder of vectors zhbert wrote; choose another folder")


def _read(folder: Path, name: str):
    KeyedVectors = _gensim().KeyedVectors

    path, counts = folder / f"{name}.bin", folder / f"{name}.counts.txt"
    for p in (path, counts):
        if not p.is_file():
            raise FileNotFoundError(f"{p}: missing (make the folder with `zhbert static-embeddings`)")
    try:
        return KeyedVectors.load_word2vec_format(str(path), fvocab=str(counts), binary=True)
    except (ValueError, EOFError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not a word2vec binary file with its counts ({e})") from e


def _seed(table: torch.nn.Embedding, rows: np.ndarray, vectors: np.ndarray, counts: np.ndarray, what: str, folder: Path) -> dict:
    if vectors.shape[1] != table.embedding_dim:
        raise ValueError(f"{folder}: {what} vectors have {vectors.shape[1]} dimensions, the head's table {table.embedding_dim}")
    sums = np.zeros((table.num_embeddings, vectors.shape[1]), dtype=np.float64)
    mass = np.zeros(table.num_embeddings, dtype=np.float64)
    np.add.at(sums, rows, vectors * counts[:, None])
    np.add.at(mass, rows, counts)
    filled = mass > 0
    if not filled.any():
        return {"rows": 0, "items": 0}
    means = sums[filled] / mass[filled, None]
    with torch.no_grad():
        w = table.weight
        scale = float(w[torch.as_tensor(filled)].std()) / max(float(means.std()), 1e-12)
        w[torch.as_tensor(filled)] = torch.as_tensor(means * scale, dtype=w.dtype)
    return {"rows": int(filled.sum()), "items": len(rows)}


def seed_word_features(model, tokenizer, folder: str | Path) -> dict:
    """Seed ``model``'s lexicon and bigram tables (those it has) from a static-embeddings folder.

    A table the head carried over from a trained task folder (``--encoder ner``) is kept as
    trained: its vectors already learnt the task's words, the word2vec ones would undo that.

    Returns, per table, how many rows were seeded from how many corpus items (or that it was kept)."""
    folder = Path(folder)
    wf = model.word_features
    if wf is None:
        raise ValueError("static embeddings seed word features: give the head --lexicon and/or --bigram-dim")
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise FileNotFoundError(f"{manifest_path}: missing (make the folder with `zhbert static-embeddings`)")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    report = {}
    carried = getattr(model, "carried_word_tables", ())
    kept = "kept: trained in the --encoder task folder"
    if wf.lexicon_dim and "word_embeddings" in carried:
        report["lexicon"] = kept
    elif wf.lexicon_dim:
        from .lexicon import word_token_ids

        kv = _read(folder, "words")
        words = list(kv.index_to_key)
        found = [(k, wf.lexicon.row_of(ids)) for k, ids in enumerate(word_token_ids(words, tokenizer)) if ids]
        found = [(k, r) for k, r in found if r is not None]
        keep = np.array([k for k, _ in found], dtype=np.int64)
        rows = np.array([r for _, r in found], dtype=np.int64)
        counts = np.array([kv.get_vecattr(words[k], "count") for k in keep], dtype=np.float64)
        report["lexicon"] = _seed(wf.word_embeddings, rows, kv.vectors[keep], counts, "word", folder)
    if wf.bigram_dim and "bigram_embeddings" in carried:
        report["bigrams"] = kept
    elif wf.bigram_dim:
        from .heads.word_features import bigram_rows

        if manifest.get("tokenizer_sha256") != tokenizer_sha256(tokenizer):
            raise ValueError(
                f"{folder}: its bigram vectors are over another tokenizer's ids ({manifest.get('tokenizer')}); "
                "train them with this model's tokenizer (zhbert static-embeddings --tokenizer MODEL)"
            )
        kv = _read(folder, "bigrams")
        pairs = np.array([[int(x) for x in key.split("_")] for key in kv.index_to_key], dtype=np.int64).reshape(-1, 2)
        rows = bigram_rows(pairs[:, 0], pairs[:, 1], wf.bigram_buckets)
        counts = np.array([kv.get_vecattr(key, "count") for key in kv.index_to_key], dtype=np.float64)
        report["bigrams"] = _seed(wf.bigram_embeddings, rows, kv.vectors, counts, "bigram", folder)
    log.info("static embeddings from %s: %s", folder, report)
    return report
