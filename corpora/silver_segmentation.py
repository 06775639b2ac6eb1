"""Silver word segmentation for distilling a fast segmenter: raw text cut into sentences and
segmented by a teacher model (the bundled ``cws`` by default), written one sentence per line
with words separated by spaces (the format ``zhbert.data.read_segmented`` reads, and that
``zhbert train cws --extra_train`` takes). Nothing is copied into the repo.

Sources: ``../shared/corpora`` files in the order of ``zhbert.data.corpus_sample.SHARES``, each
read until its share of ``--chars`` is used. Every sentence that also occurs in a dev/test split
of any dataset is skipped (the same rule as ``corpora/build_corpus.py``), so a segmenter trained
on this file is never scored on text its teacher labelled.

    python corpora/silver_segmentation.py --output runs/silver/cws.txt --chars 5000000
    # self-training for one domain: only the Weibo posts, segmented by a model trained on Weibo gold
    python corpora/silver_segmentation.py --teacher runs/weibo-teacher/model --source weibo_senti_sample \
        --output runs/silver/weibo.txt --chars 150000
    # only the sentences the teacher is sure of: every word's mean tag probability >= 0.5
    python corpora/silver_segmentation.py --teacher cws --source weibo_senti_sample --min-word-score 0.5 \
        --output runs/silver/weibo-sure.txt --chars 150000
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tqdm import tqdm

from zhbert.data.corpus_sample import SHARES, eval_keys, sentence_batches


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--teacher", default="cws", help="bundled segmenter name or a model folder")
    ap.add_argument("--output", required=True)
    ap.add_argument(
        "--criterion",
        help="a teacher trained on several standards (--criteria): the one its labels follow (pku or weibo); default its first",
    )
    ap.add_argument("--chars", type=int, default=5_000_000)
    ap.add_argument("--min-chars", type=int, default=6)
    ap.add_argument("--max-chars", type=int, default=120)
    ap.add_argument("--batch-size", type=int, default=256, help="sentences per teacher call")
    ap.add_argument(
        "--min-word-score",
        type=float,
        default=0.0,
        help="skip a sentence whose least sure word (the mean probability of its tags) scores below this (0: keep all)",
    )
    ap.add_argument(
        "--source", action="append", choices=list(SHARES), help="only these corpus sources (repeatable), sharing --chars equally"
    )
    args = ap.parse_args()
    shares = {s: 1 / len(args.source) for s in args.source} if args.source else SHARES

    import zhbert

    teacher = zhbert.load(args.teacher, criterion=args.criterion)
    keys = eval_keys()
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    start, written, skipped = time.perf_counter(), 0, 0
    with open(out, "w", encoding="utf-8") as f, tqdm(total=args.chars, unit=" chars", unit_scale=True) as bar:
        for batch in sentence_batches(shares, args.chars, keys, args.min_chars, args.max_chars, args.batch_size):
            for text, words in zip(batch, scored_words(teacher, batch)):
                if min((score for _, score in words), default=1.0) < args.min_word_score:
                    skipped += 1
                    continue
                f.write(" ".join(w for w, _ in words) + "\n")
                written += len(text)
            bar.update(sum(map(len, batch)))
    print(f"{written:,} characters segmented by {args.teacher} in {time.perf_counter() - start:.0f} s -> {out}")
    if args.min_word_score:
        print(f"{skipped:,} sentences skipped: a word scored below --min-word-score {args.min_word_score}")


def scored_words(teacher, texts: list[str]) -> list[list[tuple[str, float]]]:
    """Each text's words and their scores (the mean probability of the word's tags), as the
    teacher's ``Segmenter`` cuts them."""
    from zhbert.heads import char_spans

    preds = teacher.tags(texts)
    return [[(t[s:e], sc) for _, s, e, sc in char_spans(p, teacher.head.scheme, with_scores=True)] for t, p in zip(texts, preds)]


if __name__ == "__main__":
    main()
