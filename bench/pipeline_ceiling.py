"""How fast a segmenter of each size can be through zhbert's own pipeline: randomly initialised
token heads of several encoder sizes, saved and loaded like any model, segmenting the PKU test file.

    python bench/pipeline_ceiling.py --threads 1
    python bench/pipeline_ceiling.py --threads 1 --sizes 1x128,2x128 --lexicon-dim 32 --bigram-dim 16

The smallest (1 x 64) has almost no model: its speed is the pipeline's own cost (tokenisation,
windows, batching, decoding, spans). Random weights tag badly, so only the speed means anything.
With ``--lexicon-dim`` / ``--bigram-dim`` the heads carry word features (jieba's dictionary
matched per window, hashed bigrams), the price a student with word information would pay.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

SIZES = [(1, 64), (2, 128), (1, 256), (2, 256), (4, 256)]  # (layers, hidden)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--sizes", default=",".join(f"{layers}x{hidden}" for layers, hidden in SIZES), help="e.g. 1x128,2x128")
    ap.add_argument("--lexicon-dim", type=int, default=0, help="0: no lexicon; else jieba's dictionary, this size per set")
    ap.add_argument("--bigram-dim", type=int, default=0)
    ap.add_argument("--crf", action="store_true")
    ap.add_argument("--bilstm-layers", type=int, default=0, help="a BiLSTM (hidden size = the encoder's) between encoder and tagger")
    args = ap.parse_args()
    sizes = [tuple(int(v) for v in size.split("x")) for size in args.sizes.split(",")]
    torch.set_num_threads(args.threads)

    import peers
    from transformers import BertConfig

    import zhbert
    from zhbert.encoder_info import record_encoder
    from zhbert.heads import HeadConfig, predict_tags, save_head
    from zhbert.heads.model import ZhBertForTask
    from zhbert.models_registry import bundled_path
    from zhbert.tokenizer import load_tokenizer, normalizer_name

    tok = load_tokenizer(bundled_path("base"))
    texts, _ = peers._read("PKU test")
    n = sum(map(len, texts))
    head = HeadConfig(
        kind="token",
        labels=["B", "M", "E", "S"],
        scheme="BMES-untyped",
        crf=args.crf,
        bilstm_layers=args.bilstm_layers,
        lexicon="jieba" if args.lexicon_dim else None,
        lexicon_dim=args.lexicon_dim or 50,
        bigram_dim=args.bigram_dim,
    )
    print(f"PKU test: {n:,} characters in {len(texts):,} lines; torch threads {args.threads}")
    print(f"head: lexicon {args.lexicon_dim or 'none'}, bigrams {args.bigram_dim or 'none'}, crf {args.crf}, bilstm {args.bilstm_layers}\n")
    print("| encoder (layers x hidden) | chars/s end to end | tags only |")
    print("|---|---:|---:|")
    for layers, hidden in sizes:
        cfg = BertConfig(
            vocab_size=tok.vocab_size,
            hidden_size=hidden,
            num_hidden_layers=layers,
            num_attention_heads=max(1, hidden // 64),
            intermediate_size=4 * hidden,
            max_position_embeddings=512,
        )
        record_encoder(cfg, 128, normalizer_name(tok))
        with tempfile.TemporaryDirectory() as d:
            save_head(ZhBertForTask(cfg, head), tok, d)
            seg = zhbert.load(d)
            seg(texts[:20])  # warm-up
            best = float("inf")
            for _ in range(2):
                t = time.perf_counter()
                seg(texts, batch_size=64)
                best = min(best, time.perf_counter() - t)
            t = time.perf_counter()
            predict_tags(seg.model, seg.tokenizer, texts, 64)
            tags = time.perf_counter() - t
        print(f"| {layers} x {hidden} | {n / best:,.0f} | {n / tags:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
