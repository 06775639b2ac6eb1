"""Training entities forced at prediction: does a gazetteer built from an NER training split help?

    python bench/forced_gazetteer.py --dataset resume runs/resume-s42/model
    python bench/forced_gazetteer.py --dataset msra --dict-mode prefer ner   # as lexicon words instead

The gazetteer holds the training entities annotated ``K`` times or more, always with one type, two
characters or longer, and annotated as that entity in a share ``R`` or more of the string's
occurrences in the training text (so a string that is often no entity, or part of a longer one,
stays out). It is applied as a typed user dictionary with ``dict_mode="force"``: every occurrence
comes out as one entity of its type, whatever the model reads; or with ``--dict-mode prefer`` (a head
with lexicon features): the words join its lexicon, their types read as jieba's name tags (``PER`` as
``nr``, ``LOC`` as ``ns``, ``ORG`` as ``nt``), and the model decides. Prints dev and test entity F1 for
each (K, R) and without the gazetteer; without it the scores equal the recipe's own
(``zhbert train ner --evaluate_only``, with and without ``--score_on dev``). Only the training split
builds the list.
"""

from __future__ import annotations

import argparse
from collections import Counter

import zhbert
from zhbert.data.tasks import load_task_data
from zhbert.metrics import entity_prf
from zhbert.tags import spans_to_tags, tags_to_spans


def gazetteer(rows: list[dict], scheme: str, min_count: int, min_share: float) -> list[tuple[str, str]]:
    """``(word, type)`` of the training entities that pass the count, one-type, length and share tests."""
    annotated: Counter = Counter()
    types: dict[str, set[str]] = {}
    for r in rows:
        for typ, s, e in tags_to_spans(r["tags"], scheme):
            word = r["text"][s:e]
            annotated[word] += 1
            types.setdefault(word, set()).add(typ)
    text = "\n".join(r["text"] for r in rows)
    return [
        (word, next(iter(types[word])))
        for word, n in annotated.items()
        if n >= min_count and len(types[word]) == 1 and len(word) >= 2 and word == "".join(word.split())
        and n / text.count(word) >= min_share
    ]


def entity_f1(predictor, rows: list[dict], scheme: str) -> float:
    texts = [r["text"] for r in rows]
    found = predictor(texts)
    predicted = [spans_to_tags(len(t), [(s.label, s.start, s.end) for s in spans], scheme) for t, spans in zip(texts, found)]
    return 100 * entity_prf([r["tags"] for r in rows], predicted, scheme)["overall"]["f1"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+", help="saved NER model folders of the dataset's recipe")
    parser.add_argument("--dataset", default="resume")
    parser.add_argument("--min-counts", default="2,3,5")
    parser.add_argument("--min-shares", default="0.9,1.0")
    parser.add_argument("--dict-mode", default="force", choices=["force", "prefer"])
    args = parser.parse_args()
    data = load_task_data("ner", args.dataset)
    settings = [None] + [(int(k), float(r)) for k in args.min_counts.split(",") for r in args.min_shares.split(",")]
    print("| model | K, R | words | dev F1 | test F1 |\n|---|---|---:|---:|---:|")
    for path in args.models:
        for setting in settings:
            predictor, words = zhbert.load(path), 0
            if setting:
                entries = gazetteer(data.train, data.scheme, *setting)
                predictor.use_dictionary(entries, args.dict_mode)
                words = len(entries)
            dev, test = (entity_f1(predictor, rows, data.scheme) for rows in (data.dev, data.test))
            print(f"| {path} | {'none' if setting is None else '%d, %g' % setting} | {words} | {dev:.2f} | {test:.2f} |", flush=True)


if __name__ == "__main__":
    main()
