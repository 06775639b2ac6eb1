"""A fixed random sample of a built corpus, and the documents right after it as a held-out set.

The pair-objective continuations in LOG.md ("Does a pair objective help pairs?") train on
40,000 documents of the default corpus and score their pair head on the next 2,000 of the same
shuffle, so the held-out documents share nothing with the training ones:

    python corpora/build_corpus.py --output runs/corpus
    python bench/corpus_sample.py --corpus runs/corpus --train runs/corpus-sample40k/sample.txt \
        --heldout runs/corpus-heldout/heldout.txt
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from zhbert.data import read_corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", nargs="+", required=True, help="text files or folders, one document per line")
    parser.add_argument("--train", required=True, help="where to write the sample, one document per line")
    parser.add_argument("--heldout", required=True, help="where to write the held-out documents")
    parser.add_argument("--n-train", type=int, default=40_000)
    parser.add_argument("--n-heldout", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    texts = read_corpus(args.corpus)["text"]
    if args.n_train + args.n_heldout > len(texts):
        parser.error(f"{args.corpus}: {len(texts):,} documents, fewer than the {args.n_train + args.n_heldout:,} asked for")
    order = list(range(len(texts)))
    random.Random(args.seed).shuffle(order)
    parts = ((args.train, order[: args.n_train]), (args.heldout, order[args.n_train : args.n_train + args.n_heldout]))
    for path, rows in parts:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text("".join(texts[i] + "\n" for i in rows), encoding="utf-8")
        print(f"{path}: {len(rows):,} documents, {sum(len(texts[i]) for i in rows):,} characters")


if __name__ == "__main__":
    main()
