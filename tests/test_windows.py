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


def test_sentence_breaks_on_real_text(article, tokenizer):
    from zhbert.tokenizer import encode
    from zhbert.windows import sentence_breaks

    text = "他说：“好。”然后走了！真的吗？？是的……\n新的一行"
    enc = encode(tokenizer, text)
    assert [enc.tokens[k] for k in sentence_breaks(text, enc.offsets)] == ["然", "真", "是", "新"]  # closing quote stays
    enc = encode(tokenizer, article)
    starts = sentence_breaks(article, enc.offsets)
    assert len(starts) > 30 and starts == sorted(set(starts))
    for k in starts:  # every sentence before a break ends in a sentence mark or a closing quote
        prev = article[enc.offsets[k - 1][0]]
        assert prev in "。！？!?；;…”’」』）)》】" or "\n" in article[enc.offsets[k - 1][1] : enc.offsets[k][0]], prev


def test_sentence_breaks_by_scan_equal_the_token_by_token_reading(article, pd_sentences, weibo_posts, tokenizer):
    """sentence_breaks finds marks and line breaks by one scan of the text; on real articles,
    posts and the edge cases (marks inside NFKD expansions, closing runs, blank lines) it
    must give exactly the breaks of reading token by token."""
    from edge_cases import EDGE_CASES

    from zhbert.tokenizer import encode
    from zhbert.windows import _sentence_breaks_by_token, sentence_breaks

    edge = [e for e in EDGE_CASES if isinstance(e, str)]
    texts = [article, "\n".join(pd_sentences[:200]), "\n\n".join(weibo_posts[:200]), "".join(weibo_posts[200:400])]
    texts += edge + ["。".join(edge), "\n".join(edge), "⑵。」\n。”", "好。\n\n”真的？！」\n"]
    found = 0
    for e in encode(tokenizer, texts):
        want = _sentence_breaks_by_token(e.text, e.offsets)
        assert sentence_breaks(e.text, e.offsets) == want, e.text[:60]
        found += len(want)
    assert found > 600


@pytest.mark.parametrize("pack", [False, True])
def test_aligned_windows_never_cut_a_sentence_that_fits(pack):
    breaks = [5, 9, 30, 33, 60]  # sentences of 5, 4, 21 (longer than a window), 3, 27 and 10 tokens
    spans = windows(70, 12, None, breaks, pack=pack)
    assert spans[0][0] == 0 and spans[-1][1] == 70
    own = owners(70, spans)
    assert all(spans[own[k]][0] <= k < spans[own[k]][1] for k in range(70))
    cuts = {0, *breaks, 70}
    inside_long = [(a, b) for a, b in spans if 9 <= a and b <= 30 or 33 <= a and b <= 60]
    for a, b in spans:
        assert b - a <= 12
        if (a, b) not in inside_long:
            assert a in cuts and b in cuts  # whole sentences only
    assert len(inside_long) >= 4  # the two long sentences get overlapping windows of their own
    if pack:
        assert (0, 9) in spans  # two short sentences share a window
    else:
        assert (0, 5) in spans and (5, 9) in spans and (30, 33) in spans


def test_one_window_per_sentence_equals_each_sentence_alone(article, tiny_encoder, tokenizer):
    """The default for token heads: a long text gives the tags its sentences give one by one."""
    from zhbert.tokenizer import encode
    from zhbert.windows import sentence_breaks

    model = new_head(tiny_encoder, HeadConfig(kind="token", labels=NER_LABELS, scheme="BIO", window=64)).eval()
    assert model.head.window_align == "sentence"
    enc = encode(tokenizer, article)
    starts = [0, *sentence_breaks(article, enc.offsets), len(enc)]
    pieces = [article[enc.offsets[a][0] : enc.offsets[b - 1][1]] for a, b in zip(starts, starts[1:])]
    whole = predict_tags(model, tokenizer, [article], batch_size=7)[0].tags
    alone = [t for p in predict_tags(model, tokenizer, pieces, batch_size=7) for t in p.tags]
    assert len(whole) == len(alone) and whole == tuple(alone)
    token = new_head(tiny_encoder, HeadConfig(kind="token", labels=NER_LABELS, scheme="BIO", window=64, window_align="token")).eval()
    token.load_state_dict(model.state_dict())
    assert predict_tags(token, tokenizer, [article])[0].tags != whole  # overlapping windows read other contexts
    with pytest.raises(ValueError, match="window_align must be one of sentence, packed, token"):
        HeadConfig(kind="token", labels=NER_LABELS, scheme="BIO", window_align="paragraph")


def test_packed_sequence_windows_read_whole_sentences(article, tiny_encoder, tokenizer):
    """A sequence head with window_align="packed" pools windows of whole sentences: the same
    vector as the head over those windows given as separate texts (a window per text)."""
    from zhbert.heads import TaskCollator
    from zhbert.tokenizer import encode
    from zhbert.windows import sentence_breaks

    seq = new_head(tiny_encoder, HeadConfig(kind="sequence", labels=["a", "b"], window=64, window_align="packed")).eval()
    assert new_head(tiny_encoder, HeadConfig(kind="sequence", labels=["a"])).head.window_align == "token"
    text = article[:700]
    enc = encode(tokenizer, text)
    spans = windows(len(enc), 62, None, sentence_breaks(text, enc.offsets), pack=True)
    assert TaskCollator(tokenizer, seq.head, 64).text_spans(enc) == spans
    breaks = set(sentence_breaks(text, enc.offsets)) | {0, len(enc)}
    assert sum(a in breaks and b in breaks for a, b in spans) >= 5  # windows of whole sentences
    assert spans != windows(len(enc), 62)  # not the overlapping windows
    with torch.no_grad():
        rows = [[tokenizer.cls_token_id, *enc.ids[a:b], tokenizer.sep_token_id] for a, b in spans]
        vecs = [seq.bert(input_ids=torch.tensor([r])).pooler_output[0] for r in rows]
        want = torch.softmax(seq.classifier(torch.stack(vecs).mean(0)), -1)
    torch.testing.assert_close(predict_scores(seq, tokenizer, [text])[0], want)


def test_row_batches_hold_a_token_budget(article, tokenizer):
    from zhbert.heads.inference import row_batches, window_rows
    from zhbert.tokenizer import encode
    from zhbert.windows import sentence_breaks

    encs = encode(tokenizer, [article, article[:40], article[:300], ""])
    rows = window_rows([windows(len(e), 62, None, sentence_breaks(e.text, e.offsets)) for e in encs], keep_empty=True)
    batches = row_batches(rows, batch_size=8, max_tokens=400)
    assert [r for b in batches for r in b] == rows  # every row once, in order
    for b in batches:
        longest = max(r[2] - r[1] for r in b) + 2
        assert len(b) <= 8 and (len(b) == 1 or len(b) * longest <= 400)
    assert any(len(b) == 8 for b in batches) and any(len(b) < 8 for b in batches)  # short rows fill a batch, long ones do not
    unlimited = row_batches(rows, batch_size=None, max_tokens=400)  # rows limited by the token budget alone
    assert [r for b in unlimited for r in b] == rows and len(unlimited) < len(batches)
    assert all(len(b) == 1 or len(b) * (max(r[2] - r[1] for r in b) + 2) <= 400 for b in unlimited)


def test_narrower_models_get_a_larger_token_budget():
    from transformers import BertConfig

    from zhbert.heads.inference import MAX_BATCH_TOKENS, batch_token_budget

    budget = {size: batch_token_budget(BertConfig(intermediate_size=size)) for size in (3072, 1024, 512, 256, 128)}
    assert budget[3072] == budget[1024] == budget[512] == MAX_BATCH_TOKENS
    assert budget[256] == 2 * MAX_BATCH_TOKENS and budget[128] == 4 * MAX_BATCH_TOKENS


@pytest.mark.parametrize("breaks", [None, [5, 9, 30, 33, 60]])
def test_owner_groups_read_every_token_from_its_owner(breaks):
    """owner_groups copies windows that overlap nothing whole and picks owners only inside a
    group of overlapping ones; token by token it must name the window owners() names."""
    from zhbert.windows import owner_groups

    spans = windows(70, 12, None, breaks, pack=False)
    want = [spans[w] for w in owners(70, spans)]
    got = []
    for first, group, own in owner_groups(spans):
        got += [group[0]] * (group[0][1] - group[0][0]) if own is None else [group[w] for w in own]
    assert got == want
    assert any(own is None for _, _, own in owner_groups(spans)) == (breaks is not None)
