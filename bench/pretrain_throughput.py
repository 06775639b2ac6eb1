"""Pretraining throughput: zhbert vs a plain HF run_mlm-style baseline, side by side.

Both train the same BERT size on the same documents with the same AdamW step:

* baseline (``run_mlm.py --line-by-line``): one document per row, truncated to
  ``--max-length``, padded per batch by ``DataCollatorForLanguageModeling``;
  ``BertForMaskedLM`` projects every position onto the vocabulary;
* zhbert: documents packed into full blocks (no padding), whole-word masking,
  vocabulary logits only at the ~15% masked positions (``SparseBertForMaskedLM``).

Throughput counts corpus tokens trained on per second (padding excluded). MFU
is useful model FLOPs per second over this CPU's fp32 matmul peak, measured in
the same run: per token ``6 * (encoder params)`` + attention ``12 * L * T * H``
+ the vocabulary projection ``6 * H * V`` at the positions that are predicted.

    python bench/pretrain_throughput.py --size mini --docs 3000 --steps 20
"""

from __future__ import annotations

import argparse
import platform
import time

import torch
from datasets import Dataset
from transformers import BertForMaskedLM, DataCollatorForLanguageModeling

from zhbert.data import read_corpus
from zhbert.masking import MaskingConfig, get_masker
from zhbert.tokenizer import build_tokenizer
from zhbert.training.flops import matmul_peak, train_flops_per_token
from zhbert.training.mlm_collator import MaskingCollator
from zhbert.training.mlm_model import SparseBertForMaskedLM
from zhbert.training.pretrain_data import pack, prepare
from zhbert.training.sizes import bert_config


def run(model, batches, steps: int, warmup: int = 3) -> tuple[float, int, int]:
    """Seconds, corpus tokens and predicted tokens for ``steps`` timed steps."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()
    tokens = predicted = 0
    for i, batch in enumerate(batches):
        if i == warmup:
            t0 = time.perf_counter()
        loss = model(**batch).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if i >= warmup:
            tokens += int(batch["attention_mask"].sum())
            predicted += int((batch["labels"] != -100).sum())
        if i == warmup + steps - 1:
            return time.perf_counter() - t0, tokens, predicted
    raise ValueError("not enough data for the requested steps; raise --docs")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="runs/corpus")
    ap.add_argument("--size", default="mini")
    ap.add_argument("--docs", type=int, default=3000)
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--num-proc", type=int, default=2)
    args = ap.parse_args()
    torch.manual_seed(0)
    tok = build_tokenizer()
    docs = read_corpus(args.corpus).shuffle(seed=0).select(range(args.docs))
    texts = list(docs["text"])
    config = bert_config(args.size, len(tok), max_position_embeddings=max(512, args.max_length))
    peak = matmul_peak(2048, 10)

    # data preparation: the word-boundary pass with 1 and with num_proc workers
    chars = sum(map(len, texts))
    prep_rate = {}
    for n in (1, args.num_proc):
        t = time.perf_counter()
        prepared = prepare(Dataset.from_dict({"text": texts}), tok, "wwm", num_proc=n)
        prep_rate[n] = chars / (time.perf_counter() - t)

    # baseline: run_mlm --line-by-line
    enc = tok(texts, truncation=True, max_length=args.max_length, return_special_tokens_mask=True)
    rows = [{"input_ids": i, "special_tokens_mask": m} for i, m in zip(enc["input_ids"], enc["special_tokens_mask"])]
    hf_collate = DataCollatorForLanguageModeling(tok, mlm_probability=0.15)
    hf_batches = (hf_collate(rows[i : i + args.batch_size]) for i in range(0, len(rows), args.batch_size))
    base = BertForMaskedLM(config)
    b_sec, b_tok, b_pred = run(base, hf_batches, args.steps)

    # zhbert: packed blocks, wwm, masked-only logits
    blocks = pack(prepared, tok, args.max_length)
    collate = MaskingCollator(tok, get_masker("wwm", MaskingConfig()), seed=0)
    z_batches = (
        collate([blocks[j] for j in range(i, min(i + args.batch_size, len(blocks)))]) for i in range(0, len(blocks), args.batch_size)
    )
    ours = SparseBertForMaskedLM(config)
    z_sec, z_tok, z_pred = run(ours, z_batches, args.steps)

    def mfu(sec, tok_, pred, seq):
        return train_flops_per_token(ours, seq, pred / tok_) * tok_ / sec / peak

    print(
        f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} threads, torch {torch.__version__}, "
        f"{time.strftime('%Y-%m-%d')}; size {args.size} ({config.num_hidden_layers} layers, {config.hidden_size} hidden); "
        f"batch {args.batch_size} x {args.max_length}; {args.steps} timed steps; fp32 matmul peak {peak / 1e9:.0f} GFLOP/s"
    )
    print("| pipeline | corpus tokens/s | MFU (useful FLOPs / peak) |\n|---|---:|---:|")
    b_rate, z_rate = b_tok / b_sec, z_tok / z_sec
    avg_len = b_tok / (args.steps * args.batch_size)
    print(
        f"| HF run_mlm-style (line by line, padded, full-vocab logits) | {b_rate:,.0f} | {100 * mfu(b_sec, b_tok, b_pred, avg_len):.0f}% |"
    )
    print(f"| zhbert (packed, wwm, masked-only logits) | {z_rate:,.0f} | {100 * mfu(z_sec, z_tok, z_pred, args.max_length):.0f}% |")
    print(f"ratio zhbert / baseline: {z_rate / b_rate:.2f}x")
    print("| word-boundary pass (jieba + tokenizer) | chars/s |\n|---|---:|")
    for n, r in prep_rate.items():
        print(f"| num_proc={n} | {r:,.0f} |")


if __name__ == "__main__":
    main()
