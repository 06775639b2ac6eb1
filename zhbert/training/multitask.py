"""Train one shared encoder with several heads together (HF ``Trainer``).

Every batch holds examples of one task, collated by that head's own
:class:`~zhbert.heads.TaskCollator`; the batches of all tasks are interleaved at random,
so each task gets steps in proportion to its training examples (cut a large task with
the recipes' ``--max-train-samples`` to even them out). The encoder learns at the
learning rate, every head at the head rate, as in single-task fine-tuning.
"""

from __future__ import annotations

import random

import torch
from transformers import Trainer

from ..heads import TaskCollator, window_size
from ..heads.multitask import ZhBertMultiTask
from .finetune import FinetuneConfig, _param_groups, training_arguments

__all__ = ["fine_tune_multitask", "task_batches"]


def task_batches(train: dict[str, list[dict]], batch_size: int, seed: int) -> list[dict]:
    """``{"task", "examples"}`` batches: each task's examples shuffled and cut into batches,
    then all batches shuffled together."""
    rng = random.Random(seed)
    batches = []
    for name, examples in train.items():
        order = list(range(len(examples)))
        rng.shuffle(order)
        batches += [{"task": name, "examples": [examples[i] for i in order[k : k + batch_size]]} for k in range(0, len(order), batch_size)]
    rng.shuffle(batches)
    return batches


class _BatchCollator:
    """The Trainer hands over one pre-built batch at a time: collate it with its task's collator."""

    def __init__(self, tokenizer, model: ZhBertMultiTask):
        self.collators = {
            name: TaskCollator(tokenizer, view.head, window_size(view.head, model.config)) for name, view in model.tasks.items()
        }

    def __call__(self, items: list[dict]) -> dict:
        (item,) = items
        return {**self.collators[item["task"]](item["examples"]), "task": item["task"]}


def fine_tune_multitask(model: ZhBertMultiTask, tokenizer, train: dict[str, list[dict]], cfg: FinetuneConfig) -> Trainer:
    empty = [name for name, examples in train.items() if not examples]
    if empty or not train:
        raise ValueError(f"no training examples for {', '.join(empty) or 'any task'}")
    unknown = set(train) - set(model.tasks)
    if unknown:
        raise ValueError(f"no head for {', '.join(sorted(unknown))}; the model's heads: {', '.join(model.tasks)}")
    model.accepts_loss_kwargs = False  # each head averages its own loss
    batches = task_batches(train, cfg.batch_size, cfg.seed)
    optimizer = torch.optim.AdamW(_param_groups(model, cfg, frozen=False), weight_decay=cfg.weight_decay)
    trainer = Trainer(
        model=model,
        args=training_arguments(cfg, batch_size=1, by_length=False),  # one item = one task's whole batch
        train_dataset=batches,
        data_collator=_BatchCollator(tokenizer, model),
        optimizers=(optimizer, None),
    )
    trainer.train()
    model.eval()
    return trainer
