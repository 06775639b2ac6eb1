"""Characters a corpus uses and the vocabulary lacks, added before continued pretraining.

Chinese BERT's 21,128-entry vocabulary has no row for many characters a domain writes often:
chemical elements (铊, 镓, 钚), anatomy and medicine (髌, 癔, 缬), classical text (郓, 蘅, 趱),
characters of personal names (赟). Each reads as ``[UNK]``: 铊中毒 and 镓中毒 are the same input, and
an entity made of them cannot be told apart. ``zhbert pretrain --extend-vocab N`` counts, over the
whole corpus, the single characters the tokenizer reads as ``[UNK]`` (in their normalised form, as
the tokenizer will look them up), and gives each one seen at least ``N`` times a vocabulary entry
of its own, appended after the existing ids so every old id keeps its meaning.

Each new row starts as the ``[UNK]`` row, input embedding and output bias alike: before its first
step the model reads and predicts the new characters exactly as it did when they were ``[UNK]``,
and continued pretraining moves them apart. The characters are written to the run's folder
(:data:`ADDED_VOCAB`), so a resumed run adds the same ones in the same order.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Iterable

import torch

__all__ = ["ADDED_VOCAB", "unknown_characters", "grow_tokenizer", "grow_model", "read_added", "write_added"]

#: the characters a run added, one a line in id order, in the run's output folder
ADDED_VOCAB = "zhbert_added_vocab.txt"
# texts tokenised at once: bounded by characters, since a corpus document may hold 100,000 of them
# and their offsets take far more memory than the text (2,000 such pieces once took gigabytes)
_BATCH_CHARS = 1_000_000


def unknown_characters(tokenizer, texts: Iterable[str], min_count: int) -> list[tuple[str, int]]:
    """``(character, count)`` of the single characters ``texts`` hold that ``tokenizer`` reads as
    ``[UNK]``, normalised as the tokenizer looks them up, seen at least ``min_count`` times; most
    frequent first (ties by code point, so a run is reproducible)."""
    normalizer = tokenizer.backend_tokenizer.normalizer
    vocab = tokenizer.get_vocab()
    unk = tokenizer.unk_token_id
    counts: Counter[str] = Counter()

    batch: list[str] = []
    chars = 0
    for text in texts:
        batch.append(text)
        chars += len(text)
        if chars >= _BATCH_CHARS:
            _count_unknown(tokenizer, batch, unk, counts)
            batch, chars = [], 0
    if batch:
        _count_unknown(tokenizer, batch, unk, counts)
    found: Counter[str] = Counter()
    for piece, n in counts.items():
        # stock BERT's normaliser pads each Chinese character with spaces (" 铋 "): the entry is the character
        normal = (normalizer.normalize_str(piece) if normalizer is not None else piece).strip()
        if len(normal) == 1 and not normal.isspace() and normal not in vocab:
            found[normal] += n
    return sorted(((c, n) for c, n in found.items() if n >= min_count), key=lambda cn: (-cn[1], cn[0]))


def _count_unknown(tokenizer, batch: list[str], unk: int, counts: Counter) -> None:
    encoded = tokenizer(batch, add_special_tokens=False, return_offsets_mapping=True)
    for text, ids, offsets in zip(batch, encoded["input_ids"], encoded["offset_mapping"]):
        for token, (start, end) in zip(ids, offsets):
            if token == unk and end - start == 1:  # a whole word of one character: a run of letters stays a word
                counts[text[start:end]] += 1


def grow_tokenizer(tokenizer, characters: list[str]):
    """A copy of ``tokenizer`` whose WordPiece vocabulary has ``characters`` appended (ids from its
    current size on); everything else (normaliser, pre-tokeniser, specials) as it was."""
    from tokenizers import Tokenizer

    doc = json.loads(tokenizer.backend_tokenizer.to_str())
    if doc.get("model", {}).get("type") != "WordPiece":
        raise ValueError(f"--extend-vocab adds to a WordPiece vocabulary; this tokenizer's model is {doc.get('model', {}).get('type')!r}")
    vocab = doc["model"]["vocab"]
    size = len(tokenizer)
    for k, char in enumerate(characters):
        if char in vocab:
            raise ValueError(f"{char!r} is already in the vocabulary")
        vocab[char] = size + k
    grown = copy.deepcopy(tokenizer)
    grown._tokenizer = Tokenizer.from_str(json.dumps(doc, ensure_ascii=False))
    return grown


def grow_model(model, added: int, unk_id: int) -> None:
    """Append ``added`` vocabulary rows to ``model`` in place, each a copy of the ``[UNK]`` row: the
    input embedding, an untied output projection and the output bias (the masked-LM head's, or an
    ELECTRA run's generator's)."""
    if added <= 0:
        return
    if hasattr(model, "grow_vocabulary"):  # ELECTRA pretraining: generator and discriminator share the table
        model.grow_vocabulary(added, unk_id)
        return
    old = model.get_input_embeddings().weight.shape[0]
    model.resize_token_embeddings(old + added, mean_resizing=False)
    with torch.no_grad():
        embeddings = model.get_input_embeddings().weight
        embeddings[old:] = embeddings[unk_id]
        output = model.get_output_embeddings()
        if output is not None:
            if output.weight is not embeddings:
                output.weight[old:] = output.weight[unk_id]
            if getattr(output, "bias", None) is not None:
                output.bias[old:] = output.bias[unk_id]


def write_added(folder: Path, characters: list[str]) -> None:
    (Path(folder) / ADDED_VOCAB).write_text("".join(f"{c}\n" for c in characters), encoding="utf-8")


def read_added(folder: Path) -> list[str] | None:
    """The characters an earlier start of this run added, or None if it added none."""
    path = Path(folder) / ADDED_VOCAB
    if not path.is_file():
        return None
    return path.read_text(encoding="utf-8").split("\n")[:-1]
