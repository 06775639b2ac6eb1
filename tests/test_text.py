"""Normalisation keeps exact offsets into the original string."""
from hypothesis import given, settings
from hypothesis import strategies as st

from zhbert.text import char_units, normalize
from zhbert.tokenizer import encode

EDGE_CASES = ["", " ", "😀", "𠮷", "臺灣大學", "iPhone15发布于2023年", "ＡＢＣ１２３", "，。！？", "\u3000", "a\x00b\x07c", "e\u0301", "👨\u200d👩\u200d👧", "\ufeff中文"]


def _check_alignment(text):
    n = normalize(text)
    assert len(n.starts) == len(n.ends) == len(n.text)
    prev_end = 0
    for i, ch in enumerate(n.text):
        s, e = n.starts[i], n.ends[i]
        assert 0 <= s < e <= len(text)
        assert s >= prev_end, "offsets must be monotone and non-overlapping"
        prev_end = e
        if ch == " ":
            # a collapsed run: whitespace, possibly with removed characters inside
            assert normalize(text[s:e]).text == "" and any(c.isspace() for c in text[s:e])
        else:
            assert normalize(text[s:e]).text == ch  # the source slice normalises to the char


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_alignment_property_arbitrary_unicode(text):
    _check_alignment(text)


_TOKENIZER = None


def _tok():
    global _TOKENIZER
    if _TOKENIZER is None:
        from zhbert.tokenizer import build_tokenizer

        _TOKENIZER = build_tokenizer()
    return _TOKENIZER


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_token_offsets_property(text):
    enc = encode(_tok(), text)
    prev = 0
    for tok, (s, e) in zip(enc.tokens, enc.offsets):
        assert 0 <= s <= e <= len(text)
        assert s >= prev or s == prev  # monotone
        prev = s
        if tok != "[UNK]":
            piece = tok[2:] if tok.startswith("##") else tok
            assert normalize(text[s:e]).text == piece


def test_edge_cases():
    for text in EDGE_CASES:
        _check_alignment(text)
    assert normalize("ＡＢＣ１２３").text == "abc123"
    assert normalize("  你好\u3000\u3000世界  ").text == "你好 世界"
    n = normalize("  你好\u3000\u3000世界  ")
    assert n.original_span(2, 3) == (4, 6)  # the collapsed space covers both U+3000
    assert normalize("a\x00b\u200bc").text == "abc"
    assert normalize("\ufeff中文").text == "中文"
    assert normalize("Café").text == "cafe"


def test_char_units_skip_spaces_and_controls():
    units = char_units("我 爱\x00北京！")
    assert [u[0] for u in units] == ["我", "爱", "北", "京", "!"]
    assert [(u[1], u[2]) for u in units] == [(0, 1), (2, 3), (4, 5), (5, 6), (6, 7)]


def test_offsets_round_trip_on_real_sentences(pd_sentences, weibo_posts, tokenizer):
    texts = list(pd_sentences) + list(weibo_posts[:500])
    assert len(texts) >= 2000
    encs = encode(tokenizer, texts)
    n_tokens = 0
    for text, enc in zip(texts, encs):
        assert len(enc.ids) > 0
        for tok, (s, e) in zip(enc.tokens, enc.offsets):
            n_tokens += 1
            assert 0 <= s < e <= len(text)
            if tok != "[UNK]":
                piece = tok[2:] if tok.startswith("##") else tok
                assert normalize(text[s:e]).text == piece, (text, tok, s, e)
        # every visible character is covered by exactly one token
        covered = sorted(enc.offsets)
        assert all(a[1] <= b[0] for a, b in zip(covered, covered[1:]))
    assert n_tokens > 50_000
