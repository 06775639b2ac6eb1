"""Dev-split probes of pretrained encoders at one fixed, short fine-tuning budget.

Every encoder gets the same recipes, data, steps and seeds; every score is on a dev split (never
a test set): MSRA NER dev, PKU segmentation dev, CLUENER2020 dev (its 10 types), AFQMC dev, LCQMC
dev (trained on LCQMC's other part), and held-out fill-mask on People's Daily sentences kept out
of pretraining (single characters blanked, and whole gold words blanked).

    python bench/encoder_probes.py --encoder base --encoder runs/pilot/mlm/final \
        --encoder runs/pilot/electra/final --output runs/probes

A folder without a masked-LM head (an ELECTRA discriminator) is scored on fill-mask through
``--fill-mask-model ENCODER=FOLDER`` (its generator, or an MLM head trained on it); without one its
fill-mask cells stay empty. Finished runs are not rerun; the table goes to OUTPUT/probes.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# (column, recipe, dataset, metric key in metrics.json's "dev" record)
PROBES = [
    ("MSRA dev F1", "ner", "msra"),
    ("PKU dev F1", "cws", "pku"),
    ("CLUENER dev F1", "ner", "cluener"),
    ("AFQMC dev acc", "matching", "afqmc"),
    ("LCQMC dev acc", "matching", "lcqmc"),
]


def _probes(only: str | None) -> list[tuple[str, str, str]]:
    """The probes ``--only`` names (all five when None): those above by their recipe/dataset, any other
    recipe/dataset as a column of its own (its dev split checked when it runs)."""
    if only is None:
        return PROBES
    from zhbert.recipes import RECIPES

    known = {f"{recipe}/{dataset}": (column, recipe, dataset) for column, recipe, dataset in PROBES}
    probes = []
    for item in filter(None, only.split(",")):
        if item == "none":
            continue
        recipe, _, dataset = item.partition("/")
        if recipe not in RECIPES or not dataset:
            raise SystemExit(f"--only: {item!r} is not RECIPE/DATASET (recipes: {', '.join(RECIPES)}), nor 'none'")
        probes.append(known.get(item, (f"{recipe} {dataset} dev", recipe, dataset)))
    return probes


def _dev_score(record: dict) -> float:
    """The recipe's headline figure (``score``: F1 or accuracy on the split scored), in percent."""
    if record.get("scored_on") != "dev":
        raise ValueError(f"{record.get('dataset')}: scored on {record.get('scored_on')!r}, not on a dev split")
    return 100 * float(record["score"])


def _fill_mask_cells(folder: str | None, sentences: int) -> tuple[str, str]:
    if folder is None:
        return "–", "–"
    from zhbert.models_registry import resolve_model_path
    from zhbert.studies.masking import held_out_fill_mask

    scores = held_out_fill_mask(resolve_model_path(folder), sentences)
    return f"{100 * scores['char']['accuracy']:.1f}%", f"{100 * scores['word']['accuracy']:.1f}%"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encoder", action="append", required=True, help="an encoder folder or bundled name (repeat)")
    parser.add_argument("--fill-mask-model", action="append", default=[], help="ENCODER=FOLDER: the masked LM that answers for ENCODER")
    parser.add_argument("--output", required=True)
    parser.add_argument("--train-samples", type=int, default=6000, help="training examples per probe (the first N)")
    parser.add_argument("--eval-samples", type=int, default=2000, help="dev examples scored per probe (the first N)")
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--seeds", default="1,2", help="fine-tuning seeds, comma-separated")
    parser.add_argument("--fill-mask-sentences", type=int, default=1000)
    parser.add_argument(
        "--only",
        default=None,
        help="comma-separated RECIPE/DATASET probes to run instead of the five, e.g. ner/msra,cws/pku; any dataset "
        "of a recipe with a dev split (ner/weibo, cws/weibo, tagging/usual); none: fill-mask only",
    )
    args = parser.parse_args(argv)

    from zhbert.studies import run_recipe

    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    seeds = [int(s) for s in args.seeds.split(",")]
    fill_mask = dict(item.split("=", 1) for item in args.fill_mask_model)
    probes = _probes(args.only)
    rows, records = [], {}
    for encoder in args.encoder:
        name = encoder.replace("/", "_").strip("_")
        cells, records[encoder] = [], {}
        for column, task, dataset in probes:
            scores = []
            for seed in seeds:
                record = run_recipe(
                    task,
                    out / name / f"{task}-{dataset}-seed{seed}",
                    dataset=dataset,
                    encoder=encoder,
                    max_train_samples=args.train_samples,
                    max_eval_samples=args.eval_samples,
                    epochs=args.epochs,
                    score_on="dev",
                    seed=seed,
                    save_model=False,
                    # a few AFQMC pairs are longer than the 128-token window: cut the longer side, as BERT's run_classifier does
                    **({"truncate": True} if task == "matching" else {}),
                )
                scores.append(_dev_score(record))
            records[encoder][column] = scores
            spread = f" ± {statistics.stdev(scores):.2f}" if len(scores) > 1 else ""
            cells.append(f"{statistics.fmean(scores):.2f}{spread}")
        masked_lm = fill_mask.get(encoder, encoder if _has_mlm_head(encoder) else None)
        char, word = _fill_mask_cells(masked_lm, args.fill_mask_sentences) if args.fill_mask_sentences else ("–", "–")
        records[encoder]["fill-mask"] = {"model": masked_lm, "char": char, "word": word}
        rows.append(f"| {encoder} | " + " | ".join(cells) + f" | {char} | {word} |")
    header = "| encoder | " + " | ".join(p[0] for p in probes) + " | fill-mask char top-1 | fill-mask word top-1 |"
    table = "\n".join([header, "|---" + "|---:" * (len(probes) + 2) + "|", *rows])
    budget = (
        f"{args.train_samples:,} training examples, {args.epochs:g} epoch(s), recipe defaults otherwise; "
        f"first {args.eval_samples:,} dev examples; seeds {args.seeds} (mean ± std); "
        f"fill-mask on {args.fill_mask_sentences:,} held-out People's Daily sentences"
    )
    (out / "probes.md").write_text(f"{budget}\n\n{table}\n", encoding="utf-8")
    (out / "probes.json").write_text(json.dumps(records, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(budget)
    print(table)


def _has_mlm_head(encoder: str) -> bool:
    from zhbert.models_registry import resolve_model_path

    config = json.loads((resolve_model_path(encoder) / "config.json").read_text(encoding="utf-8"))
    return any(a.endswith(("ForMaskedLM", "ForPreTraining")) for a in config.get("architectures") or [])


if __name__ == "__main__":
    main()
