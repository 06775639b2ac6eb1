"""The tokenizer owns normalisation and keeps exact offsets into the original string."""

from functools import lru_cache

from edge_cases import EDGE_CASES
from hypothesis import given, settings
from hypothesis import strategies as st

from zhbert.text import is_space, token_units
from zhbert.tokenizer import encode, zhbert_normalizer

NORM = zhbert_normalizer()


def _norm(text: str) -> str:
    return NORM.normalize_str(text)


def test_normaliser_rules():
    assert _norm("ＡＢＣ１２３，") == "abc123,"
    assert _norm("a\x00b\u200bc") == "abc"
    assert _norm("\ufeff中文") == "中文"
    assert _norm("Café") == "cafe"
    assert _norm("Zoe\u0308") == "zoe"
    assert _norm("“越秀”—…") == '"越秀"-.'
    assert _norm("你好\u3000世界\x1c!") == "你好 世界 !"
    assert _norm("릤") == "릤"  # NFC recomposes the Hangul syllable NFKD took apart


def _check_offsets(tokenizer, text):
    enc = encode(tokenizer, text)
    prev = 0
    for tok, (s, e) in zip(enc.tokens, enc.offsets):
        assert 0 <= s < e <= len(text), (text, tok, s, e)
        assert s >= prev, "offsets are monotone"
        prev = s
        if tok in ("[PAD]", "[CLS]", "[SEP]", "[MASK]"):
            # special tokens are matched in the raw text before normalisation, as in plain transformers
            assert text[s:e] == tok, (text, tok, s, e)
        elif tok != "[UNK]":
            piece = tok[2:] if tok.startswith("##") else tok
            assert piece in _norm(text[s:e]), (text, tok, s, e)  # the source slice normalises to the token


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_token_offsets_property(text):
    _check_offsets(_tokenizer(), text)


@lru_cache(maxsize=1)
def _tokenizer():  # hypothesis tests cannot take function-scoped fixtures
    from zhbert.tokenizer import build_tokenizer

    return build_tokenizer()


def test_edge_cases(tokenizer):
    for text in EDGE_CASES:
        _check_offsets(tokenizer, text)
    assert encode(tokenizer, "ＡＢＣ１２３").tokens == ("abc", "##123")
    assert encode(tokenizer, "  你好\u3000\u3000世界  ").offsets == ((2, 3), (3, 4), (6, 7), (7, 8))


def test_units_keep_clusters_and_uncovered_characters(tokenizer):
    def units(text):
        enc = encode(tokenizer, text)
        return [(text[u.start : u.end], u.token >= 0) for u in token_units(text, enc.offsets, enc.word_ids)]

    assert units("Zoe\u0308在") == [("Zoe\u0308", True), ("在", True)]  # the mark stays with its letter
    assert units("👨\u200d👩\u200d👧好") == [("👨\u200d👩\u200d👧", True), ("好", True)]  # one ZWJ sequence
    assert units("我 爱\x00北京！") == [("我", True), ("爱\x00", True), ("北", True), ("京", True), ("！", True)]
    assert units("\x00") == [("\x00", False)]  # nothing to join: a unit of its own
    assert units("㍿") == [("㍿", True)]  # four tokens, one character, one unit
    assert units("Mourinho") == [("Mourinho", True)]  # word pieces of one word stay one unit


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
                assert piece in _norm(text[s:e]), (text, tok, s, e)
        # tokens are disjoint, or share one character that NFKD expanded (⑵ -> "(", "2", ")")
        covered = sorted(set(enc.offsets))
        assert all(a[1] <= b[0] for a, b in zip(covered, covered[1:]))
        assert all(is_space(c) or any(s <= i < e for s, e in enc.offsets) or not _norm(c).strip() for i, c in enumerate(text))
    assert n_tokens > 50_000


def test_the_one_unit_per_token_shortcut_gives_the_general_units(pd_sentences, weibo_posts, tokenizer, monkeypatch):
    """Most Chinese text takes a shortcut in token_units; on real sentences, posts and every
    edge case it must give exactly the units of the general construction."""
    import zhbert.text as text_module

    texts = list(pd_sentences[:400]) + list(weibo_posts[:400]) + [e for e in EDGE_CASES if isinstance(e, str)]
    encodings = encode(tokenizer, texts)
    shortcut = [text_module.own_unit_bounds(e.text, e.offsets, e.word_ids) for e in encodings]
    assert sum(u is not None for u in shortcut) > 600  # the shortcut is taken on most sentences
    # and on texts with tokens of several characters (numbers, Latin words)
    assert sum(u is not None and any(e - s > 1 for s, e in zip(*u)) for u in shortcut) > 100
    monkeypatch.setattr(text_module, "own_unit_bounds", lambda *a: None)
    for e, bounds in zip(encodings, shortcut):
        if bounds is not None:
            fast = [(s, end, t) for t, (s, end) in enumerate(zip(*bounds))]
            assert fast == token_units(e.text, e.offsets, e.word_ids), e.text


def test_texts_without_joining_characters_have_one_cluster_per_code_point():
    """The shortcut skips listing grapheme clusters when no character that can join one is
    present (zhbert.text._CAN_JOIN); for every code point, alone, doubled and between others,
    that must mean one cluster per code point."""
    from zhbert.text import _CAN_JOIN, _CLUSTER

    unchecked = 0
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        for text in (c + c, "a" + c + "b", "中" + c + "\n"):
            if not _CAN_JOIN.search(text):
                assert len(_CLUSTER.findall(text)) == len(text), hex(cp)
            else:
                unchecked += 1
    assert 0 < unchecked < 100_000  # the joiners are a small set, and they are found


def test_units_by_stretches_equal_the_general_construction(pd_sentences, weibo_posts, tokenizer):
    """A long text is cut into independent stretches (zhbert.text._stretch_units); on real
    sentences, posts, edge cases and long texts mixing them, the units must be exactly those
    of the general construction over the whole text."""
    from zhbert.text import BLOCK_TOKENS, _general_units, _stretch_units, unit_columns

    edge = [e for e in EDGE_CASES if isinstance(e, str)]
    texts = list(pd_sentences[:300]) + list(weibo_posts[:300]) + edge
    mixed = []
    for k in range(0, 300, 30):  # long texts: real sentences with the edge cases between them
        parts = list(pd_sentences[k : k + 30]) + list(weibo_posts[k : k + 10])
        mixed.append("".join(p + edge[i % len(edge)] for i, p in enumerate(parts)))
    texts += mixed + [" ".join(edge), "\x00".join(edge), "".join(edge)]
    texts += [" ".join(edge * 8), "\x00".join(edge * 8), "".join(edge * 8)]  # long: cut into blocks anywhere
    assert len(mixed) == 10 and all(len(t) > 1000 for t in mixed)
    encodings = encode(tokenizer, texts)
    assert sum(len(e) > 2 * BLOCK_TOKENS for e in encodings) >= 13  # the block path is taken
    for e in encodings:
        want = _general_units(e.text, e.offsets, e.word_ids)
        assert _stretch_units(e.text, e.offsets, e.word_ids) == want, e.text[:80]
        assert list(zip(*unit_columns(e.text, e.offsets, e.word_ids))) == want, e.text[:80]
        assert token_units(e.text, e.offsets, e.word_ids) == want


def test_is_space_takes_in_every_space_separator():
    """is_space is str.isspace: the normaliser's whitespace (isspace or Zs) is that set exactly."""
    import unicodedata

    zs = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and unicodedata.category(chr(c)) == "Zs"]
    assert len(zs) >= 17 and all(is_space(c) for c in zs)
    assert is_space("\u3000") and is_space("\x1c") and not is_space("\u200b") and not is_space("中")


def test_encode_through_the_rust_tokenizer_equals_the_transformers_call(pd_sentences, tokenizer):
    texts = [e for e in EDGE_CASES if isinstance(e, str)] + list(pd_sentences[:200])
    ours = encode(tokenizer, texts)
    theirs = tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True, truncation=False).encodings
    for o, t in zip(ours, theirs):
        assert o.ids == tuple(t.ids) and o.offsets == tuple(map(tuple, t.offsets)) and o.tokens == tuple(t.tokens)
        assert o.word_ids == tuple(-1 if w is None else w for w in t.word_ids)
