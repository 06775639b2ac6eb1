"""Corpus -> token ids with unit ids -> packed blocks.

1. :func:`prepare` (``datasets.map``, ``num_proc`` workers, Arrow-cached):
   tokenise each document with offsets and attach per-token ``word_ids`` (jieba
   words) and, for ERNIE masking, ``ernie_ids`` (entity/phrase/word units).
2. :func:`pack`: concatenate documents (``[SEP]`` between them) into blocks of
   exactly ``max_length`` tokens, ``[CLS] ... [SEP]``: no padding waste; a long
   document simply continues in the next block (windowed, never truncated).
Then :mod:`.nsp_pairs` (NSP runs) builds sentence pairs instead of blocks, and
:class:`~zhbert.training.mlm_collator.MaskingCollator` masks the batches.
"""

from __future__ import annotations

from pathlib import Path

from datasets import Dataset

from ..masking import masker_class
from ..masking.units import UNIT_SPANS, token_units, word_backend, word_spans
from ..tokenizer import encode

__all__ = ["prepare", "pack", "unit_columns_of", "bounded_batch_size"]

# What one ``datasets.map`` batch may hold. A batch is held as Python lists (a token costs about
# 40 bytes per column, its offsets and word spans far more), so a count of documents alone is no
# bound: 200 documents of 100,000 characters (a one-line 50 MB corpus, cut into pieces) took
# 7.4 GB. Corpora of ordinary lines keep the full batch sizes, and with them the same blocks.
CHARS_PER_BATCH = 500_000  # tokenising + word boundaries: about 200 MB per worker
TOKENS_PER_BATCH = 2_000_000  # packing and sentence pairs


def bounded_batch_size(lengths, budget: int, most: int) -> int:
    """``most`` documents per batch, fewer when the longest of ``lengths`` (an Arrow array of
    per-document sizes) would take a batch past ``budget``."""
    import pyarrow.compute as pc

    longest = pc.max(lengths).as_py() or 1
    return max(1, min(most, budget // longest))


def _prepare_batch(batch, tokenizer, unit_columns: tuple[str, ...], user_dict: str | None):
    encs = encode(tokenizer, batch["text"])
    out: dict[str, list] = {"input_ids": [], **{c: [] for c in unit_columns}}
    for text, enc in zip(batch["text"], encs):
        out["input_ids"].append(list(enc.ids))
        for c in unit_columns:
            out[c].append(token_units(enc.offsets, UNIT_SPANS[c].spans(text, user_dict)))
    return out


def _prepare_fingerprint(corpus: Dataset, tokenizer, unit_columns: tuple[str, ...], user_dict: str | None) -> str:
    """Cache key from what the output depends on: the corpus, the tokenizer's
    serialised pipeline (vocabulary, normaliser), the code and the unit options.
    ``datasets`` would hash the tokenizer object, whose pickled state differs
    between a freshly built tokenizer and the same vocabulary loaded from a
    checkpoint folder, so every ``--init`` run re-segmented the whole corpus
    (about five minutes for the default corpus on two cores)."""
    import hashlib

    from datasets.fingerprint import Hasher

    h = hashlib.sha256()
    h.update(corpus._fingerprint.encode())
    h.update(tokenizer.backend_tokenizer.to_str().encode())
    h.update(Hasher.hash(_prepare_batch).encode())
    h.update(repr((unit_columns, word_spans.__module__, word_backend(user_dict))).encode())
    if user_dict:
        h.update(Path(user_dict).read_bytes())
    return h.hexdigest()[:32]


def prepare(corpus: Dataset, tokenizer, masking: str = "wwm", num_proc: int | None = None, user_dict: str | None = None) -> Dataset:
    """Tokenise documents and compute unit ids once (cached by ``datasets``).

    With ``num_proc > 1`` the documents are first put in a fixed shuffled order:
    ``datasets`` gives each worker a contiguous shard, and a corpus whose long
    documents (transcripts, laws) come first and short ones (reviews, posts) last
    would otherwise keep one worker busy long after the other is done.
    """
    unit_columns = masker_class(masking).needs_units
    if num_proc and num_proc > 1:
        corpus = corpus.shuffle(seed=0).flatten_indices()
    import pyarrow.compute as pc

    batch = bounded_batch_size(pc.utf8_length(corpus.data.column("text")), CHARS_PER_BATCH, 200) if len(corpus) else 200
    return corpus.map(
        _prepare_batch,
        new_fingerprint=_prepare_fingerprint(corpus, tokenizer, unit_columns, user_dict),
        batched=True,
        batch_size=batch,  # the output does not depend on it: each document is read alone
        writer_batch_size=batch,
        num_proc=num_proc if num_proc and num_proc > 1 else None,
        remove_columns=corpus.column_names,
        fn_kwargs={"tokenizer": tokenizer, "unit_columns": unit_columns, "user_dict": user_dict},
        desc=f"tokenising + word boundaries ({masking})",
    )


def _pack_batch(batch, max_length: int, cls_id: int, sep_id: int, unit_columns: tuple[str, ...]):
    body = max_length - 2
    ids: list[int] = []
    units: dict[str, list[int]] = {c: [] for c in unit_columns}
    next_unit = {c: 0 for c in unit_columns}
    for k, doc in enumerate(batch["input_ids"]):
        if k > 0:
            ids.append(sep_id)
            for c in unit_columns:
                units[c].append(-1)
        ids.extend(doc)
        for c in unit_columns:
            local = batch[c][k]
            units[c].extend(u + next_unit[c] for u in local)
            next_unit[c] += (max(local) + 1) if local else 0
    out: dict[str, list] = {"input_ids": [], **{c: [] for c in unit_columns}}
    for start in range(0, len(ids), body):
        chunk = ids[start : start + body]
        if not chunk:
            continue
        out["input_ids"].append([cls_id] + chunk + [sep_id])
        for c in unit_columns:
            out[c].append([-1] + units[c][start : start + body] + [-1])
    return out


def token_batch_size(prepared: Dataset, most: int) -> int:
    """Documents per batch when packing tokenised documents: ``most``, or fewer for long ones."""
    import pyarrow.compute as pc

    if not len(prepared):
        return most
    return bounded_batch_size(pc.list_value_length(prepared.data.column("input_ids")), TOKENS_PER_BATCH, most)


def unit_columns_of(prepared: Dataset) -> tuple[str, ...]:
    """The unit-id columns :func:`prepare` wrote (those the masking strategy needs)."""
    return tuple(c for c in UNIT_SPANS if c in prepared.column_names)


def pack(prepared: Dataset, tokenizer, max_length: int = 128, num_proc: int | None = None) -> Dataset:
    """Blocks of ``max_length`` tokens across document boundaries, plus ``idx``."""
    unit_columns = unit_columns_of(prepared)
    packed = prepared.map(
        _pack_batch,
        batched=True,
        batch_size=token_batch_size(prepared, 1000),  # each batch ends in one short block
        num_proc=num_proc if num_proc and num_proc > 1 else None,
        remove_columns=prepared.column_names,
        fn_kwargs={
            "max_length": max_length,
            "cls_id": tokenizer.cls_token_id,
            "sep_id": tokenizer.sep_token_id,
            "unit_columns": unit_columns,
        },
        desc=f"packing into blocks of {max_length}",
    )
    return packed.add_column("idx", list(range(len(packed))))
