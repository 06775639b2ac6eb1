"""Fill-mask evaluation bookkeeping on real People's Daily sentences."""

import bisect
import itertools
from collections import Counter

import pytest
import torch

from zhbert.tokenizer import encode
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


def test_whole_word_blanks_cover_whole_gold_words(tokenizer):
    from zhbert.data.splits import peoples_daily_heldout_words

    rows = peoples_daily_heldout_words()[:400]
    texts, words = [t for t, _ in rows], [w for _, w in rows]
    blanks = blank_positions(tokenizer, texts, seed=3, words=words)
    n_words = n_chosen = 0
    for (ids, b), w, enc in zip(blanks, words, encode(tokenizer, texts)):
        ends = list(itertools.accumulate(map(len, w)))
        owner = [bisect.bisect_right(ends, start) for start, _ in enc.offsets]  # word holding each token
        tokens_of = {}
        for k, o in enumerate(owner):
            tokens_of.setdefault(o, set()).add(k)
        for o, toks in tokens_of.items():
            assert toks <= set(b) or not toks & set(b), (w[o], w)  # never part of a word
            n_chosen += toks <= set(b)
        n_words += len(tokens_of)
    assert 0.13 < n_chosen / n_words < 0.17
    assert blanks != blank_positions(tokenizer, texts, seed=3)  # differs from char blanks
    with pytest.raises(ValueError, match="text 0: its words do not spell it"):
        blank_positions(tokenizer, ["迈向新世纪"], words=[["迈向", "世纪"]])


def test_evaluate_mlm_windows_to_the_models_positions(pd_sentences, tokenizer, tiny_encoder):
    """A checkpoint with 64 positions scores sentences longer than that (in 62-token windows)
    instead of failing on the default 128-token window."""
    from transformers import AutoModelForMaskedLM

    model = AutoModelForMaskedLM.from_pretrained(tiny_encoder)
    texts = ["".join(pd_sentences[:6])]
    assert len(encode(tokenizer, texts)[0].ids) > 64
    score = evaluate_mlm(model, tokenizer, texts)
    assert score.blanks == len(next(iter(blank_positions(tokenizer, texts, 0.15, 0)))[1]) and 0 <= score.accuracy <= 1


class Favours(torch.nn.Module):
    """Predicts one token everywhere: right exactly on the blanks that hold it."""

    def __init__(self, vocab, token):
        super().__init__()
        self.vocab, self.token = vocab, token

    def forward(self, input_ids, attention_mask):
        logits = torch.zeros(*input_ids.shape, self.vocab)
        logits[..., self.token] = 1.0
        return type("Out", (), {"logits": logits})()


def test_a_word_counts_as_filled_only_with_every_character_right(tokenizer):
    from zhbert.training.mlm_eval import blank_units

    de = tokenizer.convert_tokens_to_ids("的")
    model = Favours(len(tokenizer), de)
    # one word blanked, half of it right: half the characters, none of the words
    half = evaluate_mlm(model, tokenizer, ["的是"], rate=1.0, words=[["的是"]])
    assert (half.blanks, half.accuracy, half.unit_accuracy) == (2, 0.5, 0.0)
    texts, words = ["的的是的"] * 60, [["的的", "是", "的"]] * 60
    score = evaluate_mlm(model, tokenizer, texts, rate=0.34, seed=2, words=words)
    chosen = [units for _, units in blank_units(tokenizer, texts, 0.34, 2, words)]
    whole = [len(u) for units in chosen for u in units if u != [2]]  # 的的 (2 tokens) or 的 (1): all right; 是: wrong
    assert score.unit_accuracy == pytest.approx(len(whole) / sum(len(units) for units in chosen))
    assert score.accuracy == pytest.approx(sum(whole) / score.blanks) and 0 < score.unit_accuracy < 1
    # char blanks: every unit one token, so whole units are the characters
    chars = evaluate_mlm(model, tokenizer, texts, seed=2)
    assert chars.unit_accuracy == pytest.approx(chars.accuracy) and "unit_accuracy" in chars.to_dict()
