"""Linear-chain CRF with tag-scheme constraints (no ``I-X`` after ``O`` in BIO, etc.).

Scores: ``score(y) = start[y_1] + sum_t emit[t, y_t] + sum_t trans[y_{t-1}, y_t] + end[y_n]``;
``log p(y|x) = score(y) - log Z``, ``log Z`` by the forward algorithm; decoding by
Viterbi; per-position tag marginals ``p(y_t = k | x)`` by forward-backward (what a CRF student
learns from a teacher's tag distributions, zhbert.training.distillation). Transitions that the tag
scheme forbids get ``-10000`` added to the learned score, in training and decoding alike, so a decoded
path is always a valid tag sequence.
Shapes: emissions ``(B, T, K)``, tags ``(B, T)``, mask ``(B, T)`` with every row's
valid positions first (a left-aligned mask, as tokenised batches are).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from .tags import allowed_transitions

__all__ = ["CRF"]

FORBIDDEN = -10000.0


class CRF(nn.Module):
    def __init__(self, labels: Sequence[str], scheme: str | None = None):
        super().__init__()
        k = len(labels)
        self.num_tags = k
        self.transitions = nn.Parameter(torch.zeros(k, k))
        self.start = nn.Parameter(torch.zeros(k))
        self.end = nn.Parameter(torch.zeros(k))
        # the scheme's constraints are plain Python data, not buffers: from_pretrained
        # may build modules on the meta device, and constraints must never be "loaded"
        if scheme:
            self._allowed = allowed_transitions(list(labels), scheme)
        else:
            self._allowed = ([True] * k, [[True] * k for _ in range(k)], [True] * k)

    def _scores(self):
        dev = self.transitions.device
        s, t, e = (torch.where(torch.tensor(a, device=dev), 0.0, FORBIDDEN) for a in self._allowed)
        return self.start + s, self.transitions + t, self.end + e

    def log_likelihood(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``log p(tags | emissions)`` per sequence, shape ``(B,)``."""
        return self._path_score(emissions, tags, mask) - self.log_partition(emissions, mask)

    def _path_score(self, emissions, tags, mask):
        # every step at once (the forward algorithm below cannot be): a loop over positions took
        # a third of the CRF's training time on 60-token rows
        start, trans, end = self._scores()
        mask = mask.bool()
        b = torch.arange(emissions.size(0), device=emissions.device)
        emitted = emissions.gather(2, tags.unsqueeze(2)).squeeze(2)  # (B, T)
        steps = (trans[tags[:, :-1], tags[:, 1:]] + emitted[:, 1:]) * mask[:, 1:]
        last = tags[b, mask.sum(1) - 1]
        return start[tags[:, 0]] + emitted[:, 0] + steps.sum(1) + end[last]

    def log_partition(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        start, trans, end = self._scores()
        return self._log_z(self._forward(start, trans, emissions), mask, end)

    @staticmethod
    def _forward(start, trans, em) -> torch.Tensor:
        """The forward algorithm's ``alpha``, ``(B, T, K)``: at ``t``, the log-sum of the scores of every
        path over positions ``0..t`` that ends in tag ``k`` (past a row's mask: meaningless, unread)."""
        alphas = [start + em[:, 0]]
        for t in range(1, em.size(1)):
            alphas.append(torch.logsumexp(alphas[-1].unsqueeze(2) + trans.unsqueeze(0), dim=1) + em[:, t])
        return torch.stack(alphas, dim=1)

    @staticmethod
    def _log_z(alpha, mask, end) -> torch.Tensor:
        """``log Z`` per row from ``alpha`` at the row's last position."""
        last = (mask.bool().sum(1) - 1).clamp(min=0)
        return torch.logsumexp(alpha[torch.arange(alpha.size(0), device=alpha.device), last] + end, dim=1)

    def log_marginals(self, emissions: torch.Tensor, mask: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
        """``log p(y_t = k | x)`` at every position, shape ``(B, T, K)``, by forward-backward in log space;
        differentiable, so a loss may compare it with a teacher's. Every score (emissions, start,
        transitions, end) is divided by ``temperature``: the CRF's distribution softened as a softmax's
        is (Hinton et al.'s T; 1 is the model's own). Positions past a row's mask hold no meaning."""
        start, trans, end = (s / temperature for s in self._scores())
        em = emissions / temperature
        mask = mask.bool()
        alpha = self._forward(start, trans, em)
        log_z = self._log_z(alpha, mask, end)
        # betas: log-sum over the path's rest after t; a row's last position continues to ``end`` alone
        betas = [end.expand_as(em[:, 0])]
        for t in range(em.size(1) - 2, -1, -1):
            nxt = torch.logsumexp(trans.unsqueeze(0) + (em[:, t + 1] + betas[-1]).unsqueeze(1), dim=2)
            betas.append(torch.where(mask[:, t + 1].unsqueeze(1), nxt, end.expand_as(nxt)))
        beta = torch.stack(betas[::-1], dim=1)
        return alpha + beta - log_z[:, None, None]

    @torch.no_grad()
    def decode(self, emissions: torch.Tensor, mask: torch.Tensor) -> list[list[int]]:
        """Best valid tag path per sequence (Viterbi), each of its mask's length.

        In NumPy on the CPU: the loop over positions makes a handful of calls on ``(B, K, K)``
        arrays per step, and each NumPy call costs a fraction of a torch operator's dispatch (the
        one-layer ``cws-fast`` student's decoding took 0.11 s instead of 0.20 s over the PKU test
        lines, bench/LOG.md, forty-fourth session). The paths come back as lists anyway."""
        start, trans, end = (x.float().cpu().numpy() for x in self._scores())
        em = emissions.float().cpu().numpy()
        lengths = mask.bool().sum(1).cpu().numpy()
        b, steps = em.shape[:2]
        if steps == 0:
            return [[] for _ in range(b)]
        score = start + em[:, 0]
        back = np.empty((steps - 1, b, self.num_tags), dtype=np.int64)
        live = np.arange(1, steps)[:, None] < lengths[None, :]  # (T-1, B): positions inside each row
        for t in range(1, steps):
            total = score[:, :, None] + trans  # (B, K_prev, K)
            back[t - 1] = total.argmax(1)
            np.copyto(score, total.max(1) + em[:, t], where=live[t - 1][:, None])  # a finished row keeps its score
        last = (score + end).argmax(1)
        # back-tracking every row at once: a row's path starts at its own last position
        paths = np.empty((b, steps), dtype=np.int64)
        rows, tag = np.arange(b), last
        for t in range(steps - 1, -1, -1):
            tag = np.where(lengths - 1 == t, last, tag)
            paths[:, t] = tag
            if t:
                tag = back[t - 1, rows, tag]
        return [path[:n] for path, n in zip(paths.tolist(), lengths.tolist())]
