"""A bidirectional LSTM between the encoder's token features and a token head's tagger.

The BERT paper's feature-based NER (section 5.3) did not put a linear layer on the
frozen features: it ran "a two-layer 768-dimensional BiLSTM" over them first. A linear
tagger on frozen features cannot combine neighbouring tokens, which a fine-tuned
encoder does by itself, so comparing fine-tuning with a linear feature-based head
understates features. ``HeadConfig(bilstm_layers=2)`` builds the paper's head; it
works in both modes and under a CRF (the usual BiLSTM-CRF).

Each window row is one sequence, so a text's tags do not depend on what it is batched
with. Training packs the padding away (``pack_padded_sequence``). Prediction reaches the
same outputs another way, because on CPU torch runs a packed LSTM one time step at a time
(a matrix product per step) while a padded one goes to oneDNN's fused kernel: it runs each
direction of each layer on the padded batch, the backward one on rows whose text part is
reversed in place, so padding comes after every real token in both directions and never
reaches one. On the CPU `ner` soup of bench/ner_cpu_soup.sh (2 x 192) that made `zhbert.load`
predictions 1.17x faster on one thread (bench/ner_speed.py --packed-bilstm), the same spans, scores
within 1e-6.
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
        lengths = attention_mask.sum(1).clamp(min=1).long()  # a float or bool mask too: lengths index
        if not self.training:
            return self._padded(features, lengths)
        packed = pack_padded_sequence(features, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=features.size(1))
        return out

    def _padded(self, features: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """The packed LSTM's outputs computed on the padded batch, one direction and layer at a time."""
        lstm, (batch, steps, _) = self.lstm, features.shape
        position = torch.arange(steps, device=features.device).expand(batch, steps)
        real = position < lengths[:, None]
        # reverses each row's first `length` positions and keeps the padding where it is; its own inverse
        flip = torch.where(real, lengths[:, None] - 1 - position, position).unsqueeze(-1)
        zeros = features.new_zeros(1, batch, self.hidden_size)
        h = features  # no dropout between layers: this path only predicts
        for layer in range(lstm.num_layers):
            directions = []
            for suffix in ("", "_reverse"):
                weights = [getattr(lstm, f"{w}_l{layer}{suffix}") for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
                x = h.gather(1, flip.expand(-1, -1, h.size(2))) if suffix else h
                out = torch.lstm(x, (zeros, zeros), weights, True, 1, 0.0, False, False, True)[0]
                directions.append(out.gather(1, flip.expand(-1, -1, self.hidden_size)) if suffix else out)
            h = torch.cat(directions, dim=-1)
        return h * real.unsqueeze(-1)  # zeros on padding, as pad_packed_sequence leaves them
