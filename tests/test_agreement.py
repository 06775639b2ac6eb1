"""Plain transformers and zhbert.load answer the same on every bundled model (issue: the
tokenizer owns normalisation). The 1,000-input figure is bench/agreement.py's."""

import pytest

from zhbert.agreement import agreement_inputs, compare
from zhbert.models_registry import BUNDLED_DIR
from zhbert.tokenizer import load_tokenizer

N = 60  # inputs per model: 360 real test inputs in all


@pytest.fixture(scope="module")
def inputs(shared):
    return agreement_inputs(shared, N, load_tokenizer(BUNDLED_DIR / "base"))


def _zhbert_only(name: str) -> bool:
    """A head with word features (lexicon, bigrams): plain transformers opens its encoder only."""
    import json

    head = json.loads((BUNDLED_DIR / name / "config.json").read_text(encoding="utf-8")).get("zhbert_head") or {}
    return bool(head.get("lexicon") or head.get("bigram_dim"))


@pytest.mark.parametrize("name", ["ner", "cws", "cws-fast", "tagging", "matching", "base"])
def test_pipeline_agrees_with_zhbert_load(name, inputs):
    if _zhbert_only(name):  # said, not guessed: bench/agreement.py reports such a model as zhbert-only
        with pytest.raises(ValueError, match="zhbert-only head"):
            compare(name, BUNDLED_DIR / name, inputs[name])
        return
    result = compare(name, BUNDLED_DIR / name, inputs[name])
    assert result.n == N
    assert result.agree == result.n, result.mismatches
    assert result.max_prob_diff <= 1e-5


def test_plain_tokenizer_reads_full_width_punctuation_as_zhbert_does():
    from transformers import AutoTokenizer, pipeline

    plain = AutoTokenizer.from_pretrained(str(BUNDLED_DIR / "ner"))
    assert plain.tokenize("，“越秀”１９") == [",", '"', "越", "秀", '"', "19"]  # was ，[UNK]越秀[UNK]１##９
    if _zhbert_only("ner"):  # a lexicon NER head: plain pipelines cannot run it (zhbert.load can)
        return
    text = "到了宋代，河西走廊为西夏所有，敦煌废弃，随着海上通商的兴旺，丝绸之路也就日渐衰落。"
    ents = pipeline("token-classification", model=str(BUNDLED_DIR / "ner"), aggregation_strategy="simple")(text)
    assert all("，" not in e["word"] and text[e["start"] : e["end"]] in ("河西走廊", "西夏", "夏", "敦煌", "丝绸之路") for e in ents), ents


def test_saved_configs_name_stock_classes_and_load_as_fp32():
    import json

    from transformers import AutoModel

    for name in ["base", "cws", "ner", "tagging", "matching"]:
        config = json.loads((BUNDLED_DIR / name / "config.json").read_text(encoding="utf-8"))
        stock = ("BertForMaskedLM", "BertForPreTraining", "BertForTokenClassification", "BertForSequenceClassification")
        assert config["architectures"][0] in (("ZhBertForTask",) if _zhbert_only(name) else stock), name
        assert config["zhbert_encoder"]["normalizer"] == "zhbert-2"
    assert AutoModel.from_pretrained(str(BUNDLED_DIR / "base")).dtype.is_floating_point
    assert str(AutoModel.from_pretrained(str(BUNDLED_DIR / "base")).dtype) == "torch.float32"  # stored fp16, runs fp32


def test_a_similarity_head_loads_in_plain_transformers(tiny_encoder, tokenizer, tmp_path):
    """A regression pair head (similarity scores): its config names one output, so plain transformers builds the
    one-output classifier its weights fill and a pipeline returns zhbert's score. Before, its config had no labels,
    transformers built two outputs and refused the weights ("size mismatch")."""
    from transformers import pipeline

    import zhbert
    from zhbert.heads import HeadConfig, new_head, save_head

    folder = save_head(new_head(tiny_encoder, HeadConfig(kind="pair", labels=["score"], regression=True)), tokenizer, tmp_path / "sts")
    pairs = [("一架飞机要起飞了。", "一架飞机正在起飞。"), ("一个男人在吹一支大笛子。", "一个人在吹长笛。")]
    plain = pipeline("text-classification", model=str(folder))([{"text": a, "text_pair": b} for a, b in pairs])
    ours = zhbert.load(str(folder))(pairs)
    assert [p["label"] for p in plain] == ["score", "score"]
    assert [p["score"] for p in plain] == pytest.approx([m.score for m in ours], abs=1e-5)  # the raw score: no sigmoid
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "# A zhbert sentence-pair similarity model" in card and "one score a text or pair (regression)" in card
