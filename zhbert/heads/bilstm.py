"""A bidirectional LSTM between the encoder's token features and a token head's tagger.

The BERT paper's feature-based NER (section 5.3) did not put a linear layer on the
frozen features: it ran "a two-layer 768-dimensional BiLSTM" over them first. A linear
tagger on frozen features cannot combine neighbouring tokens, which a fine-tuned
encoder does by itself, so comparing fine-tuning with a linear feature-based head
understates features. ``HeadConfig(bilstm_layers=2)`` builds the paper's head; it
works in both modes and under a CRF (the usual BiLSTM-CRF).

Each window row is one sequence: padding is packed away, so a text's tags do not
depend on what it is batched with.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

__all__ = ["TokenBiLSTM"]


class TokenBiLSTM(nn.Module):
    """``(B, T, input_size)`` features -> ``(B, T, 2 * hidden_size)`` (zeros on padding)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int, dropout: float):
        super().__init__()
        self.hidden_size = hidden_size
        self.lstm = nn.LSTM(
            input_size,
            hidden_size,
            num_layers=num_layers,
            bidirectional=True,
            batch_first=True,
            dropout=dropout if num_layers > 1 else 0.0,  # between layers, as in the paper's stacked BiLSTM
        )

    @property
    def output_size(self) -> int:
        return 2 * self.hidden_size

    def forward(self, features: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        # windows are right-padded ([CLS] text [SEP] then padding): lengths say where each ends
        lengths = attention_mask.sum(1).clamp(min=1).cpu()
        packed = pack_padded_sequence(features, lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=features.size(1))
        return out
