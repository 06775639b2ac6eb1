"""Matching on questions from sources a head never trained on: a head trained on every other pair set
(AFQMC, OCNLI, STS-B, PAWS-X as paraphrase pairs) scored on LCQMC's and BQ's whole dev sets, beside a
head trained on AFQMC alone at the same budget, and both asked the everyday pairs users type.

    python bench/matching_transfer.py --encoder base --output runs/transfer/base
    python bench/matching_transfer.py --encoder base --output runs/transfer/base --train-samples 64 --eval-samples 32  # a quick look
    # the other pair sets with extra pairs (corpora/paraphrase_pairs.py), that head alone
    python bench/matching_transfer.py --encoder electra --output runs/transfer/medical --heads other-sets \
        --recipe-flags "--learning-rate 2e-4 --extra-train runs/pairs/medical.tsv"

Accuracy on dev sets only; no test split is read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# (pair, the answer a user expects): everyday requests, not from any dataset here
EVERYDAY = [
    (("花呗怎么还款", "蚂蚁花呗如何还钱"), True),
    (("如何学好英语", "怎么学好英语"), True),
    (("今天天气怎么样", "今天天气如何"), True),
    (("北京到上海的高铁票多少钱", "上海到北京的机票多少钱"), False),
]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encoder", required=True, help="an encoder folder or bundled name")
    parser.add_argument("--output", required=True)
    parser.add_argument("--train-samples", type=int, default=20000, help="training pairs per head")
    parser.add_argument("--eval-samples", type=int, default=None, help="dev pairs scored (the first N; default all)")
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--recipe-flags", default="", help='zhbert train flags for every head trained, e.g. "--crf --lexicon jieba --learning-rate 5e-4"'
    )
    parser.add_argument(
        "--heads", choices=["both", "other-sets"], default="both", help="other-sets: only the head trained on the other pair sets"
    )
    args = parser.parse_args(argv)

    import zhbert
    from zhbert.studies import recipe_options, run_recipe

    out = Path(args.output)
    budget = dict(
        encoder=args.encoder, max_train_samples=args.train_samples, max_eval_samples=args.eval_samples, epochs=args.epochs,
        seed=args.seed, truncate=True,
    )  # fmt: skip
    budget.update(recipe_options(args.recipe_flags))
    rows, record = [], {}
    heads = [("other pair sets", "transfer-lcqmc"), ("AFQMC alone", "afqmc")][: 1 if args.heads == "other-sets" else 2]
    for name, dataset in heads:
        folder = out / dataset
        run_recipe("matching", folder, dataset=dataset, **budget)
        scores = {}
        for scored in ("lcqmc", "bq"):
            r = run_recipe(
                "matching", out / f"{dataset}-on-{scored}", dataset=f"transfer-{scored}", evaluate_only=str(folder / "model"),
                max_eval_samples=args.eval_samples, truncate=True,
            )  # fmt: skip
            scores[scored] = 100 * r["score"]
        model = zhbert.load(str(folder / "model"))
        answers = [model(pair) for pair, _ in EVERYDAY]
        paraphrase = model.model.head.labels[1]
        right = sum((a.label == paraphrase) == same for a, (_, same) in zip(answers, EVERYDAY))
        record[name] = {**scores, "everyday_right": right, "everyday": [(p, a.label, a.score) for (p, _), a in zip(EVERYDAY, answers)]}
        rows.append(f"| {name} | {scores['lcqmc']:.2f} | {scores['bq']:.2f} | {right} / {len(EVERYDAY)} |")
    table = "\n".join(["| trained on | LCQMC dev acc | BQ dev acc | everyday pairs right |", "|---|---:|---:|---:|", *rows])
    settings = args.recipe_flags or "recipe defaults"
    note = f"{args.encoder}: {args.train_samples:,} training pairs, {args.epochs:g} epoch(s), seed {args.seed}, {settings}"
    (out / "transfer.md").write_text(f"{note}\n\n{table}\n", encoding="utf-8")
    (out / "transfer.json").write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(note)
    print(table)


if __name__ == "__main__":
    main()
