"""ONNX Runtime as a faster backend for the bundled `cws`? Measured, not assumed (issue 21).

Exports the bundled segmenter's BertForTokenClassification to ONNX (opset 17, the
TorchScript exporter, eager attention so ONNX Runtime's BERT optimizer can fuse it),
optionally fuses it with ``onnxruntime.transformers.optimizer`` (Attention,
EmbedLayerNormalization, SkipLayerNormalization, BiasGelu), and times the same batches as
PyTorch, one thread each. Needs ``pip install onnxruntime onnx``; writes nothing to the repo.

    python bench/onnx_backend.py --batch 32 --length 100 --repeats 20
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from transformers import BertForTokenClassification

from zhbert.models_registry import bundled_path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--length", type=int, default=100, help="tokens per row (PKU lines average 89 characters)")
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    import onnxruntime as ort
    from onnxruntime.transformers import optimizer

    torch.set_num_threads(1)
    path = bundled_path("cws")
    model = BertForTokenClassification.from_pretrained(path, dtype=torch.float32, attn_implementation="eager").eval()
    stock = BertForTokenClassification.from_pretrained(path, dtype=torch.float32).eval()  # sdpa, as zhbert runs it
    cfg = model.config
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, cfg.vocab_size, (args.batch, args.length), generator=g)
    feed = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "token_type_ids": torch.zeros_like(ids)}
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "cws.onnx"
        torch.onnx.export(
            model,
            (feed["input_ids"][:2, :8], feed["attention_mask"][:2, :8], feed["token_type_ids"][:2, :8]),
            str(raw),
            input_names=list(feed),
            output_names=["logits"],
            dynamic_axes={k: {0: "batch", 1: "tokens"} for k in [*feed, "logits"]},
            opset_version=17,
            dynamo=False,
        )
        fused = Path(tmp) / "cws.fused.onnx"
        opt = optimizer.optimize_model(str(raw), model_type="bert", num_heads=cfg.num_attention_heads, hidden_size=cfg.hidden_size)
        opt.save_model_to_file(str(fused))
        fusions = {k: v for k, v in opt.get_fused_operator_statistics().items() if v}
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        sessions = {
            name: ort.InferenceSession(str(p), options, providers=["CPUExecutionProvider"])
            for name, p in (("onnx", raw), ("onnx fused", fused))
        }
        np_feed = {k: v.numpy() for k, v in feed.items()}
        with torch.inference_mode():
            reference = stock(**feed).logits.numpy()

        def torch_run():
            with torch.inference_mode():
                stock(**feed)

        runs = {"torch (sdpa)": torch_run, **{n: (lambda s=s: s.run(None, np_feed)) for n, s in sessions.items()}}
        diff = {n: float(np.abs(s.run(None, np_feed)[0] - reference).max()) for n, s in sessions.items()}
        seconds = {}
        for name, run in runs.items():
            run()  # warm-up
            start = time.perf_counter()
            for _ in range(args.repeats):
                run()
            seconds[name] = (time.perf_counter() - start) / args.repeats
    print(f"bundled cws, batch {args.batch} x {args.length} tokens, one thread, {args.repeats} repeats; fused: {fusions}")
    print("| backend | ms per batch | tokens/s | speed-up over torch | max logit difference |")
    print("|---|---:|---:|---:|---:|")
    base = seconds["torch (sdpa)"]
    for name, s in seconds.items():
        tokens = args.batch * args.length / s
        print(f"| {name} | {1000 * s:.1f} | {tokens:,.0f} | {base / s:.2f}x | {diff.get(name, 0.0):.1e} |")


if __name__ == "__main__":
    main()
