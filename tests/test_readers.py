"""Every reader loads its real file and matches the counts in SOURCES.md."""

from collections import Counter

import pytest

from zhbert import data
from zhbert.errors import DataFormatError
from zhbert.tags import check_sequence


def test_peoples_daily(peoples_daily):
    lines = data.read_peoples_daily(split_sentences=False)
    assert len(lines) == 19484  # SOURCES.md: 19,484 lines
    assert lines[0]["words"][:3] == ["迈向", "充满", "希望"] and lines[0]["pos"][:3] == ["v", "v", "n"]
    # surname + given name (江/nr 泽民/nr) form one person
    row = lines[1]
    assert {"type": "PER", "start": 12, "end": 15, "text": "江泽民"} in row["entities"]
    assert {"type": "ORG", "start": 0, "end": 4, "text": "中共中央"} in row["entities"]
    assert len(peoples_daily) > len(lines)  # paragraphs cut into sentences
    assert sum(len(t) for t in peoples_daily["text"]) == sum(len(t) for t in lines["text"])  # nothing lost
    names = peoples_daily.features["ner_tags"].feature.names
    for tags in peoples_daily.select(range(2000))["ner_tags"]:
        assert check_sequence([names[t] for t in tags], "BIO") is None


def test_peoples_daily_overlap_with_eval_sets(peoples_daily, datasets_dir):
    pku = data.read_segmented(str(datasets_dir / "sighan2005_icwb2" / "pku_test_gold.utf8"))["text"]
    kept, removed = data.remove_overlap(peoples_daily, pku)
    assert len(kept) + removed == len(peoples_daily)
    # measured: 269 People's Daily sentences also occur in the PKU test, all short boilerplate
    # ("（新华社北京１月１日电）", "图片新闻"); they are removed and reported in bench/LOG.md
    assert removed == 269
    key = data.peoples_daily.overlap_key
    assert not set(map(key, kept["text"])) & set(map(key, pku))
    ner = [t for f in ("example.dev", "example.test") for t in data.read_char_tagged(str(datasets_dir / "peoples_daily_ner" / f))["text"]]
    kept2, removed2 = data.remove_overlap(peoples_daily, ner)
    assert not set(map(key, kept2["text"])) & set(map(key, ner))


@pytest.mark.parametrize(
    "name,expected",
    [("pku_test_gold", 1944), ("msr_test_gold", 3985), ("as_testing_gold", 14429), ("cityu_test_gold", 1492)],
)
def test_sighan_gold(datasets_dir, name, expected):
    ds = data.read_segmented(str(datasets_dir / "sighan2005_icwb2" / f"{name}.utf8"))
    assert len(ds) == expected
    row = ds[0]
    assert "".join(row["words"]) == row["text"] and len(row["tags"]) == len(row["text"])


def test_sighan_raw_and_gold_align(datasets_dir):
    raw = data.read_lines(str(datasets_dir / "sighan2005_icwb2" / "pku_test.utf8"), keep_empty=False)
    gold = data.read_segmented(str(datasets_dir / "sighan2005_icwb2" / "pku_test_gold.utf8"))
    assert len(raw) == len(gold) == 1944
    assert all(r.replace(" ", "") == g for r, g in zip(raw["text"][:200], gold["text"][:200]))


def test_nlpcc2016_weibo_cws(datasets_dir):
    d = datasets_dir / "nlpcc2016_weibo_cws"
    assert len(data.read_segmented(str(d / "nlpcc2016-word-seg-train.dat"))) == 20135
    assert len(data.read_segmented(str(d / "nlpcc2016-wordseg-dev.dat"))) == 2052
    assert len(data.read_lines(str(d / "nlpcc2016-wordseg-test.dat"))) == 8592


def test_peoples_daily_ner(datasets_dir):
    dev = data.read_char_tagged(str(datasets_dir / "peoples_daily_ner" / "example.dev"))
    test = data.read_char_tagged(str(datasets_dir / "peoples_daily_ner" / "example.test"))
    assert (len(dev), sum(map(len, dev["text"]))) == (2318, 109870)
    assert (len(test), sum(map(len, test["text"]))) == (4636, 219197)
    assert dev.features["tags"].feature.names == ["O", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-PER", "I-PER"]


def _raw_b_counts(text):
    return Counter(line.split("\t")[1][2:] for line in text.split("\n") if "\tB-" in line)


def test_msra_split_rule(datasets_dir):
    import zipfile

    zpath = str(datasets_dir / "msra_ner" / "dh_msra.zip")
    train, test = data.read_msra_ner(zpath, "train"), data.read_msra_ner(zpath, "test")
    assert len(train) == 50658 and sum(map(len, train["text"])) == 2169879
    assert len(test) == 4631 and sum(map(len, test["text"])) == 172601
    assert test[0]["text"].startswith("中共中央致中国致公党十一大的贺词")
    assert train[-1]["text"].endswith("法国的真实电影节上。")
    raw = zipfile.ZipFile(zpath).read("dh_msra.txt").decode("utf-8")
    split_at = raw.index("中\tB-ORG\n共\tI-ORG\n中\tI-ORG\n央\tI-ORG\n致", 13_000_000 // 3)
    assert _raw_b_counts(raw[:split_at]) == {"PER": 17615, "LOC": 36517, "ORG": 20571}  # SOURCES.md
    # a handful of I-PER after O are read as B-PER (conlleval convention): a few more entities
    got = Counter(e["type"] for es in train["entities"] for e in es)
    assert got["LOC"] == 36517 and 0 <= got["PER"] - 17615 <= 10 and 0 <= got["ORG"] - 20571 <= 10
    alt = data.read_char_tagged(str(datasets_dir / "msra_ner" / "msra_test_bio.txt"), sep="\t")
    assert len(alt) == 3442 and sum(map(len, alt["text"])) == 172601


def test_resume_and_weibo_ner(datasets_dir):
    counts = {"train": 3821, "dev": 463, "test": 477}
    for split, n in counts.items():
        ds = data.read_char_tagged(str(datasets_dir / "resume_ner" / f"{split}.char.bmes"), merge_split_spans=True)
        merged = 2 if split == "train" else 0  # two entities broken by a sentence split are joined
        assert len(ds) == n - merged
        assert "B-NAME" in ds.features["tags"].feature.names and "M-NAME" in ds.features["tags"].feature.names
    assert (
        sum(map(len, data.read_char_tagged(str(datasets_dir / "resume_ner" / "train.char.bmes"), merge_split_spans=True)["text"])) == 124099
    )
    chars = {"train": 73778, "dev": 14509, "test": 14842}
    for split, n in {"train": 1350, "dev": 270, "test": 270}.items():
        ds = data.read_char_tagged(
            str(datasets_dir / "weibo_ner" / f"weiboNER_2nd_conll.{split}"), sep="\t", position_digits=True, repair_bio=True
        )
        assert len(ds) == n
        assert sum(len(t) for t in ds["tokens"]) == chars[split]
        assert "B-PER.NAM" in ds.features["tags"].feature.names
        assert all(len(t) == 1 or set(t) == {"\ufffd"} for tokens in ds["tokens"] for t in tokens)
        if split == "train":
            # a URL is one jieba word, so its positions reach two digits ("p10"): the 'p' stays one character
            assert any("http://t.cn/" in text for text in ds["text"])


def test_position_digits_must_follow_one_character(tmp_path):
    good = tmp_path / "good.conll"
    good.write_text("h8\tO\np10\tO\n\ufffd\ufffd0\tO\n42\tO\n", encoding="utf-8")
    ds = data.read_char_tagged(str(good), sep="\t", position_digits=True)
    assert ds[0]["tokens"] == ["h", "p", "\ufffd\ufffd", "4"]
    for bad, lineno in [("中\tO\n", 1), ("h8\tO\n中国0\tO\n", 2), ("h8\tO\nhx\tO\n", 2)]:
        path = tmp_path / "bad.conll"
        path.write_text(bad, encoding="utf-8")
        with pytest.raises(data.DataFormatError, match=rf"bad\.conll:{lineno}: expected a character followed by its position"):
            data.read_char_tagged(str(path), sep="\t", position_digits=True)


def test_resume_without_repair_names_the_line(datasets_dir):
    with pytest.raises(
        data.DataFormatError if hasattr(data, "DataFormatError") else Exception, match=r"train\.char\.bmes:\d+: invalid BMES"
    ):
        data.read_char_tagged(str(datasets_dir / "resume_ner" / "train.char.bmes"))


def test_cluener(datasets_dir):
    for split, n in {"train": 10748, "dev": 1343, "test": 1345}.items():
        ds = data.read_cluener(str(datasets_dir / "cluener2020" / f"{split}.json"))
        assert len(ds) == n
    dev = data.read_cluener(str(datasets_dir / "cluener2020" / "dev.json"))
    first = dev[0]
    assert {"type": "name", "start": 0, "end": 3, "text": "彭小军"} in first["entities"]  # inclusive [0, 2] in the file
    for row in dev:
        for e in row["entities"]:
            assert row["text"][e["start"] : e["end"]] == e["text"]


def test_pairs(datasets_dir):
    d = datasets_dir
    afqmc = data.read_pair_tsv(str(d / "afqmc" / "train.txt"))
    assert len(afqmc) == 34334 and Counter(afqmc["label"]) == {0: 23761, 1: 10573}
    assert len(data.read_pair_tsv(str(d / "afqmc" / "dev.txt"))) == 4316
    assert set(data.read_pair_tsv(str(d / "afqmc" / "test.txt"), has_label=False)["label"]) == {-1}
    assert Counter(data.read_pair_tsv(str(d / "lcqmc" / "dev.txt"))["label"]) == {1: 4402, 0: 4400}
    assert len(data.read_pair_tsv(str(d / "lcqmc" / "test.txt"))) == 12500
    assert Counter(data.read_pair_tsv(str(d / "bq_corpus" / "dev.tsv"))["label"]) == {0: 5000, 1: 5000}
    assert len(data.read_pair_tsv(str(d / "bq_corpus" / "test.tsv"), has_label=False)) == 10000
    assert Counter(data.read_pawsx(str(d / "pawsx_zh" / "dev_2k.tsv"))["label"]) == {1: 853, 0: 1147}
    assert Counter(data.read_pawsx(str(d / "pawsx_zh" / "test_2k.tsv"))["label"]) == {1: 894, 0: 1106}
    ocnli = data.read_ocnli(str(d / "ocnli" / "train.50k.json"))
    assert len(ocnli) == 50486 and Counter(ocnli["label"])[-1] == 49  # "-" kept as -1
    assert len(data.read_ocnli(str(d / "ocnli" / "train.50k.json"), drop_no_majority=True)) == 50486 - 49
    assert Counter(data.read_ocnli(str(d / "ocnli" / "train.10k.json"))["label"]) == {1: 3434, 0: 3309, 2: 3242, -1: 15}
    sts = data.read_sts(str(d / "sts_b_zh" / "sts-b-train.txt"))
    assert len(sts) == 5231 and max(sts["label"]) == 5.0


def test_weibo_tagging(datasets_dir):
    d = datasets_dir
    usual = {s: data.read_smp2020_ewect(str(d / "smp2020_ewect_usual" / f"{s}.tsv")) for s in ("train", "dev", "test")}
    assert Counter(usual["train"]["label"]) == {1: 8343, 0: 5749, 2: 5378, 3: 4990, 5: 2086, 4: 1220}
    assert (len(usual["dev"]), len(usual["test"])) == (2000, 5000)
    kept, removed = data.drop_overlap(usual["train"], [usual["dev"], usual["test"]])
    assert removed >= 162 + 287 - 20 and len(kept) == 27766 - removed  # SOURCES: 162 + 287 rows, some in both
    virus = data.read_smp2020_ewect(str(d / "smp2020_ewect_virus" / "virus_train.txt"))  # JSON array form
    assert Counter(virus["label"]) == {2: 4423, 0: 1460, 1: 1322, 3: 649, 4: 555, 5: 197}  # "neural" -> neutral
    assert len(data.read_smp2020_ewect(str(d / "smp2020_ewect_virus" / "virus_test_labeled_uer.tsv"))) == 3000
    clue = data.read_clue_emotion(str(d / "clue_emotion2020" / "valid.txt"))
    assert len(clue) == 3966


def test_nlpcc2014_multilabel(datasets_dir):
    d = datasets_dir / "nlpcc2014_weibo_emotion"
    train = data.read_nlpcc2014_emotion(str(d / "Training data for Emotion Expression Identification.xml"))
    assert len(train) == 1000 and sum(len(x) for x in train["sentences"]) == 3454
    assert Counter(train["primary"])["like"] == 365 and sum(len(x) == 2 for x in train["labels"]) == 269
    expr = data.read_nlpcc2014_emotion(str(d / "ExpressionTest.xml"))
    assert len(expr) == 2000 and sum(len(x) == 2 for x in expr["labels"]) == 595
    cls = data.read_nlpcc2014_emotion(str(d / "EmotionClassificationTest.xml"))
    assert len(cls) == 6000 and Counter(cls["primary"])["none"] == 3603
    # SOURCES counts 354 posts with a second emotion; one repeats its first, so 353 have two labels
    assert sum(len(x) == 2 for x in cls["labels"]) == 353
    assert train[1]["labels"] == [train.features["labels"].feature.str2int("like"), train.features["labels"].feature.str2int("disgust")]


def test_corpus(shared):
    ds = data.read_corpus(str(shared / "corpora" / "weibo_senti_sample"))
    assert len(ds) == 2325 and sum(map(len, ds["text"])) == 152927  # SOURCES.md
    assert set(ds["source"]) == {"weibo_senti_sample"}


def test_the_pos_test_is_held_out_from_the_segmenter_too(shared):
    """`pos` tags `cws`'s words: its test sentences are in neither model's training text. They are
    `cws`'s People's Daily dev split, which the bundled `cws` held out too (its 42,060 / 2,213 split)."""
    from zhbert.data.tasks import load_task_data

    pos = load_task_data("pos", "peoples_daily")
    assert len(pos.test) == 2170
    for dataset in ("pku", "news+weibo"):
        cws = load_task_data("cws", dataset)
        assert not any(r["text"] in {t["text"] for t in cws.train} for r in pos.test), dataset
        assert {r["text"] for r in pos.test} <= {r["text"] for r in cws.dev if r["criterion"] == "pku"}, dataset
    pku = load_task_data("cws", "pku")
    assert (len(pku.train), len(pku.dev)) == (42060, 2213)
    seen = {r["text"] for r in pos.train + pos.dev}
    assert not any(r["text"] in seen for r in pos.test)


def test_a_json_lines_corpus_gives_each_records_text(shared, tmp_path, caplog):
    """Chinese corpora ship as JSON lines (Wikipedia dumps ``{"id", "url", "title", "text"}``,
    news2016zh ``{"title", "content"}``): read as lines, the keys, quotes and escapes were pretrained
    on; now each record's text is a document, and a plain-text file of JSON lines is refused."""
    import json
    import logging

    docs = data.read_corpus(str(shared / "corpora" / "weibo_senti_sample"))["text"][:40]
    wiki = tmp_path / "wiki_zh" / "wiki_00.jsonl"
    wiki.parent.mkdir()
    records = [
        {"id": str(i), "url": f"https://zh.wikipedia.org/wiki?curid={i}", "title": d[:6], "text": f"{d}\n\n{d}"} for i, d in enumerate(docs)
    ]
    records[3]["text"] = ""  # an article with no text: no document, and said
    wiki.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="zhbert.data.corpus"):
        read = data.read_corpus(str(wiki))
    assert read["text"] == [r["text"] for r in records if r["text"]]
    assert read["line"] == [i + 1 for i, r in enumerate(records) if r["text"]] and set(read["source"]) == {"wiki_zh"}
    assert f"{wiki}: 1 record with no text, no document (the first at line 4)" in caplog.text
    both = data.read_corpus(str(wiki), text_key="title,text")["text"]
    assert both[0] == f"{records[0]['title']}\n{records[0]['text']}"
    news = tmp_path / "news2016zh.json"
    news.write_text(
        "".join(json.dumps({"news_id": i, "content": d}, ensure_ascii=False) + "\n" for i, d in enumerate(docs)), encoding="utf-8"
    )
    assert data.read_corpus(str(news))["text"] == docs
    as_text = tmp_path / "wiki.txt"
    as_text.write_text(wiki.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(DataFormatError, match=rf"{as_text}:1: a JSON object: read as text, its keys and quotes would be trained on"):
        data.read_corpus(str(as_text))
    assert data.read_corpus(str(as_text), doc_format="jsonl")["text"] == read["text"]
    array = tmp_path / "wudao.json"  # WuDaoCorpora: one JSON array a file
    array.write_text(json.dumps(records[:3], ensure_ascii=False, indent=2), encoding="utf-8")
    with pytest.raises(DataFormatError, match=rf"{array}:1: not a JSON object on one line .* jq -c '.\[\]' FILE > NEW_FILE"):
        data.read_corpus(str(array))
    with pytest.raises(DataFormatError, match=rf"{news}:1: no key 'body' \(--text-key\)"):
        data.read_corpus(str(news), text_key="body")
    keys = tmp_path / "qa.jsonl"
    keys.write_text('{"qid": 1, "answer": "北京是中国的首都。"}\n', encoding="utf-8")
    with pytest.raises(DataFormatError, match=rf"{keys}:1: no key 'text' or 'content' or 'review' in 'qid', 'answer': --text-key names"):
        data.read_corpus(str(keys))
    assert data.read_corpus(str(keys), text_key="answer")["text"] == ["北京是中国的首都。"]
    # a folder: its .txt, .jsonl and .json files, and the others counted, not passed over in silence
    (wiki.parent / "wiki_01").write_text(wiki.read_text(encoding="utf-8"), encoding="utf-8")  # WikiExtractor's names
    with caplog.at_level(logging.WARNING, logger="zhbert.data.corpus"):
        assert data.read_corpus(str(wiki.parent))["text"] == read["text"]
    assert f"{wiki.parent}: 1 file not read, not .txt, .jsonl, .json, .csv or .parquet (such as {wiki.parent / 'wiki_01'})" in caplog.text
    wiki.unlink()
    with pytest.raises(
        DataFormatError, match=r"directory holds no .txt, .jsonl, .json, .csv or .parquet files \(it holds 1 other file, such as wiki_01"
    ):
        data.read_corpus(str(wiki.parent))


def test_a_parquet_corpus_gives_each_rows_text(shared, tmp_path, caplog):
    """Corpora as the Hugging Face hub serves them (Chinese Wikipedia, news, web crawls): Parquet
    files, read a batch of rows at a time, each row's text (``text``, else ``content``, or
    --text-key) a document; so do folders ``Dataset.save_to_disk`` wrote. Before, "binary data (NUL
    byte)" at line 1, or in a folder not read."""
    import logging

    from datasets import Dataset

    docs = data.read_corpus(str(shared / "corpora" / "weibo_senti_sample"))["text"][:40]
    wiki = tmp_path / "wikipedia" / "train-00000-of-00002.parquet"
    wiki.parent.mkdir()
    texts = [f"{d}\n\n{d}" for d in docs]
    texts[5] = ""  # an article with no text: no document, and said
    rows = {"id": [str(i) for i in range(len(docs))], "title": [d[:6] for d in docs], "text": texts}
    Dataset.from_dict(rows).to_parquet(wiki)
    with caplog.at_level(logging.WARNING, logger="zhbert.data.corpus"):
        read = data.read_corpus(str(wiki.parent))
    assert read["text"] == [t for t in texts if t] and read["line"] == [i + 1 for i, t in enumerate(texts) if t]
    assert set(read["source"]) == {"wikipedia"} and f"{wiki}: 1 record with no text, no document (the first at row 6)" in caplog.text
    both = data.read_corpus(str(wiki), text_key="title,text")["text"]
    assert both[0] == f"{docs[0][:6]}\n{texts[0]}"
    news = tmp_path / "news"  # a Parquet file named otherwise is known by its first bytes
    Dataset.from_dict({"content": docs}).to_parquet(news)
    assert data.read_corpus(str(news))["text"] == docs
    with pytest.raises(DataFormatError, match=rf"{news}: no column 'body' in content"):
        data.read_corpus(str(news), text_key="body")
    saved = tmp_path / "news_saved"  # a folder Dataset.save_to_disk wrote: one source beside the files
    Dataset.from_dict({"content": docs}).save_to_disk(str(saved))
    both = data.read_corpus([str(saved), str(news)])
    assert both["text"] == docs + docs and both["source"][0] == "news_saved"


def test_a_csv_corpus_gives_each_rows_text(shared, tmp_path):
    """A review set kept as CSV (waimai_10k: ``label,review``) given as a pretraining corpus: before,
    read a line at a time, so its header was a document and every review was pretrained with its
    label and comma in front. Now its text column is the document, as for JSON lines."""
    import csv

    with open(shared / "datasets" / "sophonplus_sentiment" / "waimai_10k.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))[:60]
    rows.append(["0", "送餐太慢了，\n等了一个多小时"])  # a quoted review over two lines: one document
    reviews = tmp_path / "reviews" / "waimai.csv"
    reviews.parent.mkdir()
    with open(reviews, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(rows)
    read = data.read_corpus(str(reviews))
    assert read["text"] == [r[1].strip() for r in rows[1:]] and read["line"][:2] == [2, 3] and read["line"][-1] == 61
    assert data.read_corpus(str(reviews.parent))["text"] == read["text"]  # a folder's .csv files are read too
    reviews.write_text('label,review\n1,"好吃\n0,太慢了\n', encoding="utf-8")
    with pytest.raises(DataFormatError, match=rf"{reviews}:2: not CSV \(unexpected end of data\): a quote opened here and never closed"):
        data.read_corpus(str(reviews))


def test_a_reader_fixed_in_a_new_version_is_not_served_from_the_old_ones_cache(tmp_path, monkeypatch):
    """``datasets`` caches a generator's output by the generator's name and its arguments: before, a
    corpus read once was served from the cache after the reader changed (a new zhbert reading CSV,
    or CoNLL's -DOCSTART-, kept the old reading until the file itself changed). The cache key now
    holds a fingerprint of the readers' code."""
    from zhbert.data import build

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("北京是中国的首都。\n上海是一座城市。\n", encoding="utf-8")
    first = data.read_corpus(str(corpus))
    assert data.read_corpus(str(corpus)).cache_files == first.cache_files  # unchanged: the cache serves it
    monkeypatch.setattr(build, "readers_fingerprint", lambda: "the readers of another version")
    again = data.read_corpus(str(corpus))
    assert again["text"] == first["text"] and again.cache_files != first.cache_files
