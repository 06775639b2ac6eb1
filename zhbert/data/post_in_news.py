"""A long-document task whose evidence sits in one place: one Weibo post hidden in a TV
news transcript, labelled by the post's emotion.

The ``sources`` dataset (:mod:`zhbert.data.source_excerpts`) spreads its evidence over the
whole excerpt: every window of a law text looks like law. Issue 20's question 4 also asks
how window vectors should be pooled (mean, or mean-max), and pooling matters most when one
window holds the answer and the rest are noise. This dataset builds that case from two
real texts:

* the **host**: a 1,000-1,200 character excerpt of a ``xinwenlianbo_cctv`` transcript
  (CCTV evening news, ``../shared/corpora``; cut as in ``sources``), which says nothing
  about the label;
* the **post**: one SMP2020-EWECT ``usual`` Weibo post labelled ``angry`` or ``happy``
  (20-140 characters), inserted whole at a sentence boundary of the host drawn uniformly
  at random (the host's start and end included).

Label = the post's emotion, two classes, balanced in every split. Train posts come from
the ``usual`` train split (minus the texts found in its dev or test file), dev posts from
its dev file and test posts from its test file; host documents are shuffled with a fixed
seed and cut so that no transcript gives text to two splits. Each row keeps ``position``
(the post's first character in ``text``), ``post`` and ``source`` (``folder/file:line`` of
the host), so a study can score documents by where the evidence is.

A truncating reader sees the post only when it starts in the first window (about one
document in ten at 128 tokens), so truncation should sit near chance; how close windows
get to the post read alone (the ``usual`` recipe's own accuracy on these two classes) is
what the pooling decides. Caveat: the post differs from its host in genre as well as in
content, which a model can use to find it; the bundled encoders were pretrained on the
transcripts and on the ``usual`` train posts (masked LM, no labels).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from ..errors import DataFormatError
from .paths import corpora_dir
from .source_excerpts import MIN_CHARS, excerpt, long_documents_of

__all__ = ["POST_LABELS", "HOST_FOLDER", "post_in_news", "insert_post"]

POST_LABELS = ["angry", "happy"]  # the two most frequent emotions of SMP2020-EWECT usual
HOST_FOLDER = "xinwenlianbo_cctv"
POST_CHARS = (20, 140)
TRAIN_DOCS, DEV_DOCS, TEST_DOCS = 1000, 200, 500
SEED = 17

_SENTENCE_END = re.compile(r"[。！？!?]")


def insert_post(host: str, post: str, rng: random.Random) -> tuple[str, int]:
    """``host`` with ``post`` inserted at a sentence boundary drawn uniformly (start and end
    included), and the post's offset."""
    boundaries = sorted({0, len(host), *(m.end() for m in _SENTENCE_END.finditer(host))})
    at = rng.choice(boundaries)
    return host[:at] + post + host[at:], at


def _posts(rows: list[dict], labels: list[str], per_label: int, split: str, rng: random.Random) -> list[tuple[str, int]]:
    """``per_label`` distinct posts of each of :data:`POST_LABELS`, as ``(text, new label id)``."""
    chosen = []
    low, high = POST_CHARS
    for new_id, name in enumerate(POST_LABELS):
        old_id = labels.index(name)
        texts = sorted({t for t in (r["text"].strip() for r in rows if r["label"] == old_id) if low <= len(t) <= high})
        if len(texts) < per_label:
            problem = f"{len(texts)} '{name}' posts of {low}-{high} characters, {per_label} needed"
            raise DataFormatError(f"smp2020_ewect_usual/{split}", None, problem)
        chosen += [(t, new_id) for t in rng.sample(texts, per_label)]
    rng.shuffle(chosen)
    return chosen


def post_in_news(usual, root: Path | None = None, sizes=(TRAIN_DOCS, DEV_DOCS, TEST_DOCS), seed: int = SEED) -> dict[str, list[dict]]:
    """``{"train", "dev", "test"}`` rows ``{"text", "label", "post", "position", "source"}``;
    ``usual``: the ``tagging/usual`` :class:`~zhbert.data.tasks.TaskData` the posts come from."""
    root = corpora_dir() if root is None else Path(root)
    hosts = long_documents_of(root / HOST_FOLDER)
    if len(hosts) < sum(sizes):
        raise DataFormatError(str(root / HOST_FOLDER), None, f"{len(hosts)} documents of {MIN_CHARS}+ characters, {sum(sizes)} needed")
    rng = random.Random(f"{seed}/hosts")  # string seeds: the same draw on every Python
    rng.shuffle(hosts)
    splits, start = {}, 0
    for split, n in zip(("train", "dev", "test"), sizes):
        if n % len(POST_LABELS):
            raise ValueError(f"{split}: {n} documents cannot be balanced over {len(POST_LABELS)} labels")
        rng = random.Random(f"{seed}/{split}")
        posts = _posts(getattr(usual, split), usual.labels, n // len(POST_LABELS), split, rng)
        rows = []
        for (file, line, doc), (post, label) in zip(hosts[start : start + n], posts):
            text, at = insert_post(excerpt(doc, rng), post, rng)
            rows.append({"text": text, "label": label, "post": post, "position": at, "source": f"{HOST_FOLDER}/{file}:{line}"})
        splits[split], start = rows, start + n
    return splits
