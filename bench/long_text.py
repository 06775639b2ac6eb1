"""One long text against the same characters as separate sentences: chars/s through each head.

    python bench/long_text.py --chars 20000 --threads 2

A long text's windows are predicted in batches like separate sentences (zhbert.heads.predict_tags,
MaskedLM.features); this measures whether that holds: the long text should run at least as many
characters per second as its sentences given one by one in a list.
"""

from __future__ import annotations

import argparse
import time

import torch

import zhbert
from zhbert.data import read_peoples_daily


def best_of_alternating(a, b, repeats: int = 5) -> tuple[float, float]:
    """Best time of ``a`` and of ``b``, timed in turn (a, b, a, b, ...): this shared machine's
    speed drifts by 10-30% within a minute, and timing one side after the other read that drift
    as a difference between them."""
    a(), b()  # warm-up
    best = [float("inf"), float("inf")]
    for _ in range(repeats):
        for i, fn in enumerate((a, b)):
            t = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t)
    return best[0], best[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chars", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    sentences, total = [], 0
    for t in read_peoples_daily()["text"]:
        sentences.append(t)
        total += len(t)
        if total >= args.chars:
            break
    text = "".join(sentences)
    print(f"{len(text):,} characters = {len(sentences):,} People's Daily sentences; torch threads {args.threads}\n")
    print("| model | call | one long text, chars/s | separate sentences, chars/s | ratio |")
    print("|---|---|---:|---:|---:|")
    cws, ner, base = zhbert.load("cws"), zhbert.load("ner"), zhbert.load("base")
    cases = [
        ("cws", "segment", lambda: cws(text, batch_size=32), lambda: cws(sentences, batch_size=32)),
        ("ner", "entities", lambda: ner(text, batch_size=32), lambda: ner(sentences, batch_size=32)),
        (
            "base",
            'features("mean-last-4")',
            lambda: base.features(text, "mean-last-4", batch_size=32),
            lambda: base.features(sentences, "mean-last-4", batch_size=32),
        ),
    ]
    for name, call, long_fn, split_fn in cases:
        t_long, t_split = best_of_alternating(long_fn, split_fn)
        a, b = len(text) / t_long, len(text) / t_split
        print(f"| {name} | {call} | {a:,.0f} | {b:,.0f} | {a / b:.2f} |", flush=True)


if __name__ == "__main__":
    main()
