"""Sentence-pair objectives from prepared documents (see :mod:`.pretrain_data`).

Next-sentence prediction (BERT): B is A's true continuation or text from another document.
Sentence-order prediction (ALBERT, Lan et al. 2020): A and B are always two consecutive
segments of one document, in order or swapped, so topic alone cannot tell the classes
apart and the head has to learn discourse order.
"""

from __future__ import annotations

from datasets import Dataset

from .pretrain_data import token_batch_size, unit_columns_of

__all__ = ["pair_segments", "PAIR_OBJECTIVES", "SENTENCE_END_TOKENS"]

PAIR_OBJECTIVES = ("nsp", "sop")


# ---------------------------------------------------------------------------
# [CLS] A [SEP] B [SEP] pairs, as in BERT's create_pretraining_data.py.
# NSP: B is the true continuation of A in 50% of pairs (label 0) and text from
# another document otherwise (label 1).
# SOP: B is the true continuation (label 0), or the two are swapped (label 1).
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


def _pair_batch(batch, indices, max_length, cls_id, sep_id, ends, seed, unit_columns, objective):
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
            i = _emit_chunk(chunk, target, d, docs, others if objective == "nsp" else [], rng, emit, i, swap=objective == "sop")
            chunk, length = [], 0
    return out


def _emit_chunk(chunk, target, d, docs, others, rng, emit, i, swap=False):
    """Split ``chunk`` into A and B (true next, or random B from ``others``); returns where to continue.
    With ``swap`` (SOP, ``others`` empty) half the pairs are emitted B first, label 1."""
    if swap:
        true_pair = emit

        def emit(a, b, label):
            if any(piece[0] for _, piece in b) and rng.random() < 0.5:  # a one-token document has no order to swap
                true_pair(b, a, 1)
            else:
                true_pair(a, b, 0)

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


def pair_segments(
    prepared: Dataset, tokenizer, max_length: int = 128, seed: int = 0, num_proc: int | None = None, objective: str = "nsp"
) -> Dataset:
    """Pair examples ``[CLS] A [SEP] B [SEP]`` with ``token_type_ids`` and ``next_sentence_label``.

    ``objective`` "nsp": random B segments come from another document of the same map
    batch (1,000 documents); "sop": B is always A's own continuation, swapped in half the
    pairs (label 1). Choices come from a generator seeded from ``seed`` and the batch's
    first index, so the pairs are the same on every run and under any ``num_proc``.
    """
    if objective not in PAIR_OBJECTIVES:
        raise ValueError(f"unknown pair objective {objective!r}; choose one of {', '.join(PAIR_OBJECTIVES)}")
    ends = {tokenizer.convert_tokens_to_ids(t) for t in SENTENCE_END_TOKENS} - {tokenizer.unk_token_id}
    unit_columns = unit_columns_of(prepared)
    pairs = prepared.map(
        _pair_batch,
        batched=True,
        batch_size=token_batch_size(prepared, 1000),  # fewer documents per batch when they are long
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
            "objective": objective,
        },
        desc=f"sentence pairs for {objective.upper()}",
    )
    return pairs.add_column("idx", list(range(len(pairs))))
