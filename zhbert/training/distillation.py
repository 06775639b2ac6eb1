"""Soft-target distillation for token heads (Hinton, Vinyals & Dean 2015).

A student learns from a teacher's silver *tags* when ``--extra-train`` holds text the teacher segmented;
this module adds the teacher's tag *distributions*: how sure it is at every character, and which tag
came second. The teacher runs once over the training examples before training
(:func:`with_teacher_logits`), in the windows the student will see them in, and each example carries its
teacher's logits (``teacher_logits``, flattened, float16); the collator slices them per window like the
tags. The loss (:func:`distillation_loss`) is ``(1 - alpha)`` times the head's own loss on the tags plus
``alpha`` times ``T^2`` times the KL divergence from the teacher's tag distribution to the student's,
both softened by the temperature ``T``, at every labelled token.

A CRF on either side takes part through its per-position *marginals* ``p(y_t | x)`` (forward-backward,
:meth:`zhbert.crf.CRF.log_marginals`), not its emissions, which are no distribution: posterior
distillation (Wang et al., ACL 2020, "Structure-Level Knowledge Distillation For Multilingual Sequence
Labeling"). Under a CRF student the KL is summed over a sentence and averaged over sentences, as the
CRF's own loss (a sentence's negative log-likelihood) is, so ``alpha`` weighs like against like.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from ..heads import TaskCollator, ZhBertForTask, window_size
from ..heads.criteria import segment_ids
from ..heads.inputs import window_batch
from .sampling import FineTuneTrainer

__all__ = ["check_teacher", "with_teacher_logits", "distillation_loss", "DistillationTrainer"]


def check_teacher(teacher: ZhBertForTask, teacher_tokenizer, student: ZhBertForTask, tokenizer, where: str | Path) -> None:
    """Refuse a teacher whose tag distributions do not line up with the student's: another tag set,
    another vocabulary (the teacher reads the student's token ids), a head that tags nothing."""
    if student.head.kind != "token":
        raise ValueError(f"{where}: distillation teaches tags: token heads only, not a {student.head.kind} head")
    if teacher.head.kind != "token":
        raise ValueError(f"{where}: a {teacher.head.kind} head cannot teach tags: distillation needs a token head")
    if list(teacher.head.labels) != list(student.head.labels):
        raise ValueError(f"{where}: the teacher's tags {list(teacher.head.labels)} are not the student's {list(student.head.labels)}")
    if teacher.head.criteria and list(teacher.head.criteria) != list(student.head.criteria):
        raise ValueError(
            f"{where}: the teacher tags by the criteria {', '.join(teacher.head.criteria)}; the student must be trained "
            "with the same --criteria, so each sentence is taught under its own standard"
        )
    if teacher_tokenizer.get_vocab() != tokenizer.get_vocab():
        raise ValueError(f"{where}: the teacher's vocabulary differs from the student's encoder's (it must read the same token ids)")


@torch.no_grad()
def with_teacher_logits(
    teacher: ZhBertForTask, student: ZhBertForTask, tokenizer, examples: list[dict], batch_size: int = 64, temperature: float = 1.0
) -> list[dict]:
    """``examples`` with each one's ``teacher_logits``: the teacher's tag logits at its tokens, read in the
    windows the student's collator cuts (a token in two overlapping windows keeps the later one's).
    A CRF teacher's are ``T`` times its log-marginals at the temperature ``T``: the loss's softening
    (a log-softmax of logits / ``T``) then gives back exactly the CRF's own distribution at ``T``."""
    collator = TaskCollator(tokenizer, student.head, window_size(student.head, student.config))
    reach = window_size(teacher.head, teacher.config)
    if reach < collator.max_length:
        raise ValueError(f"the teacher reads at most {reach} tokens, the student's windows hold {collator.max_length}")
    rows = [(k, a, b) for k, e in enumerate(examples) for a, b in collator.spans(len(e["input_ids"]))]
    rows.sort(key=lambda r: r[2] - r[1])  # similar lengths together: little padding
    n_labels = len(student.head.labels)
    logits = [np.zeros((len(e["input_ids"]), n_labels), dtype=np.float16) for e in examples]
    teacher.eval()
    for start in tqdm(range(0, len(rows), batch_size), desc="teacher", unit="batch", mininterval=30):
        chunk = rows[start : start + batch_size]
        batch = window_batch([examples[k]["input_ids"][a:b] for k, a, b in chunk], collator.cls, collator.sep, collator.pad)
        if teacher.head.criteria:  # each sentence under its own standard (check_teacher: the student's criteria)
            batch["token_type_ids"] = segment_ids([examples[k].get("criterion", 0) for k, _, _ in chunk], batch["input_ids"])
        out = teacher(**{name: t.to(teacher.device) for name, t in batch.items()}).logits.float()
        if teacher.crf is not None:
            mask = torch.arange(out.size(1) - 1)[None, :] < torch.tensor([b - a for _, a, b in chunk])[:, None]
            out[:, 1:] = teacher.crf.log_marginals(out[:, 1:], mask.to(out.device), temperature) * temperature
        out = out.cpu().numpy()
        for (k, a, b), row in zip(chunk, out):
            logits[k][a:b] = row[1 : 1 + b - a]
    return [{**e, "teacher_logits": t.reshape(-1)} for e, t in zip(examples, logits)]


def distillation_loss(model: ZhBertForTask, inputs: dict, alpha: float, temperature: float) -> torch.Tensor:
    """``(1 - alpha)`` x the head's loss + ``alpha`` x ``T^2`` x KL(teacher || student) over the softened
    tag distributions (a CRF student's: its marginals), scaled as the head's own loss is: averaged over
    the labelled tokens under softmax, summed over a sentence and averaged over sentences under a CRF
    (each row scaled by its ``example_weights``, when given). ``T^2`` keeps the soft term's gradients on
    the hard one's scale whatever the temperature."""
    inputs = dict(inputs)
    teacher = inputs.pop("teacher_logits")
    out = model(**inputs)
    labelled = inputs["labels"] != -100
    if model.crf is None:
        s = torch.log_softmax(out.logits.float() / temperature, dim=-1)
    else:  # the CRF reads the rows after [CLS], whose labelled tokens come first (as its own loss does)
        s = torch.zeros_like(out.logits, dtype=torch.float)
        s[:, 1:] = model.crf.log_marginals(out.logits[:, 1:].float(), labelled[:, 1:], temperature)
    t = torch.log_softmax(teacher.float() / temperature, dim=-1)
    kl = ((t.exp() * (t - s)).sum(-1) * temperature**2).masked_fill(~labelled, 0.0)  # (B, L)
    weights = inputs.get("example_weights")
    if weights is not None:
        kl = kl * weights.to(kl.dtype)[:, None]
    per = labelled.any(1).sum() if model.crf is not None else labelled.sum()
    soft = kl.sum() / per.clamp(min=1)
    return (1 - alpha) * out.loss + alpha * soft


class DistillationTrainer(FineTuneTrainer):
    """``Trainer`` whose loss is :func:`distillation_loss`."""

    def __init__(self, *args, distill_alpha: float, distill_temperature: float, **kwargs):
        super().__init__(*args, **kwargs)
        self.distill_alpha, self.distill_temperature = distill_alpha, distill_temperature

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss = distillation_loss(model, inputs, self.distill_alpha, self.distill_temperature)
        return (loss, None) if return_outputs else loss
