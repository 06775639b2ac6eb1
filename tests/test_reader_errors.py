"""Malformed input: one error naming file, line and problem; nothing silently dropped."""

import re
import warnings

import pytest

from zhbert import data
from zhbert.errors import DataFormatError

PD_NER = "中 B-LOC\n国 I-LOC\n人 O\n\n北 B-LOC\n京 I-LOC\n"
RESUME = "张 B-NAME\n三 E-NAME\n， O\n\n中 B-ORG\n国 M-ORG\n银 M-ORG\n行 E-ORG\n"
CLUENER = (
    '{\n  "text": "彭小军认为",\n  "label": {\n    "name": {\n      "彭小军": [\n        [\n'
    "          0,\n          2\n        ]\n      ]\n    }\n  }\n}\n"
)
PAIRS = "蚂蚁借呗等额还款可以换成先息后本吗\t借呗有先息到期还本吗\t0\n蚂蚁花呗说我违约一次\t蚂蚁花呗违约行为是什么\t1\n"
EWECT = "label\ttext_a\n1\t气死姐姐了，快二是阵亡了吗\n2\t妞妞啊，今天又承办了一个发文登记文号\n"
PD_TAG = "迈向/v  充满/v  希望/n  的/u  新/a  世纪/n\n中共中央/nt  总书记/n  、/w  国家/n  主席/n  江/nr  泽民/nr\n"
XML = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<SampleData>\n  <weibo id="1" emotion-type1="disgust" emotion-type2="none">\n'
    '    <sentence id="1">今儿老爸逮着我一顿狠念！</sentence>\n  </weibo>\n</SampleData>\n'
)


def _write(tmp_path, name, content, raw=False):
    p = tmp_path / name
    if raw:
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8")
    return str(p)


def _expect(fn, path, line, pattern):
    with pytest.raises(DataFormatError) as exc:
        fn(path)
    msg = str(exc.value)
    prefix = f"{path}:{line}: " if line is not None else f"{path}: "
    assert msg.startswith(prefix), msg
    assert re.search(pattern, msg), msg
    assert exc.value.line == line


CASES = [
    # (reader, file name, good content, bad content, bad line, message pattern)
    (lambda p: data.read_char_tagged(p, types=["LOC"]), "ner.txt", PD_NER, "中 B-LOC\n国 I-LOC X\n", 2, "2 columns"),
    (lambda p: data.read_char_tagged(p, types=["LOC"]), "ner.txt", PD_NER, "中 B-LOC\n国 B-XYZ\n", 2, "unknown tag"),
    (lambda p: data.read_char_tagged(p, scheme="BIO", types=["LOC"]), "ner.txt", PD_NER, "中 O\n国 I-LOC\n", 2, "I-X must continue"),
    (
        lambda p: data.read_char_tagged(p, scheme="BMES", types=["NAME", "ORG"]),
        "r.bmes",
        RESUME,
        "中 B-ORG\n国 M-ORG\n\n北 S-ORG\n",
        2,
        "open span",
    ),
    (
        lambda p: data.read_char_tagged(p, scheme="BMES", types=["NAME", "ORG"]),
        "r.bmes",
        RESUME,
        "中 O\n国 E-ORG\n",
        2,
        "does not continue",
    ),
    (data.read_cluener, "c.json", CLUENER, CLUENER.replace("2\n        ]", "3\n        ]"), 1, r"covers '彭小军认'"),
    (data.read_cluener, "c.json", CLUENER, CLUENER.replace("2\n        ]", "9\n        ]"), 1, "outside a text"),
    (data.read_cluener, "c.json", CLUENER, CLUENER + '{"text": "x", "label": {"nam": {"x": [[0, 0]]}}}\n', 14, "unknown entity type"),
    (data.read_cluener, "c.json", CLUENER, CLUENER + '{"text": "x",\n "label": \n', 16, "invalid JSON"),
    (data.read_pair_tsv, "p.txt", PAIRS, PAIRS + "只有一列\n", 3, "3 tab-separated columns"),
    (data.read_pair_tsv, "p.txt", PAIRS, PAIRS + "甲\t乙\t2\n", 3, "unknown label '2'"),
    (
        data.read_ocnli,
        "o.json",
        '{"sentence1": "a", "sentence2": "b", "label": "neutral", "id": 0}\n',
        '{"sentence1": "a", "sentence2": "b", "label": "neutral", "id": 0}\n{"sentence1": "a", "label": "neutral"}\n',
        2,
        "missing field 'sentence2'",
    ),
    (data.read_smp2020_ewect, "e.tsv", EWECT, EWECT + "9\t不存在的标签\n", 4, "unknown label '9'"),
    (
        data.read_smp2020_ewect,
        "e.json",
        '[{"id": 1, "content": "天使", "label": "happy"}]',
        '[{"id": 1, "content": "天使", "label": "happy"},\n {"id": 2, "content": "x", "label": "joy"}]',
        2,
        "unknown label 'joy'",
    ),
    (data.read_peoples_daily, "pd.txt", PD_TAG, PD_TAG + "坏/  数据\n", 3, "word/POS"),
    (
        data.read_nlpcc2014_emotion,
        "w.xml",
        XML,
        XML.replace('emotion-type1="disgust"', 'emotion-type1="boredom"'),
        3,
        "unknown emotion-type1",
    ),
    (data.read_nlpcc2014_emotion, "w.xml", XML, XML.replace("</weibo>", "</weib>"), 5, "malformed XML"),
    (data.read_segmented, "s.txt", "共同  创造\n美好  的\n", None, None, None),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_malformed_copy_names_file_and_line(tmp_path, case):
    reader, name, good, bad, line, pattern = CASES[case]
    assert len(reader(_write(tmp_path, "good_" + name, good))) > 0
    if bad is not None:
        _expect(reader, _write(tmp_path, "bad_" + name, bad), line, pattern)


READERS = {
    "char_tagged": (lambda p: data.read_char_tagged(p), PD_NER),
    "segmented": (data.read_segmented, "共同  创造\n"),
    "cluener": (data.read_cluener, CLUENER),
    "pairs": (data.read_pair_tsv, PAIRS),
    "ewect": (data.read_smp2020_ewect, EWECT),
    "nlpcc2014": (data.read_nlpcc2014_emotion, XML),
    "peoples_daily": (data.read_peoples_daily, PD_TAG),
    "corpus": (data.read_corpus, "一篇文档。\n"),
}


@pytest.mark.parametrize("name", sorted(READERS))
def test_file_level_problems(tmp_path, name):
    reader, good = READERS[name]
    _expect(reader, _write(tmp_path, "empty.txt", ""), 1, "empty")
    _expect(reader, str(tmp_path / "missing.txt"), None, "file not found")
    (tmp_path / "adir").mkdir()
    _expect(reader, str(tmp_path / "adir") if name != "corpus" else str(tmp_path / "adir"), None, "directory")
    bad_utf8 = (good.split("\n")[0] + "\n").encode("utf-8") + b"\xff\xfe broken\n"
    _expect(reader, _write(tmp_path, "latin.txt", bad_utf8, raw=True), 2, "invalid UTF-8")
    _expect(reader, _write(tmp_path, "binary.bin", b"\x00\x01\x02binary", raw=True), 1, "binary")
    # BOM and CRLF are accepted and give the same rows as the clean file
    clean = reader(_write(tmp_path, "clean.txt", good))
    bom_crlf = reader(_write(tmp_path, "bom.txt", b"\xef\xbb\xbf" + good.replace("\n", "\r\n").encode("utf-8"), raw=True))
    assert clean.to_list() == bom_crlf.to_list()


def test_skip_reports_count_and_lines(tmp_path):
    path = _write(tmp_path, "ner.txt", PD_NER + "\n天 O\n津 I-LOC\n\n上 B-LOC\n海 I-LOC\n\n广 O\n州 I-LOC\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = data.read_char_tagged(path, scheme="BIO", types=["LOC"], on_error="skip")
    assert len(ds) == 3  # 5 sentences, 2 bad
    msg = " ".join(str(w.message) for w in caught)
    assert "skipped 2 bad record(s)" in msg and "first lines: 9, 15" in msg


def test_cache_follows_file_changes(tmp_path):
    path = _write(tmp_path, "pairs.txt", PAIRS)
    assert len(data.read_pair_tsv(path)) == 2
    import os
    import time

    time.sleep(0.01)
    with open(path, "a", encoding="utf-8") as f:
        f.write("新的一行\t另一句\t1\n")
    os.utime(path)
    assert len(data.read_pair_tsv(path)) == 3


def test_corpus_formats(tmp_path):
    path = _write(tmp_path, "docs.txt", "第一段。\n第一篇的第二段。\n\n\n第二篇。\n")
    assert data.read_corpus(path)["text"] == ["第一段。", "第一篇的第二段。", "第二篇。"]
    assert data.read_corpus(path, doc_format="blank-line")["text"] == ["第一段。\n第一篇的第二段。", "第二篇。"]
    long_doc = "无" * 1_000_000
    pieces = data.read_corpus(_write(tmp_path, "long.txt", long_doc + "\n"))["text"]
    assert "".join(pieces) == long_doc and len(pieces) == 10  # nothing truncated: cut into bounded documents
    _expect(data.read_corpus, _write(tmp_path, "blank.txt", "\n\n  \n"), 1, "only whitespace")


def test_four_former_silent_acceptances_are_errors(tmp_path):
    """A rare undeclared entity type, a CLUENER "label": [], a word/POS file and a TSV file read as
    segmented text: each was accepted silently; each now names its file:line."""
    from zhbert.data import read_char_tagged, read_cluener, read_segmented

    rows = "".join("北 B-LOC\n京 I-LOC\n人 O\n\n" for _ in range(200)) + "张 B-PER\n三 I-PER\n\n上 B-LCO\n海 I-LOC\n"
    f = tmp_path / "mine.txt"
    f.write_text(rows, encoding="utf-8")
    line = rows.count("\n") - 1
    typo = r"entity type 'LCO' \(1 tagged character\(s\), first here\) looks like a typo of 'LOC'"
    with pytest.raises(DataFormatError, match=rf"mine.txt:{line}: {typo}"):
        read_char_tagged(str(f), scheme="BIO")
    f.write_text(rows.replace("上 B-LCO\n海 I-LOC", "上 B-LCO\n海 I-LCO"), encoding="utf-8")
    assert "B-LCO" in read_char_tagged(str(f), scheme="BIO", types=["LCO", "LOC", "PER"]).features["tags"].feature.names
    f.write_text(rows.replace("上 B-LCO\n海 I-LOC", "上 B-LOC\n海 I-LOC"), encoding="utf-8")  # a rare but real type (PER) is fine
    assert "B-PER" in read_char_tagged(str(f), scheme="BIO").features["tags"].feature.names
    j = tmp_path / "cluener.json"
    j.write_text('{"text": "北京", "label": {"address": {"北京": [[0, 1]]}}}\n{"text": "上海", "label": []}\n', encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"cluener.json:2: field 'label' should be an object"):
        read_cluener(str(j))
    pos = tmp_path / "pd.txt"
    pos.write_text("迈向/v  充满/v  希望/n  的/u  新/a  世纪/n\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"pd.txt:1: 6 of 6 words look like word/POS pairs"):
        read_segmented(str(pos))
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("今天 天气 好\n花呗怎么还款\t花呗如何还钱\t1\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"pairs.tsv:2: a tab: this looks like a TSV file"):
        read_segmented(str(tsv))


def test_a_runaway_training_sentence_is_refused_at_its_first_line(tmp_path):
    """One 'sentence' of 300,000 tagged characters (no blank line): refused while reading, naming the
    line it starts on, before it is ever held whole (a 1 M-character one took past 6 GB)."""
    from zhbert.data import read_char_tagged
    from zhbert.data.char_tagged import MAX_SENTENCE_CHARS
    from zhbert.errors import DataFormatError

    path = tmp_path / "extra.bio"
    with open(path, "w", encoding="utf-8") as f:
        f.write("中 B-LOC\n国 I-LOC\n\n")
        f.write("啊 O\n" * (MAX_SENTENCE_CHARS + 100_000))
    with pytest.raises(DataFormatError, match=f"{path}:4: a sentence of more than {MAX_SENTENCE_CHARS:,} characters"):
        read_char_tagged(str(path), scheme="BIO", types=["LOC"])
