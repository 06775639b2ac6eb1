"""Held-out fill-mask of masked LMs on two kinds of text: People's Daily 1998 and modern news.

- People's Daily: the held-out sentences every pretraining study here scores
  (``zhbert.studies.held_out_fill_mask``; gold words for the whole-word blanks).
- Modern news: sentences of the documents ``bench/corpus_sample.py`` held out of a pretraining
  corpus, kept only where the document comes from one of the news sources of ``../shared/corpora``
  (CCTV news, 睡前消息 commentary, CLUECorpusSmall web text); jieba's words for the whole-word blanks.
  A model that trained on those documents must not be scored here.

Char blanks: 15% of the characters of each sentence; whole-word blanks: 15% of its words, every
character of a chosen word at once (``zhbert.training.mlm_eval``), scored per character and per word
(a word counts only with every character right). Then the fill-mask examples of the README, top-1
through ``zhbert.load``, with the rank of the right answer among the candidates (a curve moves it
long before it reaches first place).

    python bench/corpus_sample.py --corpus ../shared/corpora --train runs/fm/train.txt \\
        --heldout runs/fm/heldout.txt --n-train 107286 --n-heldout 2000
    python bench/fill_mask_probe.py --heldout runs/fm/heldout.txt --model base --model new=runs/fm/run/final
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path

NEWS_SOURCES = ("xinwenlianbo_cctv", "bedtimenews_transcripts", "cluecorpussmall_sample")
EXAMPLES = (("北京是中国的[MASK]都。", "首"), ("李白是唐代著名的[MASK]人。", "诗"), ("我今天很高[MASK]。", "兴"))
RANKED = 1000  # candidates searched for the right answer's rank


def _key(text: str) -> bytes:
    return hashlib.sha1(text.strip().encode("utf-8")).digest()


def modern_sentences(heldout: str | Path, count: int, seed: int = 0, min_chars: int = 10, max_chars: int = 120) -> list[str]:
    """``count`` sentences (a seeded sample) of the held-out documents that come from a news source."""
    from zhbert.data import corpora_dir
    from zhbert.data.peoples_daily import split_text_sentences

    news: set[bytes] = set()
    for source in NEWS_SOURCES:
        for path in sorted((corpora_dir() / source).glob("*.txt")):
            with open(path, encoding="utf-8") as f:
                news.update(_key(line) for line in f)
    sentences = []
    with open(heldout, encoding="utf-8") as f:
        for line in f:
            if _key(line) in news:
                sentences += [s.strip() for s in split_text_sentences(line.strip()) if min_chars <= len(s.strip()) <= max_chars]
    if len(sentences) < count:
        raise SystemExit(f"{heldout}: {len(sentences):,} news sentences of {min_chars}-{max_chars} characters, fewer than {count:,}")
    return random.Random(seed).sample(sentences, count)


def score(folder: str, modern: list[str], modern_words: list[list[str]], pd_sentences: int) -> dict:
    from zhbert.studies.masking import held_out_fill_mask, load_masked_lm
    from zhbert.tokenizer import load_tokenizer
    from zhbert.training.mlm_eval import evaluate_mlm

    model, tok = load_masked_lm(folder), load_tokenizer(folder)
    out = {
        "modern_char": evaluate_mlm(model, tok, modern).to_dict(),
        "modern_word": evaluate_mlm(model, tok, modern, words=modern_words).to_dict(),
        "pd": held_out_fill_mask(folder, pd_sentences),
    }
    import zhbert

    fill = zhbert.load(folder)
    out["examples"], out["example_ranks"] = [], []
    top_k = min(RANKED, fill.model.config.vocab_size)  # a small test vocabulary has fewer
    for text, answer in EXAMPLES:
        candidates = [c.token for c in fill.fill_mask(text, top_k=top_k)[0].candidates]
        out["examples"].append(candidates[0])
        out["example_ranks"].append(candidates.index(answer) + 1 if answer in candidates else None)
    return out


def example_cell(result: dict) -> str:
    """Each example's top-1, then the right answer's rank where it is not first: ``人 (首 #9)``."""
    cells = []
    for (_, answer), top, rank in zip(EXAMPLES, result["examples"], result["example_ranks"]):
        where = f"#{rank}" if rank else f"not in the top {RANKED:,}"
        cells.append(top if rank == 1 else f"{top} ({answer} {where})")
    return " / ".join(cells)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--heldout", required=True, help="held-out documents (bench/corpus_sample.py --heldout)")
    parser.add_argument("--model", action="append", required=True, help="NAME=FOLDER, or a bundled name")
    parser.add_argument("--sentences", type=int, default=2000, help="modern news sentences")
    parser.add_argument("--pd-sentences", type=int, default=2000, help="held-out People's Daily sentences")
    parser.add_argument("--output", help="also write the scores here as JSON")
    args = parser.parse_args(argv)

    from zhbert.masking.units import word_spans
    from zhbert.models_registry import resolve_model_path

    modern = modern_sentences(args.heldout, args.sentences)
    modern_words = [[s[a:b] for a, b in word_spans(s, backend="jieba")] for s in modern]
    results = {}
    for spec in args.model:
        name, _, folder = spec.partition("=")
        results[name] = score(str(resolve_model_path(folder or name)), modern, modern_words, args.pd_sentences)
    print(f"held-out fill-mask top-1: {args.sentences:,} modern news sentences of {args.heldout}, {args.pd_sentences:,} People's Daily")
    examples = " / ".join(t for t, _ in EXAMPLES)
    print("| model | modern: char blanks | whole-word blanks | words right whole | People's Daily: char blanks | whole-word blanks "
          f"| words right whole | {examples} |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name, r in results.items():
        cells = [r["modern_char"]["accuracy"], r["modern_word"]["accuracy"], r["modern_word"]["unit_accuracy"]]
        cells += [r["pd"]["char"]["accuracy"], r["pd"]["word"]["accuracy"], r["pd"]["word"]["unit_accuracy"]]
        print(f"| {name} | " + " | ".join(f"{100 * c:.1f}%" for c in cells) + " | " + example_cell(r) + " |")
    if args.output:
        Path(args.output).write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
