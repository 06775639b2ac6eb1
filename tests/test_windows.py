"""Sliding windows on People's Daily articles joined to 3,000+ characters."""

import pytest
import torch

from zhbert.data.peoples_daily import NER_LABELS
from zhbert.heads import HeadConfig, char_spans, new_head, predict_scores, predict_tags
from zhbert.windows import owners, windows


@pytest.mark.parametrize("n, size, stride", [(0, 10, None), (5, 10, None), (10, 10, 5), (11, 10, 5), (100, 10, 3), (3000, 62, 31)])
def test_windows_cover_and_owners_are_central(n, size, stride):
    spans = windows(n, size, stride)
    assert all(b - a <= size for a, b in spans) and spans[-1][1] == n and spans[0][0] == 0
    own = owners(n, spans)
    for k in range(n):
        a, b = spans[own[k]]
        assert a <= k < b
        margin = min(k - a, b - 1 - k)
        assert all(margin >= min(k - x, y - 1 - k) for x, y in spans if x <= k < y)  # farthest from an edge


def test_bad_window_settings():
    with pytest.raises(ValueError, match="stride"):
        windows(100, 10, 11)
    with pytest.raises(ValueError, match=r"\(3 tokens\), got 2"):
        HeadConfig(kind="sequence", labels=["a"], window=2)


@pytest.fixture(scope="module")
def article(peoples_daily):
    text = ""
    for t in peoples_daily["text"]:
        text += t
        if len(text) >= 3200:
            return text


def test_long_article_every_character_predicted_once(article, tiny_encoder, tokenizer):
    assert len(article) >= 3000
    model = new_head(tiny_encoder, HeadConfig(kind="token", labels=NER_LABELS, scheme="BIO", window=64, stride=20)).eval()
    pred = predict_tags(model, tokenizer, [article])[0]
    enc = pred.encoding
    assert len(pred.tags) == len(enc.ids) > 64 * 10  # many windows, one tag per token
    covered = [0] * len(article)
    for s, e in enc.offsets:
        assert article[s:e]  # offsets round-trip into the original text
        for i in range(s, e):
            covered[i] += 1
    assert all(c == 1 for ch, c in zip(article, covered) if not ch.isspace())  # each character exactly once
    for typ, s, e in char_spans(pred, "BIO"):
        assert 0 <= s < e <= len(article)


def test_window_larger_than_text_equals_unwindowed(article, tiny_encoder, tokenizer):
    text = article[:50]
    windowed = new_head(tiny_encoder, HeadConfig(kind="token", labels=NER_LABELS, scheme="BIO", window=64)).eval()
    plain = new_head(tiny_encoder, HeadConfig(kind="token", labels=NER_LABELS, scheme="BIO", window=64, truncate=True)).eval()
    windowed.classifier.load_state_dict(plain.classifier.state_dict())
    assert predict_tags(windowed, tokenizer, [text])[0].tags == predict_tags(plain, tokenizer, [text])[0].tags
    seq = new_head(tiny_encoder, HeadConfig(kind="sequence", labels=["a", "b"], window=64, window_pool="mean-max")).eval()
    from zhbert.heads import TaskCollator
    from zhbert.tokenizer import encode

    ids = list(encode(tokenizer, text).ids)
    batch = TaskCollator(tokenizer, seq.head, 64)([{"input_ids": ids}])
    assert batch["input_ids"].shape[0] == 1  # one window
    direct = seq(input_ids=torch.tensor([[tokenizer.cls_token_id] + ids + [tokenizer.sep_token_id]])).logits
    torch.testing.assert_close(predict_scores(seq, tokenizer, [text]), torch.softmax(direct, -1))


def test_sequence_windows_pool_per_example(article, tiny_encoder, tokenizer):
    seq = new_head(tiny_encoder, HeadConfig(kind="sequence", labels=["a", "b", "c"], window=64, window_pool="mean-max")).eval()
    texts = [article, article[:30], article[:1000]]
    probs = predict_scores(seq, tokenizer, texts, batch_size=2)
    assert probs.shape == (3, 3)
    one_by_one = torch.cat([predict_scores(seq, tokenizer, [t]) for t in texts])
    torch.testing.assert_close(probs, one_by_one)
