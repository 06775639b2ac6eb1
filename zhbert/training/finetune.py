"""Fine-tune (or train the head of a frozen encoder) on HF ``Trainer``.

Examples are dicts of token ids and labels (see ``zhbert.heads.inputs``); the
same :class:`~zhbert.heads.TaskCollator` windows them in training and in
prediction. Evaluation is left to the recipes, which decode through
``zhbert.heads.predict_*`` (windows, CRF, offsets) rather than raw logits.
"""

from __future__ import annotations

import contextlib
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from datasets import Dataset
from transformers import Trainer, TrainerCallback, TrainingArguments

from ..encoders import encoder_depth
from ..heads import TaskCollator, ZhBertForTask, window_size
from ..model_soup import mean_state_dict
from .checkpoints import CompleteCheckpointCallback, FaultInjection, storage_errors, train_or_restore
from .distillation import DistillationTrainer
from .finetune_resume import EpochStateInCheckpoints, SaveAtEpochEnd, examples_digest, finished_at, resume_checkpoint
from .sampling import FineTuneTrainer
from .stop_signals import interrupted, terminate_as_interrupt

__all__ = ["FinetuneConfig", "KeepBestEpoch", "AverageLastEpochs", "fine_tune", "perturbed_embeddings", "rdrop_loss"]

logger = logging.getLogger("zhbert")


@dataclass
class FinetuneConfig:
    output: str = "runs/finetune"  # checkpoints (the recipe saves the final model itself)
    epochs: float = 3.0
    max_steps: int = -1  # overrides epochs when > 0
    batch_size: int = 32
    learning_rate: float | None = None  # default 5e-5 fine-tuning, 1e-3 frozen (head only)
    head_learning_rate: float | None = None  # head (and fusion/CRF) parameters; default = learning_rate x 20 when fine-tuning
    carried_at_encoder_lr: bool = False  # head layers carried from a task folder (model.carried_head_parameters) at learning_rate
    layer_lr_decay: float = 1.0  # below 1: encoder layer i of L at learning_rate x decay^(L - i), embeddings x decay^L
    weight_decay: float = 0.01
    warmup: float = 0.1  # fraction of steps
    seed: int = 42
    group_by_length: bool = True  # batch examples of similar length together
    fgm_epsilon: float = 0.0  # > 0: adversarial training (FGM), a second pass on word embeddings moved this far
    rdrop_alpha: float = 0.0  # > 0: R-Drop, two passes per batch and this weight on their symmetric KL (token heads)
    distill_alpha: float = 0.0  # > 0: examples carry teacher_logits; this weight on the soft-target KL (distillation.py)
    distill_temperature: float = 1.0  # softens both tag distributions in that KL
    logging_steps: int = 50
    save_steps: int = 0  # > 0: checkpoint every N steps and at epoch ends; a rerun resumes (finetune_resume.py); 0: none


def _param_groups(model, cfg: FinetuneConfig, frozen: bool) -> list[dict]:
    """The encoder (``bert.``) at the learning rate, every head parameter at the head rate (head layers
    carried over from a task folder at the learning rate, with ``carried_at_encoder_lr``).

    With ``layer_lr_decay`` D below 1 the encoder's layer i of L (from 1) learns at the rate times
    D^(L - i), its embeddings at D^L: the lower layers, which hold what pretraining learnt
    (ELECTRA, Clark et al. 2020; ULMFiT's discriminative rates), move least."""
    for name, value in (("learning_rate", cfg.learning_rate), ("head_learning_rate", cfg.head_learning_rate)):
        if value is not None and value <= 0:
            raise ValueError(f"{name} must be above 0, got {value}")
    if cfg.warmup < 0 or cfg.weight_decay < 0:
        raise ValueError(f"warmup and weight_decay must be 0 or more, got {cfg.warmup} and {cfg.weight_decay}")
    lr = cfg.learning_rate or (1e-3 if frozen else 5e-5)
    head_lr = cfg.head_learning_rate or (lr if frozen else lr * 20)
    if not 0.0 < cfg.layer_lr_decay <= 1.0:
        raise ValueError(f"layer_lr_decay must be above 0 and at most 1 (1: off), got {cfg.layer_lr_decay}")
    if cfg.layer_lr_decay != 1.0 and frozen:
        raise ValueError("layer_lr_decay sets the encoder layers' learning rates: a frozen encoder learns nothing (--mode finetune)")
    carried = set(getattr(model, "carried_head_parameters", ())) if cfg.carried_at_encoder_lr else set()
    layers = model.config.num_hidden_layers
    prefix = model.base_model_prefix + "."
    by_rate: dict[float, list] = {}
    for n, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if n in carried:
            rate = lr
        elif n.startswith(prefix):
            rate = lr * cfg.layer_lr_decay ** (layers - encoder_depth(n, model.base_model_prefix, layers))
        else:
            rate = head_lr
        by_rate.setdefault(rate, []).append(p)
    return [{"params": params, "lr": rate} for rate, params in sorted(by_rate.items())]


def training_arguments(cfg: FinetuneConfig, batch_size: int, by_length: bool) -> TrainingArguments:
    return TrainingArguments(
        output_dir=cfg.output,
        num_train_epochs=cfg.epochs,
        max_steps=cfg.max_steps,
        per_device_train_batch_size=batch_size,
        learning_rate=cfg.learning_rate or 5e-5,
        weight_decay=cfg.weight_decay,
        warmup_steps=cfg.warmup,
        lr_scheduler_type="linear",
        logging_steps=cfg.logging_steps,
        save_strategy="steps" if cfg.save_steps else "no",
        save_steps=cfg.save_steps or 500,
        save_total_limit=2,  # the previous complete checkpoint survives while the next is written
        seed=cfg.seed,
        data_seed=cfg.seed,
        report_to=[],
        # the bar stays on: its default follows transformers' log level, which the CLI quiets
        disable_tqdm=False,
        remove_unused_columns=False,
        label_names=["labels"],
        use_cpu=not torch.cuda.is_available(),
        # batches of similar length: far less padding on mixed-length data (People's Daily lines run
        # from 5 to 500+ characters), with the usual megabatch randomness of the sampler
        train_sampling_strategy="group_by_length" if by_length else "random",
        length_column_name="length",
    )


class KeepBestEpoch(TrainerCallback):
    """Score after every epoch and keep a copy of the best weights (HF's ``load_best_model_at_end``,
    but scored by the recipe's own decoding: windows, CRF, spans, seqeval or SIGHAN scoring, which
    ``Trainer.evaluate`` on raw logits cannot do). The copy lives in memory: a small model's
    weights, once, not a checkpoint per epoch on disk."""

    def __init__(self, model: ZhBertForTask, score: Callable[[], float]):
        self.model, self.score = model, score
        self.scores: list[float] = []
        self.best_state: dict[str, torch.Tensor] | None = None

    @property
    def best_epoch(self) -> int:
        """1-based; 0 before any epoch ended."""
        return max(range(len(self.scores)), key=self.scores.__getitem__) + 1 if self.scores else 0

    def on_epoch_end(self, args, state, control, **kwargs):
        self.model.eval()
        with torch.no_grad():
            value = float(self.score())
        self.model.train()
        if not self.scores or value > max(self.scores):  # ties keep the earlier epoch
            self.best_state = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        self.scores.append(value)
        logger.info("epoch %d: dev score %.4f (best so far: epoch %d)", len(self.scores), value, self.best_epoch)

    def finish(self) -> None:
        """Put the best epoch's weights back."""
        if self.best_state is not None:
            self.model.load_state_dict(self.best_state)

    def tensors(self) -> tuple[dict[str, torch.Tensor], dict]:
        """What a checkpoint keeps of this callback (``finetune_resume.EpochStateInCheckpoints``)."""
        return dict(self.best_state or {}), {"scores": self.scores}

    def load_tensors(self, tensors: dict[str, torch.Tensor], meta: dict) -> None:
        self.scores = [float(v) for v in meta["scores"]]
        self.best_state = tensors or None


class AverageLastEpochs(TrainerCallback):
    """End on the mean of the weights at the ends of the last ``k`` epochs (checkpoint averaging,
    as in Vaswani et al. 2017 and SWA): late epochs swing by tenths of a point on a small dev
    split, and their mean sits between the swings. Holds ``k`` copies of the weights in memory."""

    def __init__(self, model: ZhBertForTask, k: int):
        if k < 2:
            raise ValueError(f"averaging needs at least 2 epochs, got {k}")
        self.model, self.k = model, k
        self.states: deque[dict[str, torch.Tensor]] = deque(maxlen=k)
        self.epochs = 0

    def on_epoch_end(self, args, state, control, **kwargs):
        self.states.append({k: v.detach().clone() for k, v in self.model.state_dict().items()})
        self.epochs += 1

    def finish(self) -> None:
        """Load the mean of the kept epochs (integer buffers, such as position ids, from the first: they do not change)."""
        if not self.states:
            return
        self.model.load_state_dict(mean_state_dict(self.states))

    def tensors(self) -> tuple[dict[str, torch.Tensor], dict]:
        """What a checkpoint keeps of this callback (``finetune_resume.EpochStateInCheckpoints``)."""
        flat = {f"{i}/{name}": value for i, state in enumerate(self.states) for name, value in state.items()}
        return flat, {"epochs": self.epochs, "kept": len(self.states)}

    def load_tensors(self, tensors: dict[str, torch.Tensor], meta: dict) -> None:
        states: list[dict[str, torch.Tensor]] = [{} for _ in range(int(meta["kept"]))]
        for key, value in tensors.items():
            i, name = key.split("/", 1)
            states[int(i)][name] = value
        self.states = deque(states, maxlen=self.k)
        self.epochs = int(meta["epochs"])


@contextlib.contextmanager
def perturbed_embeddings(model: ZhBertForTask, epsilon: float):
    """The encoder's word embeddings moved by ``epsilon`` (L2 norm over the whole table) along the
    gradient the last backward pass left on them, and put back on exit: FGM (Miyato, Dai & Goodfellow,
    ICLR 2017), a second forward/backward on the worst nearby input. Yields whether they moved (not
    without a finite, non-zero gradient, e.g. a frozen encoder)."""
    table = model.base_model.get_input_embeddings().weight
    grad = table.grad
    norm = grad.norm() if grad is not None else None
    if norm is None or not torch.isfinite(norm) or norm == 0:
        yield False
        return
    rows = grad.abs().sum(1).nonzero().squeeze(1)  # the tokens of the batch: only their rows move
    kept = table.detach()[rows].clone()  # put back exactly (x + s - s is not always x in floating point)
    with torch.no_grad():
        table[rows] += epsilon * grad[rows] / norm
    try:
        yield True
    finally:
        with torch.no_grad():
            table[rows] = kept


class _AdversarialTrainer(FineTuneTrainer):
    """``Trainer`` whose every step adds FGM's adversarial pass to the clean one (gradients summed)."""

    def __init__(self, *args, fgm_epsilon: float, **kwargs):
        super().__init__(*args, **kwargs)
        self.fgm_epsilon = fgm_epsilon

    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        with perturbed_embeddings(model, self.fgm_epsilon) as moved:
            if moved:
                super().training_step(model, inputs, num_items_in_batch)
        return loss  # the clean loss is what the logs report


def rdrop_loss(model: ZhBertForTask, inputs: dict, alpha: float) -> torch.Tensor:
    """R-Drop (Liang et al., NeurIPS 2021) for a token head: the batch passes twice, under two dropout
    draws; the loss is the two losses' mean plus ``alpha`` times the symmetric KL divergence between the
    two passes' tag distributions at every labelled token. The KL term is scaled as the head's own loss
    is: summed over a sentence and averaged over sentences under a CRF (a sequence's NLL), averaged over
    tokens under softmax."""
    first, second = model(**inputs), model(**inputs)
    labelled = inputs["labels"] != -100
    p, q = (torch.log_softmax(out.logits[labelled].float(), dim=-1) for out in (first, second))
    kl = 0.5 * (p.exp() * (p - q) + q.exp() * (q - p)).sum(-1)  # per labelled token
    if model.crf is not None:
        kl_term = kl.sum() / labelled.any(1).sum().clamp(min=1)
    else:
        kl_term = kl.mean() if kl.numel() else kl.sum()
    return (first.loss + second.loss) / 2 + alpha * kl_term


class _RDropTrainer(FineTuneTrainer):
    """``Trainer`` whose loss is R-Drop's (:func:`rdrop_loss`)."""

    def __init__(self, *args, rdrop_alpha: float, **kwargs):
        super().__init__(*args, **kwargs)
        self.rdrop_alpha = rdrop_alpha

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss = rdrop_loss(model, inputs, self.rdrop_alpha)
        return (loss, None) if return_outputs else loss


def fine_tune(
    model: ZhBertForTask,
    tokenizer,
    train: list[dict],
    cfg: FinetuneConfig,
    at_epoch_end: KeepBestEpoch | AverageLastEpochs | None = None,
    run_key: dict | None = None,
) -> Trainer:
    """Train ``model`` in place; ``at_epoch_end`` then chooses the weights it ends on (the best
    epoch's, or the mean of the last epochs'). With ``cfg.save_steps`` a rerun resumes from the
    last complete checkpoint in ``cfg.output`` when its run record matches: the schedule, the
    training examples and ``run_key`` (what else defines the run: the head, the encoder)."""
    if not train:
        raise ValueError("no training examples")
    if cfg.fgm_epsilon < 0:
        raise ValueError(f"fgm_epsilon must be 0 (off) or more, got {cfg.fgm_epsilon}")
    adversarial = {"fgm_epsilon": cfg.fgm_epsilon} if cfg.fgm_epsilon > 0 else {}
    if adversarial and model.head.mode == "frozen":
        raise ValueError("FGM moves the encoder's word embeddings along their gradient: a frozen encoder has none (--mode finetune)")
    if cfg.rdrop_alpha < 0:
        raise ValueError(f"rdrop_alpha must be 0 (off) or more, got {cfg.rdrop_alpha}")
    rdrop = {"rdrop_alpha": cfg.rdrop_alpha} if cfg.rdrop_alpha > 0 else {}
    if rdrop and model.head.kind != "token":
        raise ValueError(f"R-Drop compares two passes' tag distributions token by token: token heads only, not a {model.head.kind} head")
    if rdrop and adversarial:
        raise ValueError("R-Drop and FGM each replace the training step: give one")
    distill = {}
    if cfg.distill_alpha:
        if not 0 < cfg.distill_alpha <= 1 or cfg.distill_temperature <= 0:
            got = f"{cfg.distill_alpha} and {cfg.distill_temperature}"
            raise ValueError(f"distillation needs 0 < alpha <= 1 and a temperature above 0, got {got}")
        if "teacher_logits" not in train[0]:
            raise ValueError("distill_alpha > 0: the examples carry no teacher_logits (zhbert.training.distillation.with_teacher_logits)")
        if rdrop or adversarial:
            raise ValueError("distillation and R-Drop or FGM each replace the training step: give one")
        distill = {"distill_alpha": cfg.distill_alpha, "distill_temperature": cfg.distill_temperature}
    args = training_arguments(cfg, cfg.batch_size, cfg.group_by_length)
    optimizer = torch.optim.AdamW(_param_groups(model, cfg, frozen=model.head.mode == "frozen"), weight_decay=cfg.weight_decay)
    trainer_class = _AdversarialTrainer if adversarial else _RDropTrainer if rdrop else DistillationTrainer if distill else FineTuneTrainer
    callbacks = [at_epoch_end] if at_epoch_end else []
    resume = epoch_state = None
    if cfg.save_steps:
        epoch_state = EpochStateInCheckpoints(at_epoch_end) if at_epoch_end else None
        callbacks += [SaveAtEpochEnd(), *([epoch_state] if epoch_state else []), CompleteCheckpointCallback()]
        record = {"run": run_key or {}, "config": _schedule(cfg), "examples": len(train), "examples_sha256": examples_digest(train)}
        resume = resume_checkpoint(cfg.output, record)
    trainer = trainer_class(
        model=model,
        args=args,
        train_dataset=Dataset.from_list([{**e, "length": len(e["input_ids"]) + len(e.get("input_ids_b", ()))} for e in train]),
        data_collator=TaskCollator(tokenizer, model.head, window_size(model.head, model.config)),
        optimizers=(optimizer, None),
        callbacks=callbacks or None,
        **adversarial,
        **rdrop,
        **distill,
    )
    fault = FaultInjection()
    if fault.active:  # tests: killed at a step, or during a save before its completion marker
        trainer.callback_handler.callbacks.insert(0, fault)
    if resume and epoch_state:
        epoch_state.restore(resume)
    with storage_errors(Path(cfg.output), resume):
        try:
            with terminate_as_interrupt():
                train_or_restore(trainer, resume, finished_at(resume) if resume else 0)
        except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM (kill, a scheduler's limit, a shutdown)
            raise interrupted(Path(cfg.output), trainer, stop, checkpoints=bool(cfg.save_steps)) from None
    if at_epoch_end:
        at_epoch_end.finish()
    model.eval()
    return trainer


def _schedule(cfg: FinetuneConfig) -> dict:
    """The settings that define a run's steps (not where it saves or how often it logs or checkpoints)."""
    return {k: v for k, v in asdict(cfg).items() if k not in ("output", "save_steps", "logging_steps")}
