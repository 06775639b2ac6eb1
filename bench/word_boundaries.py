"""Word boundaries for whole-word masking: jieba against rjieba (jieba-rs), agreement and speed.

    python bench/word_boundaries.py --corpus runs/corpus            # the whole default corpus
    python bench/word_boundaries.py --corpus runs/corpus --max-docs 20000

Both segment every document on one process; the table gives characters per second for each,
how many of jieba's word spans rjieba reproduces exactly (and the other way round), and the
share of documents segmented identically. Masked units follow the spans one to one
(``zhbert.masking.units.token_units``), so a differing span is a differing whole-word unit.
"""

from __future__ import annotations

import argparse
import time

from zhbert.data import read_corpus
from zhbert.masking.units import word_spans


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", nargs="+", default=["runs/corpus"])
    ap.add_argument("--max-docs", type=int, default=None)
    args = ap.parse_args()
    docs = read_corpus(args.corpus)
    if args.max_docs:
        docs = docs.select(range(min(args.max_docs, len(docs))))
    texts = docs["text"]
    chars = sum(map(len, texts))
    spans, speed = {}, {}
    for backend in ("jieba", "rjieba"):
        word_spans("预热", backend=backend)  # load the dictionary outside the timing
        t = time.perf_counter()
        spans[backend] = [word_spans(x, backend=backend) for x in texts]
        speed[backend] = chars / (time.perf_counter() - t)
    both = same_docs = n_j = n_r = 0
    for a, b in zip(spans["jieba"], spans["rjieba"]):
        sa, sb = set(a), set(b)
        both += len(sa & sb)
        n_j += len(sa)
        n_r += len(sb)
        same_docs += a == b
    print(f"{len(texts):,} documents, {chars:,} characters; one process each\n")
    print("| backend | chars/s | words |")
    print("|---|---:|---:|")
    print(f"| jieba 0.42.1 | {speed['jieba']:,.0f} | {n_j:,} |")
    print(f"| rjieba | {speed['rjieba']:,.0f} | {n_r:,} |")
    print(
        f"\njieba spans also in rjieba: {100 * both / n_j:.3f}%; rjieba spans also in jieba: {100 * both / n_r:.3f}%; "
        f"documents segmented identically: {100 * same_docs / len(texts):.2f}%; speed-up {speed['rjieba'] / speed['jieba']:.1f}x"
    )


if __name__ == "__main__":
    main()
