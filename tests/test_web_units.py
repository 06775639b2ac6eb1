"""Web text units: found exactly, one word each in segmentation, never cut by an entity."""

from __future__ import annotations

import pytest

import zhbert
from zhbert.web_units import DEFAULT_KINDS, KINDS, WebUnits, snap_entities

ISSUE_POST = "…喝了杯latte☕️，和@小明 一起看了Apple发布会 #iPhone16# 太贵了吧😂😂 https://t.cn/abc"


@pytest.fixture(scope="module")
def cws():
    return zhbert.load("cws")


@pytest.fixture(scope="module")
def real_posts(weibo_posts, datasets_dir):
    """SMP2020 Weibo posts and NLPCC-2016 Weibo lines that hold a unit of some kind, plus the issue's post."""
    from zhbert.data import read_segmented

    nlpcc = ["".join(w) for w in read_segmented(str(datasets_dir / "nlpcc2016_weibo_cws" / "nlpcc2016-wordseg-dev.dat"))["words"]]
    finder = WebUnits(KINDS)
    posts = [p for p in list(weibo_posts) + nlpcc if any(k != "number" for *_, k in finder.spans(p))]
    return posts + [ISSUE_POST]


def test_units_of_every_kind_are_found_exactly():
    found = [(ISSUE_POST[s:e], k) for s, e, k in WebUnits(KINDS).spans(ISSUE_POST)]
    assert found == [
        ("latte", "latin"),
        ("☕️", "emoji"),  # the variation selector stays with its emoji
        ("@小明", "mention"),
        ("Apple", "latin"),
        ("#iPhone16#", "topic"),
        ("😂", "emoji"),
        ("😂", "emoji"),
        ("https://t.cn/abc", "url"),
    ]
    text = (
        "请发邮件到a.b@pku.edu.cn或访问https://www.pku.edu.cn/。增长2.5%，主频3.5GHz，ｉＰｈｏｎｅ１５，👨‍👩‍👧，👍🏽，//@李小璐Super璐:转发"
    )
    found = [(text[s:e], k) for s, e, k in WebUnits(KINDS).spans(text)]
    assert ("a.b@pku.edu.cn", "email") in found and ("https://www.pku.edu.cn/", "url") in found  # the 。 is not the URL's
    assert ("2.5%", "number") in found and ("3.5GHz", "number") in found and ("ｉＰｈｏｎｅ１５", "latin") in found
    assert ("👨\u200d👩\u200d👧", "emoji") in found and ("👍🏽", "emoji") in found and ("@李小璐Super璐", "mention") in found
    # a run longer than any Weibo nickname is no mention: where it ends cannot be known
    assert WebUnits(["mention"]).spans("@" + "长" * 40) == []
    with pytest.raises(ValueError, match="unknown web unit kind.*'urls'"):
        WebUnits(["urls"])


def test_each_unit_is_one_word_on_real_weibo_posts(cws, real_posts):
    assert len(real_posts) > 150
    finder = WebUnits(DEFAULT_KINDS)
    units = 0
    for text, words in zip(real_posts, cws(real_posts, batch_size=16)):
        spans = {(w.start, w.end) for w in words}
        assert "".join(w.text for w in words) == "".join(text.split())
        for s, e, kind in finder.spans(text):
            units += 1
            assert (s, e) in spans, (text[s:e], kind, [w.text for w in words])
    assert units > 200
    plain = [w.text for w in zhbert.load("cws", web_units=False)(ISSUE_POST)]
    assert "https://t.cn/abc" not in plain  # what the layer fixes: the bare model cuts the URL
    assert [w.text for w in cws(ISSUE_POST)][-3:] == ["😂", "😂", "https://t.cn/abc"]


def test_no_entity_edge_inside_a_unit_but_between_marks(real_posts):
    ner = zhbert.load("ner", web_units=list(KINDS))
    finder = WebUnits(KINDS)
    marks = {"mention": (1, 0), "topic": (1, 1)}  # characters of mark before and after a name's text
    for text, ents in zip(real_posts, ner(real_posts, batch_size=16)):
        for s, e, kind in finder.spans(text):
            for ent in ents:
                if kind in marks and ent.start < e and ent.end > s:  # inside an @mention or #topic#: between the marks
                    assert s + marks[kind][0] <= ent.start and ent.end <= e - marks[kind][1], (text, ent, text[s:e])
                else:
                    assert not (s < ent.start < e or s < ent.end < e), (text, ent, text[s:e])
    assert [(e.text, e.label) for e in ner(ISSUE_POST)] == [("小明", "PER")]


def test_names_in_mentions_keep_to_the_nickname(real_posts):
    """A name inside an @mention comes out without the @, also where the model took the @ in;
    with the units off, the model alone may tag the mark too."""
    text = "好雷//@刘希平:回复@晓艾:还真是沉"
    assert [(e.text, e.label) for e in zhbert.load("ner")(text)] == [("刘希平", "PER"), ("晓艾", "PER")]
    for ents in zhbert.load("ner")(real_posts, batch_size=16):
        assert not any(e.text.startswith("@") for e in ents)


def test_snap_cuts_widens_or_drops():
    units = [(2, 5, "mention"), (8, 20, "url"), (22, 30, "latin"), (32, 38, "topic")]
    ents = [(3, 5, "PER", 0.9), (6, 7, "LOC", 0.8), (9, 12, "ORG", 0.7), (5, 9, "ORG", 0.6), (24, 26, "ORG", 0.5)]
    assert snap_entities(ents, units) == [(3, 5, "PER", 0.9), (6, 7, "LOC", 0.8), (22, 30, "ORG", 0.5)]
    assert snap_entities([(2, 5, "PER", 1.0)], units) == [(3, 5, "PER", 1.0)]  # the @ taken in is cut off
    assert snap_entities([(1, 4, "PER", 1.0)], units) == [(3, 4, "PER", 1.0)]  # across the unit's start: the nickname part
    assert snap_entities([(2, 3, "PER", 1.0)], units) == []  # the @ alone
    assert snap_entities([(31, 38, "LOC", 1.0)], units) == [(33, 37, "LOC", 1.0)]  # a topic's two marks
    assert snap_entities([(21, 31, "ORG", 1.0)], units) == [(21, 31, "ORG", 1.0)]  # a Latin word wholly inside stays as is


def test_forced_decoding_keeps_the_other_tokens_plain(cws, pd_sentences):
    """A softmax head decodes forced words by masking their tags only: every other token keeps its tag."""
    from zhbert.dictionary import read_dictionary
    from zhbert.heads.inference import predict_tags
    from zhbert.heads.user_dict import ForcedWords

    texts = [t for t in pd_sentences[:300] if "发展" in t][:40]
    forced = ForcedWords(read_dictionary(["展中"]), cws.head.labels, cws.head.scheme, units=WebUnits(KINDS))
    plain = predict_tags(cws.model, cws.tokenizer, texts)
    held = predict_tags(cws.model, cws.tokenizer, texts, forced=forced)
    changed = 0
    for p, h in zip(plain, held):
        inside = set(forced.token_constraints(p.encoding.text, p.encoding.offsets).tokens.tolist())
        assert all(a == b for i, (a, b) in enumerate(zip(p.tags, h.tags)) if i not in inside)
        changed += sum(a != b for a, b in zip(p.tags, h.tags))
    assert changed > 0


def test_web_units_argument_is_checked():
    with pytest.raises(ValueError, match="web_units applies to segmentation and NER"):
        zhbert.load("tagging", web_units=["url"])
    with pytest.raises(ValueError, match="unknown web unit kind"):
        zhbert.load("cws", web_units=["hashtag"])
    assert zhbert.load("tagging") is not None  # the default is ignored by classification heads


def test_cli_web_units(tmp_path):
    import json
    import subprocess
    import sys

    def words(*flags):
        out = subprocess.run(
            [sys.executable, "-m", "zhbert", "predict", "--model", "cws", *flags],
            input=ISSUE_POST + "\n",
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert out.returncode == 0, out.stderr[-1000:]
        return [w["text"] for w in json.loads(out.stdout)["words"]]

    assert "https://t.cn/abc" in words() and "https://t.cn/abc" not in words("--web-units", "none")
    assert "latte" in words("--web-units", "emoji,latin")
    out = subprocess.run(
        [sys.executable, "-m", "zhbert", "predict", "--model", "cws", "--web-units", "urls"], input="x\n", capture_output=True, text=True
    )
    assert out.returncode != 0 and "unknown web unit kind(s) 'urls'" in out.stderr and "Traceback" not in out.stderr
