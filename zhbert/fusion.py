"""Which encoder layers a head reads: one registered class per representation.

Input: the encoder's hidden states ``h_0 .. h_L`` (embeddings + L layers), each
``(B, T, H)``. Output: ``(B, T, D)``, one vector per token. Each method is a small
:class:`Fusion` subclass in :data:`FUSIONS`, knowing its own output size, the layers
it needs and whether it learns weights; heads, ``MaskedLM.features``, the recipes'
``--representation`` help and the mode study's grid all read that one table, so a
method is added here (plus its test) and nowhere else.

* ``cls`` / ``last``:  ``h_L``; a sequence vector is the pooled ``[CLS]`` for ``cls``
  (BERT's pooler, dense + tanh, as ``BertForSequenceClassification``; the raw
  ``[CLS]`` state where the encoder has no pooler) and the token mean otherwise
* ``mean-last-4``:     ``(h_{L-3} + h_{L-2} + h_{L-1} + h_L) / 4``
* ``concat-last-4``:   ``[h_{L-3}; h_{L-2}; h_{L-1}; h_L]`` (``D = 4H``)
* ``scalar-mix``:      ``gamma * sum_k s_k h_k``, ``s = softmax(w)`` over all L+1
  layers (ELMo; AllenNLP's ``ScalarMix``), ``w`` and ``gamma`` learned
* ``layer-attention``: per token t, ``a_{t,k} = softmax_k(u . tanh(W h_{t,k} + b))``
  and ``sum_k a_{t,k} h_{t,k}`` (multi-layer attention, Kaneko & Komachi 2019)

The feature-based results of the BERT paper (Table 7) used these choices (last
hidden, sum/concat of last four); the fine-tuning results use ``cls``. Three more
rows of that table are offered for the mode study (``PAPER_REPRESENTATIONS``):

* ``embeddings``:        ``h_0``
* ``second-to-last``:    ``h_{L-1}``
* ``scalar-mix-last-4``: ``gamma * sum_k s_k h_k`` over the last four layers only
"""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import nn

__all__ = [
    "FUSIONS",
    "Fusion",
    "register",
    "REPRESENTATIONS",
    "PAPER_REPRESENTATIONS",
    "ALL_REPRESENTATIONS",
    "LayerFusion",
    "ScalarMix",
    "LayerAttention",
    "fused_size",
    "check_representation",
    "sequence_vector",
]

FUSIONS: dict[str, type[Fusion]] = {}


def register(cls: type[Fusion]) -> type[Fusion]:
    FUSIONS[cls.name] = cls
    return cls


def check_representation(name: str) -> type[Fusion]:
    """The registered method called ``name``; an unknown name is an error listing the known ones."""
    if name not in FUSIONS:
        raise ValueError(f"unknown representation {name!r}; choose one of {', '.join(FUSIONS)}")
    return FUSIONS[name]


class Fusion(nn.Module):
    name: ClassVar[str]
    min_layers: ClassVar[int] = 1  # encoder layers the method needs
    needs_all_layers: ClassVar[bool] = True  # False: the last layer alone (no hidden-state outputs)
    learned: ClassVar[bool] = False  # has weights a head trains (so no training-free features)
    in_study: ClassVar[bool] = True  # a column of the mode study's grid; False: a BERT-paper row only
    pools_cls: ClassVar[bool] = False  # a sequence vector is the pooled [CLS], not the token mean

    def __init__(self, num_hidden_layers: int, hidden_size: int):
        super().__init__()
        if num_hidden_layers < self.min_layers:
            raise ValueError(f"{self.name} needs at least {self.min_layers} encoder layers, the model has {num_hidden_layers}")
        self.output_size = self.size(hidden_size)

    @classmethod
    def size(cls, hidden_size: int) -> int:
        return hidden_size

    def forward(self, hidden_states: tuple[torch.Tensor, ...]) -> torch.Tensor:
        raise NotImplementedError

    def layer_weights(self) -> torch.Tensor | None:
        """The learned weights over layers of the last forward, if the method has any."""
        return None


class ScalarMix(nn.Module):
    """``gamma * sum_k softmax(w)_k h_k``; weights start equal, ``gamma`` at 1."""

    def __init__(self, num_layers: int):
        super().__init__()
        self.weights = nn.Parameter(torch.zeros(num_layers))
        self.gamma = nn.Parameter(torch.ones(1))

    def layer_weights(self) -> torch.Tensor:
        return torch.softmax(self.weights, dim=0)

    def forward(self, layers: list[torch.Tensor]) -> torch.Tensor:
        s = self.layer_weights()
        return self.gamma * sum(w * h for w, h in zip(s, layers))


class LayerAttention(nn.Module):
    """Per-token attention over layers; returns the mix and the ``(B, T, K)`` weights."""

    def __init__(self, hidden_size: int, attention_size: int = 128):
        super().__init__()
        self.proj = nn.Linear(hidden_size, attention_size)
        self.query = nn.Linear(attention_size, 1, bias=False)

    def forward(self, layers: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        stacked = torch.stack(layers, dim=2)  # (B, T, K, H)
        scores = self.query(torch.tanh(self.proj(stacked))).squeeze(-1)  # (B, T, K)
        weights = torch.softmax(scores, dim=-1)
        return (weights.unsqueeze(-1) * stacked).sum(dim=2), weights


@register
class Cls(Fusion):
    name = "cls"
    needs_all_layers = False
    pools_cls = True

    def forward(self, hidden_states):
        return hidden_states[-1]


@register
class Last(Fusion):
    name = "last"
    needs_all_layers = False

    def forward(self, hidden_states):
        return hidden_states[-1]


@register
class MeanLast4(Fusion):
    name = "mean-last-4"
    min_layers = 4

    def forward(self, hidden_states):
        return torch.stack(hidden_states[-4:], dim=0).mean(dim=0)


@register
class ConcatLast4(Fusion):
    name = "concat-last-4"
    min_layers = 4

    @classmethod
    def size(cls, hidden_size: int) -> int:
        return 4 * hidden_size

    def forward(self, hidden_states):
        return torch.cat(hidden_states[-4:], dim=-1)


@register
class ScalarMixAll(Fusion):
    name = "scalar-mix"
    learned = True

    def __init__(self, num_hidden_layers: int, hidden_size: int):
        super().__init__(num_hidden_layers, hidden_size)
        self.scalar_mix = ScalarMix(num_hidden_layers + 1)  # the attribute name is part of saved heads' keys

    def forward(self, hidden_states):
        return self.scalar_mix(list(hidden_states))

    def layer_weights(self):
        return self.scalar_mix.layer_weights()


@register
class LayerAttentionFusion(Fusion):
    name = "layer-attention"
    learned = True

    def __init__(self, num_hidden_layers: int, hidden_size: int):
        super().__init__(num_hidden_layers, hidden_size)
        self.attention = LayerAttention(hidden_size)
        self.last_layer_weights: torch.Tensor | None = None  # (B, T, K) after a forward

    def forward(self, hidden_states):
        mixed, weights = self.attention(list(hidden_states))
        self.last_layer_weights = weights.detach()
        return mixed

    def layer_weights(self):
        return self.last_layer_weights


@register
class Embeddings(Fusion):
    name = "embeddings"
    in_study = False

    def forward(self, hidden_states):
        return hidden_states[0]


@register
class SecondToLast(Fusion):
    name = "second-to-last"
    min_layers = 2
    in_study = False

    def forward(self, hidden_states):
        return hidden_states[-2]


@register
class ScalarMixLast4(ScalarMixAll):
    name = "scalar-mix-last-4"
    min_layers = 4
    in_study = False

    def __init__(self, num_hidden_layers: int, hidden_size: int):
        Fusion.__init__(self, num_hidden_layers, hidden_size)
        self.scalar_mix = ScalarMix(4)

    def forward(self, hidden_states):
        return self.scalar_mix(list(hidden_states[-4:]))


REPRESENTATIONS = tuple(n for n, c in FUSIONS.items() if c.in_study)
PAPER_REPRESENTATIONS = tuple(n for n, c in FUSIONS.items() if not c.in_study)
ALL_REPRESENTATIONS = tuple(FUSIONS)


def LayerFusion(representation: str, num_hidden_layers: int, hidden_size: int) -> Fusion:  # noqa: N802 (reads as the module it builds)
    """The fusion module for ``representation``."""
    return check_representation(representation)(num_hidden_layers, hidden_size)


def fused_size(representation: str, hidden_size: int) -> int:
    return check_representation(representation).size(hidden_size)


def sequence_vector(fusion: Fusion, tokens: torch.Tensor, attention_mask: torch.Tensor, pooled: torch.Tensor | None) -> torch.Tensor:
    """One vector per row: the pooled ``[CLS]`` for ``cls`` (the raw ``[CLS]`` state when the
    encoder has no pooler, ``pooled is None``), else the mean over the row's tokens.
    Heads and ``MaskedLM.features`` both pool here, so ``cls`` means one thing."""
    if fusion.pools_cls:
        return pooled if pooled is not None else tokens[:, 0]
    m = attention_mask.unsqueeze(-1).to(tokens.dtype)
    return (tokens * m).sum(1) / m.sum(1).clamp(min=1)
