"""Which texts are training text and which are evaluation text, for every dataset.

Pretraining may read the unlabelled text of *training* splits but never dev/test
text; recipes must not train on a sentence they are scored on. Both needs read the
one table of files, :data:`zhbert.data.tasks.SPLITS`, so a split is classified in
exactly one place.

Also defines the People's Daily 1998-01 held-out sentences used to score
fill-mask (every ``PD_HELDOUT_EVERY``-th sentence): kept out of the pretraining
corpus by :func:`peoples_daily_documents`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

__all__ = [
    "TRAIN_SPLITS",
    "EVAL_SPLITS",
    "iter_split_texts",
    "PD_HELDOUT_EVERY",
    "peoples_daily_heldout",
    "peoples_daily_documents",
]

PD_HELDOUT_EVERY = 25


TRAIN_SPLITS = "train"
EVAL_SPLITS = "eval"


def iter_split_texts(kind: str) -> Iterator[tuple[str, str]]:
    """``(split name, text)`` for every train (``"train"``) or dev/test (``"eval"``) split of
    :data:`zhbert.data.tasks.SPLITS`; a ``train+eval`` file counts as eval (kept out of
    pretraining), and the People's Daily held-out sentences are eval text too."""
    from .tasks import SPLITS

    if kind not in (TRAIN_SPLITS, EVAL_SPLITS):
        raise ValueError(f"kind must be 'train' or 'eval', got {kind!r}")
    for split in SPLITS.values():
        if (split.role == "train") == (kind == TRAIN_SPLITS):
            for text in split.texts():
                if text and text.strip():
                    yield split.name, text
    if kind == EVAL_SPLITS:
        for text in peoples_daily_heldout():
            yield "peoples_daily_1998/heldout", text


def peoples_daily_heldout() -> list[str]:
    """People's Daily 1998-01 sentences kept out of pretraining (fill-mask evaluation)."""
    return [text for text, _ in peoples_daily_heldout_words()]


def peoples_daily_heldout_words() -> list[tuple[str, list[str]]]:
    """The held-out sentences with their gold segmentation: ``(text, words)``."""
    from .peoples_daily import read_peoples_daily

    pd = read_peoples_daily()
    return [(t, w) for i, (t, w) in enumerate(zip(pd["text"], pd["words"])) if i % PD_HELDOUT_EVERY == 0 and len(t) >= 8]


def peoples_daily_documents(exclude: Callable[[str], bool] | None = None) -> Iterator[tuple[str, str, int]]:
    """People's Daily paragraphs for pretraining, held-out sentences removed.

    Yields ``(paragraph text, sentence ids, number of sentences dropped)``;
    ``exclude(sentence)`` may drop more (e.g. sentences found in an eval set).
    """
    from .peoples_daily import read_peoples_daily

    pd = read_peoples_daily()
    current, kept, dropped = None, [], 0
    for i, (sid, text) in enumerate(zip(pd["id"], pd["text"])):
        para = sid.split("-")[0]
        if para != current:
            if kept or dropped:
                yield "".join(kept), current, dropped
            current, kept, dropped = para, [], 0
        if (i % PD_HELDOUT_EVERY == 0 and len(text) >= 8) or (exclude is not None and exclude(text)):
            dropped += 1
        else:
            kept.append(text)
    if kept or dropped:
        yield "".join(kept), current, dropped
