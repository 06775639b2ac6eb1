"""Traditional characters read as simplified inside tokenizer.json, offsets into the caller's text."""

from __future__ import annotations

import importlib.util

import pytest
from transformers import AutoTokenizer

from zhbert.models_registry import BUNDLED_DIR
from zhbert.tokenizer import build_tokenizer, encode, normalizer_name, simplify_traditional, zhbert_normalizer
from zhbert.traditional import CHARSMAP, read_table


@pytest.fixture(scope="module")
def table():
    return read_table()


def test_every_table_entry_and_nothing_else_is_mapped(table):
    normalizer = zhbert_normalizer()
    traditional = "".join(table)
    assert normalizer.normalize_str(traditional) == "".join(table.values())
    # simplified characters that are also traditional forms stay: 著名, 乾隆, 夥伴, and every target
    for kept in ("著", "乾", "夥", "吒", "嗰", "干", "台", "后", "于"):
        assert kept not in table and normalizer.normalize_str(kept) == kept
    assert len(table) > 4000 and all(len(k) == len(v) == 1 for k, v in table.items())
    assert table["後"] == "后" and table["髮"] == "发" and table["臺"] == "台" and table["於"] == "于"


def test_offsets_point_into_the_traditional_text(tokenizer, datasets_dir):
    texts = [line.strip() for line in open(datasets_dir / "sighan2005_icwb2" / "cityu_test.utf8", encoding="utf-8")][:300]
    mapped = 0
    for text, enc in zip(texts, encode(tokenizer, texts)):
        han = [(tok, text[s:e]) for tok, (s, e) in zip(enc.tokens, enc.offsets) if e - s == 1 and len(tok) == 1]
        assert all(e > s for s, e in enc.offsets)
        mapped += sum(tok != src for tok, src in han)
    assert mapped > 1000  # CityU is traditional: thousands of characters read as simplified, offsets intact
    enc = encode(tokenizer, "臺灣大學的學生在圖書館讀書，後來乾隆")
    assert enc.tokens == tuple("台湾大学的学生在图书馆读书,后来乾隆")
    assert [enc.text[s:e] for s, e in enc.offsets] == list("臺灣大學的學生在圖書館讀書，後來乾隆")


def test_simplified_text_reads_as_before(tokenizer, pd_sentences, weibo_posts, table):
    from zhbert.tokenizer import _our_pipeline_json

    old = build_tokenizer()
    old.backend_tokenizer.normalizer = zhbert_normalizer("zhbert-1")
    texts = list(pd_sentences[:1000])
    assert [e.ids for e in encode(old, texts)] == [e.ids for e in encode(tokenizer, texts)]  # People's Daily: unchanged
    # Weibo: the posts that differ are the ones with traditional characters, and only those differ
    changed = [(a, b) for a, b in zip(encode(old, weibo_posts[:1000]), encode(tokenizer, weibo_posts[:1000])) if a.ids != b.ids]
    assert 0 < len(changed) <= 20
    for a, b in changed:
        assert all(x == y or table.get(x) == y for x, y in zip(a.tokens, b.tokens)), (a.tokens, b.tokens)
    assert normalizer_name(old) == "zhbert-1" and normalizer_name(tokenizer) == "zhbert-2"
    assert _our_pipeline_json("zhbert-1") != _our_pipeline_json("zhbert-2")


def test_plain_transformers_reads_traditional_as_zhbert_does(tmp_path):
    from zhbert.tokenizer import load_tokenizer

    text = "香港特別行政區政府於今日發表聲明"
    for name in ("cws", "ner", "base"):
        plain = AutoTokenizer.from_pretrained(str(BUNDLED_DIR / name))
        assert plain(text)["input_ids"] == load_tokenizer(BUNDLED_DIR / name)(text)["input_ids"]
        assert plain.tokenize(text) == list("香港特别行政区政府于今日发表声明")


def test_a_zhbert_1_folder_upgrades_and_others_are_refused(tmp_path, tokenizer):
    from zhbert.tokenizer import load_tokenizer, save_tokenizer

    old = build_tokenizer()
    old.backend_tokenizer.normalizer = zhbert_normalizer("zhbert-1")
    save_tokenizer(old, tmp_path / "old")
    assert normalizer_name(load_tokenizer(tmp_path / "old")) == "zhbert-1"  # a saved folder keeps its normaliser
    save_tokenizer(simplify_traditional(load_tokenizer(tmp_path / "old")), tmp_path / "new")
    upgraded = AutoTokenizer.from_pretrained(str(tmp_path / "new"))
    assert upgraded.tokenize("臺灣") == ["台", "湾"] and normalizer_name(old) == "zhbert-1"
    with pytest.raises(ValueError, match="zhbert-1"):
        simplify_traditional(tokenizer)
    with pytest.raises(ValueError, match="unknown normaliser version"):
        zhbert_normalizer("zhbert-9")


def test_bundled_models_read_traditional_text():
    import zhbert

    words = [w.text for w in zhbert.load("cws")("臺灣大學的學生在圖書館讀書")]
    assert words[-2:] == ["圖書館", "讀書"] and "學生" in words
    assert [(e.text, e.label) for e in zhbert.load("ner")("臺灣大學的學生在圖書館讀書")] == [("臺灣大學", "ORG")]


@pytest.mark.skipif(not importlib.util.find_spec("opencc"), reason="opencc is a dev dependency")
def test_table_is_opencc_character_table(table):
    import opencc

    converter = opencc.OpenCC("t2s")
    assert all(converter.convert(t) == s for t, s in table.items())


@pytest.mark.skipif(not importlib.util.find_spec("sentencepiece"), reason="sentencepiece is a dev dependency")
def test_charsmap_is_compiled_from_the_table(table):
    from zhbert.traditional import compile_charsmap

    assert compile_charsmap(table) == CHARSMAP.read_bytes()
