"""ONNX Runtime against torch on the bundled heads: the same answers? how fast?

Exports each model with `zhbert export MODEL DIR --onnx --int8` into a temporary folder, then, through
`zhbert.load(DIR, backend=...)` for torch, torch int8, onnx and onnx-int8:
- agreement: the words or entities of each backend against torch's on the first N PKU test lines;
- speed: characters per second on short texts (those lines) and on long ones (the same text joined
  into 2,000-character paragraphs), on one and on two threads; backends alternate pass by pass and
  each keeps its best pass. Run it on an otherwise idle machine. Needs `pip install 'zhbert[onnx]'`.

    python bench/onnx_backend.py                          # cws-fast, cws, ner; 1,000 lines
    python bench/onnx_backend.py --models cws-fast --lines 200 --passes 1 --threads 1   # a smoke run
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ("torch", "int8", "onnx", "onnx-int8")


def _pku_lines(n: int) -> list[str]:
    shared = Path(os.environ.get("ZHBERT_SHARED", ROOT.parent / "shared"))
    gold = shared / "datasets" / "sighan2005_icwb2" / "pku_test_gold.utf8"
    lines = [line.replace(" ", "").strip() for line in gold.read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line][:n]


def _paragraphs(lines: list[str], size: int = 2000) -> list[str]:
    out, current = [], ""
    for line in lines:
        current += line
        if len(current) >= size:
            out.append(current)
            current = ""
    return out or ["".join(lines)]


def _answers(results) -> list:
    return [[(s.start, s.end, getattr(s, "label", None)) for s in spans] for spans in results]


def _measure(folder: Path, lines: list[str], threads: int, passes: int) -> dict:
    """One process per thread count, so torch's and ONNX Runtime's thread pools start at that size."""
    code = f"""
import json, sys, time, torch, zhbert
torch.set_num_threads({threads})
lines = json.loads(sys.stdin.read())
paragraphs = {_paragraphs.__name__}(lines)
predictors = {{b: zhbert.load({str(folder)!r}, backend=b) for b in {BACKENDS!r}}}
best = {{(b, kind): 0.0 for b in predictors for kind in ("short", "long")}}
for p in predictors.values():
    p(lines[:8])  # warm-up
answers = {{b: {_answers.__name__}(p(lines)) for b, p in predictors.items()}}
for _ in range({passes}):
    for b, p in predictors.items():
        for kind, texts in (("short", lines), ("long", paragraphs)):
            start = time.perf_counter()
            p(texts)
            best[b, kind] = max(best[b, kind], sum(map(len, texts)) / (time.perf_counter() - start))
same = {{b: sum(a == t for a, t in zip(answers[b], answers["torch"])) for b in predictors}}
print(json.dumps({{"best": {{f"{{b}}|{{k}}": v for (b, k), v in best.items()}}, "same": same}}))
"""
    prelude = "\n".join(inspect.getsource(f) for f in (_paragraphs, _answers))
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    r = subprocess.run([sys.executable, "-c", prelude + code], input=json.dumps(lines), capture_output=True, text=True, env=env, cwd=ROOT)
    if r.returncode:
        raise SystemExit(r.stderr[-3000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["cws-fast", "cws", "ner"])
    parser.add_argument("--lines", type=int, default=1000, help="PKU test lines (the agreement set and the short texts)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args(argv)
    lines = _pku_lines(args.lines)
    print(f"{len(lines):,} PKU test lines ({sum(map(len, lines)):,} characters); long texts: the same in 2,000-character paragraphs")
    threads = " / ".join(map(str, args.threads))
    print(f"| model | backend | same answers as torch | chars/s short ({threads} threads) | chars/s long ({threads} threads) | export s |")
    print("|---|---|---:|" + "---:|" * 2 + "---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models:
            folder = Path(tmp) / model
            start = time.perf_counter()
            export = [sys.executable, "-m", "zhbert", "export", model, str(folder), "--onnx", "--int8"]
            r = subprocess.run(export, capture_output=True, text=True)
            if r.returncode:
                raise SystemExit(r.stderr[-3000:])
            export_s = time.perf_counter() - start
            runs = {t: _measure(folder, lines, t, args.passes) for t in args.threads}
            first = runs[args.threads[0]]
            for b in BACKENDS:
                short = " / ".join(f"{runs[t]['best'][f'{b}|short']:,.0f}" for t in args.threads)
                long = " / ".join(f"{runs[t]['best'][f'{b}|long']:,.0f}" for t in args.threads)
                print(f"| `{model}` | {b} | {first['same'][b]:,} / {len(lines):,} | {short} | {long} | {export_s:.0f} |")


if __name__ == "__main__":
    main()
