"""User dictionaries in the bundled segmenter: do forced words come out whole, does a domain
word list help on that domain, how fast does a big dictionary load, what does it cost.

    python bench/user_dict.py                 # prints the tables for bench/RESULTS.md
    python bench/user_dict.py --model cws-fast --sentences 500
    python bench/user_dict.py --parts load        # the 1 M-entry load alone

1. **Whole**: domain words (from ``DOMAIN_WORDS``, technical terms the PKU standard never saw)
   spliced into real PKU test sentences; the share of their occurrences that come out as one word.
2. **A domain's word list**: the SIGHAN-2005 MSR test set scored as it is, and with MSR's own
   training word list (``msr_training_words.utf8``, the words of the MSR standard) forced, and
   (a lexicon head) preferred: the
   case of a user whose target standard or domain is not the model's and who has its word list.
   The same for NLPCC-2016 Weibo dev with the words of NLPCC-2016 train (those seen twice or more).
3. **Load**: 1,000,000 entries (jieba's words, then compounds of two of them), file to forced matcher.
4. **Speed**: chars/s on the PKU test text without and with that 1 M-entry dictionary (one thread; the
   median of three passes each, alternating).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

PARTS = ["whole", "domain", "load", "speed"]
DOMAIN_WORDS = ["区块链技术", "新冠病毒", "石墨烯", "量子计算机", "人工智能芯片", "北京大学生命科学学院", "碳中和", "云计算平台"]


def _gold(path: Path) -> list[list[str]]:
    rows = [line.split() for line in path.read_text(encoding="utf-8").splitlines()]
    return [r for r in rows if r]


def _words(seg, texts):
    return [[w.text for w in ws] for ws in seg(texts, batch_size=64)]


def whole_share(model: str, sentences: list[str]) -> tuple[int, int]:
    import zhbert

    seg = zhbert.load(model, user_dict=DOMAIN_WORDS)
    texts = []
    for k, s in enumerate(sentences):
        cut = s.find("，") + 1
        texts.append(s[:cut] + DOMAIN_WORDS[k % len(DOMAIN_WORDS)] + s[cut:])
    hit = total = 0
    for text, words in zip(texts, seg(texts, batch_size=64)):
        spans = {(w.start, w.end) for w in words}
        for w in DOMAIN_WORDS:
            for m in re.finditer(re.escape(w), text):
                total += 1
                hit += (m.start(), m.end()) in spans
    return hit, total


def domain_rows(model: str, datasets: Path) -> list[tuple]:
    import zhbert
    from zhbert.metrics import word_prf

    msr_gold = _gold(datasets / "sighan2005_icwb2" / "msr_test_gold.utf8")
    msr_words = datasets / "sighan2005_icwb2" / "msr_training_words.utf8"
    nlpcc_train = _gold(datasets / "nlpcc2016_weibo_cws" / "nlpcc2016-word-seg-train.dat")
    weibo_gold = _gold(datasets / "nlpcc2016_weibo_cws" / "nlpcc2016-wordseg-dev.dat")
    counts = Counter(w for r in nlpcc_train for w in r)
    weibo_words = sorted(w for w, n in counts.items() if n >= 2 and len(w) >= 2)
    rows = []
    plain = zhbert.load(model)
    for name, gold, words in (
        ("SIGHAN-2005 MSR test", msr_gold, str(msr_words)),
        ("NLPCC-2016 Weibo dev", weibo_gold, weibo_words),
    ):
        texts = ["".join(g) for g in gold]
        base = word_prf(gold, _words(plain, texts))["f1"]
        forced_seg = zhbert.load(model, user_dict=words)
        forced = word_prf(gold, _words(forced_seg, texts))["f1"]
        n = forced_seg.forced.size
        preferred = None
        if plain.model.word_features is not None and plain.model.word_features.lexicon is not None:  # a lexicon head
            preferred = word_prf(gold, _words(zhbert.load(model, user_dict=words, dict_mode="prefer"), texts))["f1"]
        rows.append((name, n, base, forced, preferred))
    return rows


def load_time(tmp: Path) -> tuple[float, int]:
    from test_user_dict import million_word_dictionary

    from zhbert.dictionary import read_dictionary
    from zhbert.heads.user_dict import ForcedWords

    path = million_word_dictionary(tmp / "million.dict")
    start = time.perf_counter()
    d = read_dictionary(path)
    ForcedWords(d, ["B", "M", "E", "S"], "BMES-untyped")
    return time.perf_counter() - start, len(d)


_MODEL_LOAD = """
import sys, time
import torch
torch.set_num_threads(1)
import zhbert
zhbert.load(sys.argv[1])  # the imports, and the lexicon cache filled
start = time.perf_counter()
zhbert.load(sys.argv[1])
plain = time.perf_counter() - start
start = time.perf_counter()
zhbert.load(sys.argv[1], user_dict=sys.argv[2])
print(plain, time.perf_counter() - start)
"""


def model_load_time(model: str, path: Path, repeats: int = 3) -> tuple[float, float]:
    """Median seconds of ``zhbert.load(model)`` and of ``zhbert.load(model, user_dict=path)`` in new
    processes: what a user waits for, with the words also joining a lexicon head's lexicon."""
    import statistics
    import subprocess

    runs = []
    for _ in range(repeats):
        r = subprocess.run([sys.executable, "-c", _MODEL_LOAD, model, str(path)], capture_output=True, text=True, check=True)
        runs.append([float(x) for x in r.stdout.split()[-2:]])
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def speed(model: str, texts: list[str], user_dict: str, repeats: int = 3) -> tuple[float, float]:
    """Median chars/s over ``repeats`` passes without and with ``user_dict``, the passes alternating
    (one pass of PKU test is a few seconds: a single pair of them swung from 81% to 94% between runs)."""
    import statistics

    import zhbert

    plain, loaded = zhbert.load(model), zhbert.load(model, user_dict=user_dict)
    rates: dict[int, list[float]] = {0: [], 1: []}
    for _ in range(repeats):
        for which, seg in enumerate((plain, loaded)):
            seg(texts[:50])  # warm-up
            start = time.perf_counter()
            seg(texts, batch_size=64)
            rates[which].append(sum(map(len, texts)) / (time.perf_counter() - start))
    return statistics.median(rates[0]), statistics.median(rates[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="cws")
    ap.add_argument("--sentences", type=int, default=1000, help="PKU test sentences for the whole-word check")
    ap.add_argument("--tmp", default="runs/bench-user-dict")
    ap.add_argument("--parts", nargs="+", choices=PARTS, default=PARTS, help="the measurements to run (default: all)")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    from zhbert.data.paths import shared_dir

    datasets = shared_dir(required=True) / "datasets"
    pku = ["".join(g) for g in _gold(datasets / "sighan2005_icwb2" / "pku_test_gold.utf8")]
    tmp = Path(args.tmp)
    tmp.mkdir(parents=True, exist_ok=True)

    if "whole" in args.parts:
        hit, total = whole_share(args.model, [s for s in pku if "，" in s][: args.sentences])
        print(f"| forced domain words whole ({args.model}, PKU test sentences) | {hit:,} / {total:,} = {100 * hit / total:.1f}% |")
    if "domain" in args.parts:
        print("\n| test set | word list | entries | word F1 without | forced | change | preferred | change |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for name, n, base, forced, preferred in domain_rows(args.model, datasets):
            lst = "MSR training words" if "MSR" in name else "NLPCC-2016 train words seen 2+ times"
            soft = f"{100 * preferred:.2f} | {100 * (preferred - base):+.2f}" if preferred is not None else "- | -"
            print(f"| {name} | {lst} | {n:,} | {100 * base:.2f} | {100 * forced:.2f} | {100 * (forced - base):+.2f} | {soft} |")
    if "load" in args.parts:
        seconds, n = load_time(tmp)
        print(f"\n| load {n:,} entries (read, validate, build the matcher) | {seconds:.1f} s |")
        (tmp / "domain.dict").write_text("\n".join(DOMAIN_WORDS) + "\n", encoding="utf-8")
        msr = datasets / "sighan2005_icwb2" / "msr_training_words.utf8"
        lists = [("the 8 domain words", tmp / "domain.dict"), ("MSR's 88,119 training words", msr)]
        lists.append((f"those {n:,} entries", tmp / "million.dict"))
        for name, path in lists:
            plain, loaded = model_load_time(args.model, path)
            what = f"`zhbert.load({args.model!r}, user_dict=...)` with {name} (a lexicon head's lexicon too)"
            print(f"| {what} | {loaded:.2f} s (alone: {plain:.2f} s; median of 3 new processes) |")
    if "speed" in args.parts:
        from test_user_dict import million_word_dictionary

        plain, big = speed(args.model, pku, str(million_word_dictionary(tmp / "million.dict")))
        label = f"{args.model} chars/s, one thread, PKU test: without / with the 1 M-entry dictionary (medians of 3 alternating passes)"
        print(f"| {label} | {plain:,.0f} / {big:,.0f} ({big / plain:.0%}) |")
    print(f"\n{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
