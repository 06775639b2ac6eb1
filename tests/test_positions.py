"""Sinusoidal position initialisation: the property it exists for, and its use in pretraining."""

import math

import torch
from transformers import BertForMaskedLM

from zhbert.training.positions import init_positions_sinusoidal, sinusoidal_table
from zhbert.training.sizes import bert_config


def test_table_matches_the_transformer_formula():
    t = sinusoidal_table(512, 256)
    p, i = 37, 10
    norm = math.sqrt(128)  # each (sin, cos) pair contributes 1 to the squared norm
    assert math.isclose(t[p, 2 * i].item(), math.sin(p / 10000 ** (2 * i / 256)) / norm, abs_tol=1e-6)
    assert math.isclose(t[p, 2 * i + 1].item(), math.cos(p / 10000 ** (2 * i / 256)) / norm, abs_tol=1e-6)
    assert torch.allclose(t.norm(dim=1), torch.ones(512))


def test_every_offset_is_one_linear_map():
    # why sinusoids: P[p + k] = P[p] @ M_k for all p, so attention can learn "look k to the left" once.
    # Fit M_k on the even positions and check it predicts the odd ones it never saw.
    t = sinusoidal_table(512, 64).double()
    even, odd = torch.arange(10, 500, 2), torch.arange(11, 500, 2)
    for k in (1, -1, 3):
        m_k = torch.linalg.lstsq(t[even], t[even + k]).solution
        assert (t[odd] @ m_k - t[odd + k]).abs().max() < 1e-5, k
    # a random (BERT-style) table has no such map
    r = torch.randn(512, 64, dtype=torch.float64)
    m = torch.linalg.lstsq(r[even], r[even + 1]).solution
    assert (r[odd] @ m - r[odd + 1]).abs().max() > 0.5


def test_init_scales_rows_to_the_word_embeddings():
    model = BertForMaskedLM(bert_config("tiny", 500))
    init_positions_sinusoidal(model)
    pos = model.bert.embeddings.position_embeddings.weight
    word_norm = model.bert.embeddings.word_embeddings.weight.norm(dim=1).mean()
    assert torch.allclose(pos.norm(dim=1), word_norm.expand(pos.shape[0]), rtol=1e-4)
    cos = torch.nn.functional.cosine_similarity(pos, sinusoidal_table(*pos.shape), dim=1)
    assert cos.min() > 0.9999
