"""Characters per second of NER predictors side by side, through ``zhbert.load``.

Reads the first N sentences of MSRA's ``msra_test_bio.txt`` (news sentences; the first 2,000 hold 110,956
characters), warms each predictor up on one batch, then times whole passes over the sentences, alternating
between the predictors so that a change in the machine's load falls on all of them alike, and keeps each
one's best pass. One thread by default: what a single request costs. Run it on an otherwise idle machine.

    python bench/ner_speed.py ner runs/ner58/soup-4-trim                # bundled name or model folder
    python bench/ner_speed.py ner --sentences 3442 --threads 2 --passes 5
    python bench/ner_speed.py ner runs/ner58/soup-4-trim --packed-bilstm   # also its BiLSTM's training path

``--packed-bilstm`` adds, for each model with a BiLSTM head, the same model predicting through the
BiLSTM's training path (padding packed away) instead of its prediction path (the padded batch): what
prediction cost before the two paths differed.
"""

from __future__ import annotations

import argparse
import time

import torch

import zhbert
from zhbert.data import dataset_path
from zhbert.data.char_tagged import read_char_tagged


def keep_packed_path(bilstm) -> None:
    """Keep a BiLSTM in training mode (its packed path) through the predictor's ``model.eval()``, with no
    dropout between its layers, so it computes what the prediction path computes."""
    bilstm.lstm.dropout = 0.0
    bilstm.train = lambda mode=True: torch.nn.Module.train(bilstm, True)
    bilstm.train()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+", help="bundled names or model folders")
    parser.add_argument("--sentences", type=int, default=2000, help="the first N sentences of msra_test_bio.txt")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--passes", type=int, default=3, help="timed passes per predictor; the best is reported")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--packed-bilstm", action="store_true", help="also time BiLSTM heads through their packed path")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    texts = read_char_tagged(str(dataset_path("msra_ner", "msra_test_bio.txt")), sep="\t")["text"][: args.sentences]
    chars = sum(map(len, texts))
    predictors = {name: zhbert.load(name) for name in args.models}
    if args.packed_bilstm:
        for name in args.models:
            packed = zhbert.load(name)
            if packed.model.bilstm is not None:
                predictors[f"{name} (packed BiLSTM)"] = packed
                keep_packed_path(packed.model.bilstm)
    for predict in predictors.values():
        predict(texts[: args.batch_size])  # warm-up: first-call allocations and lazy loading stay out of the timing
    best = dict.fromkeys(predictors, 0.0)
    for _ in range(args.passes):
        for name, predict in predictors.items():
            start = time.perf_counter()
            predict(texts, batch_size=args.batch_size)
            best[name] = max(best[name], chars / (time.perf_counter() - start))

    first = args.models[0]
    print(
        f"{len(texts):,} sentences, {chars:,} characters; {args.threads} thread(s), batch {args.batch_size}, "
        f"best of {args.passes} alternating passes"
    )
    print(f"| model | chars/s | against {first} |\n|---|---:|---:|")
    for name, speed in best.items():
        print(f"| {name} | {speed:,.0f} | {speed / best[first]:.2f}x |")


if __name__ == "__main__":
    main()
