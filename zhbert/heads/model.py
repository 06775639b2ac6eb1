"""One BERT encoder + layer fusion + a task head, in every application mode.

``ZhBertForTask`` covers the three heads of zhbert:

* ``sequence``: a text -> class probabilities (softmax), independent label
  probabilities (``multi_label``, sigmoid) or a score (``regression``);
* ``pair``: two texts, cross-encoded (``[CLS] a [SEP] b [SEP]``, the fine-tuning
  way) or bi-encoded (each side on its own, then ``[u; v; |u-v|; u*v]``, the
  feature way of InferSent / Sentence-BERT);
* ``token``: a tag per token, softmax or a constrained linear-chain CRF, optionally
  over a BiLSTM (the BERT paper's feature-based NER head, ``heads/bilstm.py``).

Long texts arrive as several windows (``zhbert.windows``); ``example_index``
says which example each window row belongs to and sequence heads pool the
window vectors per example (mean, or mean and max). Token heads see windows as
rows and the caller keeps each character's prediction from its owner window.

In ``frozen`` mode the encoder runs in eval mode under ``torch.inference_mode``
and never receives gradients (the feature-based approach of the BERT paper).
Parameter names follow ``BertFor{Sequence,Token}Classification`` (``bert.*``,
``classifier.*``), so the stock-compatible heads load in plain transformers. On another
encoder (``zhbert.encoders``) the encoder's weights sit under that encoder's own prefix
(``electra.*``, ``ernie.*``, ...): :func:`task_model_class` gives the class for a config.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from transformers import BertConfig, BertPreTrainedModel
from transformers import initialization as init
from transformers.modeling_outputs import ModelOutput

from ..crf import CRF
from ..encoders import build_encoder, on_encoder, plain_head_class
from ..fusion import LayerFusion, ScalarMix, sequence_vector
from .bilstm import TokenBiLSTM
from .config import HeadConfig
from .word_features import WordFeatures

__all__ = ["ZhBertForTask", "TaskModel", "task_model_class", "TaskOutput", "stock_architecture"]


@dataclass
class TaskOutput(ModelOutput):
    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None  # (N, K) per example, or (B, T, K) token emissions
    layer_weights: torch.Tensor | None = None  # scalar-mix (K,) or layer-attention (B, T, K)


def stock_architecture(head: HeadConfig, model_type: str = "bert") -> str | None:
    """The plain-transformers class that loads this head unchanged, if there is one
    (``BertForTokenClassification`` on BERT, ``ElectraForTokenClassification`` on ELECTRA, ...)."""
    if head.kind in ("sequence", "pair") and head.representation == "cls" and head.window_pool == "mean" and head.pair_encoding == "cross":
        return plain_head_class(model_type, "sequence")
    if head.kind == "token" and head.representation == "last" and not head.crf and not head.bilstm_layers and not head.word_features:
        return plain_head_class(model_type, "token")
    return None


def _scatter_pool(vectors: torch.Tensor, index: torch.Tensor, n: int, how: str) -> torch.Tensor:
    """Pool window vectors ``(W, D)`` into example vectors ``(n, D)`` (or ``(n, 2D)``)."""
    d = vectors.size(-1)
    total = torch.zeros(n, d, dtype=vectors.dtype, device=vectors.device).index_add(0, index, vectors)
    count = torch.zeros(n, dtype=vectors.dtype, device=vectors.device).index_add(0, index, torch.ones_like(index, dtype=vectors.dtype))
    mean = total / count.clamp(min=1).unsqueeze(1)
    if how == "mean":
        return mean
    mx = torch.full((n, d), float("-inf"), dtype=vectors.dtype, device=vectors.device)
    mx = mx.scatter_reduce(0, index.unsqueeze(1).expand(-1, d), vectors, reduce="amax")
    return torch.cat([mean, mx], dim=-1)


def init_head_parameters(module: nn.Module) -> None:
    """zhbert's own parameters at their documented starting values: ``from_pretrained``
    builds missing weights empty and initialises them through ``_init_weights``."""
    if isinstance(module, ScalarMix):
        init.zeros_(module.weights)  # equal layer weights
        init.ones_(module.gamma)
    elif isinstance(module, CRF):
        init.zeros_(module.transitions)
        init.zeros_(module.start)
        init.zeros_(module.end)
    elif isinstance(module, nn.LSTM):  # torch's own LSTM default: U(-1/sqrt(h), 1/sqrt(h))
        bound = module.hidden_size**-0.5
        for p in module.parameters():
            init.uniform_(p, -bound, bound)


class TaskModel:
    """An encoder + layer fusion + a task head; a ``PreTrainedModel`` once joined to an encoder's
    base class (``ZhBertForTask`` on BERT, :func:`task_model_class` on any). The encoder is
    ``self.base_model``, registered under the encoder's own prefix."""

    def __init__(self, config, head: HeadConfig | None = None, shared_encoder=None):
        super().__init__(config)
        head = head or HeadConfig.from_dict(config.zhbert_head)
        config.zhbert_head = head.to_dict()
        self.head = head
        if shared_encoder is None:
            setattr(self, self.base_model_prefix, build_encoder(config))
        else:  # one head of a ZhBertMultiTask: the encoder is the container's (registered and saved once, there)
            object.__setattr__(self, self.base_model_prefix, shared_encoder)
        classifier_dropout = getattr(config, "classifier_dropout", None)
        self.fusion = LayerFusion(head.representation, config.num_hidden_layers, config.hidden_size)
        self.dropout = nn.Dropout(classifier_dropout if classifier_dropout is not None else config.hidden_dropout_prob)
        d = self.fusion.output_size
        if head.kind != "token" and head.window_pool == "mean-max":
            d *= 2
        if head.kind == "pair" and head.pair_encoding == "bi":
            d *= 4
        self.word_features = None
        if head.word_features:
            lexicon_dim = head.lexicon_dim if head.lexicon else 0
            self.word_features = WordFeatures(lexicon_dim, head.lexicon_buckets, head.bigram_dim, head.bigram_buckets)
            d += self.word_features.output_size
        self.bilstm = None
        if head.bilstm_layers:
            self.bilstm = TokenBiLSTM(d, head.bilstm_hidden or config.hidden_size, head.bilstm_layers, self.dropout.p)
            d = self.bilstm.output_size + (d if head.bilstm_skip else 0)
        self.classifier = nn.Linear(d, head.num_outputs)
        self.crf = CRF(head.labels, head.scheme) if head.crf else None
        if head.kind == "token":  # never reads the pooler, which a plain *ForTokenClassification folder does not save
            self._keys_to_ignore_on_load_missing = {r"(^|\.)pooler\."}
        self.post_init()
        if head.mode == "frozen":
            self.freeze_encoder()

    def _init_weights(self, module):
        super()._init_weights(module)
        init_head_parameters(module)

    # -- modes -----------------------------------------------------------------
    def freeze_encoder(self) -> None:
        for p in self.base_model.parameters():
            p.requires_grad_(False)
        self.base_model.eval()

    def train(self, mode: bool = True):
        super().train(mode)
        if self.head.mode == "frozen":
            self.base_model.eval()  # features do not depend on dropout draws
        return self

    def enable_feature_cache(self, enabled: bool = True) -> None:
        """Frozen mode: keep each distinct input row's encoder features in memory, so
        later epochs skip the encoder. Costs (layers used) x tokens x hidden floats per row."""
        if enabled and self.head.mode != "frozen":
            raise ValueError("feature caching needs mode='frozen' (a fine-tuned encoder changes every step)")
        self._feature_cache = {} if enabled else None

    def _run_frozen(self, kwargs):
        with torch.inference_mode():
            out = self.base_model(**kwargs)
            states = out.hidden_states if self.fusion.needs_all_layers else (out.last_hidden_state,)
            pooled = getattr(out, "pooler_output", None)
        # inference tensors cannot enter autograd: clone them into ordinary ones
        return tuple(s.clone() for s in states), (pooled.clone() if pooled is not None else None)

    def _frozen_features(self, kwargs):
        cache = getattr(self, "_feature_cache", None)
        if cache is None:
            return self._run_frozen(kwargs)
        ids, mask = kwargs["input_ids"], kwargs["attention_mask"]
        types = kwargs["token_type_ids"] if kwargs["token_type_ids"] is not None else torch.zeros_like(ids)
        lengths = mask.sum(1).tolist()
        keys = [(tuple(ids[i, :n].tolist()), tuple(types[i, :n].tolist())) for i, n in enumerate(lengths)]
        missing = [i for i, k in enumerate(keys) if k not in cache]
        if missing:
            sub = {**kwargs, "input_ids": ids[missing], "attention_mask": mask[missing], "token_type_ids": types[missing]}
            states, pooled = self._run_frozen(sub)
            for j, i in enumerate(missing):
                n = lengths[i]
                cache[keys[i]] = (tuple(s[j, :n] for s in states), pooled[j] if pooled is not None else None)
        # re-pad cached rows to this batch's length (padded positions are masked downstream)
        t = ids.size(1)
        rows = [cache[k] for k in keys]
        states = tuple(
            torch.stack([torch.nn.functional.pad(r[0][layer], (0, 0, 0, t - r[0][layer].size(0))) for r in rows])
            for layer in range(len(rows[0][0]))
        )
        return states, (torch.stack([r[1] for r in rows]) if rows[0][1] is not None else None)

    # -- encoder -----------------------------------------------------------------
    def _encode(self, input_ids, attention_mask, token_type_ids):
        kwargs = dict(
            input_ids=input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
            output_hidden_states=self.fusion.needs_all_layers,
        )
        if self.head.mode == "frozen":
            states, pooled = self._frozen_features(kwargs)
        else:
            out = self.base_model(**kwargs)
            states = out.hidden_states if self.fusion.needs_all_layers else (out.last_hidden_state,)
            pooled = getattr(out, "pooler_output", None)
        return self.fusion(states), pooled

    def _sequence_vectors(self, input_ids, attention_mask, token_type_ids, example_index, num_examples):
        tokens, pooled = self._encode(input_ids, attention_mask, token_type_ids)
        vec = sequence_vector(self.fusion, tokens, attention_mask, pooled)
        if example_index is None:
            example_index = torch.arange(vec.size(0), device=vec.device)
            num_examples = vec.size(0)
        return _scatter_pool(vec, example_index, int(num_examples), self.head.window_pool)

    # -- forward -------------------------------------------------------------------
    def forward(
        self,
        input_ids=None,
        attention_mask=None,
        token_type_ids=None,
        labels=None,
        example_index=None,
        num_examples=None,
        input_ids_b=None,
        attention_mask_b=None,
        example_index_b=None,
        example_weights=None,
        **unused,
    ) -> TaskOutput:
        h = self.head
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        if num_examples is not None and torch.is_tensor(num_examples):
            num_examples = int(num_examples.reshape(-1)[0])
        if h.kind == "token":
            tokens, _ = self._encode(input_ids, attention_mask, token_type_ids)
            if self.word_features is not None:
                tokens = torch.cat([tokens, self.word_features(input_ids, attention_mask).to(tokens.dtype)], dim=-1)
            if self.bilstm is not None:
                context = self.bilstm(self.dropout(tokens), attention_mask)
                tokens = torch.cat([tokens, context], dim=-1) if h.bilstm_skip else context
            logits = self.classifier(self.dropout(tokens))
            loss = self._token_loss(logits, labels, example_weights) if labels is not None else None
        else:
            u = self._sequence_vectors(input_ids, attention_mask, token_type_ids, example_index, num_examples)
            if h.kind == "pair" and h.pair_encoding == "bi":
                if input_ids_b is None:
                    raise ValueError("a bi-encoder pair head needs input_ids_b (the second texts)")
                if attention_mask_b is None:
                    attention_mask_b = torch.ones_like(input_ids_b)
                v = self._sequence_vectors(input_ids_b, attention_mask_b, torch.zeros_like(input_ids_b), example_index_b, num_examples)
                u = torch.cat([u, v, (u - v).abs(), u * v], dim=-1)
            logits = self.classifier(self.dropout(u))
            loss = self._sequence_loss(logits, labels) if labels is not None else None
        return TaskOutput(loss=loss, logits=logits, layer_weights=self.fusion.layer_weights())

    def _sequence_loss(self, logits, labels):
        if self.head.regression:
            return nn.functional.mse_loss(logits.squeeze(-1), labels.float())
        if self.head.multi_label:
            return nn.functional.binary_cross_entropy_with_logits(logits, labels.float())
        return nn.functional.cross_entropy(logits, labels.long())

    def _token_loss(self, logits, labels, example_weights=None):
        """Mean over tokens (softmax) or sequences (CRF); ``example_weights`` (one per row) scale each
        row's terms, the mean still over all of them: rows of weight 0.5 count half."""
        if self.crf is None:
            flat = labels.reshape(-1)
            if example_weights is None:
                return nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), flat, ignore_index=-100)
            each = nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), flat, ignore_index=-100, reduction="none")
            w = example_weights.to(each.dtype)[:, None].expand_as(labels).reshape(-1)
            return (each * w).sum() / (flat != -100).sum().clamp(min=1)
        # labels are -100 on [CLS], [SEP] and padding: drop [CLS] so the mask is left-aligned
        em, tags = logits[:, 1:], labels[:, 1:]
        mask = tags != -100
        keep = mask.any(1)
        if not keep.any():
            return logits.sum() * 0.0
        em, tags, mask = em[keep], tags[keep].clamp(min=0), mask[keep]
        nll = -self.crf.log_likelihood(em, tags, mask)
        return nll.mean() if example_weights is None else (nll * example_weights[keep].to(nll.dtype)).mean()

    # -- decoding ---------------------------------------------------------------------
    @torch.no_grad()
    def decode_tokens(self, logits: torch.Tensor, token_mask: torch.Tensor) -> list[list[int]]:
        """Tag ids for the positions of ``token_mask`` (a left-aligned mask after [CLS])."""
        em, mask = logits[:, 1:], token_mask[:, 1:].bool()
        if self.crf is not None:
            return self.crf.decode(em, mask)
        best, lengths = em.argmax(-1).tolist(), mask.sum(1).tolist()
        return [row[:n] for row, n in zip(best, lengths)]


class ZhBertForTask(TaskModel, BertPreTrainedModel):
    config_class = BertConfig


def task_model_class(model_type: str) -> type[ZhBertForTask]:
    """The task-model class for an encoder type (``config.model_type``): ``ZhBertForTask`` for
    BERT, the same model on the type's own ``PreTrainedModel`` base for the others."""
    return on_encoder(ZhBertForTask, model_type)
