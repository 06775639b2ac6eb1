"""Inference speed and memory of the Python API and the demo.

1. Throughput: ``zhbert.load(MODEL)`` (default ``tagging``, a stock sequence-classification head; a
   stock token-classification folder works too) vs the *same* saved model through a plain
   ``transformers.pipeline`` (``text-classification`` or ``token-classification``), side by side in one run, on
   real People's Daily sentences (texts/s and characters/s; target ratio >= 1.5).
2. Latency: one 50-character sentence at a time through each bundled model,
   p50 / p95 over repeated calls (target p50 < 20 ms with the default model).
3. Demo memory: peak RSS of ``demo/app.py`` with every bundled model loaded, after
   one call per endpoint.

    python bench/api_speed.py                       # all three, bundled models
    python bench/api_speed.py --sentences 2000 --skip-demo
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]


def real_sentences(n: int) -> list[str]:
    from zhbert.data import read_peoples_daily

    texts = [t for t in read_peoples_daily()["text"] if len(t) >= 5]
    return texts[:n]


def throughput(model: str, texts: list[str], batch_size: int) -> list[tuple[str, float, int]]:
    from transformers import AutoModelForSequenceClassification, AutoModelForTokenClassification, pipeline

    import zhbert
    from zhbert.models_registry import resolve_model_path
    from zhbert.tokenizer import load_tokenizer

    path = resolve_model_path(model)
    config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    # (pipeline task, model class, pipeline options, call options). A text-classification pipeline fails on a text
    # longer than the model's positions unless told to truncate, as a user would tell it; zhbert reads one window too
    stock = {
        "BertForTokenClassification": ("token-classification", AutoModelForTokenClassification, {"aggregation_strategy": "simple"}, {}),
        "BertForSequenceClassification": ("text-classification", AutoModelForSequenceClassification, {}, {"truncation": True}),
    }
    if config.get("zhbert_only") or (config.get("architectures") or [None])[0] not in stock:  # e.g. the bundled ner: CRF, lexicon
        raise SystemExit(f"{model}: a zhbert-only head, which a plain pipeline cannot run; pass a stock one (--model tagging)")
    task, auto_class, options, call_options = stock[config["architectures"][0]]
    ours = zhbert.load(str(path))
    hf = pipeline(
        task, model=auto_class.from_pretrained(path, dtype=torch.float32), tokenizer=load_tokenizer(path), device="cpu", **options
    )
    ours(texts[:64], batch_size=batch_size)  # warm-up both
    hf(texts[:64], batch_size=batch_size, **call_options)
    rows = []
    for name, run in (
        ("zhbert.load(...)", lambda: ours(texts, batch_size=batch_size)),
        ("transformers pipeline", lambda: hf(texts, batch_size=batch_size, **call_options)),
    ):
        t0 = time.perf_counter()
        out = run()
        rows.append((name, time.perf_counter() - t0, len(out)))
    return rows


def latency(names: list[str], sentence: str, repeats: int) -> list[tuple[str, float, float]]:
    import zhbert

    rows = []
    for name in names:
        try:
            pred = zhbert.load(name)
        except OSError as e:
            print(f"skip {name}: {e}", file=sys.stderr)
            continue
        call = (
            (lambda: pred((sentence, sentence[::-1])))
            if name == "matching"
            else ((lambda: pred.fill_mask(sentence[:20] + "[MASK]" + sentence[21:])) if name == "base" else (lambda: pred(sentence)))
        )
        for _ in range(10):
            call()
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            call()
            times.append(1000 * (time.perf_counter() - t0))
        times.sort()
        rows.append((name, statistics.median(times), times[int(0.95 * (len(times) - 1))]))
    return rows


def demo_memory() -> tuple[float, float]:
    """Peak RSS (MB) of the demo process after loading, and after one call per endpoint."""
    import socket

    from gradio_client import Client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # `zhbert demo` is what demo/app.py runs; the port goes on its command line (gradio's
    # GRADIO_SERVER_PORT is overridden by the explicit port the app passes to launch())
    cmd = [sys.executable, "-m", "zhbert", "demo", "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/"
        for _ in range(240):
            try:
                client = Client(url, verbose=False)
                break
            except Exception:
                time.sleep(0.5)
        else:
            raise RuntimeError("the demo did not start within 120 s")
        loaded = _peak_rss(proc.pid)
        text = "国务院总理李鹏在人民大会堂会见了日本首相桥本龙太郎。"
        client.predict(text, api_name="/segment")
        client.predict(text, api_name="/ner")
        client.predict("今天心情特别好", api_name="/tagging")
        client.predict("花呗怎么还款", "花呗如何还钱", api_name="/matching")
        client.predict("中国的首都是[MASK][MASK]。", api_name="/fill_mask")
        client.predict(text, 4, 1, api_name="/attention")
        return loaded, _peak_rss(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _peak_rss(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc: Linux only")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="tagging", help="a stock classification model (one a plain pipeline opens)")
    ap.add_argument("--sentences", type=int, default=10_000)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--skip-demo", action="store_true")
    args = ap.parse_args()

    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__} "
        f"({torch.get_num_threads()} threads), {time.strftime('%Y-%m-%d')}"
    )
    texts = real_sentences(args.sentences)
    chars = sum(map(len, texts))
    rows = throughput(args.model, texts, args.batch_size)
    print(f"\nThroughput, model {args.model!r}, {len(texts):,} People's Daily sentences ({chars:,} chars), batch {args.batch_size}")
    print("| runner | seconds | texts/s | chars/s | answers |\n|---|---:|---:|---:|---:|")
    for name, secs, found in rows:
        print(f"| {name} | {secs:.1f} | {len(texts) / secs:,.0f} | {chars / secs:,.0f} | {found:,} |")
    print(f"ratio zhbert / pipeline: {rows[1][1] / rows[0][1]:.2f}x (target >= 1.5)")

    sentence = "国务院总理李鹏今天在人民大会堂会见了来访的日本首相桥本龙太郎，双方就两国关系和共同关心的国际问题交换了意见。"[:50]
    print(f"\nLatency, one {len(sentence)}-character sentence per call, {args.repeats} calls")
    print("| model | p50 ms | p95 ms |\n|---|---:|---:|")
    for name, p50, p95 in latency(["cws", "ner", "tagging", "matching", "base"], sentence, args.repeats):
        print(f"| {name} | {p50:.1f} | {p95:.1f} |")

    if not args.skip_demo:
        loaded, peak = demo_memory()
        print(f"\nDemo process peak RSS: {loaded:,.0f} MB after loading all models, {peak:,.0f} MB after one call per tab")


if __name__ == "__main__":
    main()
