"""The tokenizer is a plain BertTokenizerFast with a full vocabulary and low [UNK]."""

from transformers import AutoTokenizer

from zhbert.tokenizer import encode, load_tokenizer, unk_rate


def test_full_vocabulary_not_the_vocab_file_trap(tokenizer):
    assert len(tokenizer) == 21128
    assert tokenizer.convert_tokens_to_ids("中") != tokenizer.unk_token_id
    assert tokenizer.tokenize("中华人民共和国") == list("中华人民共和国")


def test_saved_tokenizer_loads_in_plain_transformers(tmp_path, tokenizer):
    tokenizer.save_pretrained(tmp_path)
    plain = AutoTokenizer.from_pretrained(str(tmp_path))
    text = "新华社北京1月1日电，iPhone15发布于2023年。"
    assert plain(text)["input_ids"] == tokenizer(text)["input_ids"]
    assert load_tokenizer(tmp_path).vocab == tokenizer.vocab


def test_one_token_per_han_character_wordpiece_for_latin(tokenizer):
    enc = encode(tokenizer, "iPhone15发布于2023年")
    assert enc.tokens == ("iphone", "##15", "发", "布", "于", "202", "##3", "年")
    assert enc.offsets[0] == (0, 6)
    # an emoji does not turn a Latin word into [UNK]
    enc = encode(tokenizer, "abc123😀")
    assert enc.tokens[:2] == ("abc", "##123") and enc.tokens[-1] == "[UNK]"


def test_batch_equals_one_by_one(tokenizer, pd_sentences):
    texts = list(pd_sentences[:50]) + ["", "😀", "ＡＢＣ１２３"]
    batch = encode(tokenizer, texts)
    assert [b.ids for b in batch] == [encode(tokenizer, t).ids for t in texts]


def test_unk_rate_on_real_text(tokenizer, pd_sentences, weibo_posts):
    pd_rate, _, pd_n = unk_rate(tokenizer, pd_sentences)
    wb_rate, _, wb_n = unk_rate(tokenizer, weibo_posts)
    assert pd_n > 50_000 and wb_n > 20_000
    assert pd_rate < 0.0005, pd_rate  # People's Daily: measured 0.011% over the whole month
    assert wb_rate < 0.005, wb_rate  # Weibo: measured 0.21%, mostly emoji


def test_folders_older_zhbert_made_get_the_normaliser_on_load(tmp_path):
    """An older zhbert folder: a stock BertTokenizer saved beside a model trained on normalised text."""
    import json
    import shutil

    from transformers import BertTokenizerFast

    from zhbert.models_registry import BUNDLED_DIR
    from zhbert.tokenizer import has_zhbert_normalizer

    legacy = tmp_path / "legacy"
    shutil.copytree(BUNDLED_DIR / "ner", legacy)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        (legacy / f).unlink()
    stock = BertTokenizerFast(vocab=load_tokenizer(BUNDLED_DIR / "ner").get_vocab(), do_lower_case=True)
    stock.save_pretrained(legacy)
    config = json.loads((legacy / "config.json").read_text(encoding="utf-8"))
    del config["zhbert_encoder"]
    (legacy / "config.json").write_text(json.dumps(config), encoding="utf-8")
    assert not has_zhbert_normalizer(AutoTokenizer.from_pretrained(str(legacy)))
    converted = load_tokenizer(legacy)
    assert has_zhbert_normalizer(converted) and converted.tokenize("，“越秀”１９") == [",", '"', "越", "秀", '"', "19"]
    # a checkpoint from elsewhere (no zhbert settings) keeps its own tokenizer, as plain transformers reads it
    del config["zhbert_head"]
    (legacy / "config.json").write_text(json.dumps(config), encoding="utf-8")
    assert not has_zhbert_normalizer(load_tokenizer(legacy))
