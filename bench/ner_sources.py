"""Leave-one-source-out NER: for each source (MSRA, CLUENER2020, Weibo NER, Resume, in PER/LOC/ORG), a
head trained on the other three and scored on the left-out source's dev split, beside a head trained on
MSRA alone at the same budget and scored there too. The mean over the sources other than MSRA is the
figure that predicts text nobody chose; the MSRA-only column is how an MSRA-only recipe fares there.
(People's Daily NER is not a source: most of its sentences are MSRA's.)

    python bench/ner_sources.py --encoder base --output runs/sources/base
    python bench/ner_sources.py --encoder base --output runs/sources/base --train-samples 200 --eval-samples 50  # a quick look
    python bench/ner_sources.py --encoder base --output runs/sources/base-mc --multi-criteria   # one standard per source
    python bench/ner_sources.py --encoder base --output runs/sources/base-crf --recipe-flags "--crf --learning-rate 5e-4"

Both heads see the same number of training sentences (the first N of a proportional shuffle for the
sources, the first N of MSRA for the other). Every figure is entity F1 on a dev split; no test split is
read. A finished head is not trained again, so a stopped run resumes at the head it stopped in.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None) -> None:
    from zhbert.data.tasks import NER_SOURCES

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encoder", required=True, help="an encoder folder or bundled name")
    parser.add_argument("--output", required=True)
    parser.add_argument("--train-samples", type=int, default=6000, help="training sentences per head")
    parser.add_argument("--eval-samples", type=int, default=2000, help="dev sentences scored per source (the first N)")
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--multi-criteria", action="store_true",
        help="each source its own annotation standard (--criteria, the kept sources in order); the left-out one is read under the first",
    )  # fmt: skip
    parser.add_argument(
        "--recipe-flags", default="", help='zhbert train flags for every head trained, e.g. "--crf --lexicon jieba --learning-rate 5e-4"'
    )
    parser.add_argument("--sources", default=",".join(NER_SOURCES), help="the sources to leave out in turn, comma-separated")
    parser.add_argument(
        "--no-msra-only",
        action="store_true",
        help="skip the MSRA-alone head (its column stays empty): a variant's table needs only its own",
    )
    args = parser.parse_args(argv)

    from zhbert.studies import recipe_options, run_recipe

    out = Path(args.output)
    budget = dict(
        encoder=args.encoder, max_train_samples=args.train_samples, max_eval_samples=args.eval_samples, epochs=args.epochs, seed=args.seed
    )
    budget.update(recipe_options(args.recipe_flags))
    msra_only = out / "msra-only"
    if not args.no_msra_only:
        run_recipe("ner", msra_only, dataset="msra", score_on="dev", **budget)
    rows, record = [], {}
    for source in args.sources.split(","):
        criteria = ",".join(s for s in NER_SOURCES if s != source) if args.multi_criteria else None
        left_out = run_recipe(
            "ner", out / f"minus-{source}", dataset=f"sources-minus-{source}", save_model=False, criteria=criteria, **budget
        )
        record[source] = {"others": 100 * left_out["score"], "msra_only": None}
        if not args.no_msra_only:
            alone = run_recipe(
                "ner", out / f"msra-only-on-{source}", dataset=f"sources-minus-{source}", evaluate_only=str(msra_only / "model"),
                max_eval_samples=args.eval_samples,
            )  # fmt: skip
            record[source]["msra_only"] = 100 * alone["score"]
        rows.append(f"| {source} | {record[source]['others']:.2f} | {_cell(record[source]['msra_only'])} |")
    others = [r["others"] for s, r in record.items() if s != "msra"]
    alone = [r["msra_only"] for s, r in record.items() if s != "msra" and r["msra_only"] is not None]
    if others:
        mean_alone = _cell(statistics.fmean(alone) if alone else None)
        rows.append(f"| mean over the sources other than MSRA | {statistics.fmean(others):.2f} | {mean_alone} |")
    if len(record) > 1:
        rows.append(f"| leave-one-source-out mean | {statistics.fmean(r['others'] for r in record.values()):.2f} | |")
    table = "\n".join(["| left out (scored on its dev) | trained on the others | trained on MSRA alone |", "|---|---:|---:|", *rows])
    settings = (args.recipe_flags or "recipe defaults") + (", one standard per source (--criteria)" if args.multi_criteria else "")
    note = (
        f"{args.encoder}: {args.train_samples:,} training sentences, {args.epochs:g} epoch(s), seed {args.seed}, {settings}; "
        f"first {args.eval_samples:,} dev sentences of each source; entity F1 (PER/LOC/ORG)"
    )
    (out / "sources.md").write_text(f"{note}\n\n{table}\n", encoding="utf-8")
    (out / "sources.json").write_text(json.dumps({"budget": budget, "scores": record}, indent=2) + "\n", encoding="utf-8")
    print(note)
    print(table)


def _cell(score: float | None) -> str:
    return "–" if score is None else f"{score:.2f}"


if __name__ == "__main__":
    main()
