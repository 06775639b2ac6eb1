"""Corpus -> token ids with unit ids -> packed blocks -> masked batches.

1. :func:`prepare` (``datasets.map``, ``num_proc`` workers, Arrow-cached):
   tokenise each document with offsets and attach per-token ``word_ids`` (jieba
   words) and, for ERNIE masking, ``ernie_ids`` (entity/phrase/word units).
2. :func:`pack`: concatenate documents (``[SEP]`` between them) into blocks of
   exactly ``max_length`` tokens, ``[CLS] ... [SEP]``: no padding waste; a long
   document simply continues in the next block (windowed, never truncated).
3. :class:`MaskingCollator`: per example, a ``torch.Generator`` seeded from
   (seed, epoch, example index) picks units and applies 80/10/10, so masks are
   reproducible across a crash and resume without saving collator state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from datasets import Dataset

from ..masking import Masker
from ..masking.units import ernie_spans, token_units, word_backend, word_spans
from ..tokenizer import encode

__all__ = ["prepare", "pack", "pair_segments", "MaskingCollator"]


def _prepare_batch(batch, tokenizer, with_ernie: bool, user_dict: str | None):
    encs = encode(tokenizer, batch["text"])
    out: dict[str, list] = {"input_ids": [], "word_ids": []}
    if with_ernie:
        out["ernie_ids"] = []
    for text, enc in zip(batch["text"], encs):
        out["input_ids"].append(list(enc.ids))
        out["word_ids"].append(token_units(enc.offsets, word_spans(text, user_dict)))
        if with_ernie:
            spans = [(s, e) for s, e, _ in ernie_spans(text, user_dict=user_dict)]
            out["ernie_ids"].append(token_units(enc.offsets, spans))
    return out


def _prepare_fingerprint(corpus: Dataset, tokenizer, with_ernie: bool, user_dict: str | None) -> str:
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
    h.update(repr((with_ernie, word_spans.__module__, word_backend(user_dict))).encode())
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
    with_ernie = masking == "ernie"
    if num_proc and num_proc > 1:
        corpus = corpus.shuffle(seed=0).flatten_indices()
    return corpus.map(
        _prepare_batch,
        new_fingerprint=_prepare_fingerprint(corpus, tokenizer, with_ernie, user_dict),
        batched=True,
        batch_size=200,
        num_proc=num_proc if num_proc and num_proc > 1 else None,
        remove_columns=corpus.column_names,
        fn_kwargs={"tokenizer": tokenizer, "with_ernie": with_ernie, "user_dict": user_dict},
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


def _unit_columns(prepared: Dataset) -> tuple[str, ...]:
    """The unit-id columns :func:`prepare` wrote (word ids always, ERNIE ids for ernie)."""
    return tuple(c for c in ("word_ids", "ernie_ids") if c in prepared.column_names)


def pack(prepared: Dataset, tokenizer, max_length: int = 128, num_proc: int | None = None) -> Dataset:
    """Blocks of ``max_length`` tokens across document boundaries, plus ``idx``."""
    unit_columns = _unit_columns(prepared)
    packed = prepared.map(
        _pack_batch,
        batched=True,
        batch_size=1000,
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


@dataclass
class MaskingCollator:
    """Pads (rarely needed after packing), masks, and returns model inputs."""

    tokenizer: Any
    masker: Masker
    seed: int = 0
    epoch: int = 0
    record: str | None = None  # append each batch's example indices here (per rank; tests of data sharding)
    stats: dict = field(default_factory=lambda: {"tokens": 0, "masked": 0, "units": 0, "masked_units": 0})

    def _generator(self, idx: int) -> torch.Generator:
        g = torch.Generator()
        g.manual_seed((self.seed * 1_000_003 + self.epoch * 7_919 + int(idx)) % (2**63 - 1))
        return g

    def __call__(self, examples: list[dict]) -> dict[str, torch.Tensor]:
        from ..masking.base import apply_80_10_10

        if self.record:
            import json
            import os

            with open(f"{self.record}.rank{os.environ.get('RANK', '0')}", "a") as f:
                f.write(json.dumps([int(e.get("idx", -1)) for e in examples]) + "\n")
        pad = self.tokenizer.pad_token_id
        length = max(len(e["input_ids"]) for e in examples)
        batch_ids, batch_labels, batch_mask = [], [], []
        column = self.masker.unit_column or "word_ids"
        for e in examples:
            ids = torch.tensor(e["input_ids"], dtype=torch.long)
            if self.masker.unit_column is None:
                units = torch.where(torch.tensor([i in self._special_ids for i in e["input_ids"]]), -1, torch.arange(len(ids)))
            else:
                units = torch.tensor(e[column], dtype=torch.long)
            g = self._generator(e.get("idx", 0))
            selected = self.masker.select(units, g)
            inputs, labels, _ = apply_80_10_10(
                ids,
                selected,
                units if self.masker.unit_column else torch.arange(len(ids)),
                self.masker.config,
                self.tokenizer.mask_token_id,
                len(self.tokenizer),
                g,
                random_low=self._first_regular_id,
            )
            self.stats["tokens"] += int((units >= 0).sum())
            self.stats["masked"] += int(selected.sum())
            n = len(ids)
            batch_ids.append(torch.cat([inputs, torch.full((length - n,), pad)]))
            batch_labels.append(torch.cat([labels, torch.full((length - n,), -100)]))
            batch_mask.append(torch.cat([torch.ones(n, dtype=torch.long), torch.zeros(length - n, dtype=torch.long)]))
        ids = torch.stack(batch_ids)
        batch = {"input_ids": ids, "attention_mask": torch.stack(batch_mask), "labels": torch.stack(batch_labels)}
        if "token_type_ids" in examples[0]:  # NSP pairs: segment A = 0, B = 1
            batch["token_type_ids"] = torch.tensor([e["token_type_ids"] + [0] * (length - len(e["token_type_ids"])) for e in examples])
            batch["next_sentence_label"] = torch.tensor([e["next_sentence_label"] for e in examples])
        else:
            batch["token_type_ids"] = torch.zeros_like(ids)
        return batch

    @property
    def _special_ids(self) -> set[int]:
        return set(self.tokenizer.all_special_ids)

    @property
    def _first_regular_id(self) -> int:
        # random replacements come from ordinary tokens, never [PAD]/[unused]/[CLS]...
        return max(self.tokenizer.all_special_ids) + 1


# ---------------------------------------------------------------------------
# Next-sentence prediction: [CLS] A [SEP] B [SEP] pairs, as in BERT's
# create_pretraining_data.py. B is the true continuation of A in 50% of pairs
# (label 0) and text from another document otherwise (label 1).
# ---------------------------------------------------------------------------
SENTENCE_END_TOKENS = ("。", "！", "？", "!", "?", "；", ";")


def _sentences(ids: list[int], units: list[tuple[int, ...]], ends: set[int], longest: int) -> list[tuple[list[int], list[tuple[int, ...]]]]:
    """Cut a document after sentence-final tokens; pieces longer than ``longest`` are split.
    ``units`` holds each token's unit ids, one per unit column (word, ERNIE)."""
    out, start = [], 0
    for k, t in enumerate(ids):
        if t in ends or k == len(ids) - 1:
            for a in range(start, k + 1, longest):
                b = min(a + longest, k + 1)
                out.append((ids[a:b], units[a:b]))
            start = k + 1
    return out


def _nsp_batch(batch, indices, max_length, cls_id, sep_id, ends, seed, unit_columns):
    import random

    target = max_length - 3
    rng = random.Random(seed * 1_000_003 + indices[0])
    docs = [
        _sentences(ids, list(zip(*(batch[c][k] for c in unit_columns))), ends, max(1, target // 2))
        for k, ids in enumerate(batch["input_ids"])
    ]
    out: dict[str, list] = {"input_ids": [], "token_type_ids": [], **{c: [] for c in unit_columns}, "next_sentence_label": []}

    def emit(a: list, b: list, label: int) -> None:
        ids, types = [cls_id], [0]
        units: list[list[int]] = [[-1] for _ in unit_columns]
        relabel: list[dict] = [{} for _ in unit_columns]  # (document, unit) -> unit id within this example
        for seg_type, segment in ((0, a), (1, b)):
            for doc_no, (piece_ids, piece_units) in segment:
                ids.extend(piece_ids)
                types.extend([seg_type] * len(piece_ids))
                for u in piece_units:
                    for c, uc in enumerate(u):
                        units[c].append(relabel[c].setdefault((doc_no, uc), len(relabel[c])) if uc >= 0 else -1)
            ids.append(sep_id)
            types.append(seg_type)
            for col in units:
                col.append(-1)
        out["input_ids"].append(ids)
        out["token_type_ids"].append(types)
        for c, col in zip(unit_columns, units):
            out[c].append(col)
        out["next_sentence_label"].append(label)

    for d, sents in enumerate(docs):
        others = [j for j in range(len(docs)) if j != d and docs[j]]
        chunk: list = []
        length, i = 0, 0
        while i < len(sents) or chunk:
            if i < len(sents) and not (chunk and length + len(sents[i][0]) > target):
                chunk.append(sents[i])
                length += len(sents[i][0])
                i += 1
                continue
            # each pair uses at least one sentence of the chunk, so this terminates
            i = _emit_chunk(chunk, target, d, docs, others, rng, emit, i)
            chunk, length = [], 0
    return out


def _emit_chunk(chunk, target, d, docs, others, rng, emit, i):
    """Split ``chunk`` into A and B (true next, or random B); returns where to continue."""
    is_random = bool(others) and (rng.random() < 0.5 or (len(chunk) == 1 and len(chunk[0][0]) < 2))
    if len(chunk) == 1 and not is_random:
        # one sentence and a "next" draw: its second part is its true continuation,
        # cut where every unit column changes (between words, outside ERNIE units) where possible
        # (keeps the 50/50 balance on short docs)
        ids, units = chunk[0]
        cuts = (
            [k for k in range(1, len(ids)) if all(x != y for x, y in zip(units[k], units[k - 1]))] or list(range(1, len(ids))) or [len(ids)]
        )
        cut = rng.choice(cuts)
        emit([(d, (ids[:cut], units[:cut]))], [(d, (ids[cut:], units[cut:]))], 0)
        return i
    a_end = 1 if len(chunk) < 2 else rng.randint(1, len(chunk) - 1)
    a = [(d, s) for s in chunk[:a_end]]
    if is_random:
        # random B: fill the rest of the block from another document; the unused
        # sentences of this chunk go back and start the next pair (BERT does the same)
        j = rng.choice(others)
        room = target - sum(len(s[0]) for s in chunk[:a_end])
        b, start = [], rng.randrange(len(docs[j]))
        for ids, units in docs[j][start:]:
            if room <= 0:
                break
            b.append((j, (ids[:room], units[:room])))
            room -= len(ids[:room])
        emit(a, b, 1)
        return i - (len(chunk) - a_end)
    emit(a, [(d, s) for s in chunk[a_end:]], 0)
    return i


def pair_segments(prepared: Dataset, tokenizer, max_length: int = 128, seed: int = 0, num_proc: int | None = None) -> Dataset:
    """NSP examples ``[CLS] A [SEP] B [SEP]`` with ``token_type_ids`` and ``next_sentence_label``.

    Random B segments come from another document of the same map batch (1,000
    documents), chosen by a generator seeded from ``seed`` and the batch's first
    index, so the pairs are the same on every run and under any ``num_proc``.
    """
    ends = {tokenizer.convert_tokens_to_ids(t) for t in SENTENCE_END_TOKENS} - {tokenizer.unk_token_id}
    unit_columns = _unit_columns(prepared)
    pairs = prepared.map(
        _nsp_batch,
        batched=True,
        batch_size=1000,
        with_indices=True,
        num_proc=num_proc if num_proc and num_proc > 1 else None,
        remove_columns=prepared.column_names,
        fn_kwargs={
            "max_length": max_length,
            "cls_id": tokenizer.cls_token_id,
            "sep_id": tokenizer.sep_token_id,
            "ends": ends,
            "seed": seed,
            "unit_columns": unit_columns,
        },
        desc="sentence pairs for NSP",
    )
    return pairs.add_column("idx", list(range(len(pairs))))
