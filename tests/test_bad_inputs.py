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
