"""Several task heads on one shared encoder, trained together and saved as one folder.

``ZhBertMultiTask`` holds one encoder (``BertModel``, or any type ``zhbert.encoders`` reads) and a
task model per task whose encoder is that shared one (registered and saved once, under the encoder's
prefix, ``bert.`` for BERT); each head keeps its own fusion, classifier and CRF under
``tasks.<name>.``. ``config.json`` is the encoder's config with ``zhbert_heads`` ({name: head
settings}), so plain transformers' ``AutoModel`` still opens the encoder. ``model.tasks[name]`` is
an ordinary head for every function that takes one (``predict_tags``, ``predict_scores``, the
recipes' scoring); :func:`predict_all` runs the encoder once per batch of windows and every head on
its output (token and sequence heads over the same texts; pair heads read pairs, so they run on
their own).
"""

from __future__ import annotations

import copy
from pathlib import Path

import torch
from torch import nn
from transformers import BertConfig, BertPreTrainedModel

from ..encoders import build_encoder, on_encoder, read_encoder_config
from ..fusion import sequence_vector
from ..tokenizer import encode
from .config import HeadConfig
from .inference import activate, assemble_tags, batch_token_budget, decode_rows, row_batches, window_rows
from .inputs import TaskCollator, window_batch, window_size
from .model import TaskOutput, _scatter_pool, init_head_parameters, task_model_class

__all__ = ["ZhBertMultiTask", "new_multitask", "save_multitask", "load_multitask", "predict_all"]


class MultiTaskModel:
    """Several heads on one encoder; a ``PreTrainedModel`` once joined to an encoder's base class
    (``ZhBertMultiTask`` on BERT, ``on_encoder(ZhBertMultiTask, model_type)`` on any)."""

    def __init__(self, config, heads: dict[str, HeadConfig] | None = None):
        super().__init__(config)
        heads = heads or {name: HeadConfig.from_dict(h) for name, h in config.zhbert_heads.items()}
        if not heads:
            raise ValueError("a multi-task model needs at least one head")
        if any(h.mode == "frozen" for h in heads.values()):
            raise ValueError("a multi-task model fine-tunes its shared encoder: every head needs mode='finetune'")
        if any(h.word_features for h in heads.values()):
            # the shared pass (predict_all) reads encoder states only: a head's lexicon or bigrams would be skipped
            raise ValueError("word features (lexicon, bigram_dim) are for single-task heads; a multi-task model cannot hold them yet")
        config.zhbert_heads = {name: h.to_dict() for name, h in heads.items()}
        setattr(self, self.base_model_prefix, build_encoder(config))
        task_class = task_model_class(config.model_type)
        tasks = {}
        for name, head in heads.items():
            task_config = copy.deepcopy(config)
            del task_config.zhbert_heads
            tasks[name] = task_class(task_config, head, shared_encoder=self.base_model)
        self.tasks = nn.ModuleDict(tasks)
        self.post_init()

    def _init_weights(self, module):
        super()._init_weights(module)
        init_head_parameters(module)  # the heads' own parameters start as in a single-task model

    def forward(self, task: str, **batch) -> TaskOutput:
        """One task's batch through the shared encoder and that task's head."""
        if task not in self.tasks:
            raise ValueError(f"unknown task {task!r}; this model's heads: {', '.join(self.tasks)}")
        return self.tasks[task](**batch)


class ZhBertMultiTask(MultiTaskModel, BertPreTrainedModel):
    config_class = BertConfig


def new_multitask(encoder: str | Path, heads: dict[str, HeadConfig]) -> ZhBertMultiTask:
    """Fresh heads on a pretrained encoder folder (its weights become the shared encoder)."""
    from .io import _check_folder, _error

    path = _check_folder(encoder)
    config = read_encoder_config(path)
    config.zhbert_heads = {name: h.to_dict() for name, h in heads.items()}
    model, info = on_encoder(ZhBertMultiTask, config.model_type).from_pretrained(
        str(path), config=config, local_files_only=True, trust_remote_code=False, output_loading_info=True, dtype=torch.float32
    )
    prefix = model.base_model_prefix + "."
    missing = [k for k in info.get("missing_keys", []) if k.startswith(prefix) and "pooler" not in k]
    if missing:
        raise _error(path, f"not a {config.model_type} encoder checkpoint: {len(missing)} encoder weights missing (e.g. {missing[0]})")
    return model


def save_multitask(model: ZhBertMultiTask, tokenizer, path: str | Path) -> Path:
    from .io import save_folder

    model.config.zhbert_heads = {name: task.head.to_dict() for name, task in model.tasks.items()}
    model.config.architectures = ["ZhBertMultiTask"]
    return save_folder(model, tokenizer, path)


def load_multitask(path: str | Path) -> ZhBertMultiTask:
    from .io import load_folder

    return load_folder(ZhBertMultiTask, path, "zhbert_heads", "a zhbert multi-task model")


@torch.no_grad()
def predict_all(
    model: ZhBertMultiTask, tokenizer, texts: list[str], batch_size: int | None = None, names: list[str] | None = None
) -> dict[str, list]:
    """Every token and sequence head (or those in ``names``) on ``texts`` with one encoder pass
    per batch of windows: ``{name: [TokenTags, ...]}`` for token heads, ``{name: (N, K)
    probabilities}`` (or scores) for sequence heads. Heads that window alike share a pass
    (by default token heads cut a long text one sentence per window, sequence heads anywhere:
    two passes when a text is longer than a window, one when every text fits)."""
    model.eval()
    views = {name: view for name, view in model.tasks.items() if names is None or name in names}
    pair = [n for n, v in views.items() if v.head.kind == "pair"]
    if pair:
        raise ValueError(f"one pass reads single texts; run the pair head(s) {', '.join(pair)} with model.tasks[name]")
    tok = tokenizer
    encs = encode(tok, list(texts))
    longest = max(map(len, encs), default=0)
    groups: dict[tuple, list[str]] = {}
    for name, v in views.items():
        h = v.head
        size = window_size(h, model.config)
        # how a head cuts a long text matters only when some text is longer than a window
        align = h.window_align if longest > size - 2 and not h.truncate else None
        groups.setdefault((size, h.stride, h.truncate, align), []).append(name)
    if len(groups) > 1:  # heads that window differently get a pass each
        result: dict[str, list] = {}
        for group in groups.values():
            result.update(predict_all(model, tokenizer, texts, batch_size, group))
        return result
    first = next(iter(views.values()))
    size = window_size(first.head, model.config)
    coll = TaskCollator(tokenizer, first.head, size)
    spans = [coll.text_spans(e) for e in encs]
    rows = window_rows(spans, keep_empty=True)
    all_layers = any(v.fusion.needs_all_layers for v in views.values())
    device = next(model.parameters()).device
    preds = {n: ({}, {}) for n, v in views.items() if v.head.kind == "token"}
    vectors: dict[str, list[torch.Tensor]] = {n: [] for n, v in views.items() if v.head.kind == "sequence"}
    order: list[int] = []  # the text of each window row, in the order rows ran
    for chunk in row_batches(rows, batch_size, batch_token_budget(model.config)):
        batch = window_batch([encs[i].ids[a:b] for i, a, b in chunk], tok.cls_token_id, tok.sep_token_id, tok.pad_token_id)
        batch = {k: v.to(device) for k, v in batch.items()}
        out = model.base_model(**batch, output_hidden_states=all_layers)
        states = out.hidden_states if all_layers else (out.last_hidden_state,)
        order += [i for i, _, _ in chunk]
        for name, view in views.items():
            tokens = view.fusion(states if view.fusion.needs_all_layers else states[-1:])
            if view.head.kind == "token":
                real = [k for k, (_, a, b) in enumerate(chunk) if b > a]  # a text without tokens has no tags
                if real:
                    logits = view.classifier(view.dropout(tokens[real]))
                    decode_rows(view, logits, [chunk[k] for k in real], batch["attention_mask"][real], *preds[name])
            else:
                vectors[name].append(
                    sequence_vector(view.fusion, tokens, batch["attention_mask"], getattr(out, "pooler_output", None)).float().cpu()
                )
    result: dict[str, list] = {}
    for name, view in views.items():
        if view.head.kind == "token":
            result[name] = assemble_tags(spans, encs, *preds[name], view.head.labels)
        else:
            index = torch.tensor(order, dtype=torch.long)
            pooled = _scatter_pool(torch.cat(vectors[name]), index, len(encs), view.head.window_pool) if order else None
            logits = view.classifier(view.dropout(pooled.to(device))).float().cpu() if pooled is not None else torch.empty(0)
            result[name] = activate(view.head, logits) if pooled is not None else torch.empty(0)
    return result
