"""Generation with a masked LM: a run of [MASK]s filled most-confident-first, left to right,
or all at once (issue 20, question 6).

Held-out People's Daily 1998-01 sentences (never in the pretraining corpus): in each, one
gold word of 2-4 Han characters is replaced by as many [MASK]s, and each order of
``MaskedLM.fill_mask`` fills them. Scored: the whole word right (exact match) and the share
of characters right.

    python bench/generation.py --model base --sentences 2000
"""

from __future__ import annotations

import argparse
import random
import time

import zhbert
from zhbert.api import FILL_ORDERS
from zhbert.data.splits import peoples_daily_heldout_words
from zhbert.text import is_cjk


def spans(sentences: int, seed: int = 0) -> list[tuple[str, int, str]]:
    """(text, start, word): one 2-4 character Han word per held-out sentence."""
    rng = random.Random(seed)
    out = []
    for text, words in peoples_daily_heldout_words():
        starts, pos = [], 0
        for w in words:
            if 2 <= len(w) <= 4 and all(is_cjk(c) for c in w):
                starts.append((pos, w))
            pos += len(w)
        if starts:
            start, word = rng.choice(starts)
            out.append((text, start, word))
        if len(out) == sentences:
            break
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="base")
    ap.add_argument("--sentences", type=int, default=2000)
    args = ap.parse_args()
    lm = zhbert.load(args.model)
    items = spans(args.sentences)
    print(f"model {args.model}; {len(items)} held-out People's Daily sentences, one 2-4 character word masked in each")
    print("| order | words right (exact) | characters right | by word length 2 / 3 / 4 (exact) | seconds |")
    print("|---|---:|---:|---|---:|")
    for order in FILL_ORDERS:
        start = time.perf_counter()
        exact, chars, total = 0, 0, 0
        by_len: dict[int, list[int]] = {2: [0, 0], 3: [0, 0], 4: [0, 0]}
        for text, s, word in items:
            masked = text[:s] + "[MASK]" * len(word) + text[s + len(word) :]
            got = "".join(m.token for m in lm.fill_mask(masked, top_k=1, order=order))
            right = sum(a == b for a, b in zip(got, word))
            exact += got == word
            chars += right
            total += len(word)
            by_len[len(word)][0] += got == word
            by_len[len(word)][1] += 1
        seconds = time.perf_counter() - start
        lengths = " / ".join(f"{100 * a / max(n, 1):.1f}" for a, n in by_len.values())
        print(f"| {order} | {100 * exact / len(items):.2f}% | {100 * chars / total:.2f}% | {lengths} | {seconds:.0f} |")


if __name__ == "__main__":
    main()
