"""Held-out fill-mask: a pretrained model vs the unigram-frequency baseline.

Held out: every 25th People's Daily 1998-01 sentence (``zhbert.data.splits``),
removed from the pretraining corpus by ``corpora/build_corpus.py``.

    python bench/fill_mask_eval.py --model zhbert/pretrained/base --corpus runs/corpus
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import time
from pathlib import Path

import torch
from transformers import AutoModelForMaskedLM

from zhbert.data import read_corpus
from zhbert.data.splits import peoples_daily_heldout
from zhbert.tokenizer import build_tokenizer, load_tokenizer
from zhbert.training.mlm_eval import evaluate_mlm, evaluate_unigram, unigram_counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", nargs="+", required=True, help="model folders (a checkpoint-N folder works too)")
    ap.add_argument("--corpus", default="runs/corpus", help="pretraining corpus for the unigram counts")
    ap.add_argument("--unigram-docs", type=int, default=100_000, help="documents counted for the unigram baseline")
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    texts = peoples_daily_heldout()[: args.sentences]
    folder = Path(args.model[0])
    # Trainer checkpoints carry no tokenizer; zhbert's pretraining always uses the bundled vocabulary
    tok = load_tokenizer(folder) if (folder / "tokenizer.json").is_file() or (folder / "vocab.txt").is_file() else build_tokenizer()
    t0 = time.time()
    corpus = read_corpus(args.corpus).shuffle(seed=0)
    counts = unigram_counts(tok, itertools.islice(corpus["text"], args.unigram_docs))
    rows = [("unigram frequency baseline", evaluate_unigram(counts, tok, texts, seed=args.seed))]
    for path in args.model:
        model = AutoModelForMaskedLM.from_pretrained(path, local_files_only=True, dtype=torch.float32)
        rows.append((path, evaluate_mlm(model, tok, texts, seed=args.seed)))
    print(
        f"held-out People's Daily sentences: {len(texts)}; blanks: {rows[0][1].blanks}; "
        f"{platform.processor() or platform.machine()}, torch {torch.__version__}, {time.strftime('%Y-%m-%d')}"
    )
    print("| model | masked-char accuracy | perplexity |\n|---|---:|---:|")
    for name, s in rows:
        print(f"| {name} | {100 * s.accuracy:.1f}% | {s.perplexity:.1f} |")
    print(json.dumps({name: s.to_dict() for name, s in rows}, ensure_ascii=False))
    print(f"({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
