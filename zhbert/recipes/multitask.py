"""Several tasks on one shared encoder, trained together and saved as one folder.

    zhbert train multitask --dataset ner=msra,cws=pku,tagging=usual --output-dir runs/multitask
    zhbert train multitask --dataset ner=msra,cws=pku --max-train-samples 20000 --output-dir runs/mt2
    zhbert train multitask --dataset ner=msra,cws=pku,tagging=usual --evaluate-only runs/multitask/model

``--dataset`` names each task's recipe and dataset (``recipe=dataset``, comma-separated).
Every batch holds one task's examples and the tasks' batches are interleaved at random
(``--max-train-samples`` caps each task); the other arguments apply to every head. Each
task is scored by its own recipe's ``evaluate`` on the same split as its single-task
recipe, so the two compare cell by cell (``zhbert study multitask``). The saved folder loads
with ``zhbert.load`` as a ``MultiTask``: every token and sequence head in one encoder pass.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import asdict, fields, replace
from pathlib import Path

from ..heads.multitask import load_multitask, new_multitask, save_multitask
from ..options import flag as option_flag
from ..tokenizer import load_tokenizer
from .arguments import RecipeArguments
from .common import (
    char_tag_examples,
    check_unk_share,
    classification_examples,
    evaluated_head,
    finetune_config,
    head_config,
    init_seed,
    load_splits,
    pair_examples,
    result_record,
)


def plan(spec: str) -> dict[str, str]:
    """``"ner=msra,cws=pku"`` -> ``{"ner": "msra", "cws": "pku"}``, each recipe known and single-task."""
    from . import RECIPES

    out = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, _, dataset = part.partition("=")
        if name not in RECIPES or RECIPES[name].head == "several" or not dataset:
            single = [n for n, r in RECIPES.items() if r.head != "several"]
            raise ValueError(f"--dataset takes recipe=dataset pairs over {', '.join(single)}, e.g. ner=msra,cws=pku; got {part!r}")
        if name in out:
            raise ValueError(f"--dataset names {name} twice")
        out[name] = dataset
    if len(out) < 2:
        raise ValueError(f"a multi-task model needs at least two tasks, got {spec!r}")
    return out


def training_examples(kind: str, tokenizer, data) -> list[dict]:
    if kind == "token":
        return char_tag_examples(tokenizer, data.train, data.labels, data.scheme)
    if kind == "sequence":
        return classification_examples(tokenizer, data.train, len(data.labels), data.multi_label)
    return pair_examples(tokenizer, data.train)


def run(args: RecipeArguments) -> dict:
    """Train (or load) one encoder with a head per task and score every task."""
    import torch

    from . import RECIPES

    # 1. arguments: one recipe=dataset per task, the rest shared
    if args.train_file:  # one file holds one task's labels: read for every task it was each task's data
        raise ValueError(
            "a multi-task model trains on the datasets --dataset names (ner=msra,cws=pku); your own file trains one task: "
            "zhbert train TASK --train-file FILE"
        )
    tasks = plan(args.dataset)

    # 2. data: each task's splits, exactly as its own recipe reads them
    data = {name: load_splits(replace(args, dataset=dataset), name) for name, dataset in tasks.items()}

    # 3. model: the shared encoder and a head per task (or the saved model to evaluate)
    torch.manual_seed(init_seed(args))
    if args.static_embeddings:
        raise ValueError("--static-embeddings is for one token head (zhbert train cws / ner / pos), not the multi-task model")
    single_task_flags = (
        "best_epoch_on_dev", "average_last_epochs", "carried_at_encoder_lr", "fgm_epsilon", "rdrop_alpha",
        "distill_from", "classifier_dropout", "hidden_dropout", "carry_output_layer",
    )  # fmt: skip
    defaults = {f.name: f.default for f in fields(RecipeArguments)}
    given = [option_flag(flag) for flag in single_task_flags if getattr(args, flag) != defaults[flag]]  # a dropout of 0.0 is given too
    if given:
        raise ValueError(f"{', '.join(given)}: for one task's recipe, not the multi-task model")
    if args.evaluate_only:
        model, tokenizer = load_multitask(args.evaluate_only), load_tokenizer(args.evaluate_only)
        for view in model.tasks.values():  # the reading flags given (e.g. --truncate) apply to every head
            view.head = evaluated_head(args, view.head, args.evaluate_only)
    else:
        from ..models_registry import resolve_model_path

        encoder = resolve_model_path(args.encoder)
        heads = {name: head_config(args, RECIPES[name].head, d) for name, d in data.items()}
        model = new_multitask(encoder, heads)
        if args.random_init:  # same architecture, every weight drawn anew: the no-pretraining baseline
            model = type(model)(model.config, heads)
        tokenizer = load_tokenizer(encoder)

    # 4. train all heads together
    if not args.evaluate_only:
        from ..training.multitask import fine_tune_multitask

        train = {name: training_examples(RECIPES[name].head, tokenizer, d) for name, d in data.items()}
        for examples in train.values():
            check_unk_share(examples, tokenizer, args.max_unk_rate)
        fine_tune_multitask(model, tokenizer, train, finetune_config(args))

    # 5. evaluate: each task by its own recipe, on the shared encoder
    records = {}
    for name, d in data.items():
        recipe = importlib.import_module(f"{__package__}.{RECIPES[name].module}")
        metrics, headline = recipe.evaluate(args, d, model.tasks[name], tokenizer)
        records[name] = result_record(replace(args, dataset=tasks[name]), name, d, metrics, headline)

    # 6. save one folder and one metrics.json
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    if not args.evaluate_only and args.save_model:
        save_multitask(model, tokenizer, out / "model")
    record = {
        "task": "multitask",
        "dataset": args.dataset,
        "tasks": records,
        "headline": "mean of the tasks' headline scores",
        "score": sum(r["score"] for r in records.values()) / len(records),
        "arguments": asdict(args),  # the flags of the run, as every single-task metrics.json has them
    }
    (out / "metrics.json").write_text(json.dumps(record, indent=2, ensure_ascii=False, default=str))
    return record
