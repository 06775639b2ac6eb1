"""No silent garbage: each case below once answered from random weights, trained on [UNK]s,
crashed with an unrelated message, or wrote raw bytes; now each ends in a clear error."""

import json
import shutil
import subprocess
import sys

import pytest
from transformers import BertConfig, BertForMaskedLM, BertModel

import zhbert
from zhbert.models_registry import BUNDLED_DIR
from zhbert.tokenizer import build_tokenizer

ROOT_CMD = [sys.executable, "-m", "zhbert"]


def _cli(*args, stdin: bytes | None = None):
    return subprocess.run([*ROOT_CMD, *args], input=stdin, capture_output=True, timeout=300)


@pytest.fixture(scope="module")
def encoder_without_mlm_head(tmp_path_factory):
    """A sentence-transformers-style folder: a BertModel, no masked-LM head."""
    path = tmp_path_factory.mktemp("bertmodel")
    BertModel(
        BertConfig(
            vocab_size=21128, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, max_position_embeddings=64
        )
    ).save_pretrained(path)
    build_tokenizer().save_pretrained(path)
    return path


def test_fill_mask_refuses_a_checkpoint_without_an_mlm_head(encoder_without_mlm_head):
    lm = zhbert.load(str(encoder_without_mlm_head))
    with pytest.raises(ValueError, match="no masked-LM head"):
        lm.fill_mask("北京是中国的首[MASK]。")
    assert len(lm.features("你好")) == 32  # its encoder is still usable for features
    out = _cli("fill-mask", "--model", str(encoder_without_mlm_head), "北[MASK]")
    assert out.returncode != 0 and b"no masked-LM head" in out.stderr and b"Traceback" not in out.stderr


@pytest.fixture(scope="module")
def english_encoder(tmp_path_factory):
    """A tiny BERT whose WordPiece vocabulary has no Chinese at all."""
    path = tmp_path_factory.mktemp("english")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"abcdefghijklmnopqrstuvwxyz0123456789.,!?", "the", "##s"]
    tok = build_tokenizer(vocab)
    BertForMaskedLM(
        BertConfig(
            vocab_size=len(vocab),
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=64,
        )
    ).save_pretrained(path)
    tok.save_pretrained(path)
    return path


def test_pretraining_stops_when_the_vocabulary_cannot_read_the_corpus(english_encoder, tmp_path, pd_sentences):
    from zhbert.training.pretrain import PretrainConfig, pretrain

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(pd_sentences[:300]) + "\n", encoding="utf-8")
    cfg = PretrainConfig(
        corpus=[str(corpus)],
        output=str(tmp_path / "run"),
        init=str(english_encoder),
        masking="char",
        max_length=32,
        batch_size=2,
        max_steps=1,
        save_steps=1,
        num_proc=1,
    )
    with pytest.raises(ValueError, match=r"are \[UNK\].*--max-unk-rate 1"):
        pretrain(cfg)
    cfg.max_unk_rate = 1.0  # the explicit override trains anyway
    assert (pretrain(cfg) / "model.safetensors").is_file()


def test_fine_tuning_stops_when_the_vocabulary_cannot_read_the_text(english_encoder, pd_sentences):
    from zhbert.recipes.common import check_unk_share
    from zhbert.tokenizer import encode

    tok = zhbert.tokenizer.load_tokenizer(english_encoder)
    examples = [{"input_ids": list(e.ids)} for e in encode(tok, pd_sentences[:50])]
    with pytest.raises(ValueError, match=r"\[UNK\].*--max-unk-rate 1"):
        check_unk_share(examples, tok, 0.05)
    assert check_unk_share(examples, tok, 1.0) > 0.9
    zh = build_tokenizer()
    assert check_unk_share([{"input_ids": list(e.ids)} for e in encode(zh, pd_sentences[:50])], zh, 0.05) < 0.01


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda m: m(None), TypeError, "inputs"),
        (lambda m: m(b"\xe4\xb8\xad"), TypeError, "decode bytes"),
        (lambda m: m("中国", batch_size=0), ValueError, "batch_size"),
        (lambda m: m("中国", batch_size=-3), ValueError, "batch_size"),
        (lambda m: m("中国", batch_size=2.5), TypeError, "batch_size"),
    ],
)
def test_argument_errors_name_the_argument(call, error, words):
    with pytest.raises(error, match=words):
        call(zhbert.load("ner"))


@pytest.mark.parametrize("top_k", [0, -1, 21129])
def test_top_k_out_of_range(top_k):
    with pytest.raises(ValueError, match="top_k"):
        zhbert.load("base").fill_mask("北[MASK]", top_k=top_k)


def test_cli_argument_errors_are_one_line():
    for args in (["predict", "--model", "ner", "--batch-size", "0", "-"], ["fill-mask", "北[MASK]", "--top-k", "0"]):
        out = _cli(*args, stdin=b"\xe4\xb8\xad\n")
        assert out.returncode != 0, args
        err = out.stderr.decode().strip().splitlines()
        assert len(err) == 1 and "Traceback" not in out.stderr.decode(), err


def test_predict_stdin_rejects_invalid_utf8_with_its_line_and_strips_crlf():
    out = _cli("predict", "--model", "cws", "-", stdin="北京\r\n上海\r\n".encode() + b"\xff\xfe\n")
    assert out.returncode != 0 and b"<stdin>:3" in out.stderr and b"UTF-8" in out.stderr
    assert not out.stdout  # nothing half-written from raw bytes
    out = _cli("predict", "--model", "cws", "-", stdin="北京\r\n上海\r\n".encode())
    rows = [json.loads(line) for line in out.stdout.decode().splitlines()]
    assert out.returncode == 0 and [r["text"] for r in rows] == ["北京", "上海"]


def test_a_folder_whose_auto_map_points_at_code_never_runs_it(tmp_path):
    """Loading reads JSON and safetensors only: the folder's Python must never execute."""
    marker = tmp_path / "PWNED"
    folder = tmp_path / "evil"
    shutil.copytree(BUNDLED_DIR / "base", folder)
    (folder / "evil_model.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n", encoding="utf-8")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["auto_map"] = {"AutoConfig": "evil_model.EvilConfig", "AutoModelForMaskedLM": "evil_model.EvilModel"}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    tok_cfg = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    tok_cfg["auto_map"] = {"AutoTokenizer": ["evil_model.EvilTokenizer", None]}
    (folder / "tokenizer_config.json").write_text(json.dumps(tok_cfg), encoding="utf-8")
    try:
        zhbert.load(str(folder)).fill_mask("北[MASK]")
    except Exception:
        pass  # refusing is fine; running the file is not
    assert not marker.exists()
    config["model_type"] = "evil-unknown"  # an unknown type is where transformers would offer to trust the code
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    for args in (["info", str(folder)], ["fill-mask", "北[MASK]", "--model", str(folder)]):
        out = _cli(*args, stdin=b"y\ny\n")
        assert out.returncode != 0 and not marker.exists(), (args, out.stderr[-500:])
