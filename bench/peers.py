"""zhbert's segmenters beside the ones a user can pip install: same test files, same scorer, speed.

    pip install -e ".[peers]"          # pkuseg (built from source: needs a C compiler), thulac, rjieba
    python bench/peers.py              # PKU, NLPCC-2016 Weibo dev, CityU and AS; then POS; prints the tables for RESULTS.md
    python bench/peers.py --zhbert cws cws-fast cws-fast:int8 --no-pos   # also cws-fast with int8 linear layers
    python bench/peers.py --zhbert cws-fast runs/student/model runs/student/model:int8 --no-pos   # a trained folder beside them
    python bench/peers.py --zhbert runs/mc/model runs/mc/model@weibo --no-pos   # a --criteria pku,weibo model under each standard

Uses whichever of pkuseg, THULAC, snownlp, jieba and rjieba are installed (it installs
nothing), plus every bundled zhbert segmenter, plus the same-data character CRF with and
without dictionary features (``bench/crf_segmenter.py``; python-crfsuite; its trained models in
``runs/crf/``, made by running that script first). Each system segments the raw text of
each test file (the gold words joined); every result is scored by the same SIGHAN-style
word P/R/F1 (``zhbert.metrics.word_prf``). Speed: characters per second over the PKU
test file, measured in a fresh process for each system, once on one thread and once
on two (two worker processes for the peers, which are single-threaded; two torch
threads for zhbert). Baidu LAC needs Python 3.8 and paddlepaddle 1.8.5; its figures
are quoted in RESULTS.md as measured elsewhere.

A second table scores part-of-speech tagging the same way for every tagger installed (the
bundled ``pos``, jieba.posseg, pkuseg with ``postag=True``, THULAC) on the held-out People's
Daily sentences of ``zhbert train pos`` (``bench/pos.py``, which says which peers may have
trained on them).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

TEST_FILES = {
    "PKU test": ("sighan2005_icwb2", "pku_test_gold.utf8"),
    "NLPCC-2016 Weibo dev": ("nlpcc2016_weibo_cws", "nlpcc2016-wordseg-dev.dat"),
    # traditional Chinese, each to its own standard (bench/traditional.py measures the standard's effect)
    "CityU test": ("sighan2005_icwb2", "cityu_test_gold.utf8"),
    "AS test": ("sighan2005_icwb2", "as_testing_gold.utf8"),
}
PEERS = {  # name -> (module that must be importable, how it is called)
    "pkuseg 0.0.25 (default model)": "pkuseg",
    "THULAC 0.2.2 (seg_only)": "thulac",
    "snownlp": "snownlp",
    "jieba 0.42.1 (HMM)": "jieba",
    "rjieba (jieba-rs)": "rjieba",
    # the same-data floor (bench/crf_segmenter.py): People's Daily 1998-01 minus the PKU test, as zhbert's models
    "crfsuite CRF, same data": "pycrfsuite",
    "crfsuite CRF, same data + jieba dictionary features": "pycrfsuite",
}


def _segmenter(system: str):
    """A function ``list[str] -> list[list[str]]`` for one system."""
    if system.startswith("zhbert"):
        import zhbert

        name, backend, criterion = _zhbert_system(system)
        model = zhbert.load(name, backend=backend or "torch", criterion=criterion)
        return lambda texts: [[w.text for w in ws] for ws in model(texts)]
    module = PEERS[system]
    if module == "pycrfsuite":
        from crf_segmenter import CRFSegmenter  # bench/, beside this file

        return CRFSegmenter(with_dict="dictionary" in system)
    if module == "pkuseg":
        import pkuseg

        seg = pkuseg.pkuseg()
        return lambda texts: [seg.cut(t) for t in texts]
    if module == "thulac":
        import thulac

        seg = thulac.thulac(seg_only=True)
        return lambda texts: [[w for w, _ in seg.cut(t)] for t in texts]
    if module == "snownlp":
        from snownlp import SnowNLP

        return lambda texts: [SnowNLP(t).words for t in texts]
    if module == "jieba":
        import logging

        import jieba

        jieba.setLogLevel(logging.WARNING)
        tok = jieba.Tokenizer()
        tok.initialize()
        return lambda texts: [list(tok.cut(t, HMM=True)) for t in texts]
    if module == "rjieba":
        import rjieba

        return lambda texts: [rjieba.cut(t) for t in texts]
    raise ValueError(system)


def peer_ready(name: str) -> bool:
    """Installed, and for a CRF row also trained (``bench/crf_segmenter.py``, minutes)."""
    from crf_segmenter import model_path  # bench/, beside this file

    module = PEERS[name]
    return bool(importlib.util.find_spec(module)) and (module != "pycrfsuite" or model_path("dictionary" in name).is_file())


def _read(name: str) -> tuple[list[str], list[list[str]]]:
    from zhbert.data import read_segmented
    from zhbert.data.paths import shared_dir

    folder, file = TEST_FILES[name]
    rows = read_segmented(str(shared_dir() / "datasets" / folder / file))
    return ["".join(w) for w in rows["words"]], [list(w) for w in rows["words"]]


def _spell(text: str, words: list[str]) -> list[str]:
    """Peers drop or alter whitespace; re-cut the original text at their word lengths, spaces removed."""
    flat = text.replace(" ", "").replace("\u3000", "")
    out, pos = [], 0
    for w in words:
        w = w.replace(" ", "").replace("\u3000", "")
        if w:
            out.append(flat[pos : pos + len(w)])
            pos += len(w)
    if pos < len(flat):
        out.append(flat[pos:])
    return out


def worker(system: str, test: str, processes: int) -> dict:
    """Run in a fresh process: segment one test file, return words and chars/s."""
    texts, _ = _read(test)
    if system.startswith("zhbert"):
        import torch

        torch.set_num_threads(processes)
    if processes == 1 or system.startswith("zhbert"):
        seg = _segmenter(system)
        seg(texts[:20])  # warm-up: lazy loading, dictionaries, first batches
        start = time.perf_counter()
        words = seg(texts)
        seconds = time.perf_counter() - start
    else:
        from multiprocessing import get_context

        half = (len(texts) + 1) // 2
        with get_context("fork").Pool(processes, initializer=_init_worker, initargs=(system,)) as pool:
            pool.map(_run_chunk, [texts[:20]] * processes)  # every worker loaded and warm before the clock starts
            start = time.perf_counter()
            parts = pool.map(_run_chunk, [texts[:half], texts[half:]])
            seconds = time.perf_counter() - start
        words = parts[0] + parts[1]
    return {"words": [_spell(t, w) for t, w in zip(texts, words)], "chars_per_s": sum(map(len, texts)) / seconds}


_WORKER = None


def _init_worker(system: str) -> None:
    global _WORKER
    _WORKER = _segmenter(system)


def _run_chunk(texts):
    return _WORKER(texts)


def _measure(system: str, test: str, processes: int) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": str(processes), "TOKENIZERS_PARALLELISM": "false"}
    out = subprocess.run(
        [sys.executable, __file__, "--worker", system, "--test", test, "--processes", str(processes)],
        capture_output=True,
        text=True,
        env=env,
        timeout=3600,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{system} on {test}: {out.stderr[-1500:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _zhbert_system(system: str) -> tuple[str, str, str | None]:
    """``"zhbert:cws-fast:int8"`` -> ``("cws-fast", "int8", None)``; ``"zhbert:FOLDER@weibo"`` -> ``(FOLDER, "", "weibo")``:
    a segmenter trained on several standards (``--criteria``) reading every file under that one."""
    spec, at, criterion = system.split(":", 1)[1].rpartition("@")
    if not at:
        spec, criterion = criterion, None
    name, _, backend = spec.partition(":")
    return name, backend, criterion


def _label(system: str) -> str:
    if not system.startswith("zhbert:"):
        return system
    name, backend, criterion = _zhbert_system(system)
    return f"zhbert `{name}`" + (f", `backend={backend!r}`" if backend else "") + (f", `criterion={criterion!r}`" if criterion else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--test", help=argparse.SUPPRESS)
    ap.add_argument("--processes", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument(
        "--zhbert",
        nargs="*",
        default=None,
        help="zhbert segmenters to include, bundled names or model folders (default: cws, and cws-fast if bundled); "
        "NAME:int8 runs that one with backend='int8', NAME@weibo (a model trained with --criteria) reads every file under that standard",
    )
    ap.add_argument("--pos-model", default="pos", help="the zhbert POS tagger of the POS table (a bundled name or a folder)")
    ap.add_argument("--no-pos", action="store_true", help="skip the POS table")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.test, args.processes), ensure_ascii=False))
        return

    from zhbert.metrics import word_prf
    from zhbert.models_registry import BUNDLED

    names = args.zhbert if args.zhbert is not None else [n for n in ("cws", "cws-fast") if n in BUNDLED]
    systems = [f"zhbert:{n}" for n in names]
    systems += [name for name in PEERS if peer_ready(name)]
    missing = [name for name in PEERS if not peer_ready(name)]
    gold = {t: _read(t)[1] for t in TEST_FILES}
    rows = []
    for system in systems:
        row = {"system": _label(system)}
        for test in TEST_FILES:
            r = _measure(system, test, 1)
            row[test] = 100 * word_prf(gold[test], r["words"])["f1"]
            if test == "PKU test":
                row["1"] = r["chars_per_s"]
        row["2"] = _measure(system, "PKU test", 2)["chars_per_s"]
        rows.append(row)
        scores = ", ".join(f"{t} {row[t]:.2f}" for t in TEST_FILES)
        print(f"{row['system']}: {scores}, {row['1']:,.0f} / {row['2']:,.0f} chars/s", file=sys.stderr, flush=True)
    print("word F1 on each test file:\n")
    print(f"| system | {' | '.join(TEST_FILES)} | chars/s, 1 thread | chars/s, 2 |")
    print("|---|" + "---:|" * (len(TEST_FILES) + 2))
    for r in rows:
        print(f"| {r['system']} | " + " | ".join(f"{r[t]:.2f}" for t in TEST_FILES) + f" | {r['1']:,.0f} | {r['2']:,.0f} |")
    if missing:
        print(f"\nnot installed (or, for the CRFs, not trained: python bench/crf_segmenter.py), so not measured: {', '.join(missing)}")
    if not args.no_pos:
        from pos import pos_table  # bench/, beside this file

        print()
        pos_table(args.pos_model)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()
