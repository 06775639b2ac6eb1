"""Train/test overlap of every (training set, test set) pair a bundled model is scored on.

A score means little when its test sentences were in the training data: People's Daily
NER's test is almost all inside MSRA's training part (same newspaper), which made the
bundled NER model look better there than it is. This prints, for each bundled model, each
test set it is scored on (its own and the others RESULTS.md quotes) against the training
data it saw: how many test texts (pairs: both sides) occur verbatim, after removing
whitespace, in that training data.

    python bench/overlap.py            # the table for bench/RESULTS.md
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
    "matching": (("matching", "ocnli"), ["ocnli/dev", "lcqmc/test", "afqmc/dev"]),
}

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
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
