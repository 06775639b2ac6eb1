"""Fill-mask evaluation bookkeeping on real People's Daily sentences."""
from collections import Counter

import pytest
import torch

from zhbert.training.mlm_eval import blank_positions, evaluate_mlm, evaluate_unigram


class Uniform(torch.nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.vocab = vocab

    def forward(self, input_ids, attention_mask):
        return type("Out", (), {"logits": torch.zeros(*input_ids.shape, self.vocab)})()


def test_blanks_are_15_percent_deterministic_and_each_scored_once(pd_sentences, tokenizer):
    texts = pd_sentences[:300] + ["".join(pd_sentences[:20])]  # one text longer than the window
    a = blank_positions(tokenizer, texts, seed=1)
    assert a == blank_positions(tokenizer, texts, seed=1)
    n_tokens = sum(len(ids) for ids, _ in a)
    n_blanks = sum(len(b) for _, b in a)
    assert 0.14 < n_blanks / n_tokens < 0.17
    score = evaluate_mlm(Uniform(len(tokenizer)), tokenizer, texts, seed=1, max_length=64)
    assert score.blanks == n_blanks
    assert score.perplexity == pytest.approx(len(tokenizer), rel=1e-4)  # uniform over the vocabulary


def test_unigram_baseline_by_hand(tokenizer):
    texts = ["的的的是"] * 10
    counts = Counter({tokenizer.convert_tokens_to_ids("的"): 30, tokenizer.convert_tokens_to_ids("是"): 10})
    s = evaluate_unigram(counts, tokenizer, texts, rate=0.5, seed=0)
    blanks = [ids[k] for ids, b in blank_positions(tokenizer, texts, rate=0.5, seed=0) for k in b]
    de = tokenizer.convert_tokens_to_ids("的")
    assert s.accuracy == pytest.approx(sum(t == de for t in blanks) / len(blanks))
