"""Held-out accuracy of NSP- or SOP-pretrained models on their own pair objective.

Builds ``[CLS] A [SEP] B [SEP]`` pairs from documents the models never trained on, exactly as
``zhbert pretrain --nsp`` (or ``--sop``) does (:func:`zhbert.training.nsp_pairs.pair_segments`:
for NSP B is the true continuation in half the pairs, text from another document otherwise; for
SOP the two consecutive segments are swapped in half the pairs), and scores each model's own pair
head (``cls.seq_relationship``) through plain transformers' ``BertForPreTraining``. This says
whether the pair objective was learned at all before one asks what it did for a task.

    python bench/nsp_accuracy.py --corpus runs/corpus-heldout --model runs/nsp-cont/final
    python bench/nsp_accuracy.py --corpus runs/corpus-heldout --model runs/sop-cont/final --objective sop
"""

from __future__ import annotations

import argparse

import torch
from transformers import BertForPreTraining

from zhbert.data import read_corpus
from zhbert.tokenizer import load_tokenizer
from zhbert.training.nsp_pairs import pair_segments
from zhbert.training.pretrain_data import prepare


def nsp_accuracy(
    model_dir: str, corpus: list[str], max_docs: int, max_length: int, batch_size: int = 64, objective: str = "nsp"
) -> tuple[float, float, int]:
    """(accuracy, share of label-0 pairs (true next / in order), pairs scored) on pairs built from ``corpus``."""
    tokenizer = load_tokenizer(model_dir)
    docs = read_corpus(corpus)
    docs = docs.select(range(min(max_docs, len(docs))))
    pairs = pair_segments(prepare(docs, tokenizer, "char"), tokenizer, max_length, seed=12345, objective=objective)
    model = BertForPreTraining.from_pretrained(model_dir).eval()
    correct = 0
    labels = pairs["next_sentence_label"]
    for start in range(0, len(pairs), batch_size):
        rows = pairs[start : start + batch_size]
        width = max(map(len, rows["input_ids"]))
        batch = {
            "input_ids": torch.tensor([r + [tokenizer.pad_token_id] * (width - len(r)) for r in rows["input_ids"]]),
            "token_type_ids": torch.tensor([r + [0] * (width - len(r)) for r in rows["token_type_ids"]]),
            "attention_mask": torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows["input_ids"]]),
        }
        with torch.inference_mode():
            logits = model(**batch).seq_relationship_logits
        correct += int((logits.argmax(-1) == torch.tensor(rows["next_sentence_label"])).sum())
    return correct / len(pairs), labels.count(0) / len(labels), len(pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", nargs="+", required=True, help="held-out text files or folders, one document per line")
    parser.add_argument("--model", nargs="+", required=True, help="folders saved by zhbert pretrain --nsp or --sop")
    parser.add_argument("--max-docs", type=int, default=2000)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--objective", choices=("nsp", "sop"), default="nsp", help="the pair objective the models were trained on")
    args = parser.parse_args()
    name = args.objective.upper()
    print(f"| model | held-out {name} pairs | label 0 (in order / true next) | {name} accuracy |")
    print("|---|---:|---:|---:|")
    for m in args.model:
        acc, share_next, n = nsp_accuracy(m, args.corpus, args.max_docs, args.max_length, objective=args.objective)
        print(f"| {m} | {n:,} | {100 * share_next:.1f}% | {100 * acc:.2f}% |")


if __name__ == "__main__":
    main()
