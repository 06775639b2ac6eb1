"""Train/test overlap of every (training set, test set) pair a bundled model is scored on.

A score means little when its test sentences were in the training data: People's Daily
NER's test is almost all inside MSRA's training part (same newspaper), which made the
bundled NER model look better there than it is. This prints, for each bundled model, each
test set it is scored on (its own and the others RESULTS.md quotes) against the training
data it saw: how many test texts (pairs: both sides) occur verbatim, after removing
whitespace, in that training data.

    python bench/overlap.py            # the table for bench/RESULTS.md

``cws-fast`` was also fitted on silver text (corpus sentences segmented by ``cws``,
``corpora/silver_segmentation.py``); that file lives in ``runs/`` (regenerate it with the
command in ``BUNDLED["cws-fast"]``), and it is compared sentence by sentence, the way it was
written: each test text cut into sentences of at least 8 characters.
"""

from __future__ import annotations

import argparse
import re
import time

from zhbert.data.tasks import SPLITS, load_task_data

# bundled model -> (the recipe dataset it was trained on, the test sets it is scored on)
BUNDLED_TRAINING = {
    "cws": (("cws", "news+weibo"), ["sighan2005_icwb2/pku_test", "nlpcc2016_weibo_cws/dev"]),
    "ner": (("ner", "msra"), ["msra_ner/test", "msra_ner/test_bio", "peoples_daily_ner/test"]),
    "tagging": (("tagging", "usual"), ["smp2020_ewect_usual/test", "smp2020_ewect_virus/test"]),
    # BQ's scored part is 20% of its dev file, the rest trains: tests/test_recipes.py checks that split pair by pair
    "matching": (("matching", "paraphrase"), ["lcqmc/test", "afqmc/dev", "pawsx_zh/test", "ocnli/dev"]),
    # the news+weibo rows of its first passes; the last pass used the People's Daily part of the same rows
    "cws-fast": (("cws", "news+weibo"), ["sighan2005_icwb2/pku_test", "nlpcc2016_weibo_cws/dev"]),
}
SILVER = {"cws-fast": "runs/silver/cws.txt"}  # extra training text, one segmented sentence per line

_SPACE = re.compile(r"\s+")


def key(text: str) -> str:
    return _SPACE.sub("", text)


def texts_of(rows: list[dict]) -> list[str]:
    if rows and "text_a" in rows[0]:
        return [key(r["text_a"] + "\t" + r["text_b"]) for r in rows]
    return [key(r["text"]) for r in rows]


def split_texts(name: str) -> list[str]:
    split = SPLITS[name]
    ds = split.read()
    if len(split.columns) == 2:
        return [key(a + "\t" + b) for a, b in zip(ds[split.columns[0]], ds[split.columns[1]])]
    return [key(t) for t in ds[split.columns[0]]]


def silver_overlap(model: str, path: str, tests: list[str]) -> None:
    from pathlib import Path

    from zhbert.data.peoples_daily import overlap_key, split_text_sentences

    if not Path(path).is_file():
        print(f"| {model} | {path}: not here (regenerate it to check) | | | | |")
        return
    with open(path, encoding="utf-8") as f:
        seen = {overlap_key(key(line)) for line in f}
    for test in tests:
        sentences = [s for t in split_texts(test) for s in split_text_sentences(overlap_key(t)) if len(s) >= 8]
        found = sum(s in seen for s in sentences)
        share = f"{100 * found / len(sentences):.2f}%"
        print(f"| {model} | {path} (silver) | {test}, sentences of 8+ chars | {len(sentences):,} | {found:,} | {share} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="*", default=list(BUNDLED_TRAINING))
    args = ap.parse_args()
    print("| bundled model | trained on | test set | test texts | found verbatim in training | share |")
    print("|---|---|---|---:|---:|---:|")
    start = time.perf_counter()
    for model in args.models:
        (task, dataset), tests = BUNDLED_TRAINING[model]
        data = load_task_data(task, dataset)
        seen = set(texts_of(data.train))  # the rows the model was fitted on
        for test in tests:
            texts = [t for t in split_texts(test) if t]
            found = sum(t in seen for t in texts)
            print(f"| {model} | {data.name} (train) | {test} | {len(texts):,} | {found:,} | {100 * found / len(texts):.2f}% |")
        if model in SILVER:
            silver_overlap(model, SILVER[model], tests)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
