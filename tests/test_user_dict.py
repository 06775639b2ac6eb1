"""User dictionaries: files validated line by line, forced words never cut, predictors independent."""

from __future__ import annotations

import re

import pytest

import zhbert
from zhbert.dictionary import jieba_dictionary_path, read_dictionary
from zhbert.errors import DataFormatError

# ---- dictionary files: what users of jieba / HanLP / LTP report as "my dictionary did not take effect"


def _write(tmp_path, data: bytes, name="user.dict"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_dictionary_file_quirks_are_read_as_meant(tmp_path):
    text = "\ufeff区块链\r\n\r\n5G网络 12\r\n新冠-19 nz\r\nCOVID-19\t3\tnz\r\niPhone15\r\n马化腾\tPER\r\n区块链 7\r\n  \r\n#热搜#\r\n"
    d = read_dictionary(_write(tmp_path, text.encode("utf-8")))
    words = [e.word for e in d]
    assert words == ["区块链", "5G网络", "新冠-19", "COVID-19", "iPhone15", "马化腾", "#热搜#"]  # BOM gone, CRLF gone
    assert d.entries["5G网络"].freq == 12 and d.entries["5G网络"].tag is None
    assert d.entries["新冠-19"].tag == "nz" and d.entries["COVID-19"].freq == 3
    assert d.entries["马化腾"].tag == "PER" and d.entries["马化腾"].line == 7
    assert d.duplicates == 1 and d.entries["区块链"].freq == 7  # the repeat merged, its frequency kept
    assert d.blank_lines == 2


def test_a_hanlp_custom_dictionary_is_read(tmp_path):
    """HanLP's CustomDictionary lines, ``word TAG FREQ [TAG FREQ ...]``: the commonest tag, the frequencies summed.
    Before, a word with two parts of speech was "5 columns" at its line."""
    d = read_dictionary(_write(tmp_path, "攻城狮 nz 1024\n苹果 n 100 nz 50\n打 v 200 q 7 p 3\n字节跳动 nt 80\n".encode()))
    assert [(e.word, e.freq, e.tag) for e in d] == [("攻城狮", 1024, "nz"), ("苹果", 150, "n"), ("打", 210, "v"), ("字节跳动", 80, "nt")]
    ner = zhbert.load("ner", user_dict=str(tmp_path / "user.dict"))  # its nt words are ORG there, as jieba's are
    assert {(s.text, s.label) for s in ner("字节跳动的攻城狮在加班")} >= {("字节跳动", "ORG")}


@pytest.mark.parametrize(
    "content, line, problem",
    [
        (b"\xe5\x8c\x97\xe4\xba\xac\n\xff\xfe\n", 2, "not valid UTF-8"),
        ("北京 3.5\n".encode(), 1, "positive whole number"),
        ("北京\n上海 -2\n".encode(), 2, "positive whole number"),
        ("北京 3 ns 多余\n".encode(), 1, "4 columns"),
        ("苹果 n 100 nz\n".encode(), 1, "or HanLP's TAG FREQ pairs"),
        ("苹果 n 0 nz 5\n".encode(), 1, "5 columns"),
        ("北京 3 5\n".encode(), 1, "two frequencies"),
        ("北京 ns nr\n".encode(), 1, "two tags"),
        ("北京 ！！\n".encode(), 1, "neither a frequency"),
        ("北\x07京\n".encode(), 1, "control or format character U+0007"),
        ("北京\tLOC\n上海\tLOC\n北京\tORG\n".encode(), 3, "tagged ORG here but LOC on line 1"),
        (("长" * 101 + "\n").encode(), 1, "101 characters"),
        ("\tLOC\n".encode(), 1, "empty word"),
    ],
)
def test_bad_dictionary_lines_name_file_and_line(tmp_path, content, line, problem):
    p = _write(tmp_path, content)
    with pytest.raises(DataFormatError) as e:
        read_dictionary(p)
    assert str(e.value).startswith(f"{p}:{line}: ") and problem in str(e.value)


def test_format_characters_inside_words_are_refused_but_emoji_joiners_are_not(tmp_path):
    """A zero-width space (U+200B, category Cf) pasted inside a word would never match a text: an
    error at its line, from the one-pass reader's file and from a list alike. The joiner and
    variation selector an emoji sequence is written with (U+200D, U+FE0F) are part of the word."""
    from zhbert.dictionary import _clean_file

    p = _write(tmp_path, "北京\n区块\u200b链 5\n".encode())
    with pytest.raises(DataFormatError, match=r":2: control or format character U\+200B at character 3"):
        read_dictionary(p)
    with pytest.raises(ValueError, match=r"input 1: control or format character U\+200B"):
        read_dictionary(["区块\u200b链"])
    emoji = "👨\u200d💻\n❤\ufe0f\n"
    q = _write(tmp_path, emoji.encode(), "emoji.dict")
    assert _clean_file(q, emoji) is not None and [e.word for e in read_dictionary(q)] == ["👨\u200d💻", "❤\ufe0f"]


@pytest.mark.parametrize("ending", ["", "\n", "\r\n"])
def test_the_one_pass_reader_reads_as_the_line_reader(tmp_path, ending):
    """A clean file is read in one regex pass (``_clean_file``); any other file line by line
    (``_read_lines``). Both give the same entries, counts and errors."""
    from zhbert.dictionary import _clean_file, _read_lines

    clean = "\ufeff区块链 5 nz\r\n马化腾\r\n5G网络 12\r\n北京 3 ns\r\nCOVID-19 3 nz\r\n#热搜#" + ending  # one regex pass reads it
    p = _write(tmp_path, clean.encode("utf-8"), "clean.dict")
    assert _clean_file(p, clean[1:]) is not None and _clean_file(p, clean[1:] + "\n马化腾") is None  # a repeat: line by line
    assert _clean_file(p, clean[1:]).entries == _read_lines(p).entries == read_dictionary(p).entries
    assert len(_read_lines(p)) == 6
    text = "\ufeff区块链 5 nz\r\n\n马化腾\tPER\n区块链\n  \u3000\n5G网络 12\n北京 3 ns\n北京\n#热搜#" + ending
    p = _write(tmp_path, text.encode("utf-8"))
    assert _clean_file(p, text[1:]) is None  # a tab, blank lines, repeats
    d = read_dictionary(p)
    assert d.entries == _read_lines(p).entries and len(d) == 5 and (d.duplicates, d.blank_lines) == (2, 2)
    # a line over the byte limit is no clean file: the line reader gives its size in bytes, newline included
    long = "北京\n" + "长" * 250 + ending
    q = _write(tmp_path, long.encode("utf-8"), "long.dict")
    assert _clean_file(q, long) is None
    with pytest.raises(DataFormatError, match=f"long.dict:2: line of {750 + len(ending.encode()):,} bytes"):
        read_dictionary(q)


def test_dictionary_path_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.dict"):
        read_dictionary(tmp_path / "missing.dict")
    with pytest.raises(DataFormatError, match="is a folder"):
        read_dictionary(tmp_path)
    with pytest.raises(ValueError, match="user_dict input 2: empty word"):
        read_dictionary(["北京", " "])
    with pytest.raises(TypeError, match="input 1"):
        read_dictionary([3])


def million_word_dictionary(path):
    """1,000,000 realistic entries: jieba's words, then compounds of two of them (domain terms such as
    北京大学生命科学学院 are built that way), each with a frequency and a tag."""
    import random

    from zhbert.dictionary import jieba_dictionary_path

    rng = random.Random(0)
    base = [line.split()[0] for line in jieba_dictionary_path().read_text(encoding="utf-8").splitlines()]
    words = dict.fromkeys(base)
    while len(words) < 1_000_000:
        a, b = rng.choice(base), rng.choice(base)
        if len(a) + len(b) <= 8:
            words[a + b] = None
    path.write_text("".join(f"{w} {rng.randint(1, 999)} nz\n" for w in words), encoding="utf-8")
    return path


def test_million_word_dictionary_loads_in_seconds(tmp_path):
    import time

    from zhbert.heads.user_dict import ForcedWords

    p = million_word_dictionary(tmp_path / "big.dict")
    start = time.perf_counter()
    d = read_dictionary(p)
    ForcedWords(d, ["B", "M", "E", "S"], "BMES-untyped")
    assert len(d) == 1_000_000
    assert time.perf_counter() - start < 40  # bench/user_dict.py holds the 10 s target, on an idle machine


# ---- forced words in the bundled models

DOMAIN_WORDS = ["区块链技术", "新冠病毒", "华为", "生命起源", "北京大学生命科学学院", "石墨烯", "量子计算机"]


def _insert(sentences, words):
    """Each word spliced into a real sentence after its first comma (or at its start)."""
    out = []
    for k, s in enumerate(sentences):
        w = words[k % len(words)]
        cut = s.find("，") + 1
        out.append(s[:cut] + w + s[cut:])
    return out


@pytest.fixture(params=["automaton", "char-trie"])
def matcher(request, monkeypatch):
    """Both forced-word matchers: pyahocorasick's automaton, and CharTrie (large dictionaries)."""
    import zhbert.heads.user_dict as user_dict

    monkeypatch.setattr(user_dict, "CHAR_TRIE_FROM", 10**9 if request.param == "automaton" else 1)
    return request.param


def test_the_char_trie_forces_what_the_automaton_forces(pd_sentences, monkeypatch):
    """The two matchers give the same forced spans: jieba's words (overlapping in every
    sentence), traditional text under a simplified list, and two entries that fold to one key
    with different types (the last one wins in both)."""
    import random

    import zhbert.heads.user_dict as user_dict
    from zhbert.heads.user_dict import ForcedWords

    rng = random.Random(3)
    jieba_words = [line.split()[0] for line in jieba_dictionary_path().read_text(encoding="utf-8").splitlines()]
    types = ["PER", "LOC", "ORG"]
    lines = [f"{w}\t{rng.choice(types)}" for w in rng.sample(jieba_words, 30_000)] + ["台湾\tLOC", "臺灣\tORG", "台积电\tORG"]
    dictionary = read_dictionary(lines)
    labels = ["O", *(f"{p}-{t}" for t in types for p in "BIES")]
    texts = pd_sentences[:300] + ["臺灣的台积电和臺積電在台湾", "", "𠮷野家"]
    built = {}
    for name, threshold in (("automaton", 10**9), ("char-trie", 1)):
        monkeypatch.setattr(user_dict, "CHAR_TRIE_FROM", threshold)
        built[name] = ForcedWords(dictionary, labels, "BIOES")
    assert built["automaton"]._automaton is not None and built["char-trie"]._trie is not None
    spans = {name: [f.spans(t) for t in texts] for name, f in built.items()}
    assert spans["automaton"] == spans["char-trie"]
    # a batch is matched in one pass over its texts end to end: no word reaches from one text into the next
    assert all(f.spans_many(texts) == spans[name] for name, f in built.items())
    assert built["char-trie"].spans_many(["台", "湾台", "湾"]) == [[], [], []]
    assert sum(map(len, spans["automaton"])) > 1000
    assert spans["char-trie"][300][:2] == [(0, 2, "ORG"), (3, 6, "ORG")]  # 臺灣 reads as the last entry of its key


def test_forced_words_never_cut_batch_and_single(pd_sentences, matcher):
    texts = _insert([s for s in pd_sentences if "，" in s][:40], DOMAIN_WORDS)
    cws = zhbert.load("cws", user_dict=DOMAIN_WORDS)
    batch = cws(texts, batch_size=8)
    for text, words in zip(texts, batch):
        assert "".join(w.text for w in words) == re.sub(r"\s", "", text)
        starts, ends = {w.start for w in words}, {w.end for w in words}
        for word in DOMAIN_WORDS:
            for m in re.finditer(re.escape(word), text):
                assert m.start() in starts and m.end() in ends, (word, text)
                assert not any(m.start() < s < m.end() for s in starts), (word, text)
    assert [cws(t) for t in texts[:10]] == batch[:10]


def test_forced_words_change_the_cut_and_predictors_stay_apart(matcher):
    text = "这家公司研发的量子计算机芯片获得了碳中和认证。"
    plain, forced = zhbert.load("cws"), zhbert.load("cws", user_dict=["量子计算机", "机芯"])
    before = [w.text for w in plain(text)]
    assert "量子计算机" not in before and "碳中和" not in before  # 量子 / 计算机, 碳 / 中 / 和
    after = [w.text for w in forced(text)]
    assert "量子计算机" in after and "机芯" not in after  # longest first: 机芯 overlaps 量子计算机
    assert [w.text for w in plain(text)] == before  # the other predictor is untouched
    other = zhbert.load("cws", user_dict=["碳中和"])
    assert "碳中和" in [w.text for w in other(text)]
    assert [s[:2] for s in other.forced.spans(text)] == [(17, 20)] and [s[:2] for s in forced.forced.spans(text)] == [(7, 12)]
    assert [w.text for w in forced(text)] == after and "碳中和" not in after


def test_forced_entities_take_their_type():
    text = "腾讯的马化腾和华为的任正非在深圳见面。"
    ner = zhbert.load("ner", user_dict=["华为\tORG", "任正非\tPER"])
    spans = {(s.text, s.label) for s in ner(text)}
    assert ("华为", "ORG") in spans and ("任正非", "PER") in spans
    assert ner([text, text]) == [ner(text)] * 2
    with pytest.raises(ValueError, match=r"input 1: '华为' has no type"):
        zhbert.load("ner", user_dict=["华为"])
    with pytest.raises(ValueError, match="not one of this model's types"):
        zhbert.load("ner", user_dict=["华为\tCOMPANY"])


def test_a_jieba_dictionary_gives_names_their_types(tmp_path, caplog):
    """A jieba user dictionary (word, frequency, part of speech) read by an entity model: nt, nr and ns are the
    ORG, PER and LOC they name; its other words are left to the model and said. Before, its first line was refused."""
    text = "字节跳动创始人张一鸣在深圳谈抖音。"
    plain = {(s.text, s.label) for s in zhbert.load("ner")(text)}
    assert ("字节跳动", "ORG") not in plain  # what the dictionary must change
    path = tmp_path / "userdict.txt"
    path.write_text("字节跳动 3 nt\n张一鸣 5 nr\n抖音 n\n深圳 ns\n张 nr1\n", encoding="utf-8")
    with caplog.at_level("WARNING", logger="zhbert"):
        ner = zhbert.load("ner", user_dict=str(path))
    assert f"{path}: 3 of 5 words forced as entities; the other 2, which have no entity type (the first: '抖音' at {path}:3)" in caplog.text
    spans = {(s.text, s.label) for s in ner(text) if s.forced}
    assert spans == {("字节跳动", "ORG"), ("张一鸣", "PER"), ("深圳", "LOC")}
    with pytest.raises(ValueError, match=r"input 1: '华为' is tagged 'n', a part of speech that names none"):
        zhbert.load("ner", user_dict=["华为 n"])  # nothing it could force: refused, as a list without types is
    with pytest.raises(ValueError, match=r"input 2: type 'ORGG' of '华为' is not one of this model's types"):
        zhbert.load("ner", user_dict=["腾讯 nt", "华为\tORGG"])  # a typo is no part of speech: refused


def test_prefer_needs_a_lexicon_head_and_modes_are_checked(tiny_encoder, tokenizer, tmp_path):
    from zhbert.heads import HeadConfig, new_head, save_head

    plain = HeadConfig(kind="token", labels=["B", "M", "E", "S"], scheme="BMES-untyped")  # a head without a lexicon
    save_head(new_head(tiny_encoder, plain), tokenizer, tmp_path / "plain")
    with pytest.raises(ValueError, match="no lexicon features"):
        zhbert.load(str(tmp_path / "plain"), user_dict=["华为"], dict_mode="prefer")
    preferring = zhbert.load("cws", user_dict=["石墨烯 100000"], dict_mode="prefer")  # the bundled cws has one
    assert preferring._forced_dictionary is None
    assert len(preferring.model.word_features.lexicon) > len(zhbert.load("cws").model.word_features.lexicon)
    with pytest.raises(ValueError, match="dict_mode must be one of"):
        zhbert.load("cws", user_dict=["华为"], dict_mode="always")
    with pytest.raises(ValueError, match="segmentation and NER"):
        zhbert.load("tagging", user_dict=["华为"])


def test_a_simplified_word_list_is_forced_in_traditional_text(matcher):
    """The models read traditional characters as simplified (zhbert/traditional.py), and so does
    forcing: a simplified list keeps 臺積電 and 晶圓製程 whole in traditional text, offsets into it."""
    text = "臺積電發表了新一代晶圓製程"
    plain = [w.text for w in zhbert.load("cws")(text)]
    assert "臺積電" not in plain and "晶圓製程" not in plain  # what the dictionary must change
    words = zhbert.load("cws", user_dict=["台积电", "晶圆制程"])(text)
    assert [w.text for w in words][0] == "臺積電" and "晶圓製程" in [w.text for w in words]
    assert all(text[w.start : w.end] == w.text for w in words)


def test_prefer_keeps_the_weight_of_a_word_the_lexicon_knows():
    """A bare word jieba's dictionary already has keeps jieba's frequency and tag in the lexicon
    (overriding 18,909 of them with the default frequency cost 1.49 word F1 on Weibo); a line
    with a frequency or a tag still overrides, and a new word joins."""
    from zhbert.dictionary import jieba_dictionary_path, read_dictionary

    jieba = read_dictionary(jieba_dictionary_path())
    known = jieba.entries["北京"]
    merged = jieba.merged(read_dictionary(["北京", "石墨烯电池", "上海 7", "广州 n"]))
    assert merged.entries["北京"] == known and merged.entries["石墨烯电池"].freq is None
    assert merged.entries["上海"].freq == 7 and merged.entries["广州"].tag == "n"


def test_a_long_text_folds_as_a_short_one(pd_sentences):
    """Long texts (a dictionary's words joined) fold through the table as an array: the same text
    as the short path gives, traditional characters, emoji and a lone surrogate included."""
    from zhbert.heads.user_dict import _t2s, fold_traditional

    text = "\n".join(pd_sentences[:400]) + "臺灣的軟體與資訊產業😀\ud800"
    assert len(text) > 10_000
    folded = fold_traditional(text)
    assert folded == text.translate(_t2s()) and "台湾的软体与资讯产业😀\ud800" in folded


def test_cli_predict_forces_a_dictionary_file_and_says_what_it_read(tmp_path):
    """``zhbert predict --user-dict``: the file's words come out whole, and stderr says what the file
    held: its entries, the repeat merged, the blank line skipped, the word the vocabulary cannot read."""
    import json
    import subprocess
    import sys

    d = tmp_path / "user.dict"
    d.write_text("量子计算机\n碳中和 5\n\n碳中和\n𠮷野家\n", encoding="utf-8")
    text = "这家公司研发的量子计算机芯片获得了碳中和认证。𠮷野家"
    r = subprocess.run(
        [sys.executable, "-m", "zhbert", "predict", "--model", "cws", "--user-dict", str(d), "-"],
        input=text + "\n", capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    words = [w["text"] for w in json.loads(r.stdout)["words"]]
    assert {"量子计算机", "碳中和", "𠮷野家"} <= set(words) and "".join(words) == text
    said = f"user dictionary {d}: 3 entries; 1 repeated word merged into the first entry; 1 blank line skipped; "
    said += "1 word with a character this model's vocabulary cannot read ([UNK]) left out of its lexicon (still forced whole)"
    assert said in r.stderr
    plain = zhbert.load("cws", user_dict=["量子计算机"])
    assert plain.dictionary_summary == "<list>: 1 entry" and zhbert.load("cws").dictionary_summary is None
    # the demo's per-request copy says what its own dictionary held, not the original's
    assert plain.forcing(["碳中和", "碳中和"]).dictionary_summary == "<list>: 1 entry; 1 repeated word merged into the first entry"


@pytest.mark.parametrize(
    "data, problem",
    [
        ("华为\n字节跳动\n".encode("utf-16"), "UTF-16 (little-endian, with a byte-order mark)"),
        ("华为\n字节跳动\n".encode("utf-16-be"), "UTF-16 (big-endian, no byte-order mark)"),
        ("华为\n字节跳动\n".encode("utf-16-le"), "UTF-16 (little-endian, no byte-order mark)"),
        ("华为".encode("utf-16-be"), "UTF-16 (big-endian, no byte-order mark)"),  # all ASCII bytes: read as "SN N:" before
        (bytes(range(256)) * 3, "a binary file"),
    ],
    ids=["utf16-bom", "utf16-be", "utf16-le", "utf16-be-one-word", "binary"],
)
def test_a_dictionary_that_is_not_utf8_text_is_named_as_such(tmp_path, data, problem):
    path = tmp_path / "dict.txt"
    path.write_bytes(data)
    with pytest.raises(DataFormatError, match=re.escape(f"{path}: {problem}")):
        read_dictionary(path)


def test_plain_ascii_and_chinese_dictionaries_still_read(tmp_path):
    for text, words in (
        ("iPhone\nGalaxy\n", ["iPhone", "Galaxy"]),
        ("iPhone", ["iPhone"]),
        ("华为\n字节跳动 5 nz\n", ["华为", "字节跳动"]),
    ):
        path = tmp_path / "dict.txt"
        path.write_bytes(text.encode("utf-8"))
        assert [e.word for e in read_dictionary(path)] == words


@pytest.mark.parametrize("size", [100, 200_001], ids=["automaton", "char-trie"])
def test_nested_words_keep_matching_bounded(size):
    """100 nested words (啊, 啊啊, ...) over a run of 啊: at most a few candidates per character, the
    longest; the forced words are still the longest, end to end (it took 151 s and 3 GB before)."""
    from zhbert.heads.user_dict import MAX_WORDS_PER_END, ForcedWords

    words = ["啊" * k for k in range(1, 101)] + [f"填充{i}" for i in range(size - 100)]
    forced = ForcedWords(read_dictionary(words), ["B", "M", "E", "S"], "BMES-untyped")
    text = "啊" * 3000
    start, end, _ = forced._found([text])
    assert len(start) <= MAX_WORDS_PER_END * len(text)
    assert forced.spans(text) == [(s, s + 100, None) for s in range(0, 3000, 100)]


def test_a_forced_entity_says_so_and_survives_a_score_filter():
    """A user who forces 华为 and filters score > 0.5 keeps it (its model probability was 9.6e-05)."""
    ner = zhbert.load("ner", user_dict=[("华为", "ORG"), ("字节跳动", "ORG")])
    spans = ner("字节跳动和华为在北京发布新品。")
    forced = {(s.text, s.label): (s.score, s.forced) for s in spans if s.forced}
    assert forced == {("字节跳动", "ORG"): (1.0, True), ("华为", "ORG"): (1.0, True)}
    assert all(not s.forced and s.score < 1.0 for s in spans if s.text == "北京")
    assert {s.text for s in spans if s.score > 0.5} >= {"字节跳动", "华为"}
    words = zhbert.load("cws-fast", user_dict=["北京大学生"])("北京大学生来了")
    assert [(w.text, w.forced) for w in words][:2] == [("北京大学生", True), ("来", False)]
