"""Sentences of the shared raw corpora (``../shared/corpora``) for work on unlabelled text:
silver segmentation to distil from, static embeddings to train. Never a sentence that also
occurs in a dev/test split of any dataset, so nothing trained on this text has seen what it
is scored on.

``mixed_sentences(chars)`` takes each source's share of ``chars`` in the order of
:data:`SHARES`: news first (closest to People's Daily), then the web, Q&A, reviews and Weibo.
"""

from __future__ import annotations

from collections.abc import Iterator

from .paths import corpora_dir
from .peoples_daily import overlap_key, split_text_sentences
from .splits import iter_split_texts

__all__ = ["SHARES", "eval_keys", "source_sentences", "mixed_sentences", "sentence_batches"]

SHARES = {
    "xinwenlianbo_cctv": 0.45,
    "cluecorpussmall_sample": 0.12,
    "zhihu_archive": 0.2,
    "reviews_sophonplus": 0.1,
    "medical_qa_toyhom": 0.1,
    "weibo_senti_sample": 0.03,
}


def eval_keys() -> set[str]:
    """The overlap keys of every dev/test text and of its sentences (8 characters or more)."""
    keys: set[str] = set()
    for _, text in iter_split_texts("eval"):
        k = overlap_key(text)
        keys.update(p for p in [k, *split_text_sentences(k)] if len(p) >= 8)
    return keys


def source_sentences(source: str, budget: int, keys: set[str], min_chars: int = 6, max_chars: int = 120) -> Iterator[str]:
    """Sentences of one source, ``min_chars``..``max_chars`` long, until ``budget`` characters."""
    used = 0
    for path in sorted((corpora_dir() / source).glob("*.txt")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                for s in split_text_sentences(line.strip()):
                    s = s.strip()
                    if min_chars <= len(s) <= max_chars and overlap_key(s) not in keys:
                        yield s
                        used += len(s)
                        if used >= budget:
                            return


def mixed_sentences(chars: int, keys: set[str] | None = None, min_chars: int = 6, max_chars: int = 120) -> Iterator[str]:
    """About ``chars`` characters of sentences, each source giving its share of :data:`SHARES`."""
    keys = eval_keys() if keys is None else keys
    for source, share in SHARES.items():
        yield from source_sentences(source, int(share * chars), keys, min_chars, max_chars)


def sentence_batches(
    shares: dict[str, float], chars: int, keys: set[str], min_chars: int = 6, max_chars: int = 120, batch_size: int = 256
) -> Iterator[list[str]]:
    """:func:`source_sentences` of each source in ``shares`` (its share of ``chars``), in lists of
    ``batch_size``: the calls a teacher labelling silver text makes. A batch never mixes sources."""
    for source, share in shares.items():
        batch: list[str] = []
        for s in source_sentences(source, int(share * chars), keys, min_chars, max_chars):
            batch.append(s)
            if len(batch) == batch_size:
                yield batch
                batch = []
        if batch:
            yield batch
