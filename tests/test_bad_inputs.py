"""Hostile inputs that once crashed with no location, were silently accepted, or blamed the
wrong line: each now ends in one ``file:line: problem`` error, quoting at most ~80 characters."""

import json
import re
import subprocess
import sys

import pytest

from zhbert import data
from zhbert.errors import DataFormatError

OCNLI = '{{"sentence1": "他在家", "sentence2": "他出门了", "label": "contradiction", "id": {id}}}\n'
CLUE = '{{"id": {id}, "content": "今天真开心", "label": "happiness"}}\n'
PAWSX = "id\tsentence1\tsentence2\tlabel\n1\t我爱北京\t北京我爱\t0\n{row}\n"

CASES = [
    # (case, reader, file (a folder names a declared dataset), content, line, message pattern)
    ("ocnli id 1.7", data.read_ocnli, "o.json", OCNLI.format(id="1.7"), 1, "id 1.7 is not a whole number"),
    ("ocnli id null", data.read_ocnli, "o.json", OCNLI.format(id="null"), 1, "not a whole number"),
    ("ocnli id ²", data.read_ocnli, "o.json", OCNLI.format(id='"²"'), 1, "not a whole number"),
    ("ocnli empty sentence", data.read_ocnli, "o.json", '{"sentence1": " ", "sentence2": "b", "label": "neutral"}\n', 1, "empty sentence"),
    ("clue id over int32", data.read_clue_emotion, "c.json", CLUE.format(id=2**40), 1, "outside 0"),
    ("clue id ²", data.read_clue_emotion, "c.json", CLUE.format(id='"²"'), 1, "not a whole number"),
    ("ewect id float", data.read_smp2020_ewect, "e.json", '[{"id": 2.5, "content": "好", "label": "happy"}]', 1, "not a whole number"),
    ("ewect label ²", data.read_smp2020_ewect, "e.tsv", "label\ttext_a\n²\t气死了\n", 2, "unknown label"),
    ("ewect empty post", data.read_smp2020_ewect, "e.tsv", "label\ttext_a\n1\t  \n", 2, "empty post"),
    ("pawsx id over int32", data.read_pawsx, "p.tsv", PAWSX.format(row="99999999999\ta\tb\t1"), 3, "outside 0"),
    ("pawsx empty sentence", data.read_pawsx, "p.tsv", PAWSX.format(row="7\t\t北京\t1"), 3, "empty sentence"),
    (
        "cluener position number",
        data.read_cluener,
        "n.json",
        '{"text": "北京", "label": {"address": {"北京": 5}}}\n',
        1,
        "should be a list",
    ),
    (
        "cluener position null",
        data.read_cluener,
        "n.json",
        '{"text": "北京", "label": {"address": {"北京": null}}}\n',
        1,
        "should be a list",
    ),
    ("cluener deep nesting", data.read_cluener, "n.json", "[" * 100_000, 1, "nested too deeply"),
    ("two characters, one tag", data.read_char_tagged, "t.txt", "中国 B-LOC\n人 O\n", 1, "one character per line"),
    (
        "undeclared type",
        data.read_char_tagged,
        "peoples_daily_ner/example.dev",
        "北 B-LOC\n京 I-LOC\n\n上 B-LCO\n",
        4,
        "unknown tag 'B-LCO'",
    ),
    ("stray S- in BIO", data.read_char_tagged, "t.txt", "北 B-LOC\n京 I-LOC\n是 O\n\n中 O\n国 S-LOC\n", 6, "unknown tag 'S-LOC' for BIO"),
    ("unknown POS", data.read_peoples_daily, "pd.txt", "迈向/v  北京/zzz\n", 1, "unknown part of speech 'zzz'"),
    ("huge paragraph", data.read_peoples_daily, "pd.txt", "迈向/v  " * 40_000 + "\n", 1, "over the 200,000"),
    ("long bad line quoted short", data.read_char_tagged, "t.txt", "中 B-LOC X " + "长" * 100_000 + "\n", 1, r"\.\.\. \(100,"),
]


@pytest.mark.parametrize("case, reader, name, content, line, pattern", CASES, ids=[c[0] for c in CASES])
def test_bad_input_names_file_and_line(tmp_path, case, reader, name, content, line, pattern):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataFormatError) as exc:
        reader(str(path))
    msg = str(exc.value)
    assert msg.startswith(f"{path}:{line}: "), msg
    assert re.search(pattern, msg), msg
    assert len(msg) < len(str(path)) + 300, "an error quotes at most ~80 characters of the line"


def test_corrupted_msra_zip(tmp_path):
    path = tmp_path / "dh_msra.zip"
    path.write_bytes(b"PK\x03\x04" + b"\x00garbage" * 50)
    with pytest.raises(DataFormatError, match=f"^{re.escape(str(path))}: not a valid zip archive"):
        data.read_msra_ner(str(path), "train")


def test_corpus_line_of_megabytes_is_cut_into_documents(tmp_path):
    sentence = "今天北京天气很好，我们一起去公园散步。"
    path = tmp_path / "big.txt"
    path.write_text(sentence * 30_000 + "\n短文档。\n", encoding="utf-8")  # a 570,000-character line
    docs = data.read_corpus(str(path))
    assert "".join(docs["text"][:-1]) == sentence * 30_000 and docs["text"][-1] == "短文档。"
    assert max(map(len, docs["text"])) <= data.corpus.MAX_DOC_CHARS
    assert all(t.endswith("。") for t in docs["text"])  # cut at sentence ends


def test_predict_writes_valid_lines_and_names_the_bad_one(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("北京是中国的首[MASK]。\n上海很[MASK]。\n没有掩码的句子\n广州[MASK]。\n", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "zhbert", "predict", "--model", "base", str(src)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 1
    assert [json.loads(r)["text"] for r in out.stdout.splitlines()] == ["北京是中国的首[MASK]。", "上海很[MASK]。", "广州[MASK]。"]
    assert f"{src}:3: the text has no [MASK]" in out.stderr and ":1:" not in out.stderr


def test_a_truncated_vocabulary_does_not_load(tmp_path):
    import shutil

    import zhbert
    from zhbert.errors import ModelLoadError
    from zhbert.models_registry import BUNDLED_DIR
    from zhbert.tokenizer import DEFAULT_VOCAB

    folder = tmp_path / "cut"
    shutil.copytree(BUNDLED_DIR / "ner", folder)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        (folder / f).unlink()
    (folder / "vocab.txt").write_text("\n".join(DEFAULT_VOCAB.read_text(encoding="utf-8").splitlines()[:1000]) + "\n", encoding="utf-8")
    with pytest.raises(ModelLoadError, match=r"vocab\.txt: the tokenizer has [\d,]+ tokens but"):
        zhbert.load(str(folder))
    (folder / "config.json").write_text("[]", encoding="utf-8")
    with pytest.raises(ModelLoadError, match=r"config\.json: expected a JSON object"):
        zhbert.load(str(folder))


def test_a_truncated_tokenizer_json_names_the_folder(tmp_path):
    import shutil

    import zhbert
    from zhbert.errors import ModelLoadError
    from zhbert.models_registry import BUNDLED_DIR

    folder = tmp_path / "cut"
    shutil.copytree(BUNDLED_DIR / "ner", folder)
    data = (folder / "tokenizer.json").read_bytes()
    (folder / "tokenizer.json").write_bytes(data[: len(data) // 3])
    with pytest.raises(ModelLoadError, match=f"^{re.escape(str(folder / 'tokenizer.json'))}: not a readable tokenizer"):
        zhbert.load(str(folder))
    from zhbert.tokenizer import load_tokenizer  # the tokenizer loader alone (no folder check) names the folder too

    with pytest.raises(ModelLoadError, match=f"^{re.escape(str(folder))}: cannot load the tokenizer"):
        load_tokenizer(folder)


def test_predict_rejects_a_line_past_its_limit_with_file_and_line(tmp_path):
    src = tmp_path / "huge.txt"
    src.write_text("短句。\n" + "长" * 1_000_001 + "\n", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "zhbert", "predict", "--model", "cws", str(src)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 1 and f"{src}:2: line of 1,000,001 characters" in out.stderr
    assert len(out.stderr.strip().splitlines()[-1]) < 300  # the line is quoted, not printed


def test_predict_stdin_without_newlines_is_refused_at_the_line_cap(tmp_path):
    """`zhbert predict -` reading an endless stream with no newline (as from /dev/zero) stops at the
    line cap with <stdin>:1, instead of holding the stream in memory until it runs out."""
    import resource

    def limit():  # 3 GB of address space beyond what torch maps at import is plenty for one 4 MB line
        resource.setrlimit(resource.RLIMIT_DATA, (3 << 30, 3 << 30))

    endless = "import sys\nwhile True: sys.stdout.buffer.write(b'a' * (1 << 20))"
    feeder = subprocess.Popen([sys.executable, "-c", endless], stdout=subprocess.PIPE)
    try:
        out = subprocess.run(
            [sys.executable, "-m", "zhbert", "predict", "--model", "cws", "-"],
            stdin=feeder.stdout,
            capture_output=True,
            text=True,
            timeout=300,
            preexec_fn=limit,
        )
    finally:
        feeder.kill()
        feeder.wait()
    assert out.returncode == 1 and "<stdin>:1: line of more than 1,000,000 characters" in out.stderr, out.stderr[-500:]
    assert not out.stdout


def test_a_config_nested_100000_deep_names_the_file(tmp_path):
    """config.json nested 100,000 levels once gave a raw RecursionError in load, info and predict."""
    import shutil

    import zhbert
    from zhbert.errors import ModelLoadError
    from zhbert.models_registry import BUNDLED_DIR

    folder = tmp_path / "deep"
    shutil.copytree(BUNDLED_DIR / "cws-fast", folder)
    (folder / "config.json").write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    with pytest.raises(ModelLoadError, match=r"config\.json: JSON nested too deeply"):
        zhbert.load(str(folder))
    out = subprocess.run([sys.executable, "-m", "zhbert", "info", str(folder)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "nested too deeply" in out.stderr and "Traceback" not in out.stderr


def test_a_zip_bomb_is_refused_before_it_inflates(tmp_path):
    """A 0.6 MB MSRA zip whose member inflates to 600 MB: refused from its header, in a process whose
    memory is capped far below what inflating it would take (the issue's 3.9 MB -> 2 GB case passed 6 GB)."""
    import resource
    import zipfile

    bomb = tmp_path / "dh_msra.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        with zf.open("dh_msra.txt", "w", force_zip64=True) as member:
            block = ("中\tO\n" * 100_000).encode("utf-8")  # compresses about 1,000x, like a real bomb
            for _ in range(600 * 2**20 // len(block)):
                member.write(block)
    assert bomb.stat().st_size < 3 * 2**20

    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (2 << 30, 2 << 30))

    code = f"from zhbert.data import read_msra_ner; read_msra_ner({str(bomb)!r}, split='train')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, preexec_fn=limit)
    assert out.returncode != 0 and f"{bomb}!dh_msra.txt: inflates to" in out.stderr, out.stderr[-800:]
    assert "MemoryError" not in out.stderr

    from zhbert.data.source import read_zip_member
    from zhbert.errors import DataFormatError

    small = tmp_path / "small.zip"
    with zipfile.ZipFile(small, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.txt", "\0" * (4 * 2**20))  # under the size cap, but 4 MB of NULs inflate past 100x
    with pytest.raises(DataFormatError, match=r"small.zip!a.txt: inflates \d[\d,]*x .*a zip bomb"):
        read_zip_member(small, "a.txt")


def test_line_pieces_read_a_file_as_iter_lines_does(tmp_path, shared):
    """Chunked reading (chunks of 7 bytes split characters, CRLF and lines) gives the same lines as
    reading the whole file; a long line comes in pieces that join back to it."""
    from zhbert.data.source import iter_line_pieces, iter_lines

    real = sorted((shared / "corpora" / "weibo_senti_sample").glob("*.txt"))[0]
    raw = real.read_bytes()[:200_000]
    raw = raw[: raw.rfind(b"\n") + 1]
    sample = tmp_path / "sample.txt"
    sample.write_bytes(b"\xef\xbb\xbf" + raw.replace(b"\n", b"\r\n", 50) + "末行没有换行".encode())
    want = list(iter_lines(sample))
    for chunk in (7, 4096):
        got: dict[int, str] = {}
        for lineno, piece in iter_line_pieces(sample, piece_chars=50, chunk_bytes=chunk):
            assert len(piece) <= 50
            got[lineno] = got.get(lineno, "") + piece
        assert [got[n] for n, _ in want] == [line for _, line in want]
    bad = tmp_path / "bad.txt"
    bad.write_bytes("第一行\n第二行\n".encode() + b"caf\xe9\n")
    with pytest.raises(DataFormatError, match=r"bad.txt:3: invalid UTF-8"):
        list(iter_line_pieces(bad, 100, chunk_bytes=5))


def test_a_50mb_one_line_corpus_is_read_in_pieces_under_a_memory_cap(tmp_path):
    """The issue's case: `pretrain --corpus` on one 50 MB line reached 2 GB before the first step.
    Read under a 1.5 GB data cap, it arrives as 100,000-character documents, nothing dropped."""
    import resource

    sentence = "人民日报社论指出改革开放是决定当代中国命运的关键一招。"
    line = sentence * (50 * 2**20 // len(sentence.encode()))
    big = tmp_path / "one_line.txt"
    big.write_text(line + "\n", encoding="utf-8")

    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (3 << 29, 3 << 29))

    code = (
        "from zhbert.data import read_corpus\n"
        f"d = read_corpus({str(big)!r})\n"
        "n = 0\n"
        "for b in d.iter(batch_size=100):\n"
        "    assert max(map(len, b['text'])) <= 100_000 and set(b['line']) == {1}\n"
        "    n += sum(map(len, b['text']))\n"
        "print(len(d), n)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, preexec_fn=limit)
    assert out.returncode == 0, out.stderr[-1500:]
    docs, chars = map(int, out.stdout.split())
    assert chars == len(line) and docs >= len(line) // 100_000


@pytest.mark.parametrize("reader", ["read_segmented", "read_cluener"])
def test_a_50mb_line_in_a_labelled_file_is_refused_under_a_memory_cap(tmp_path, reader):
    """A segmented file or CLUENER file whose one line is 50 MB reached 2.0-2.45 GB; now it is
    refused with file:line before anything is built from it, under a 1.5 GB data cap."""
    import json
    import resource

    words = "改革 开放 是 决定 当代 中国 命运 的 关键 一招 。 "
    text = words * (50 * 2**20 // len(words.encode()))
    path = tmp_path / ("big.txt" if reader == "read_segmented" else "big.json")
    good = "人民 日报 社论 。\n" if reader == "read_segmented" else json.dumps({"text": "北京", "label": {}}, ensure_ascii=False) + "\n"
    big = text if reader == "read_segmented" else json.dumps({"text": text.replace(" ", ""), "label": {}}, ensure_ascii=False)
    path.write_text(good + big + "\n", encoding="utf-8")

    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (3 << 29, 3 << 29))

    code = f"from zhbert.data import {reader}; {reader}({str(path)!r})"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, preexec_fn=limit)
    assert out.returncode != 0 and f"{path}:2:" in out.stderr, out.stderr[-1500:]
    assert ("line of" if reader == "read_segmented" else "record of") in out.stderr and "MemoryError" not in out.stderr


def test_pretraining_holds_a_bounded_amount_of_text_at_once(monkeypatch, tokenizer):
    """`pretrain` on one 50 MB line (171 documents of 100,000 characters) peaked at 7.4 GB: the [UNK]
    check tokenised 2,000 documents at once, and each map batch held 200 documents (1,000 when packing).
    Now the check reads at most SAMPLE_CHARS and a batch holds a bounded number of characters or tokens;
    corpora of ordinary lines keep the full batch sizes, and so the same blocks."""
    from datasets import Dataset

    from zhbert import tokenizer as tok_module
    from zhbert.training import pretrain_data

    read = []

    def documents():
        for _ in range(2000):
            read.append(100_000)
            yield "北京是中国的首都。" * 11_111

    tok_module.check_unk_rate(tokenizer, documents(), "corpus")
    assert sum(read) <= tok_module.SAMPLE_CHARS + 100_000

    sizes = []
    real_map = Dataset.map

    def recording_map(self, *args, **kwargs):
        sizes.append(kwargs["batch_size"])
        return real_map(self, *args, **kwargs)

    monkeypatch.setattr(Dataset, "map", recording_map)
    long_docs = Dataset.from_dict({"text": ["北京是中国的首都。" * 11_111] * 3})
    packed = pretrain_data.pack(pretrain_data.prepare(long_docs, tokenizer, "char"), tokenizer)
    assert sizes == [pretrain_data.CHARS_PER_BATCH // 99_999, pretrain_data.TOKENS_PER_BATCH // 99_999]
    assert sum(len(b) - 2 for b in packed["input_ids"]) == 3 * 99_999 + 2  # every token, [SEP] between documents
    sizes.clear()
    pretrain_data.pack(pretrain_data.prepare(Dataset.from_dict({"text": ["北京是中国的首都。"] * 5}), tokenizer, "char"), tokenizer)
    assert sizes == [200, 1000]  # ordinary lines: the batch sizes, and so the blocks, as before
