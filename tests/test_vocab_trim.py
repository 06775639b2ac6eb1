"""`zhbert export --trim-vocab`: the vocabulary rows no text reaches are left out, and the model
answers exactly as before."""

from __future__ import annotations

import json

import pytest
import torch

from zhbert.export import export_model
from zhbert.model_info import describe
from zhbert.models_registry import resolve_model_path
from zhbert.vocab_trim import emitted_vocab_size, trim_tensors

# the bundled vocabulary's never-emitted tail: ##-pieces of Han characters, punctuation and
# full-width forms from id 13,724 on (7,404 of 21,128 rows)
TRIMMED_SIZE = 13_724
MIXED = ["iPhone15发布了！#新品# https://t.cn/abc 👍👍", "ＡＢＣ全角字母和１２３", "「引号」《书名》——破折号…", "Ｃ＋＋和C#都是语言"]


@pytest.fixture(scope="module")
def trimmed(tmp_path_factory):
    out = tmp_path_factory.mktemp("trimmed")
    return {name: export_model(name, out / name, trim_vocab=True) for name in ("cws",)}  # the one bundled untrimmed


def _tiny_tokenizer(tail: list[str]):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "中", *tail])}
    backend = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    backend.normalizer, backend.pre_tokenizer = normalizers.BertNormalizer(), pre_tokenizers.BertPreTokenizer()
    return PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]")


def test_a_trimmed_lexicon_head_gives_the_same_words(trimmed, pd_sentences, weibo_posts):
    import zhbert

    bundled, small = zhbert.load("cws"), zhbert.load(trimmed["cws"])
    texts = pd_sentences[:60] + list(weibo_posts[:20]) + MIXED
    assert small(texts) == bundled(texts)  # every word, offset and score
    assert small.tokenizer(texts)["input_ids"] == bundled.tokenizer(texts)["input_ids"]
    config = json.loads((trimmed["cws"] / "config.json").read_text(encoding="utf-8"))
    assert config["vocab_size"] == len(small.tokenizer) == TRIMMED_SIZE
    assert describe("cws")["vocab_never_emitted"] == 21_128 - TRIMMED_SIZE  # `zhbert info` tells a user
    assert "vocab_never_emitted" not in describe(str(trimmed["cws"]))
    saved = (resolve_model_path("cws") / "model.safetensors").stat().st_size - (trimmed["cws"] / "model.safetensors").stat().st_size
    assert abs(saved - (21_128 - TRIMMED_SIZE) * 256 * 2) < 4096  # the rows, in fp16 (and a header a little shorter)


def test_a_trimmed_encoder_fills_masks_as_before_and_opens_in_plain_transformers(tiny_encoder, tmp_path):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    texts = ["中国的首都是[MASK]京。", "今天天气很[MASK]，我们去公园散步。", "他在[MASK]学读书。"]
    small = export_model(str(tiny_encoder), tmp_path / "trimmed", trim_vocab=True)
    tokenizer = AutoTokenizer.from_pretrained(str(small))
    batch = tokenizer(texts, return_tensors="pt", padding=True)
    with torch.no_grad():  # every row kept scores as before (fp16 weights), and the cut rows are gone
        before = AutoModelForMaskedLM.from_pretrained(str(tiny_encoder)).eval()(**batch).logits
        after = AutoModelForMaskedLM.from_pretrained(str(small), dtype=torch.float32).eval()(**batch).logits
    assert after.shape[-1] == TRIMMED_SIZE and torch.allclose(after, before[..., :TRIMMED_SIZE], atol=2e-2)
    model = AutoModelForMaskedLM.from_pretrained(str(small))
    assert model.config.vocab_size == len(tokenizer) == TRIMMED_SIZE
    assert model.get_output_embeddings().weight.shape[0] == TRIMMED_SIZE
    assert "vocab_never_emitted" not in describe("base")  # the bundled encoders ship trimmed


def test_the_cut_stops_at_the_last_token_text_can_yield():
    # "##b" continues "a" ("ab" -> a ##b); "##中" and "##，" follow nothing: BERT's pre-tokenizer splits them off
    assert emitted_vocab_size(_tiny_tokenizer(["##b", "##中", "##，"])) == 8
    assert emitted_vocab_size(_tiny_tokenizer(["##中", "##b"])) == 9
    assert emitted_vocab_size(_tiny_tokenizer(["##中", "[MASK2]"])) == 9  # only continuation pieces are cut
    assert _tiny_tokenizer(["##b"])("ab", add_special_tokens=False)["input_ids"] == [5, 7]


def test_the_bundled_vocabulary_keeps_every_id_real_text_yields(tokenizer, pd_sentences, weibo_posts):
    size = emitted_vocab_size(tokenizer)
    assert size == TRIMMED_SIZE
    ids = tokenizer(pd_sentences + list(weibo_posts) + MIXED)["input_ids"]
    assert max(max(row) for row in ids) < size


def test_only_tensors_known_to_be_indexed_by_token_are_cut():
    tensors = {"bert.embeddings.word_embeddings.weight": torch.zeros(10, 4), "bert.encoder.layer.0.w": torch.zeros(4, 4)}
    out = trim_tensors(tensors, 10, 7)
    assert out["bert.embeddings.word_embeddings.weight"].shape == (7, 4) and out["bert.encoder.layer.0.w"].shape == (4, 4)
    with pytest.raises(ValueError, match="not a tensor known to be indexed by it"):
        trim_tensors({**tensors, "head.table.weight": torch.zeros(10, 2)}, 10, 7)
    with pytest.raises(ValueError, match="not the vocabulary's 10"):
        trim_tensors({"bert.embeddings.word_embeddings.weight": torch.zeros(12, 4)}, 10, 7)
