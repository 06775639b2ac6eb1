"""The vocabulary rows a model can never read, and a copy of its weights without them.

BERT's Chinese vocabulary (21,128 tokens, kept by zhbert's tokenizer) ends with 7,404 continuation
pieces such as ``##中`` or ``##（``: a WordPiece token for a character that continues a word. The
pre-tokenizer makes every Han character, punctuation mark and symbol a word of its own, and the
normaliser rewrites full-width forms, so no text ever yields them (7.5 M characters of the corpora,
bench/LOG.md, forty-sixth session). Their embedding rows are 35% of the vocabulary and a fifth of a
4 x 256 model's weights: 3.8 MB in fp16 that prediction never reads.

Only a block at the *end* of the vocabulary is cut, so every token the tokenizer can emit keeps its
id: a lexicon head's word buckets (hashed from token ids) stay where they are and a trimmed model
gives the same outputs, bit for bit (``tests/test_vocab_trim.py``). ``zhbert export --trim-vocab``
uses it.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

__all__ = ["emitted_vocab_size", "trim_tensors", "trim_tokenizer_file", "VOCAB_TENSORS"]

# characters a continuation piece is tried after: a letter, a digit, a Han character, a hyphen,
# an accented letter; a piece none of them can carry is never emitted
PROBES = ("a", "Z", "1", "中", "-", "é")
# the weights with one row (or value) per vocabulary entry, by the end of their name
VOCAB_TENSORS = ("embeddings.word_embeddings.weight", "predictions.decoder.weight", "predictions.decoder.bias", "predictions.bias")


def emitted_vocab_size(tokenizer) -> int:
    """The smallest size the vocabulary can be cut to from its end without losing a token the
    tokenizer can emit: the ids from there on are continuation pieces that (1) the normaliser
    rewrites or the pre-tokenizer splits from whatever comes before them, after each of
    :data:`PROBES`, and (2) encoding each probe followed by the piece does not yield. The first
    token from the end that fails either stops the cut; a tokenizer that is not WordPiece is not cut."""
    backend = tokenizer.backend_tokenizer
    if type(backend.model).__name__ != "WordPiece":
        return len(tokenizer)
    prefix = backend.model.continuing_subword_prefix or "##"
    by_id = {i: t for t, i in tokenizer.get_vocab().items()}
    special = {int(i) for i in backend.get_added_tokens_decoder()}
    size = max(by_id) + 1
    while size > 0:
        i, token = size - 1, by_id.get(size - 1)
        if token is not None and (i in special or not token.startswith(prefix) or _emittable(backend, token[len(prefix) :], i)):
            break
        size -= 1
    return size


def _emittable(backend, piece: str, token_id: int) -> bool:
    if not piece:
        return True
    normalize = backend.normalizer.normalize_str if backend.normalizer is not None else (lambda s: s)
    rewritten = normalize(piece) != piece and normalize(normalize(piece)) == normalize(piece)
    for probe in PROBES:
        if not rewritten:  # the piece reaches the pre-tokenizer as it is: it must start a word there
            text, head, tail = normalize(probe + piece), normalize(probe), normalize(piece)
            if text != head + tail or not tail.strip():
                return True  # the probe and the piece merge in normalisation: no claim either way
            at = len(head) + len(tail) - len(tail.lstrip())  # the piece's first character (BERT's normaliser pads Han ones)
            starts = {a for _, (a, _) in backend.pre_tokenizer.pre_tokenize_str(text)} if backend.pre_tokenizer else {0}
            if at not in starts:
                return True
        if token_id in backend.encode(probe + piece, add_special_tokens=False).ids:
            return True
    return False


def trim_tensors(tensors: dict[str, torch.Tensor], old_size: int, size: int) -> dict[str, torch.Tensor]:
    """``tensors`` with each vocabulary-sized weight (:data:`VOCAB_TENSORS`) cut to its first
    ``size`` rows; any other tensor whose first dimension is ``old_size`` is an error, not a guess."""
    out = {}
    for name, t in tensors.items():
        if name.endswith(VOCAB_TENSORS):
            if t.shape[0] != old_size:
                raise ValueError(f"{name}: {t.shape[0]:,} rows, not the vocabulary's {old_size:,}")
            out[name] = t[:size].contiguous()
        elif t.dim() and t.shape[0] == old_size and old_size != size:
            raise ValueError(f"{name}: {old_size:,} rows like the vocabulary, but not a tensor known to be indexed by it")
        else:
            out[name] = t
    return out


def trim_tokenizer_file(path: Path, size: int) -> None:
    """Keep the first ``size`` entries of the WordPiece vocabulary in ``path`` (a tokenizer.json)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data["model"]["vocab"] = {t: i for t, i in data["model"]["vocab"].items() if i < size}
    if any(int(t["id"]) >= size for t in data.get("added_tokens", [])):
        raise ValueError(f"{path}: an added token's id is {size:,} or more: it would be cut")
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
