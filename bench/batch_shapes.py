"""Prediction speed by batch shape: padded tokens per batch x rows per batch, one thread.

Each model reads PKU test lines through ``zhbert.load`` under every shape, the shapes interleaved
round by round (so the machine's drift falls on all of them alike); the best round of each is
printed in chars/s, with the model's load time and the budget ``batch_token_budget`` gives it.
``ROWS`` ``none`` is the default call (rows limited by the token budget alone).

    python bench/batch_shapes.py runs/student/model cws-fast --lines 2000 --rounds 5
    python bench/batch_shapes.py cws --lines 600 --rounds 3 --shapes 2048x64 2048xnone 4096xnone
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAYON_NUM_THREADS", "1")

import torch  # noqa: E402

import zhbert  # noqa: E402
import zhbert.heads.inference as inference  # noqa: E402
from zhbert.data.tasks import load_task_data  # noqa: E402


def shape(text: str) -> tuple[int, int | None]:
    tokens, _, rows = text.partition("x")
    return int(tokens), None if rows == "none" else int(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+", help="bundled names or model folders of token heads")
    parser.add_argument("--lines", type=int, default=2000, help="PKU test lines read per pass")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--shapes", nargs="+", default=["2048x64", "2048xnone", "4096xnone", "8192xnone"], help="TOKENSxROWS")
    args = parser.parse_args()
    torch.set_num_threads(1)
    texts = [r["text"] for r in load_task_data("cws", "pku").test][: args.lines]
    chars = sum(map(len, texts))
    shapes = [shape(s) for s in args.shapes]
    default_budget = inference.batch_token_budget
    print(f"{len(texts):,} PKU test lines, {chars:,} characters, one thread\n")
    print("| model | load s | its budget | " + " | ".join(args.shapes) + " |")
    print("|---|---:|---:|" + "---:|" * len(shapes))
    for name in args.models:
        t = time.perf_counter()
        model = zhbert.load(name)
        load_s = time.perf_counter() - t
        budget = default_budget(model.model.config)
        model(texts[:50])  # warm-up
        best = [0.0] * len(shapes)
        try:
            for _ in range(args.rounds):
                for k, (tokens, rows) in enumerate(shapes):
                    inference.batch_token_budget = lambda config, tokens=tokens: tokens
                    t = time.perf_counter()
                    model(texts, batch_size=rows)
                    best[k] = max(best[k], chars / (time.perf_counter() - t))
        finally:
            inference.batch_token_budget = default_budget
        print(f"| {name} | {load_s:.1f} | {budget:,} | " + " | ".join(f"{b:,.0f}" for b in best) + " |", flush=True)


if __name__ == "__main__":
    main()
