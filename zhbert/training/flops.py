"""Model FLOPs utilisation of a pretraining loop: useful training FLOPs per second over the
fp32 matmul peak measured on the same machine, with the same threads, in the same run.

Useful FLOPs per corpus token (forward + backward = 3 x forward, 2 FLOPs per multiply-add):

* a BERT encoder: ``6 * L * (4 H^2 + 2 H F)`` for its matmuls plus ``12 * L * T * H`` for attention
  (T tokens per block);
* a masked-LM head: ``6 * (H^2 + H * V)`` at each predicted position only (zhbert computes the
  vocabulary projection there alone), so times the predicted share;
* ELECTRA: the generator's encoder (its own width, plus the projection from the shared embeddings)
  and its masked-LM head at the predicted positions, plus the discriminator's encoder and its
  one-logit head (``6 * (H^2 + H)``) at every token.

Embedding lookups, layer norms, softmax and the optimizer are not counted (they are not matmuls).
"""

from __future__ import annotations

import time

import torch

__all__ = ["matmul_peak", "encoder_flops_per_token", "train_flops_per_token"]


def matmul_peak(n: int = 1024, reps: int = 8, trials: int = 3) -> float:
    """The best of ``trials`` fp32 ``n x n`` matmul timings, in FLOP/s, with the threads torch uses now."""
    g = torch.Generator().manual_seed(0)  # a private generator: the training run's random state stays untouched
    a, b = torch.randn(n, n, generator=g), torch.randn(n, n, generator=g)
    a @ b
    best = 0.0
    for _ in range(trials):
        start = time.perf_counter()
        for _ in range(reps):
            a @ b
        best = max(best, 2 * n**3 * reps / (time.perf_counter() - start))
    return best


def encoder_flops_per_token(hidden: int, layers: int, intermediate: int, seq_len: int) -> float:
    return 6 * layers * (4 * hidden * hidden + 2 * hidden * intermediate) + 12 * layers * seq_len * hidden


def train_flops_per_token(model, seq_len: int, predicted_share: float, encoder_trains: bool = True) -> float:
    """Useful training FLOPs per corpus token of ``model`` (a zhbert masked LM or ELECTRA pair). With
    ``encoder_trains=False`` (``--freeze-encoder-steps``) the encoder runs forward only: a third of its FLOPs."""
    config = model.config
    h, v = config.hidden_size, config.vocab_size
    disc = encoder_flops_per_token(h, config.num_hidden_layers, config.intermediate_size, seq_len) / (1 if encoder_trains else 3)
    generator = getattr(model, "generator", None)
    if generator is None:  # masked LM: the encoder, and the vocabulary head where a token is predicted
        return disc + 6 * (h * h + h * v) * predicted_share
    g = generator.config
    gen = encoder_flops_per_token(g.hidden_size, g.num_hidden_layers, g.intermediate_size, seq_len) + 6 * g.embedding_size * g.hidden_size
    gen_head = 6 * (g.hidden_size * g.embedding_size + g.embedding_size * v) * predicted_share
    return gen + gen_head + disc + 6 * (h * h + h)
