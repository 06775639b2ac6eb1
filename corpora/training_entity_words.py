"""A domain word list from a labelled NER set's training split: every entity its annotators
marked, as ``word<TAB>TYPE`` lines (the user-dictionary format), for ``--lexicon_words``.

jieba's dictionary covers a domain's entities poorly: of Resume's test entities, 55% of the
titles (TITLE), 62% of the degrees (EDU) and 10% of the organisations are jieba words, against
81%, 96% and 16% among the training entities. A lexicon head trained with this list sees a
training entity as a dictionary word wherever it occurs, in training and in prediction alike.

Only the training split is read (dev and test never); ``--min-count 2`` keeps the entities
annotated at least twice, so that in training, as at test time, some entities are not in the
list. ``--types TITLE,EDU,PRO`` keeps a domain's vocabulary (titles, degrees, professions) and
leaves out its names (people, organisations), which recur less. A string annotated with two
types keeps its most frequent one (the dictionary reader refuses a word listed with two types).

    python corpora/training_entity_words.py --dataset resume --output runs/resume-words.txt
    zhbert train ner --dataset resume --lexicon jieba --lexicon_words runs/resume-words.txt ...
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from zhbert.tags import tags_to_spans


def entity_words(rows: list[dict], scheme: str, min_count: int = 1, types: set[str] | None = None) -> list[tuple[str, str, int]]:
    """``(word, type, count)`` of every entity string annotated ``min_count`` times or more in
    ``rows`` (``text`` and per-character ``tags``), most frequent first; each word with its most
    frequent type (ties: the type first seen); with ``types``, only words whose type is one of them."""
    counts: Counter = Counter()
    seen: dict[str, Counter] = {}
    for r in rows:
        for typ, s, e in tags_to_spans(r["tags"], scheme):
            word = r["text"][s:e].strip()
            if not word or any(c.isspace() for c in word):
                continue  # a dictionary word holds no whitespace
            counts[word] += 1
            seen.setdefault(word, Counter())[typ] += 1
    typed = [(w, seen[w].most_common(1)[0][0], n) for w, n in counts.most_common() if n >= min_count]
    return [x for x in typed if types is None or x[1] in types]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", required=True, help="an NER dataset of `zhbert train ner` (resume, weibo, msra, ...)")
    ap.add_argument("--output", required=True)
    ap.add_argument("--min-count", type=int, default=1, help="keep entities annotated at least this many times in training")
    ap.add_argument("--types", help="only entities of these types, comma-separated (TITLE,EDU,PRO: a domain vocabulary, not its names)")
    args = ap.parse_args()

    from zhbert.data.tasks import load_task_data

    data = load_task_data("ner", args.dataset)
    types = set(args.types.split(",")) if args.types else None
    words = entity_words(data.train, data.scheme, args.min_count, types)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(f"{w}\t{t}\n" for w, t, _ in words), encoding="utf-8")
    by_type = Counter(t for _, t, _ in words)
    kinds = ", ".join(f"{t} {n}" for t, n in by_type.most_common())
    print(f"{out}: {len(words):,} entities of {len(data.train):,} training sentences ({kinds})")


if __name__ == "__main__":
    main()
