"""Numeric oracles: layer fusion against numpy, CRF against brute-force enumeration."""

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from zhbert.crf import CRF
from zhbert.fusion import LayerAttention, LayerFusion, ScalarMix
from zhbert.tags import check_sequence, labels_for


def _layers(k=5, b=2, t=3, h=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(b, t, h, generator=g) for _ in range(k)]


def test_scalar_mix_matches_numpy_and_is_learnable():
    layers = _layers()
    mix = ScalarMix(5)
    with torch.no_grad():
        mix.weights.copy_(torch.tensor([0.1, -0.5, 2.0, 0.0, 1.0]))
        mix.gamma.fill_(1.7)
    w = np.exp([0.1, -0.5, 2.0, 0.0, 1.0])
    w /= w.sum()
    expected = 1.7 * sum(wk * h.numpy() for wk, h in zip(w, layers))
    np.testing.assert_allclose(mix(layers).detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    assert float(mix.layer_weights().detach().sum()) == pytest.approx(1.0)
    mix(layers).sum().backward()
    assert mix.weights.grad is not None and mix.weights.grad.abs().sum() > 0 and mix.gamma.grad is not None


def test_layer_attention_matches_numpy_and_weights_sum_to_one():
    layers = _layers()
    att = LayerAttention(4, attention_size=3)
    mixed, weights = att(layers)
    stacked = np.stack([h.numpy() for h in layers], axis=2)  # B T K H
    W, b = att.proj.weight.detach().numpy(), att.proj.bias.detach().numpy()
    u = att.query.weight.detach().numpy()[0]
    scores = np.tanh(stacked @ W.T + b) @ u
    a = np.exp(scores - scores.max(-1, keepdims=True))
    a /= a.sum(-1, keepdims=True)
    np.testing.assert_allclose(weights.detach().numpy(), a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mixed.detach().numpy(), (a[..., None] * stacked).sum(2), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(weights.sum(-1).detach().numpy(), 1.0, rtol=1e-6)


def test_mean_and_concat_of_last_four():
    layers = tuple(_layers(k=6))
    mean = LayerFusion("mean-last-4", 5, 4)(layers)
    np.testing.assert_allclose(mean.numpy(), np.mean([h.numpy() for h in layers[-4:]], axis=0), rtol=1e-6)
    cat = LayerFusion("concat-last-4", 5, 4)(layers)
    np.testing.assert_allclose(cat.numpy(), np.concatenate([h.numpy() for h in layers[-4:]], axis=-1))
    assert LayerFusion("concat-last-4", 5, 4).output_size == 16
    with pytest.raises(ValueError, match="at least 4 encoder layers"):
        LayerFusion("mean-last-4", 2, 4)


def test_bert_paper_layer_choices():
    """Table 7's rows: embeddings (h_0), second-to-last (h_{L-1}), weighted sum of the last four."""
    layers = tuple(_layers(k=6))
    assert torch.equal(LayerFusion("embeddings", 5, 4)(layers), layers[0])
    assert torch.equal(LayerFusion("second-to-last", 5, 4)(layers), layers[-2])
    fusion = LayerFusion("scalar-mix-last-4", 5, 4)
    assert fusion.scalar_mix.weights.numel() == 4
    with torch.no_grad():
        fusion.scalar_mix.weights.copy_(torch.tensor([0.0, 1.0, -1.0, 2.0]))
    w = np.exp([0.0, 1.0, -1.0, 2.0])
    w /= w.sum()
    expected = sum(wk * h.numpy() for wk, h in zip(w, layers[-4:]))
    np.testing.assert_allclose(fusion(layers).detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="unknown representation"):
        LayerFusion("first-layer", 5, 4)


def _brute(crf, em, n):
    start, trans, end = (x.detach() for x in crf._scores())
    scores = {}
    for path in itertools.product(range(em.size(-1)), repeat=n):
        s = start[path[0]] + em[0, path[0]] + end[path[-1]]
        s = s + sum(trans[path[t - 1], path[t]] + em[t, path[t]] for t in range(1, n))
        scores[path] = float(s)
    return scores


@pytest.mark.parametrize("length", [1, 2, 4])
def test_crf_log_partition_and_viterbi_match_brute_force(length):
    torch.manual_seed(length)
    crf = CRF(["a", "b", "c"])
    with torch.no_grad():
        for p in crf.parameters():
            p.normal_()
    em = torch.randn(1, 4, 3)
    mask = torch.tensor([[1] * length + [0] * (4 - length)])
    scores = _brute(crf, em[0], length)
    logz = np.logaddexp.reduce(list(scores.values()))
    assert float(crf.log_partition(em, mask)[0].detach()) == pytest.approx(logz, abs=1e-4)
    best = max(scores, key=scores.get)
    assert tuple(crf.decode(em, mask)[0]) == best
    tags = torch.tensor([list(best) + [0] * (4 - length)])
    assert float(crf.log_likelihood(em, tags, mask)[0].detach()) == pytest.approx(scores[best] - logz, abs=1e-4)
    # every path at once, in rows whose padding holds other tags (the padding must not count)
    paths = list(scores)
    tags = torch.tensor([list(p) + [(k + t) % 3 for t in range(4 - length)] for k, p in enumerate(paths)])
    got = crf.log_likelihood(em.expand(len(paths), -1, -1), tags, mask.expand(len(paths), -1)).detach()
    assert got.tolist() == pytest.approx([scores[p] - logz for p in paths], abs=1e-4)


def test_crf_viterbi_decodes_each_row_of_a_batch_as_if_alone():
    """Rows of different lengths (an empty one too) share a batch: each row's path is its own best
    (decoding back-tracks every row at once, each from its own last position)."""
    torch.manual_seed(11)
    crf = CRF(["a", "b", "c"])
    with torch.no_grad():
        for p in crf.parameters():
            p.normal_()
    em = torch.randn(4, 5, 3)
    lengths = [5, 3, 1, 0]
    mask = torch.tensor([[1] * n + [0] * (5 - n) for n in lengths])
    paths = crf.decode(em, mask)
    assert paths[3] == []
    for row, n in enumerate(lengths[:3]):
        scores = _brute(crf, em[row], n)
        assert tuple(paths[row]) == max(scores, key=scores.get)
        assert paths[row] == crf.decode(em[row : row + 1, :n], torch.ones(1, n, dtype=torch.long))[0]


@pytest.mark.parametrize("temperature", [1.0, 2.5])
def test_crf_marginals_match_brute_force_and_the_gradient_of_log_z(temperature):
    torch.manual_seed(7)
    crf = CRF(["O", "B-X", "I-X"], "BIO")  # forbidden moves (O -> I-X) must get no mass
    with torch.no_grad():
        for p in crf.parameters():
            p.normal_()
    em = torch.randn(3, 5, 3, requires_grad=True)
    mask = torch.tensor([[1] * 5, [1] * 3 + [0] * 2, [1] + [0] * 4])
    got = crf.log_marginals(em, mask, temperature).exp()
    for row, n in enumerate(mask.sum(1).tolist()):
        scores = _brute(crf, em[row].detach(), n)
        weights = np.exp((np.array(list(scores.values())) - max(scores.values())) / temperature)
        weights /= weights.sum()
        want = np.zeros((n, 3))
        for w, path in zip(weights, scores):
            want[np.arange(n), list(path)] += w
        np.testing.assert_allclose(got[row, :n].detach().numpy(), want, atol=1e-5)
        assert float(got[row, 0, 2].detach()) < 1e-6  # no sentence starts with I-X
    # at T = 1 they are d log Z / d emissions, and gradients pass through them
    (grad,) = torch.autograd.grad(crf.log_partition(em, mask).sum(), em)
    marginals = crf.log_marginals(em, mask).exp()
    torch.testing.assert_close(marginals[mask.bool()], grad[mask.bool()], atol=1e-5, rtol=1e-4)
    marginals[mask.bool()][:, 0].sum().backward()
    assert em.grad is not None and em.grad[mask.bool()].abs().sum() > 0 and em.grad[~mask.bool()].abs().sum() == 0


@pytest.mark.parametrize("scheme, types", [("BIO", ["PER", "LOC"]), ("BIOES", ["ORG"]), ("BMES-untyped", [])])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_crf_decoding_is_always_valid(scheme, types, data):
    labels = labels_for(types, scheme)
    crf = CRF(labels, scheme)
    n = data.draw(st.integers(1, 7))
    values = data.draw(st.lists(st.floats(-20, 20), min_size=n * len(labels), max_size=n * len(labels)))
    em = torch.tensor(values, dtype=torch.float).view(1, n, len(labels))
    path = crf.decode(em, torch.ones(1, n, dtype=torch.long))[0]
    assert check_sequence([labels[i] for i in path], scheme) is None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from("BMES"), max_size=30))
def test_segmentation_words_in_one_pass_follow_the_lenient_rules(tags):
    """Segmentation tags take a one-pass shortcut in lenient_spans; on any sequence, valid or
    not (M after S, E with nothing open, a trailing B), it gives the general rules' words."""
    from zhbert.tags import _lenient_loop, lenient_spans

    words = lenient_spans(tags, "BMES-untyped")
    assert words == _lenient_loop(tags, "BMES-untyped")
    if tags:  # the words tile the sequence
        assert [a for _, a, _ in words] == [0, *(b for _, _, b in words[:-1])] and words[-1][2] == len(tags)
