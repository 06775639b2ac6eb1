"""The console script and ``python -m zhbert`` list the planned subcommands."""

import json
import subprocess
import sys

import pytest

PLANNED = ["info", "demo", "pretrain", "train", "predict", "fill-mask", "probe", "study", "export"]


@pytest.mark.parametrize("argv", [[sys.executable, "-m", "zhbert", "--help"], ["zhbert", "--help"]])
def test_help_lists_subcommands(argv):
    import shutil

    if argv[0] == "zhbert":
        exe = shutil.which("zhbert") or str(__import__("pathlib").Path(sys.executable).parent / "zhbert")
        argv = [exe, "--help"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    for cmd in PLANNED:
        assert cmd in out.stdout


def test_info_on_a_model_folder(tmp_path):
    from transformers import BertConfig, BertForMaskedLM

    BertForMaskedLM(
        BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
    ).save_pretrained(tmp_path)
    out = subprocess.run([sys.executable, "-m", "zhbert", "info", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    import json

    info = json.loads(out.stdout)
    p = info["parameters"]
    # BERT-paper accounting: embeddings = (vocab + positions + types) * H + LayerNorm
    assert p["embeddings"] == (100 + 512 + 2) * 32 + 2 * 32
    assert p["attention"] == 2 * (4 * (32 * 32 + 32))
    assert p["feed_forward"] == 2 * (32 * 64 + 64 + 64 * 32 + 32)
    assert p["total"] == sum(v for k, v in p.items() if k != "total")


def test_info_errors_name_the_path(tmp_path):
    out = subprocess.run([sys.executable, "-m", "zhbert", "info", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "config.json is missing" in out.stderr and str(tmp_path) in out.stderr
    out = subprocess.run([sys.executable, "-m", "zhbert", "info", "no-such-model"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "bundled models: base, electra, cws" in out.stderr


@pytest.fixture(scope="module")
def ner_folder(tiny_encoder, tokenizer, tmp_path_factory):
    from zhbert.data.peoples_daily import NER_LABELS
    from zhbert.heads import HeadConfig, new_head, save_head

    return save_head(
        new_head(tiny_encoder, HeadConfig(kind="token", labels=NER_LABELS, scheme="BIO", window=64)),
        tokenizer,
        tmp_path_factory.mktemp("cli") / "ner",
    )


def _zhbert(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "zhbert", *args], input=stdin, capture_output=True, text=True, timeout=300)


def test_predict_json_lines_in_order(ner_folder, pd_sentences, tmp_path):
    import json

    lines = pd_sentences[:40] + ["", "ＡＢＣ 😀"]
    f = tmp_path / "in.txt"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = _zhbert("predict", "--model", str(ner_folder), str(f), "--batch-size", "7")
    assert r.returncode == 0, r.stderr
    assert "42 lines" in r.stderr  # a progress bar on stderr for a file (stdout stays JSON lines)
    out = [json.loads(l) for l in r.stdout.splitlines()]
    assert [o["text"] for o in out] == lines
    for o in out:
        assert all(o["text"][e["start"] : e["end"]] == e["text"] for e in o["entities"])
    r = _zhbert("predict", "--model", str(ner_folder), "-", stdin="北京欢迎你\n")
    assert r.returncode == 0 and json.loads(r.stdout)["text"] == "北京欢迎你"


def test_predict_reads_clue_json_lines_and_writes_their_ids_back(ner_folder, datasets_dir, tmp_path):
    """CLUE's test files are JSON lines (``{"id", "content"}``, ``{"sentence1", "sentence2", "id"}``): read
    as text, each JSON line was itself tagged; now its text is read by key and its id written back."""
    posts = tmp_path / "test.jsonl"
    records = [json.loads(line) for line in (datasets_dir / "clue_emotion2020" / "test.txt").read_text(encoding="utf-8").splitlines()[:12]]
    posts.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n\n", encoding="utf-8")
    r = _zhbert("predict", "--model", str(ner_folder), str(posts), "--batch-size", "5")
    assert r.returncode == 0, r.stderr
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(o["id"], o["text"]) for o in out] == [(rec["id"], rec["content"]) for rec in records]
    as_text = tmp_path / "test.txt"  # the same file under a name that says nothing
    as_text.write_text(posts.read_text(encoding="utf-8"), encoding="utf-8")
    r = _zhbert("predict", "--model", str(ner_folder), str(as_text))
    assert r.returncode == 1 and r.stdout == ""
    assert f"{as_text}:1: a JSON object, read as text it would be predicted as one: give --format jsonl" in r.stderr
    r = _zhbert("predict", "--model", str(ner_folder), "--format", "jsonl", "-", stdin=as_text.read_text(encoding="utf-8"))
    assert r.returncode == 0 and [json.loads(line)["text"] for line in r.stdout.splitlines()] == [rec["content"] for rec in records]
    array = tmp_path / "array.json"
    array.write_text(json.dumps(records, ensure_ascii=False, indent=1), encoding="utf-8")
    r = _zhbert("predict", "--model", str(ner_folder), str(array))
    assert r.returncode == 1 and f"{array}:1: not a JSON object on one line" in r.stderr and "jq -c '.[]' FILE > NEW_FILE" in r.stderr
    pairs = tmp_path / "ocnli_test.json"
    pairs.write_text("".join((datasets_dir / "ocnli" / "test.json").read_text(encoding="utf-8").splitlines(True)[:6]), encoding="utf-8")
    r = _zhbert("predict", "--model", "matching", str(pairs))
    assert r.returncode == 0, r.stderr
    out, given = (
        [json.loads(line) for line in r.stdout.splitlines()],
        [json.loads(line) for line in pairs.read_text(encoding="utf-8").splitlines()],
    )
    assert [(o["id"], o["text_a"], o["text_b"]) for o in out] == [(g["id"], g["sentence1"], g["sentence2"]) for g in given]
    r = _zhbert("predict", "--model", str(ner_folder), str(pairs))  # a pair file to a text model: no text key
    assert r.returncode == 1 and f"{pairs}:1: no key 'text' in 'sentence1, sentence2, id'" in r.stderr


def test_predict_reads_the_hubs_parquet_files(datasets_dir, tmp_path):
    """A test split as the Hugging Face hub serves it (CLUE's ocnli: ``sentence1``, ``sentence2``,
    ``label`` -1, ``idx``): before, "binary data (NUL byte)"; now each row's pair is predicted in order
    and its ``idx`` written back, and so from a folder ``save_to_disk`` wrote ("is a directory" before)."""
    from datasets import Dataset

    given = [json.loads(line) for line in (datasets_dir / "ocnli" / "test.json").read_text(encoding="utf-8").splitlines()[:7]]
    hub = tmp_path / "test-00000-of-00001.parquet"
    columns = {k: [g[k] for g in given] for k in ("sentence1", "sentence2")}
    Dataset.from_dict({**columns, "label": [-1] * len(given), "idx": [g["id"] for g in given]}).to_parquet(hub)
    r = _zhbert("predict", "--model", "matching", str(hub), "--batch-size", "3")
    assert r.returncode == 0, r.stderr
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(o["idx"], o["text_a"], o["text_b"]) for o in out] == [(g["id"], g["sentence1"], g["sentence2"]) for g in given]
    saved = tmp_path / "ocnli_test"  # the same rows in a folder Dataset.save_to_disk wrote
    Dataset.from_parquet(str(hub), cache_dir=str(tmp_path / "cache")).save_to_disk(str(saved))
    r = _zhbert("predict", "--model", "matching", str(saved), "--batch-size", "3")
    assert r.returncode == 0 and [json.loads(line) for line in r.stdout.splitlines()] == out, r.stderr
    r = _zhbert("predict", "--model", "matching", "--format", "parquet", "-", stdin="")
    assert r.returncode == 1 and "--format parquet reads a file, not stdin" in r.stderr
    r = _zhbert("predict", "--model", "cws-fast", str(hub))  # a pair file to a text model: no text column
    assert r.returncode == 1 and f"{hub}:1: no column 'text' in 'sentence1, sentence2, label, idx'" in r.stderr


def test_predict_bad_input_and_model(ner_folder, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes("第一行\n".encode() + b"\xff\xfe\n")
    r = _zhbert("predict", "--model", str(ner_folder), str(bad))
    assert r.returncode == 1 and f"{bad}:2" in r.stderr and "UTF-8" in r.stderr
    r = _zhbert("predict", "--model", str(tmp_path), str(bad))
    assert r.returncode == 1 and "config.json is missing" in r.stderr
    r = _zhbert("predict", "--model", str(ner_folder), "--backend", "tensorrt", str(bad))
    assert r.returncode == 1 and "backend must be one of torch, int8, onnx, onnx-int8" in r.stderr
    r = _zhbert("predict", "--model", str(ner_folder), "--backend", "onnx", str(bad))  # a folder exported without --onnx
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "no such ONNX graph; export the model with it (zhbert export MODEL DIR --onnx)" in r.stderr


def test_a_pipe_is_read_by_predict_and_refused_by_name_where_a_file_is_read_twice(ner_folder, pd_sentences, tmp_path):
    """``/dev/stdin`` and ``<(...)`` are pipes: their size reads 0, so predict called them "file is empty"
    and so did training. Now predict reads a pipe as it reads ``-``; training and pretraining, which
    read a file more than once and cache it by size and time, refuse one by name."""
    import os

    r = _zhbert("predict", "--model", str(ner_folder), "/dev/stdin", stdin="".join(s + "\n" for s in pd_sentences[:5]))
    assert r.returncode == 0, r.stderr
    assert [json.loads(line)["text"] for line in r.stdout.splitlines()] == pd_sentences[:5]
    fifo = tmp_path / "posts.fifo"
    os.mkfifo(fifo)  # nothing writes to it: it is refused before it is opened, never waited on
    said = f"{fifo}: not a regular file (a pipe, such as <(...) or /dev/stdin, or a device): write it to a file first"
    r = _zhbert("train", "tagging", "--train-file", str(fifo))
    assert r.returncode == 1 and said in r.stderr, r.stderr[-2000:]
    r = _zhbert("pretrain", "--corpus", str(fifo), "--max-steps", "1", "--output-dir", str(tmp_path / "pt"))
    assert r.returncode == 1 and said in r.stderr, r.stderr[-2000:]


def test_fill_mask_cli(tiny_encoder):
    import json

    r = _zhbert("fill-mask", "--model", str(tiny_encoder), "--top-k", "2", "我爱北[MASK]。")
    assert r.returncode == 0, r.stderr
    (m,) = json.loads(r.stdout)["masks"]
    assert (m["start"], m["end"]) == (3, 9) and len(m["candidates"]) == 2
    r = _zhbert("fill-mask", "--model", str(tiny_encoder), "没有遮盖")
    assert r.returncode == 1 and "no [MASK]" in r.stderr
    # "-": texts from stdin, a JSON line each in order (a blank line answers with none); a bad line named by number
    texts = ["我爱北[MASK]。", "", "[MASK]国人民", "迈向充满希望的新世纪"]
    r = _zhbert("fill-mask", "--model", str(tiny_encoder), "--top-k", "1", "-", stdin="\n".join(texts) + "\n")
    assert r.returncode == 1 and "<stdin>:4: the text has no [MASK] to fill" in r.stderr, r.stderr[-2000:]
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["text"] for o in out] == texts[:3] and [len(o["masks"]) for o in out] == [1, 0, 1]
    assert (out[2]["masks"][0]["start"], out[2]["masks"][0]["end"]) == (0, 6)
    r = _zhbert("train", "poetry")
    assert r.returncode == 1 and "unknown task" in r.stderr


def test_mlm_score_compares_masked_lms_on_held_out_text(pd_heldout_file, tiny_encoder):
    """One row per model, the same blanks for each: the pretrained base fills People's Daily blanks far better
    than an untrained encoder; a model without a masked-LM head is refused before the table starts."""
    r = _zhbert("mlm-score", str(pd_heldout_file), "--model", "base", "--model", str(tiny_encoder), "--max-chars", "1500")
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert lines[0].startswith("1,500 characters of ") and lines[2].startswith("| model |")
    (base, untrained) = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[4:6]]
    assert base[0] == "base" and untrained[0] == str(tiny_encoder) and base[4] == untrained[4]  # same blanks
    assert float(base[1].rstrip("%")) > 15 > 1 > float(untrained[1].rstrip("%"))
    assert float(base[3]) < 500 < float(untrained[3])  # perplexity: the untrained one is near uniform
    for name, said in [("ner", "not a masked language model"), ("electra", "no masked-LM head")]:
        r = _zhbert("mlm-score", str(pd_heldout_file), "--model", "base", "--model", name)
        assert r.returncode == 1 and said in r.stderr and r.stdout == "", r.stderr[-2000:]
    r = _zhbert("mlm-score", str(pd_heldout_file.parent / "missing.txt"))
    assert r.returncode == 1 and "missing.txt" in r.stderr
    r = _zhbert("mlm-score", str(pd_heldout_file), "--max-chars", "0")
    assert r.returncode == 1 and "--max-chars must be 1 or more" in r.stderr and r.stdout == ""


def test_export_halves_the_weights_and_keeps_outputs(tiny_encoder, tmp_path):
    """`zhbert export` writes fp16 safetensors (half the bytes) that load back as fp32 with
    nearly the same outputs; a folder without weights is refused with its path."""
    import torch
    from transformers import BertForMaskedLM

    out = subprocess.run(
        [sys.executable, "-m", "zhbert", "export", str(tiny_encoder), str(tmp_path / "half")], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    full, half = tiny_encoder / "model.safetensors", tmp_path / "half" / "model.safetensors"
    assert 0.45 < half.stat().st_size / full.stat().st_size < 0.55
    assert (tmp_path / "half" / "tokenizer.json").is_file() or (tmp_path / "half" / "vocab.txt").is_file()
    import zhbert

    a, b = zhbert.load(str(tiny_encoder)), zhbert.load(str(tmp_path / "half"))
    assert next(b.model.parameters()).dtype == torch.float32
    ids = torch.tensor([[101, 2769, 4263, 102]])
    torch.testing.assert_close(a.model(input_ids=ids).logits, b.model(input_ids=ids).logits, atol=2e-2, rtol=0)
    bad = subprocess.run(
        [sys.executable, "-m", "zhbert", "export", str(tmp_path), str(tmp_path / "x")], capture_output=True, text=True, timeout=120
    )
    assert bad.returncode == 1 and str(tmp_path) in bad.stderr
    # stored fp16, run fp32 in plain transformers as well (config dtype float32): no silent 100x-slower fp16 on CPU
    assert BertForMaskedLM.from_pretrained(tmp_path / "half").dtype == torch.float32
    # --trim-vocab: the vocabulary's never-emitted tail gone, the kept tokens' logits those of the untrimmed copy
    out = subprocess.run(
        [sys.executable, "-m", "zhbert", "export", str(tiny_encoder), str(tmp_path / "trim"), "--trim-vocab"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    trimmed = zhbert.load(str(tmp_path / "trim"))
    size = trimmed.model.config.vocab_size
    assert size == len(trimmed.tokenizer) < 0.7 * len(a.tokenizer)
    torch.testing.assert_close(trimmed.model(input_ids=ids).logits, b.model(input_ids=ids).logits[..., :size], atol=0, rtol=0)


def test_predict_reads_token_lists_and_conll_files(datasets_dir, tmp_path):
    """A test split as a NER dataset ships it, a token a line (People's Daily NER) or run_ner.py's
    ``tokens`` / ``ner_tags`` in the hub's Parquet: before, the CoNLL file was predicted a line at a
    time ("中 O" as a text, exit 0) and the Parquet file refused ("no column 'text'"). Now the CoNLL
    file is named as one, --format conll reads a sentence a run of lines, a record of tokens reads
    as its tokens joined, and both write the tokens back with a predicted BIO tag for each."""
    from datasets import ClassLabel, Dataset, Features, Sequence, Value

    from zhbert.tags import detect_scheme, spans_to_tags, tags_to_spans

    source = (datasets_dir / "peoples_daily_ner" / "example.test").read_text(encoding="utf-8").split("\n\n")[:6]
    gold = [[line.split() for line in block.strip().splitlines()] for block in source]
    conll = tmp_path / "example.test"
    conll.write_text("\n\n".join(source) + "\n", encoding="utf-8")
    r = _zhbert("predict", "--model", "ner", str(conll))
    assert r.returncode == 1 and f"{conll}:1: a token and its tag" in r.stderr and "give --format conll" in r.stderr
    r = _zhbert("predict", "--model", "ner", "--format", "conll", str(conll))
    assert r.returncode == 0, r.stderr
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["tokens"] for o in out] == [[t for t, _ in sentence] for sentence in gold]
    texts = ["".join(o["tokens"]) for o in out]
    lines = tmp_path / "texts.txt"
    lines.write_text("\n".join(texts) + "\n", encoding="utf-8")
    plain = [json.loads(line) for line in _zhbert("predict", "--model", "ner", str(lines)).stdout.splitlines()]
    assert [(o["text"], o["entities"]) for o in out] == [(p["text"], p["entities"]) for p in plain]  # the same text, the same answer
    assert sum(len(o["entities"]) for o in out) >= 3
    for o in out:  # a character a token: the tags are the entities, character for character
        assert o["tags"] == spans_to_tags(len(o["text"]), [(e["label"], e["start"], e["end"]) for e in o["entities"]], "BIO")
    names = sorted({tag for sentence in gold for _, tag in sentence})
    hub = tmp_path / "test-00000-of-00001.parquet"
    features = Features({"id": Value("string"), "tokens": Sequence(Value("string")), "ner_tags": Sequence(ClassLabel(names=names))})
    rows = {
        "id": [str(k) for k in range(len(gold))],
        "tokens": [[t for t, _ in s] for s in gold],
        "ner_tags": [[g for _, g in s] for s in gold],
    }
    Dataset.from_dict(rows, features=features).to_parquet(hub)
    r = _zhbert("predict", "--model", "ner", str(hub))
    assert r.returncode == 0, r.stderr
    assert [json.loads(line) for line in r.stdout.splitlines()] == [{"id": str(k), **o} for k, o in enumerate(out)]
    words = tmp_path / "words.jsonl"  # tokens that are words: each takes the entity its first character is in
    sentence = [tt for tt in gold if any(t != "O" for _, t in tt)][0]
    scheme = detect_scheme(t for _, t in sentence)
    spans = tags_to_spans([t for _, t in sentence], scheme)
    chars = [c for c, _ in sentence]
    cut = sorted({0, len(chars)} | {s for _, s, _ in spans} | {e for _, _, e in spans})
    tokens = ["".join(chars[a:b]) for a, b in zip(cut, cut[1:])]
    words.write_text(json.dumps({"tokens": tokens}, ensure_ascii=False) + "\n", encoding="utf-8")
    r = _zhbert("predict", "--model", "ner", str(words))
    assert r.returncode == 0, r.stderr
    (o,) = [json.loads(line) for line in r.stdout.splitlines()]
    assert o["tokens"] == tokens and len(o["tags"]) == len(tokens) and o["text"] == "".join(chars)
    starts = [sum(map(len, tokens[:k])) for k in range(len(tokens))]
    for e in o["entities"]:
        if e["start"] in starts:
            assert o["tags"][starts.index(e["start"])] == "B-" + e["label"]
    r = _zhbert("predict", "--model", "ner", "--format", "lines", str(conll))  # given, the format is obeyed
    assert r.returncode == 0 and json.loads(r.stdout.splitlines()[0])["text"] == source[0].splitlines()[0]


def test_predict_names_a_labelled_pair_file_with_what_reads_it(datasets_dir, tmp_path):
    """LCQMC's test file (text_a, text_b, label) given to predict: before, only "found 3 column(s)";
    now the error says how to score it, or to predict its pairs alone."""
    lcqmc = tmp_path / "test.txt"
    lcqmc.write_text("".join((datasets_dir / "lcqmc" / "test.txt").read_text(encoding="utf-8").splitlines(True)[:5]), encoding="utf-8")
    r = _zhbert("predict", "--model", "matching", str(lcqmc))
    assert r.returncode == 1 and f"{lcqmc}:1: a matching model needs 'text_a<TAB>text_b', found 3 column(s)" in r.stderr
    assert "zhbert train matching --evaluate-only MODEL --test-file FILE" in r.stderr and "cut -f1,2 FILE" in r.stderr


def test_predict_reads_csv_files_by_their_header(datasets_dir, tmp_path):
    """A CSV export (waimai_10k: ``label,review``) given to predict: before, read as lines, so its
    header was predicted as a text and every review with "1," in front; now the text column is read
    by name, as training reads it, a quoted cell may span lines, and an unclosed quote is named."""
    import csv

    with open(datasets_dir / "sophonplus_sentiment" / "waimai_10k.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    sample = rows[1:8] + rows[-8:] + [["0", "送餐太慢了，\n等了一个多小时"]]  # a review over two lines, quoted
    waimai = tmp_path / "waimai.csv"
    with open(waimai, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([rows[0], *sample])
    r = _zhbert("predict", "--model", "tagging", str(waimai), "--batch-size", "5")
    assert r.returncode == 0, r.stderr
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["text"] for o in out] == [review for _, review in sample]
    piped = _zhbert("predict", "--model", "tagging", "--format", "csv", "--batch-size", "5", "-", stdin=waimai.read_text(encoding="utf-8"))
    assert [json.loads(line) for line in piped.stdout.splitlines()] == out
    pairs = tmp_path / "pairs.csv"
    pairs.write_text('id,sentence1,sentence2\n7,花呗怎么还款,"蚂蚁花呗\n如何还钱"\n', encoding="utf-8")
    r = _zhbert("predict", "--model", "matching", str(pairs))
    assert r.returncode == 0 and [(o["id"], o["text_b"]) for o in map(json.loads, r.stdout.splitlines())] == [("7", "蚂蚁花呗\n如何还钱")]
    broken = tmp_path / "broken.csv"
    broken.write_text('label,review\n1,"好吃\n0,难吃\n', encoding="utf-8")
    r = _zhbert("predict", "--model", "tagging", str(broken))
    assert r.returncode == 1 and f"{broken}:2: not CSV (unexpected end of data): a quote opened here and never closed" in r.stderr


def test_predict_reads_conllu_files(tmp_path):
    """A Universal Dependencies treebank's CoNLL-U file: before, predicted a line at a time (its
    "# sent_id" comments and ten-column lines as texts). Now each sentence's words (FORM) are read
    as a tokenised text, as from run_ner.py's tokens."""
    sentences = [["中共中央", "总书记", "江泽民", "在", "北京", "会见", "了", "美国", "客人", "。"], ["我", "爱", "北京", "天安门", "。"]]
    blocks = []
    for k, words in enumerate(sentences, 1):
        rows = [f"# sent_id = s{k}", f"# text = {''.join(words)}"] + [
            f"{i}\t{w}\t{w}\tX\t_\t_\t0\tdep\t_\t_" for i, w in enumerate(words, 1)
        ]
        blocks.append("\n".join(rows))
    conllu = tmp_path / "zh_gsd-ud-test.conllu"
    conllu.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    r = _zhbert("predict", "--model", "ner", str(conllu))
    assert r.returncode == 0, r.stderr
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["tokens"] for o in out] == sentences and [o["text"] for o in out] == ["".join(s) for s in sentences]
    assert [len(o["tags"]) for o in out] == [len(s) for s in sentences] and "B-PER" in out[0]["tags"]
    as_text = tmp_path / "gsd.txt"
    as_text.write_text(conllu.read_text(encoding="utf-8"), encoding="utf-8")
    r = _zhbert("predict", "--model", "ner", str(as_text))
    assert r.returncode == 1 and f"{as_text}:1: a CoNLL-U comment" in r.stderr and "--format conllu" in r.stderr
    r = _zhbert("predict", "--model", "ner", "--format", "conllu", str(as_text))
    assert r.returncode == 0 and [json.loads(line) for line in r.stdout.splitlines()] == out


def test_predict_names_a_labelled_text_file_given_to_a_classifier(datasets_dir, tmp_path):
    """SMP2020-EWECT's test file (label<TAB>text) given to the tagging model: before, each line was
    classified with its label and a tab in the text, the header line too, exit 0. Now refused by
    name, with the commands that score it or cut its texts; --format lines still reads it whole."""
    ewect = tmp_path / "test.tsv"
    ewect.write_text(
        "".join((datasets_dir / "smp2020_ewect_usual" / "test.tsv").read_text(encoding="utf-8").splitlines(True)[:6]), encoding="utf-8"
    )
    r = _zhbert("predict", "--model", "tagging", str(ewect))
    assert r.returncode == 1 and f"{ewect}:1: a tab in the line, as a labelled file (text<TAB>label) has one" in r.stderr
    assert "--evaluate-only MODEL --test-file FILE" in r.stderr and "cut -f1 FILE" in r.stderr
    r = _zhbert("predict", "--model", "tagging", "--format", "lines", str(ewect))
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 6


def test_predict_reads_bounded_chunks(pd_sentences, monkeypatch):
    """`zhbert predict` passes the model up to --batch-size lines a call, fewer once they hold
    PREDICT_CHUNK_CHARS characters, and the next call goes on from the next line."""
    import zhbert.cli.predict_inputs as cli

    monkeypatch.setattr(cli, "PREDICT_CHUNK_CHARS", 150)
    rows = iter(enumerate(pd_sentences[:60], start=1))
    chunks = []
    while chunk := cli.next_chunk(rows, 8):
        chunks.append(chunk)
    assert [r for c in chunks for r in c] == list(enumerate(pd_sentences[:60], start=1))  # all, in order, once
    for c in chunks[:-1]:
        chars = sum(len(t) for _, t in c)
        assert len(c) == 8 or (chars >= 150 and chars - len(c[-1][1]) < 150)
    assert any(len(c) < 8 for c in chunks[:-1])  # the character cap did cut some
    pairs = iter([(1, ("今天天气很好", "今天是晴天")), (2, ("北京", "上海"))])
    assert cli.next_chunk(pairs, 1) == [(1, ("今天天气很好", "今天是晴天"))]


def test_info_lists_every_heads_labels_and_types():
    """`zhbert info MODEL` answers "which types may my dictionary name?" for every bundled head."""
    out = {}
    for name in ("ner", "cws", "tagging", "matching", "pos"):
        r = subprocess.run([sys.executable, "-m", "zhbert", "info", name], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        out[name] = json.loads(r.stdout)["task_head"]
    assert out["ner"]["types"] == ["LOC", "ORG", "PER"] and out["ner"]["scheme"] == "BIO"
    assert out["cws"]["labels"] == ["B", "M", "E", "S"] and "types" not in out["cws"]
    assert "happy" in out["tagging"]["labels"] and out["matching"]["labels"] == ["different", "paraphrase"]
    assert {"n", "v", "nr", "ns"} <= set(out["pos"]["types"])


def test_predict_writes_the_text_form_training_reads_back(pd_sentences, weibo_posts, tmp_path):
    """`--output-format text`: before, predict wrote JSON lines only, so a model's segmentation could
    not go to SIGHAN's score script or to word2vec, and predictions corrected by hand could not be
    trained on without a converter of one's own. Now each head writes the form its recipe reads:
    read back by the training readers, the words, tags, entities and labels equal the JSON ones."""
    from zhbert.data.user_files import task_data_from_files

    def both(model, lines, *args):
        f = tmp_path / f"{model}.in"
        f.write_text("\n".join(lines) + "\n", encoding="utf-8")
        as_json = _zhbert("predict", "--model", model, str(f), *args)
        as_text = _zhbert("predict", "--model", model, str(f), "--output-format", "text", *args)
        assert as_json.returncode == 0 and as_text.returncode == 0, as_json.stderr + as_text.stderr
        out = tmp_path / f"{model}.out"
        out.write_text(as_text.stdout, encoding="utf-8")
        return [json.loads(line) for line in as_json.stdout.splitlines()], as_text.stdout, out

    def read_back(task, path, **options):
        data = task_data_from_files(task, str(path), validation_file=str(path), **options)
        return data.dev

    texts = pd_sentences[:12]
    predicted, printed, out = both("cws", texts)
    assert printed.splitlines() == [" ".join(w["text"] for w in p["words"]) for p in predicted]
    assert [r["words"] for r in read_back("cws", out)] == [[w["text"] for w in p["words"]] for p in predicted]
    predicted, printed, out = both("pos", texts)
    assert printed.splitlines()[0] == " ".join(f"{w['text']}/{w['label']}" for w in predicted[0]["words"])
    assert [r["pos"] for r in read_back("pos", out)] == [[w["label"] for w in p["words"]] for p in predicted]
    predicted, printed, out = both("ner", texts)
    entities = [[(e["label"], e["start"], e["end"]) for e in p["entities"]] for p in predicted]
    assert sum(map(len, entities)) >= 5
    from zhbert.tags import tags_to_spans

    assert [sorted(tags_to_spans(r["tags"], "BIO")) for r in read_back("ner", out, file_format="conll")] == [sorted(e) for e in entities]
    posts = [p for p in weibo_posts[:30] if "\t" not in p][:10]
    predicted, printed, out = both("tagging", posts)
    labels = task_data_from_files("tagging", str(out), validation_file=str(out)).labels
    assert [labels[r["label"]] for r in read_back("tagging", out)] == [p["labels"][0]["label"] for p in predicted]
    pairs = ["花呗怎么还款\t蚂蚁花呗如何还钱", "北京到上海的高铁票多少钱\t上海到北京的机票多少钱"]
    predicted, printed, out = both("matching", pairs)
    assert printed.splitlines() == [f"{p['text_a']}\t{p['text_b']}\t{p['label']}" for p in predicted]
    record = tmp_path / "posts.jsonl"
    record.write_text('{"text": "第一行\\t第二列"}\n{"text": "今天真开心"}\n', encoding="utf-8")
    r = _zhbert("predict", "--model", "tagging", "--output-format", "text", str(record))
    assert r.returncode == 1 and r.stdout.startswith("今天真开心\t")  # the other record is still written
    assert f"{record}:1: a text holding a tab or a line break cannot be a TSV cell" in r.stderr


def test_predict_writes_label_studio_tasks_whose_corrected_export_trains(pd_sentences, weibo_posts, tmp_path):
    """`--output-format label-studio`: the model's answers as Label Studio pre-annotations, one JSON array of
    tasks. Accepted as they are in Label Studio (predictions copied into annotations, as its export then
    holds them), they read back through `zhbert train` as the same entities and labels."""
    from zhbert.data.user_files import task_data_from_files
    from zhbert.tags import tags_to_spans

    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(pd_sentences[:12]) + "\n", encoding="utf-8")
    as_json = [json.loads(line) for line in _zhbert("predict", "--model", "ner", str(texts)).stdout.splitlines()]
    r = _zhbert("predict", "--model", "ner", str(texts), "--output-format", "label-studio")
    assert r.returncode == 0, r.stderr
    tasks = json.loads(r.stdout)
    assert [t["data"]["text"] for t in tasks] == pd_sentences[:12]
    for task, p in zip(tasks, as_json):
        (prediction,) = task["predictions"]
        assert prediction["model_version"] == "ner" and prediction["score"] == min((e["score"] for e in p["entities"]), default=1.0)
        assert all(x["from_name"] == "label" and x["to_name"] == "text" and x["type"] == "labels" for x in prediction["result"])
    exported = tmp_path / "export.json"  # as Label Studio exports them once each task is submitted unchanged
    exported.write_text(json.dumps([{**t, "annotations": [{"result": t["predictions"][0]["result"]}]} for t in tasks]), encoding="utf-8")
    data = task_data_from_files("ner", str(exported), validation_file=str(exported))
    entities = [sorted((e["label"], e["start"], e["end"]) for e in p["entities"]) for p in as_json]
    assert sum(map(len, entities)) >= 5 and [sorted(tags_to_spans(r["tags"], "BIO")) for r in data.dev] == entities

    posts = tmp_path / "posts.txt"
    posts.write_text("\n".join([p for p in weibo_posts[:30] if "\t" not in p][:8]) + "\n", encoding="utf-8")
    r = _zhbert("predict", "--model", "tagging", str(posts), "--output-format", "label-studio", "--studio-label-name", "sentiment")
    tasks = json.loads(r.stdout)
    assert all(t["predictions"][0]["result"][0]["from_name"] == "sentiment" for t in tasks)
    exported.write_text(json.dumps([{**t, "annotations": [{"result": t["predictions"][0]["result"]}]} for t in tasks]), encoding="utf-8")
    data = task_data_from_files("tagging", str(exported), validation_file=str(exported))
    assert [data.labels[r["label"]] for r in data.dev] == [t["predictions"][0]["result"][0]["value"]["choices"][0] for t in tasks]
    r = _zhbert("predict", "--model", "cws", str(posts), "--output-format", "label-studio")
    assert r.returncode == 2 and "Label Studio tasks here hold an NER or a tagging model's answers on texts, not a Segmenter's" in r.stderr
    bad = tmp_path / "bad.jsonl"  # a bad record past the first chunk: the array written so far is closed
    bad.write_text("".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in pd_sentences[:3]) + "{broken\n", encoding="utf-8")
    r = _zhbert("predict", "--model", "ner", str(bad), "--output-format", "label-studio", "--batch-size", "1")
    assert r.returncode == 1 and len(json.loads(r.stdout)) == 3 and "bad.jsonl:4" in r.stderr
