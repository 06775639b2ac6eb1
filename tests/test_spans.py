"""Spans a person expects, from the bundled segmenter and NER model on any text: sorted, never
overlapping, ``text[start:end] == span.text``; segmentation covers every non-space character
exactly once and no word contains whitespace; marks, variation selectors and ZWJ sequences stay
with their base character."""

from functools import lru_cache

from hypothesis import given, settings
from hypothesis import strategies as st

import zhbert
from zhbert.text import is_space

PIECES = (
    list("中华人民共和国北京上海江泽民克林顿的了是在和天大国庆临近々〇")
    + ["iPhone", "15", "José", "abc", "ＡＢＣ", "１２３", "，", "。", "“", "”", "！", "…", "—"]
    + ["😀", "👨\u200d👩\u200d👧", "❤\ufe0f", "👍🏽", "e\u0301", "o\u0308", "\u0301", "\ufe0f", "\u200d", "\u200b"]
    + ["릤", "한", "㍿", "⑵", "𠮷", "\x1c", "\x00", "\x07", "\ufeff"]
    + [" ", "\u3000", "\t", "\n", "\xa0", "\u2028"]
)
TEXTS = st.lists(st.sampled_from(PIECES), max_size=25).map("".join) | st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30
)


@lru_cache(maxsize=None)
def _model(name):
    return zhbert.load(name)


def _check_spans(text, spans):
    prev_end = 0
    for s in spans:
        assert s.start >= prev_end, (text, spans)  # sorted and non-overlapping
        assert s.start < s.end and text[s.start : s.end] == s.text
        prev_end = s.end


@settings(max_examples=150, deadline=None)
@given(TEXTS)
def test_segmentation_properties(text):
    words = _model("cws")(text)
    _check_spans(text, words)
    covered = [False] * len(text)
    for w in words:
        assert not any(is_space(c) for c in w.text), (text, w)
        for i in range(w.start, w.end):
            covered[i] = True
    assert all(covered[i] or is_space(c) for i, c in enumerate(text)), (text, words)


@settings(max_examples=150, deadline=None)
@given(TEXTS)
def test_ner_properties(text):
    _check_spans(text, _model("ner")(text))


def test_fuzz_regressions_from_the_issue():
    cws, ner = _model("cws"), _model("ner")
    words = cws("倢릤勞슼")
    assert len({(w.start, w.end) for w in words}) == len(words)  # was ('릤', 1, 2) twice
    ents = ner("한\x1c々")
    assert all(a.end <= b.start for a, b in zip(ents, ents[1:]))  # was 한 as both ORG and PER
    text = "各地节日气氛渐浓 国庆临近"
    assert all(" " not in w.text for w in cws(text)) and "".join(w.text for w in cws(text)) == text.replace(" ", "")
    text = "Zoe\u0308在上海"
    assert any(w.text.startswith("Zoe\u0308") for w in cws(text))  # the diaeresis stays with its letter
    text = "José Mourinho在北京"
    assert all(e.text not in ("Mourin", "ourinho") for e in ner(text))
    boundaries = {i for w in cws(text) for i in (w.start, w.end)}
    assert not boundaries & {1, 2, 3, 6, 7, 8, 9, 10, 11, 12}  # no word boundary inside José or Mourinho


def test_news_text_with_spaces_never_yields_a_word_with_a_space(pd_sentences):
    text = " ".join(pd_sentences[:200])  # about 10,000 characters with 199 spaces, windowed
    words = _model("cws")(text)
    _check_spans(text, words)
    assert not [w for w in words if " " in w.text]
    assert "".join(w.text for w in words) == text.replace(" ", "")
