"""Start-up time: how long a fresh process takes to import zhbert, load a model, and answer one
line on the command line, with the lexicon's disk cache off, cold (empty) and warm.

Every measurement is a new Python process (nothing is shared between them but the cache folder);
the median of ``--repeats`` runs is printed. One thread.

    python bench/load_time.py ner cws cws-fast pos --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

SENTENCE = "国务院总理李鹏在北京会见了日本外相河野洋平。"
# the import and the load, timed inside the child: the import is what every zhbert.load pays first
PROBE = """
import json, sys, time
t0 = time.perf_counter()
import torch, transformers.models.bert.modeling_bert, zhbert.api
t1 = time.perf_counter()
predictor = zhbert.api.load(sys.argv[1])
t2 = time.perf_counter()
predictor([sys.argv[2]])
print(json.dumps({"import": t1 - t0, "load": t2 - t1}))
"""


def child_env(cache: str) -> dict:
    return {**os.environ, "ZHBERT_CACHE_DIR": cache, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "RAYON_NUM_THREADS": "1"}


def probe(model: str, cache: str) -> dict:
    r = subprocess.run([sys.executable, "-c", PROBE, model, SENTENCE], capture_output=True, text=True, env=child_env(cache))
    if r.returncode:
        raise SystemExit(f"{model}: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def cli(model: str, cache: str) -> float:
    t = time.perf_counter()
    cmd = [sys.executable, "-m", "zhbert", "predict", "--model", model]
    r = subprocess.run(cmd, input=SENTENCE + "\n", capture_output=True, text=True, env=child_env(cache))
    if r.returncode:
        raise SystemExit(f"{model}: {r.stderr[-2000:]}")
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+", help="bundled names or model folders")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models:
            for mode in ("off", "cold", "warm"):
                imports, loads, clis = [], [], []
                for k in range(args.repeats):
                    cache = "off" if mode == "off" else os.path.join(tmp, f"{mode}-{model.replace('/', '_')}-{k}")
                    if mode == "warm":
                        probe(model, cache)  # fills it
                    p = probe(model, cache)
                    imports.append(p["import"])
                    loads.append(p["load"])
                    if mode == "cold":
                        cache = os.path.join(tmp, f"cold-cli-{model.replace('/', '_')}-{k}")
                    clis.append(cli(model, cache))
                rows.append((model, mode, *(statistics.median(v) for v in (imports, loads, clis))))
    print(f"one thread, median of {args.repeats} fresh processes each; `zhbert predict` answers one line from stdin\n")
    print("| model | lexicon cache | import (s) | `zhbert.load` (s) | `zhbert predict`, whole command (s) |")
    print("|---|---|---:|---:|---:|")
    for model, mode, imp, load, wall in rows:
        print(f"| {model} | {mode} | {imp:.2f} | {load:.2f} | {wall:.2f} |")


if __name__ == "__main__":
    main()
