"""Bad pretraining input: a clear error naming the file, or windowed; never dropped."""

import pytest
from datasets import Dataset
from pretrain_cli import TINY, pretrain_cli


def _pretrain(corpus, out):
    return pretrain_cli("--corpus", corpus, "--output", out, *TINY, "--max-steps", "1", "--batch-size", "2")


@pytest.mark.parametrize(
    "name, content, problem",
    [
        ("empty.txt", b"", "empty"),
        ("binary.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
        ("latin1.txt", "人民日报。\n".encode() + "caf\xe9\n".encode("latin-1"), "invalid UTF-8"),
        ("blank.txt", b"\n \n\t\n", "only whitespace"),
    ],
)
def test_bad_corpus_file_is_a_clear_error(tmp_path, name, content, problem):
    path = tmp_path / name
    path.write_bytes(content)
    r = _pretrain(path, tmp_path / "out")
    assert r.returncode == 1
    assert str(path) in r.stderr and problem in r.stderr
    assert "Traceback" not in r.stderr


def test_a_1mb_line_without_punctuation_is_windowed_not_dropped(tokenizer, peoples_daily):
    from zhbert.tokenizer import encode
    from zhbert.training.pretrain_data import pack, prepare

    # one 1,000,000-character line: People's Daily text with every punctuation mark removed
    chars = [c for t in peoples_daily.select(range(3000))["text"] for c in t if c.isalnum()]
    line = "".join((chars * (1_000_000 // len(chars) + 1))[:1_000_000])
    docs = Dataset.from_dict({"text": [line, "短文档。"]})
    prepared = prepare(docs, tokenizer, "wwm", num_proc=1)
    blocks = pack(prepared, tokenizer, max_length=128)
    n_tokens = sum(len(ids) for ids in prepared["input_ids"])
    enc = encode(tokenizer, [line])[0]
    assert len(prepared[0]["input_ids"]) == len(enc.ids) and enc.offsets[-1][1] == len(line)  # nothing cut
    body = [ids[1:-1] for ids in blocks["input_ids"]]
    assert all(len(ids) == 128 for ids in blocks["input_ids"][:-1])  # full blocks
    # every token lands in exactly one block (+ one [SEP] between the two documents)
    assert sum(map(len, body)) == n_tokens + 1
    flat = [t for ids in body for t in ids]
    assert flat[: len(prepared[0]["input_ids"])] == prepared[0]["input_ids"]
