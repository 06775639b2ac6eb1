"""Held-out evaluation while pretraining (``zhbert pretrain --eval-corpus`` or ``--eval-split``): is the run learning *your* text?

Continued pretraining on a domain corpus is judged first on text of that domain it does not train on, as
run_mlm.py's validation split is. At the start (step 0, the model it continues) and every ``--eval-steps``
(default: at each checkpoint), the model fills blanks in the held-out text, the same blanks every time
(:mod:`zhbert.training.mlm_eval`): 15% of the characters one at a time, and 15% of jieba's words with every
character of a chosen word blanked at once. It reports, per evaluation:

- ``char_accuracy``, ``char_perplexity``: top-1 share and ``exp`` of the mean cross-entropy over character blanks;
- ``word_accuracy``: share of blanked words whose every character is top-1 right;
- for ``--objective electra``, whose encoder fills no blanks (its generator does, above): ``rtd_accuracy`` and
  ``rtd_loss``, the discriminator telling the generator's replacements from the original characters at every
  position of the character-blanked text, replacements drawn from a fixed seed.

Rows go to ``eval_log.jsonl`` in the run's folder and to the Trainer's log history (kept in each checkpoint).
Evaluation draws no random number of the run's own (it runs under ``torch.random.fork_rng``, in eval mode), so a
run with held-out text ends with the same weights as one without, bit for bit.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn
from transformers import TrainerCallback
from transformers.modeling_outputs import MaskedLMOutput

from ..windows import windows
from .mlm_eval import blank_units, evaluate_mlm
from .step_log import latest_per_step

logger = logging.getLogger("zhbert")

__all__ = [
    "HeldOutText",
    "heldout_text",
    "read_heldout",
    "split_documents",
    "spread",
    "heldout_scores",
    "HeldOutEvaluation",
    "EVAL_LOG",
    "EVAL_BATCH",
]

EVAL_LOG = "eval_log.jsonl"
EVAL_BATCH = 32  # windows a forward pass
_SEED = 0  # the blanks and the replacements: the same at every evaluation and in every run on this text


@dataclass(frozen=True)
class HeldOutText:
    texts: list[str]
    words: list[list[str]]  # jieba's words of each text, spelling it exactly
    chars: int
    documents_read: int  # documents the texts came from (the last one perhaps cut)
    cut: bool  # True when the text ran past the character budget and was cut there


def _words(text: str, user_dict: str | None) -> list[str]:
    """jieba's words of ``text``, with any character jieba's spans skip (never seen) as a word of its own."""
    from ..masking.units import word_spans

    words, at = [], 0
    for start, end in word_spans(text, user_dict):
        words.extend(text[at:start])
        words.append(text[start:end])
        at = end
    words.extend(text[at:])
    return words


def heldout_text(texts, max_chars: int, where: str, user_dict: str | None = None) -> HeldOutText:
    """The first ``max_chars`` characters of ``texts`` (an iterable, read only as far as that), a document a text."""
    from ..errors import DataFormatError

    kept, chars, read, cut = [], 0, 0, False
    for text in texts:
        if not text.strip():
            continue
        read += 1
        if chars + len(text) > max_chars:
            text, cut = text[: max_chars - chars], True
        kept.append(text)
        chars += len(text)
        if cut:
            break
    if not kept:
        raise DataFormatError(where, None, "no held-out text in it")
    return HeldOutText(kept, [_words(t, user_dict) for t in kept], chars, read, cut)


def read_heldout(
    paths: list[str], max_chars: int, doc_format: str = "auto", text_key: str = "auto", user_dict: str | None = None
) -> HeldOutText:
    """The first ``max_chars`` characters of the held-out corpus (read as ``--corpus`` is, but no further than
    them), a document a text."""
    from ..data.corpus import iter_corpus
    from .portable_corpus import SUFFIX, is_portable_corpus

    for path in paths:
        if is_portable_corpus(path):
            raise ValueError(f"--eval-corpus {path}: a {SUFFIX} file is already tokenised; give held-out text (.txt, .jsonl, ...)")
    rows = iter_corpus(paths, doc_format=doc_format, text_key=text_key)  # read only as far as the budget
    return heldout_text((row["text"] for row in rows), max_chars, ", ".join(map(str, paths)), user_dict)


def split_documents(n_documents: int, share: float) -> tuple[list[int], list[int]]:
    """``--eval-split``: (training, held-out) document numbers, every ``round(1 / share)``-th document held out
    (the last of each stride), so each source of a corpus read in order gives its share."""
    stride = max(2, round(1 / share))
    held = set(range(stride - 1, n_documents, stride))
    if not held:
        raise ValueError(f"--eval-split {share}: the corpus has {n_documents} documents, fewer than one in {stride}; give --eval-corpus")
    return [i for i in range(n_documents) if i not in held], sorted(held)


def spread(held: list[int]) -> list[int]:
    """The held-out documents in a fixed shuffled order, so a character budget samples every source, not the first."""
    import random

    order = list(held)
    random.Random(0).shuffle(order)
    return order


class _GeneratorView(nn.Module):
    """What fills blanks: the model itself, its MLM head's logits under BertForPreTraining, ELECTRA's generator."""

    def __init__(self, model):
        super().__init__()
        self.inner = model.generator if hasattr(model, "generator") else model
        self.config = self.inner.config

    def forward(self, **inputs):
        out = self.inner(**inputs)
        return out if getattr(out, "logits", None) is not None else MaskedLMOutput(logits=out.prediction_logits)

    def blank_logits(self, input_ids, attention_mask, picked):
        """The vocabulary projection at the blanks alone (mlm_eval), for the masked LMs zhbert pretrains."""
        inner = self.inner
        if hasattr(inner, "generator_lm_head"):  # ELECTRA's generator (ElectraForMaskedLM)
            hidden = inner.electra(input_ids=input_ids, attention_mask=attention_mask)[0]
            return inner.generator_lm_head(inner.generator_predictions(hidden[picked]))
        bert, head = getattr(self.inner, "bert", None), getattr(getattr(self.inner, "cls", None), "predictions", None)
        if bert is None or head is None:  # another encoder's masked LM (ERNIE, ALBERT, ...): its full output
            return self(input_ids=input_ids, attention_mask=attention_mask).logits[picked]
        return head(bert(input_ids=input_ids, attention_mask=attention_mask)[0][picked])


@torch.no_grad()
def _replaced_token_detection(model, tokenizer, heldout: HeldOutText, max_length: int, batch_size: int) -> dict:
    """ELECTRA's discriminator on the character-blanked held-out text: accuracy and BCE over every real token."""
    body = max_length - 2
    rows = []
    for ids, units in blank_units(tokenizer, heldout.texts, seed=_SEED):
        blanks = {k for unit in units for k in unit}
        for a, b in windows(len(ids), body, stride=body):
            window = [tokenizer.cls_token_id] + ids[a:b] + [tokenizer.sep_token_id]
            labels = [-100] + [ids[k] if k in blanks else -100 for k in range(a, b)] + [-100]
            if any(label != -100 for label in labels):
                rows.append(([tokenizer.mask_token_id if y != -100 else t for t, y in zip(window, labels)], labels))
    right = loss = tokens = 0.0
    generator = torch.Generator().manual_seed(_SEED)
    for start in range(0, len(rows), batch_size):
        chunk = rows[start : start + batch_size]
        n = max(len(r[0]) for r in chunk)
        input_ids = torch.tensor([r[0] + [tokenizer.pad_token_id] * (n - len(r[0])) for r in chunk])
        labels = torch.tensor([r[1] + [-100] * (n - len(r[1])) for r in chunk])
        attention = (torch.arange(n)[None, :] < torch.tensor([len(r[0]) for r in chunk])[:, None]).long()
        torch.manual_seed(int(torch.randint(2**31 - 1, (1,), generator=generator)))  # the replacements, the same every time
        out = model(input_ids=input_ids, attention_mask=attention, labels=labels)
        real = int(attention.sum())
        right += float(out.rtd_accuracy) * real
        loss += float(out.rtd_loss) * real
        tokens += real
    return {"rtd_accuracy": right / max(tokens, 1), "rtd_loss": loss / max(tokens, 1)}


def heldout_scores(model, tokenizer, heldout: HeldOutText, max_length: int = 128, batch_size: int = EVAL_BATCH) -> dict:
    """One evaluation (module docstring). The run's random state and the model's train/eval mode are restored."""
    was_training = model.training
    try:
        with torch.random.fork_rng(devices=[]):
            view = _GeneratorView(model)
            common = dict(seed=_SEED, batch_size=batch_size, max_length=max_length, overlap=False)
            chars = evaluate_mlm(view, tokenizer, heldout.texts, **common)
            words = evaluate_mlm(view, tokenizer, heldout.texts, words=heldout.words, **common)
            scores = {
                "char_accuracy": round(chars.accuracy, 5),
                "char_perplexity": round(chars.perplexity, 4),
                "word_accuracy": round(words.unit_accuracy, 5),
                "char_blanks": chars.blanks,
            }
            if hasattr(model, "discriminator"):
                model.eval()
                scores.update(
                    {k: round(v, 5) for k, v in _replaced_token_detection(model, tokenizer, heldout, max_length, batch_size).items()}
                )
    finally:
        model.train(was_training)
    return scores


class HeldOutEvaluation(TrainerCallback):
    """Evaluates at the run's start (step 0) and every ``every`` steps and at the last; writes ``eval_log.jsonl``."""

    def __init__(self, heldout: HeldOutText, tokenizer, log_path: Path, every: int, max_length: int):
        self.heldout, self.tokenizer, self.log_path = heldout, tokenizer, Path(log_path)
        self.every, self.max_length = every, max_length

    def _evaluate(self, args, state, model) -> None:
        started = time.perf_counter()
        scores = heldout_scores(model, self.tokenizer, self.heldout, self.max_length)
        row = {
            "step": state.global_step,
            **{f"eval_{k}": v for k, v in scores.items()},
            "eval_seconds": round(time.perf_counter() - started, 2),
        }
        state.log_history.append(dict(row))
        self._keep_if_best(args, state, scores)
        if state.is_world_process_zero:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(row) + "\n")
            rtd = f", replaced-token detection {100 * scores['rtd_accuracy']:.2f}%" if "rtd_accuracy" in scores else ""
            logger.warning(
                "held-out at step %d: fill-mask %.2f%% of characters, %.2f%% of words, perplexity %.2f%s",
                state.global_step,
                100 * scores["char_accuracy"],
                100 * scores["word_accuracy"],
                scores["char_perplexity"],
                rtd,
            )

    @staticmethod
    def _keep_if_best(args, state, scores) -> None:
        # A checkpoint is saved at this step (every save_steps, and the last): the Trainer's rotation never
        # deletes state.best_model_checkpoint, so the masked LM with the lowest held-out perplexity survives,
        # as run_mlm.py's best model does. It is recorded before the save, so the checkpoint's own state names
        # it and a resumed run keeps it. Not for ELECTRA: its generator's perplexity says little of the encoder.
        step = state.global_step
        if "rtd_loss" in scores or step == 0 or not (step % args.save_steps == 0 or step == state.max_steps):
            return
        if state.best_metric is None or scores["char_perplexity"] < state.best_metric:
            state.best_metric = scores["char_perplexity"]
            state.best_model_checkpoint = str(Path(args.output_dir) / f"checkpoint-{step}")

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        if state.global_step == 0:
            self._evaluate(args, state, model)

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if state.global_step % self.every == 0 or state.global_step == state.max_steps:
            self._evaluate(args, state, model)

    def on_train_end(self, args, state, control, **kwargs):
        # the whole run's rows, a resumed run's earlier ones too: whether the run beat the model it continued
        if not state.is_world_process_zero or not self.log_path.is_file():
            return
        rows = [json.loads(line) for line in self.log_path.read_text(encoding="utf-8").splitlines() if line.strip()]
        if len({row["step"] for row in rows}) >= 2:
            kept = state.best_model_checkpoint if state.best_model_checkpoint and Path(state.best_model_checkpoint).is_dir() else None
            logger.warning(held_out_summary(rows, kept))


def held_out_summary(rows: list[dict], kept: str | None = None) -> str:
    """One line on an ``eval_log.jsonl``: its first and last scores, the step of the lowest perplexity, and
    ``kept``, the checkpoint of the lowest perplexity among those saved."""
    rows = latest_per_step(rows)  # a resumed run scores the steps since its checkpoint again
    first, last = rows[0], rows[-1]
    best = min(rows, key=lambda row: row["eval_char_perplexity"])
    line = (
        f"held-out, step {first['step']} -> {last['step']}: fill-mask {100 * first['eval_char_accuracy']:.2f}% -> "
        f"{100 * last['eval_char_accuracy']:.2f}% of characters, {100 * first['eval_word_accuracy']:.2f}% -> "
        f"{100 * last['eval_word_accuracy']:.2f}% of words, perplexity {first['eval_char_perplexity']:.2f} -> "
        f"{last['eval_char_perplexity']:.2f} (lowest at step {best['step']})"
    )
    if best is first and first["step"] == 0:
        line += "; no later step reached the perplexity of the model it continued"
    if kept:
        line += f"; the checkpoint of the lowest is kept: {kept}"
    return line
