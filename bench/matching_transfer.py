"""Matching on questions from sources a head never trained on: a head trained on every other pair set
(AFQMC, OCNLI, STS-B, PAWS-X as paraphrase pairs) scored on LCQMC's and BQ's whole dev sets, beside a
head trained on AFQMC alone at the same budget, and both asked the everyday pairs users type.

    python bench/matching_transfer.py --encoder base --output runs/transfer/base
    python bench/matching_transfer.py --encoder base --output runs/transfer/base --train-samples 64 --eval-samples 32  # a quick look
    python bench/matching_transfer.py --ask-only matching   # a trained model on the everyday and request pairs, no training
    # the other pair sets with extra pairs (corpora/paraphrase_pairs.py), that head alone
    python bench/matching_transfer.py --encoder electra --output runs/transfer/medical --heads other-sets \
        --recipe-flags "--learning-rate 2e-4 --extra-train runs/pairs/medical.tsv"
    # everyday requests (bench/data/everyday_requests.tsv): train on some kinds of request, score the others
    python bench/matching_transfer.py --encoder electra --output runs/transfer/requests-a --heads other-sets \
        --recipe-flags "--learning-rate 2e-4" --train-request-kinds alarm,music,weather,travel,phone,home

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
REQUESTS = Path(__file__).resolve().parent / "data" / "everyday_requests.tsv"
LABELS = {"transfer-lcqmc": ("different", "paraphrase"), "afqmc": ("0", "1")}  # each head's (different, paraphrase)


def read_requests(path: Path = REQUESTS) -> list[tuple[str, str, str, bool]]:
    """(kind of request, text, text, paraphrase?) for each line of KIND<TAB>A<TAB>B<TAB>paraphrase|different."""
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        parts = line.split("\t")
        if len(parts) != 4 or parts[3] not in ("paraphrase", "different") or not parts[1] or not parts[2]:
            raise SystemExit(f"{path}:{n}: expected KIND<TAB>TEXT<TAB>TEXT<TAB>paraphrase|different, got {line!r}")
        rows.append((parts[0], parts[1], parts[2], parts[3] == "paraphrase"))
    return rows


def ask(model_name: str, requests: list[tuple[str, str, str, bool]]) -> dict:
    """A matching model's answers to the four everyday pairs and to ``requests``: counts and shares right."""
    import zhbert

    model = zhbert.load(model_name)
    answers = [model(pair) for pair, _ in EVERYDAY]
    paraphrase = model.model.head.labels[1]
    right = sum((a.label == paraphrase) == same for a, (_, same) in zip(answers, EVERYDAY))
    hits = [(model((a, b)).label == paraphrase) == same for _, a, b, same in requests]
    by_class = {c: [h for h, r in zip(hits, requests) if r[3] is c] for c in (True, False)}
    per_class = {c: 100 * sum(v) / max(1, len(v)) for c, v in by_class.items()}
    kinds = sorted({r[0] for r in requests})
    return {
        "everyday_right": right, "everyday": [(p, a.label, a.score) for (p, _), a in zip(EVERYDAY, answers)],
        "requests": {"kinds": kinds, "accuracy": 100 * sum(hits) / len(hits),
                     "paraphrases_found": per_class[True], "differents_found": per_class[False],
                     "right_per_kind": {k: sum(h for h, r in zip(hits, requests) if r[0] == k) for k in kinds}},
    }  # fmt: skip


def asked_cells(asked: dict) -> str:
    r = asked["requests"]
    return f"{asked['everyday_right']} / {len(EVERYDAY)} | {r['accuracy']:.1f} ({r['paraphrases_found']:.0f} / {r['differents_found']:.0f})"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encoder", help="an encoder folder or bundled name (required unless --ask-only)")
    parser.add_argument("--output", help="where the heads and tables go (required unless --ask-only)")
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
    parser.add_argument(
        "--train-request-kinds",
        help="comma-separated kinds of everyday request (bench/data/everyday_requests.tsv) whose pairs every head also "
        "trains on, --request-copies times over; the other kinds are scored",
    )
    parser.add_argument("--request-copies", type=int, default=4)
    parser.add_argument(
        "--ask-only",
        metavar="MODEL",
        help="train nothing: ask a matching model (a bundled name or folder) the everyday pairs and all request pairs",
    )
    args = parser.parse_args(argv)
    if args.ask_only:
        asked = ask(args.ask_only, read_requests())
        print("| model | everyday pairs right | request pairs acc (paraphrases / differents found) |\n|---|---:|---:|")
        print(f"| {args.ask_only} | " + asked_cells(asked) + " |")
        return
    if not (args.encoder and args.output):
        parser.error("--encoder and --output are required (or --ask-only MODEL)")

    from zhbert.studies import recipe_options, run_recipe

    out = Path(args.output)
    budget = dict(
        encoder=args.encoder, max_train_samples=args.train_samples, max_eval_samples=args.eval_samples, epochs=args.epochs,
        seed=args.seed, truncate=True,
    )  # fmt: skip
    requests = read_requests()
    kinds = sorted({k for k, *_ in requests})
    trained_kinds = set(args.train_request_kinds.split(",")) if args.train_request_kinds else set()
    if trained_kinds - set(kinds):
        raise SystemExit(f"--train-request-kinds: no {', '.join(sorted(trained_kinds - set(kinds)))} (kinds: {', '.join(kinds)})")
    if trained_kinds == set(kinds):
        raise SystemExit("--train-request-kinds: leave at least one kind of request out, to be scored")
    budget.update(recipe_options(args.recipe_flags))
    if trained_kinds and budget.get("extra_train"):
        raise SystemExit("--train-request-kinds and an --extra-train in --recipe-flags: give one extra file")
    scored_requests = [r for r in requests if r[0] not in trained_kinds]
    scored_kinds = sorted({r[0] for r in scored_requests})
    rows, record = [], {}
    heads = [("other pair sets", "transfer-lcqmc"), ("AFQMC alone", "afqmc")][: 1 if args.heads == "other-sets" else 2]
    for name, dataset in heads:
        folder = out / dataset
        extra = {}
        if trained_kinds:  # the trained kinds' pairs, in the head's own labels (different / paraphrase)
            extra_file = out / f"request-pairs-{dataset}.tsv"
            extra_file.parent.mkdir(parents=True, exist_ok=True)
            lines = [f"{a}\t{b}\t{LABELS[dataset][same]}" for k, a, b, same in requests if k in trained_kinds]
            extra_file.write_text("\n".join(lines * args.request_copies) + "\n", encoding="utf-8")
            extra = {"extra_train": str(extra_file)}
        run_recipe("matching", folder, dataset=dataset, **budget, **extra)
        scores = {}
        for scored in ("lcqmc", "bq"):
            r = run_recipe(
                "matching", out / f"{dataset}-on-{scored}", dataset=f"transfer-{scored}", evaluate_only=str(folder / "model"),
                max_eval_samples=args.eval_samples, truncate=True,
            )  # fmt: skip
            scores[scored] = 100 * r["score"]
        asked = ask(str(folder / "model"), scored_requests)
        record[name] = {**scores, **asked}
        rows.append(f"| {name} | {scores['lcqmc']:.2f} | {scores['bq']:.2f} | " + asked_cells(asked) + " |")
    head = "| trained on | LCQMC dev acc | BQ dev acc | everyday pairs right | request pairs acc (paraphrases / differents found) |"
    table = "\n".join([head, "|---|---:|---:|---:|---:|", *rows])
    settings = args.recipe_flags or "recipe defaults"
    note = f"{args.encoder}: {args.train_samples:,} training pairs, {args.epochs:g} epoch(s), seed {args.seed}, {settings}"
    if trained_kinds:
        note += f"; + request pairs of {', '.join(sorted(trained_kinds))} x{args.request_copies}"
    note += f"; request pairs scored: {len(scored_requests)} of {', '.join(scored_kinds)}"
    (out / "transfer.md").write_text(f"{note}\n\n{table}\n", encoding="utf-8")
    (out / "transfer.json").write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(note)
    print(table)


if __name__ == "__main__":
    main()
