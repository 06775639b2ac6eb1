"""Toy check of the bag-of-words plateau: random vs sinusoidal position embeddings.

Corpus: 6,400 lines of 50 random CJK characters (from 500), each written twice
("天天地地..."), so a masked character is predictable from a neighbour, and only
if attention can tell neighbours from the rest of the line. A 2 x 128 BERT
(``tiny``) is trained with plain transformers (``BertForMaskedLM`` +
``DataCollatorForLanguageModeling``, AdamW 1e-3, batch 32 x 64) twice from the
same seed, once with BERT's N(0, 0.02) position embeddings and once with
``zhbert.training.positions.init_positions_sinusoidal``. Prints the mean training
loss per 100 steps. For scale: ln(500) = 6.2 (no context), ln(50) = 3.9 (bag of
the line's characters), about 0.7 (neighbour found).

    python bench/position_init_toy.py --steps 1500
"""

from __future__ import annotations

import argparse
import random

import torch
from transformers import BertForMaskedLM, DataCollatorForLanguageModeling

from zhbert.tokenizer import build_tokenizer
from zhbert.training.positions import init_positions_sinusoidal
from zhbert.training.sizes import bert_config


def doubled_lines(n: int = 6400, length: int = 50, alphabet: int = 500, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    chars = [chr(c) for c in range(0x4E00, 0x4E00 + alphabet)]
    return ["".join(c * 2 for c in rng.choices(chars, k=length)) for _ in range(n)]


def train(positions: str, steps: int, tokenizer, ids: list[list[int]]) -> list[float]:
    torch.manual_seed(0)
    model = BertForMaskedLM(bert_config("tiny", len(tokenizer)))
    if positions == "sinusoidal":
        init_positions_sinusoidal(model)
    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    losses, means = [], []
    for step in range(steps):
        batch = collator([{"input_ids": ids[(step * 32 + i) % len(ids)]} for i in range(32)])
        loss = model(**batch).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
        if (step + 1) % 100 == 0:
            means.append(sum(losses[-100:]) / 100)
    return means


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=1500)
    args = ap.parse_args()
    tokenizer = build_tokenizer()
    ids = tokenizer(doubled_lines(), truncation=True, max_length=64)["input_ids"]
    curves = {p: train(p, args.steps, tokenizer, ids) for p in ("normal", "sinusoidal")}
    print("| steps | N(0, 0.02) positions | sinusoidal positions |")
    print("|---:|---:|---:|")
    for k, (a, b) in enumerate(zip(curves["normal"], curves["sinusoidal"])):
        print(f"| {100 * k + 1}-{100 * (k + 1)} | {a:.3f} | {b:.3f} |")


if __name__ == "__main__":
    main()
