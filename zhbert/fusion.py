"""Which encoder layers a head reads: one representation per token.

Input: the encoder's hidden states ``h_0 .. h_L`` (embeddings + L layers), each
``(B, T, H)``. Output: ``(B, T, D)`` with ``D = 4H`` for ``concat-last-4`` and
``D = H`` otherwise:

* ``cls`` / ``last``:  ``h_L`` (``cls`` differs only in how a sequence head pools)
* ``mean-last-4``:     ``(h_{L-3} + h_{L-2} + h_{L-1} + h_L) / 4``
* ``concat-last-4``:   ``[h_{L-3}; h_{L-2}; h_{L-1}; h_L]``
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

import torch
from torch import nn

__all__ = ["REPRESENTATIONS", "PAPER_REPRESENTATIONS", "ALL_REPRESENTATIONS", "LayerFusion", "ScalarMix", "LayerAttention", "fused_size"]

REPRESENTATIONS = ("cls", "last", "mean-last-4", "concat-last-4", "scalar-mix", "layer-attention")
PAPER_REPRESENTATIONS = ("embeddings", "second-to-last", "scalar-mix-last-4")
ALL_REPRESENTATIONS = REPRESENTATIONS + PAPER_REPRESENTATIONS


def fused_size(representation: str, hidden_size: int) -> int:
    if representation not in ALL_REPRESENTATIONS:
        raise ValueError(f"unknown representation {representation!r}; choose one of {', '.join(ALL_REPRESENTATIONS)}")
    return 4 * hidden_size if representation == "concat-last-4" else hidden_size


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


class LayerFusion(nn.Module):
    def __init__(self, representation: str, num_hidden_layers: int, hidden_size: int):
        super().__init__()
        self.output_size = fused_size(representation, hidden_size)
        if representation in ("mean-last-4", "concat-last-4", "scalar-mix-last-4") and num_hidden_layers < 4:
            raise ValueError(f"{representation} needs at least 4 encoder layers, the model has {num_hidden_layers}")
        self.representation = representation
        mixed = {"scalar-mix": num_hidden_layers + 1, "scalar-mix-last-4": 4}.get(representation)
        self.scalar_mix = ScalarMix(mixed) if mixed else None
        self.attention = LayerAttention(hidden_size) if representation == "layer-attention" else None
        self.last_layer_weights: torch.Tensor | None = None  # (B, T, K) after a layer-attention forward

    @property
    def needs_all_layers(self) -> bool:
        return self.representation not in ("cls", "last")

    def forward(self, hidden_states: tuple[torch.Tensor, ...]) -> torch.Tensor:
        r = self.representation
        if r in ("cls", "last"):
            return hidden_states[-1]
        if r == "mean-last-4":
            return torch.stack(hidden_states[-4:], dim=0).mean(dim=0)
        if r == "concat-last-4":
            return torch.cat(hidden_states[-4:], dim=-1)
        if r == "scalar-mix":
            return self.scalar_mix(list(hidden_states))
        if r == "scalar-mix-last-4":
            return self.scalar_mix(list(hidden_states[-4:]))
        if r == "embeddings":
            return hidden_states[0]
        if r == "second-to-last":
            return hidden_states[-2]
        mixed, weights = self.attention(list(hidden_states))
        self.last_layer_weights = weights.detach()
        return mixed
