"""Silver word segmentation for distilling a fast segmenter: raw text cut into sentences and
segmented by a teacher model (the bundled ``cws`` by default), written one sentence per line
with words separated by spaces (the format ``zhbert.data.read_segmented`` reads, and that
``zhbert train cws --extra_train`` takes). Nothing is copied into the repo.

Sources: ``../shared/corpora`` files in the order given, each read until its share of
``--chars`` is used. Every sentence that also occurs in a dev/test split of any dataset is
skipped (the same rule as ``corpora/build_corpus.py``), so a segmenter trained on this
file is never scored on text its teacher labelled.

    python corpora/silver_segmentation.py --output runs/silver/cws.txt --chars 5000000
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tqdm import tqdm

from zhbert.data import corpora_dir
from zhbert.data.peoples_daily import overlap_key, split_text_sentences
from zhbert.data.splits import iter_split_texts

# news first (closest to People's Daily), then the web, Q&A, reviews and Weibo styles
SHARES = {
    "xinwenlianbo_cctv": 0.45,
    "cluecorpussmall_sample": 0.12,
    "zhihu_archive": 0.2,
    "reviews_sophonplus": 0.1,
    "medical_qa_toyhom": 0.1,
    "weibo_senti_sample": 0.03,
}


def eval_keys() -> set[str]:
    keys: set[str] = set()
    for _, text in iter_split_texts("eval"):
        k = overlap_key(text)
        keys.update(p for p in [k, *split_text_sentences(k)] if len(p) >= 8)
    return keys


def sentences(source: str, budget: int, keys: set[str], min_chars: int, max_chars: int):
    """Sentences of one source, ``min_chars``..``max_chars`` long, until ``budget`` characters."""
    used = 0
    for path in sorted((corpora_dir() / source).glob("*.txt")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                for s in split_text_sentences(line.strip()):
                    s = s.strip()
                    if min_chars <= len(s) <= max_chars and overlap_key(s) not in keys:
                        yield s
                        used += len(s)
                        if used >= budget:
                            return


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--teacher", default="cws", help="bundled segmenter name or a model folder")
    ap.add_argument("--output", required=True)
    ap.add_argument("--chars", type=int, default=5_000_000)
    ap.add_argument("--min-chars", type=int, default=6)
    ap.add_argument("--max-chars", type=int, default=120)
    ap.add_argument("--batch-size", type=int, default=256, help="sentences per teacher call")
    args = ap.parse_args()

    import zhbert

    teacher = zhbert.load(args.teacher)
    keys = eval_keys()
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    start, written = time.perf_counter(), 0
    with open(out, "w", encoding="utf-8") as f, tqdm(total=args.chars, unit=" chars", unit_scale=True) as bar:
        for source, share in SHARES.items():
            batch: list[str] = []
            for s in [*sentences(source, int(share * args.chars), keys, args.min_chars, args.max_chars), None]:
                if s is not None:
                    batch.append(s)
                if len(batch) == args.batch_size or (s is None and batch):
                    for words in teacher(batch, batch_size=64):
                        f.write(" ".join(w.text for w in words) + "\n")
                    n = sum(map(len, batch))
                    written += n
                    bar.update(n)
                    batch = []
    print(f"{written:,} characters segmented by {args.teacher} in {time.perf_counter() - start:.0f} s -> {out}")


if __name__ == "__main__":
    main()
