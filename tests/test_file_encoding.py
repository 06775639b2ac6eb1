"""A file saved in another encoding than UTF-8 is named as what it is, with the conversion to run:
GB18030/GBK (Notepad's "ANSI" and Excel's CSV on a Chinese Windows), Big5 (Taiwan, Hong Kong) and
UTF-16 (Notepad's "Unicode"), on real People's Daily and Academia Sinica text."""

import json
import re
import subprocess
import sys

import pytest

from zhbert import data
from zhbert.data.source import iter_line_pieces, read_text
from zhbert.dictionary import read_dictionary
from zhbert.errors import DataFormatError
from zhbert.file_encoding import legacy_chinese_encoding, not_utf8_advice, utf16_problem

GB18030_ADVICE = "the text reads as GB18030 (GBK, GB2312), not UTF-8: save it as UTF-8 (iconv -f GB18030 -t UTF-8 FILE > NEW_FILE)"
BIG5_ADVICE = "the text reads as Big5, not UTF-8: save it as UTF-8 (iconv -f Big5 -t UTF-8 FILE > NEW_FILE)"


def _conll(sentences):
    lines = []
    for text in sentences:
        lines += [f"{c} O" for c in text if not c.isspace()] + [""]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def as_gold_lines(datasets_dir):
    """Academia Sinica's segmented test sentences (traditional characters), as Big5 holds them."""
    lines = (datasets_dir / "sighan2005_icwb2" / "as_testing_gold.utf8").read_text(encoding="utf-8").splitlines()
    kept = []
    for line in lines:
        try:
            line.encode("big5")
        except UnicodeEncodeError:
            continue  # a character Big5 lacks
        kept.append(line)
    return kept[:40]


def test_a_gbk_ner_file_is_named_gb18030_with_its_line(tmp_path, pd_sentences):
    path = tmp_path / "my_ner.conll"
    path.write_bytes(_conll(pd_sentences[:30]).encode("gb18030"))
    with pytest.raises(DataFormatError) as e:
        data.read_char_tagged(str(path))
    assert str(e.value).startswith(f"{path}:1: invalid UTF-8 byte") and str(e.value).endswith(GB18030_ADVICE)


def test_the_advice_names_the_line_of_the_first_gbk_byte(tmp_path, pd_sentences):
    """A UTF-8 file with one pasted GBK line: the line is named, and what it reads as."""
    utf8 = "\n".join(pd_sentences[:5]) + "\n"
    path = tmp_path / "corpus.txt"
    path.write_bytes(utf8.encode("utf-8") + (pd_sentences[5] + "\n").encode("gb18030") + utf8.encode("utf-8"))
    with pytest.raises(DataFormatError, match=rf"^{re.escape(str(path))}:6: invalid UTF-8 byte .*; {re.escape(GB18030_ADVICE)}$"):
        read_text(path)
    for chunk in (*range(1, 12), 1 << 20):  # the pretraining corpus reads in chunks: any cut gives the same line and advice
        want = rf"^{re.escape(str(path))}:6: invalid UTF-8 byte in line 6; {re.escape(GB18030_ADVICE)}$"
        with pytest.raises(DataFormatError, match=want):
            list(iter_line_pieces(path, 1000, chunk_bytes=chunk))


def test_a_file_cut_inside_a_character_says_so(tmp_path, pd_sentences):
    """``head -c`` or a copy cut short ends inside a three-byte character: not another encoding."""
    path = tmp_path / "corpus.txt"
    path.write_bytes(("\n".join(pd_sentences[:10]) + "\n").encode("utf-8")[:-5])
    want = rf"^{re.escape(str(path))}:10: invalid UTF-8 .*; the file ends inside a character: it was cut short$"
    for read in (read_text, lambda p: list(iter_line_pieces(p, 1000)), lambda p: list(iter_line_pieces(p, 1000, chunk_bytes=7))):
        with pytest.raises(DataFormatError, match=want):
            read(path)


def test_a_big5_file_is_named_big5(tmp_path, as_gold_lines):
    path = tmp_path / "words.txt"
    path.write_bytes(("\n".join(as_gold_lines) + "\n").encode("big5"))
    with pytest.raises(DataFormatError) as e:
        data.read_segmented(str(path))
    assert str(e.value).startswith(f"{path}:1: invalid UTF-8 byte") and str(e.value).endswith(BIG5_ADVICE)
    # the same traditional text in GB18030 is named GB18030: the choice reads the characters, not the script
    path.write_bytes(("\n".join(as_gold_lines) + "\n").encode("gb18030"))
    with pytest.raises(DataFormatError, match=re.escape(GB18030_ADVICE)):
        data.read_segmented(str(path))


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be"])
def test_a_utf16_ner_file_is_named_utf16_not_binary(tmp_path, pd_sentences, codec):
    """Tags and line ends are ASCII, so UTF-16 holds NUL bytes: once called "binary data"."""
    path = tmp_path / "my_ner.conll"
    path.write_bytes(_conll(pd_sentences[:20]).encode(codec))
    order = "big" if codec == "utf-16-be" else "little"
    mark = "with a byte-order mark" if codec == "utf-16" else "no byte-order mark"
    with pytest.raises(DataFormatError, match=re.escape(f"{path}: UTF-16 ({order}-endian, {mark}), not UTF-8: save the file as UTF-8")):
        data.read_char_tagged(str(path))
    with pytest.raises(DataFormatError, match=re.escape(f"{path}: UTF-16 ({order}-endian")):
        data.read_corpus(str(path))


def test_a_gbk_user_dictionary_is_named_gb18030(tmp_path):
    path = tmp_path / "userdict.txt"
    path.write_bytes("字节跳动 100 nt\n拼多多 50 nt\n碳中和 10 n\n".encode("gb18030"))
    with pytest.raises(DataFormatError, match=rf"^{re.escape(str(path))}:1: not valid UTF-8 .*; {re.escape(GB18030_ADVICE)}$"):
        read_dictionary(path)


def test_other_bad_bytes_get_no_advice():
    """Latin-1 accents, binary data and UTF-8 itself read as no Chinese encoding: no advice is made up."""
    assert not_utf8_advice("café au lait\n".encode("latin-1")) == ""
    assert not_utf8_advice(b"\x89PNG\r\n\x1a\n\xff\xd8\xff\xe0") == ""
    assert legacy_chinese_encoding(b"\xff\xfe broken\n") is None
    assert not_utf8_advice("人民".encode()[:5] + b"\n") == ""  # a UTF-8 character cut short reads as one GB18030 character
    assert utf16_problem("人民日报社论\n".encode()) is None and utf16_problem(b"\x00\x01\x02binary") is None
    assert utf16_problem(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR") is None


def test_predict_names_a_gbk_stdin_and_a_utf16_file(tmp_path, pd_sentences):
    text = "\n".join(pd_sentences[:3]) + "\n"
    gbk = subprocess.run(
        [sys.executable, "-m", "zhbert", "predict", "--model", "cws-fast", "-"],
        input=text.encode("gb18030"),
        capture_output=True,
        timeout=300,
    )
    assert gbk.returncode == 1 and not gbk.stdout
    first_byte = text.encode("gb18030")[0]
    assert f"<stdin>:1: invalid UTF-8 byte 0x{first_byte:02x} at byte offset 0 of the line; {GB18030_ADVICE}" in gbk.stderr.decode()
    src = tmp_path / "in.txt"
    src.write_bytes(text.encode("utf-16"))
    utf16 = subprocess.run([sys.executable, "-m", "zhbert", "predict", "--model", "cws-fast", str(src)], capture_output=True, timeout=300)
    assert utf16.returncode == 1 and not utf16.stdout
    assert f"{src}: UTF-16 (little-endian, with a byte-order mark), not UTF-8: save the file as UTF-8" in utf16.stderr.decode()


def _xlsx(path, rows):
    """A workbook as Excel writes one: a zip of XML parts, the sheet under xl/."""
    import zipfile

    cells = "".join(f'<row r="{i}"><c t="inlineStr"><is><t>{a}</t></is></c></row>' for i, a in enumerate(rows, 1))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        z.writestr("_rels/.rels", '<?xml version="1.0"?><Relationships/>')
        z.writestr("xl/workbook.xml", '<?xml version="1.0"?><workbook/>')
        z.writestr("xl/worksheets/sheet1.xml", f'<?xml version="1.0"?><worksheet><sheetData>{cells}</sheetData></worksheet>')
    return path


def test_a_spreadsheet_or_a_compressed_file_is_named_for_what_it_is(tmp_path, pd_sentences):
    """An Excel workbook given as a training file, a gzip- or bzip2-compressed corpus, a PDF: each was
    "binary data (NUL byte)" or "invalid UTF-8" at some line; now named, with what to do instead, by
    every reader (training files, corpus files, predict's input, a user dictionary)."""
    import bz2
    import gzip

    text = "".join(s + "\n" for s in pd_sentences[:200]).encode()
    files = {
        "posts.xlsx": (_xlsx(tmp_path / "posts.xlsx", pd_sentences[:50]), "an Excel workbook (.xlsx), not text: save it as CSV UTF-8"),
        "corpus.txt.gz": (tmp_path / "corpus.txt.gz", "gzip-compressed, not text: decompress it first (gunzip -k FILE)"),
        "corpus.txt.bz2": (tmp_path / "corpus.txt.bz2", "bzip2-compressed, not text: decompress it first (bunzip2 -k FILE)"),
        "paper.pdf": (tmp_path / "paper.pdf", "a PDF, not text: extract its text first (pdftotext FILE NEW_FILE)"),
    }
    files["corpus.txt.gz"][0].write_bytes(gzip.compress(text))
    files["corpus.txt.bz2"][0].write_bytes(bz2.compress(text))
    files["paper.pdf"][0].write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n")
    for path, says in files.values():
        for reader in (read_text, lambda p: list(iter_line_pieces(p, 1000)), data.read_corpus, read_dictionary):
            with pytest.raises(DataFormatError, match=re.escape(f"{path}: {says}")):
                reader(str(path))
    from zhbert.data.user_files import task_data_from_files

    with pytest.raises(DataFormatError, match=re.escape(f"{files['posts.xlsx'][0]}: an Excel workbook")):
        task_data_from_files("tagging", str(files["posts.xlsx"][0]))
    r = subprocess.run(
        [sys.executable, "-m", "zhbert", "predict", "--model", "cws", str(files["posts.xlsx"][0])],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 1 and "an Excel workbook (.xlsx), not text" in r.stderr and "Traceback" not in r.stderr
    plain = tmp_path / "plain.txt"  # text that starts like nothing above reads as before
    plain.write_bytes(text)
    assert read_text(str(plain)).splitlines() == pd_sentences[:200]


def test_a_parquet_file_where_text_is_read_says_what_reads_it(tmp_path, pd_sentences):
    """A hub dataset's Parquet file given as a user dictionary: "binary data (NUL byte)" at line 1
    before; now named, with the commands that read it (predict among them: its rows predicted in
    order, ``idx`` written back) and the one line that writes it as JSON lines, which reads the same."""
    from datasets import Dataset

    path = tmp_path / "test-00000-of-00001.parquet"
    Dataset.from_dict({"idx": list(range(30)), "sentence": pd_sentences[:30]}).to_parquet(path)
    says = "a Parquet file (as the Hugging Face hub serves datasets), not text: zhbert train ner, tagging and matching, zhbert predict"
    for reader in (read_text, read_dictionary):
        with pytest.raises(DataFormatError, match=re.escape(f"{path}: {says}")) as caught:
            reader(str(path))
    command = str(caught.value).split('python -c "', 1)[1].split('")', 1)[0]
    command = command.replace("NEW_FILE", str(tmp_path / "test.jsonl")).replace("FILE", str(path))
    subprocess.run([sys.executable, "-c", command], check=True, timeout=120)
    outputs = []
    for given in (path, tmp_path / "test.jsonl"):
        r = subprocess.run(
            [sys.executable, "-m", "zhbert", "predict", "--model", "cws-fast", str(given)], capture_output=True, text=True, timeout=300
        )
        assert r.returncode == 0, r.stderr[-2000:]
        outputs.append([json.loads(line) for line in r.stdout.splitlines()])
    assert outputs[0] == outputs[1] and [o["idx"] for o in outputs[0]] == list(range(30))
    assert ["".join(w["text"] for w in o["words"]) for o in outputs[0]] == pd_sentences[:30]
