"""Part-of-speech tagging beside the taggers a user has: the held-out People's Daily test of
``zhbert train pos``, every system scored by the same word F1 and word+POS F1.

    python bench/pos.py                              # the bundled pos (cws's words + a POS head)
    python bench/pos.py --model runs/pos/model      # a folder zhbert train pos (or python -m zhbert.pos_on_segmenter) made

Systems: the zhbert tagger, jieba.posseg, pkuseg (``postag=True``) and THULAC, whichever are
installed. Each tags the raw text of the test sentences; its tags are compared as they are
(the PKU tagset, which all four use), except the punctuation tag, which jieba calls ``x``.

Caveat: pkuseg's and THULAC's models were trained on People's Daily text tagged with this
tagset, which may include January 1998 and so these very sentences; their scores are then an
upper bound. jieba's dictionary tags words by frequency, with no sentence context.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path


def _systems(model: str | None):
    """``name -> texts -> (words, tags)`` for every system that is installed."""
    out = {}
    if model:
        import zhbert
        from zhbert.api import POSTagger
        from zhbert.recipes.pos import tagged_words

        tagger = zhbert.load(model, web_units=False)

        def run_zhbert(texts):
            spans = tagger(texts, batch_size=64)
            if isinstance(tagger, POSTagger):  # words with their tags
                return [[w.text for w in ws] for ws in spans], [[w.label for w in ws] for ws in spans]
            pairs = [tagged_words(t, [(s.label, s.start, s.end) for s in ss]) for t, ss in zip(texts, spans)]
            return [w for w, _ in pairs], [t for _, t in pairs]

        out[f"zhbert `{model}`"] = run_zhbert
    from zhbert.recipes.pos import jieba_baseline

    out["jieba 0.42.1 (posseg)"] = jieba_baseline
    if importlib.util.find_spec("pkuseg"):
        import pkuseg

        try:
            seg = pkuseg.pkuseg(postag=True)
        except OSError as e:  # its POS model is not in the wheel: it downloads on first use
            print(f"pkuseg (postag=True) skipped: its POS model downloads on first use and could not ({e})\n", file=sys.stderr)
            seg = None

        def run_pkuseg(texts):
            rows = [seg.cut(t) for t in texts]
            return [[w for w, _ in r] for r in rows], [[p for _, p in r] for r in rows]

        if seg is not None:
            out["pkuseg 0.0.25 (postag=True)"] = run_pkuseg
    if importlib.util.find_spec("thulac"):
        import thulac

        thu = thulac.thulac()

        def run_thulac(texts):
            rows = [thu.cut(t) for t in texts]
            return [[w for w, _ in r] for r in rows], [[p for _, p in r] for r in rows]

        out["THULAC 0.2.2"] = run_thulac
    return out


def pos_table(model: str | None, sentences: int | None = None) -> None:
    """Print the table: every tagger on the held-out sentences, the same scorer."""
    from zhbert.data.tasks import load_task_data
    from zhbert.recipes.pos import score

    data = load_task_data("pos", "peoples_daily")
    test = data.test[:sentences] if sentences else data.test
    texts = [r["text"] for r in test]
    print(f"POS: {len(texts):,} held-out People's Daily sentences, {sum(map(len, texts)):,} characters\n")
    print("| system | word F1 | word+POS F1 |")
    print("|---|---:|---:|")
    for name, run in _systems(model).items():
        words, tags = run(texts)
        kept = [[(w, t) for w, t in zip(ws, ts) if w.strip()] for ws, ts in zip(words, tags)]  # peers return spaces as words
        m = score(test, [[w for w, _ in k] for k in kept], [[t for _, t in k] for k in kept])
        print(f"| {name} | {100 * m['words']['f1']:.2f} | {100 * m['tagged']['overall']['f1']:.2f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="pos", help="a bundled name, or a folder made by zhbert train pos or zhbert.pos_on_segmenter")
    ap.add_argument("--sentences", type=int, default=None, help="score only the first N test sentences")
    args = ap.parse_args()
    pos_table(args.model, args.sentences)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()
