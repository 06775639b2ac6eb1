"""How many of a NER split's entities (text and type) also occur in the recipe's training split:
a dev split that repeats training entities more often than the test files do rewards remembering
them (bench/LOG.md, forty-sixth session). Prints one line per split.

    python bench/ner_split_overlap.py --dataset msra      # msra-bio too; a few seconds
"""

from __future__ import annotations

import argparse


def entities(rows) -> list[tuple[str, str]]:
    from seqeval.metrics.sequence_labeling import get_entities

    return [(r["text"][a : b + 1], kind) for r in rows for kind, a, b in get_entities(list(r["tags"]))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="msra", help="a ner recipe dataset (msra, msra-bio, weibo, resume)")
    args = ap.parse_args()

    from zhbert.data.tasks import load_task_data

    data = load_task_data("ner", args.dataset)
    seen = set(entities(data.train))
    print(f"{args.dataset}: training split {len(data.train):,} sentences")
    for name, rows in (("dev", data.dev), ("test", data.test)):
        found = entities(rows)
        share = sum(e in seen for e in found) / max(len(found), 1)
        print(f"  {name}: {len(rows):,} sentences, {len(found):,} entities, {share:.1%} of them in the training split")


if __name__ == "__main__":
    main()
