"""Windows never read positions the encoder did not train (issue: the bundled models were
pretrained on 128-token blocks but windowed at 512, costing 8.7 word-F1 on PKU's long lines)."""

import json

import pytest
from transformers import BertConfig

import zhbert
from zhbert.encoder_info import record_encoder, trained_length
from zhbert.heads import HeadConfig
from zhbert.heads.inputs import window_size
from zhbert.models_registry import BUNDLED_DIR


@pytest.mark.parametrize("name", ["base", "cws", "cws-fast", "ner", "tagging", "matching"])
def test_bundled_models_record_their_pretraining_length_and_window_within_it(name):
    config = json.loads((BUNDLED_DIR / name / "config.json").read_text(encoding="utf-8"))
    trained = 128  # base: seen 512, but measured unusable past 128 (bench/RESULTS.md, stage 5)
    assert config["zhbert_encoder"]["max_length"] == trained <= config["max_position_embeddings"]
    pred = zhbert.load(name)
    if name == "base":
        assert pred.window == 128
    else:
        assert window_size(pred.head, pred.model.config) == 128


def test_default_window_is_the_trained_length_and_longer_needs_asking():
    config = BertConfig(max_position_embeddings=512)
    head = HeadConfig(kind="token", labels=["B", "M", "E", "S"], scheme="BMES-untyped")
    assert window_size(head, config) == 512  # a checkpoint without the record: BERT trained all positions
    record_encoder(config, 128, "zhbert-1")
    assert trained_length(config) == 128 and window_size(head, config) == 128
    with pytest.raises(ValueError, match="never trained on"):
        window_size(HeadConfig(kind="token", labels=["B", "M", "E", "S"], scheme="BMES-untyped", window=256), config)
    asked = HeadConfig(kind="token", labels=["B", "M", "E", "S"], scheme="BMES-untyped", window=256, allow_untrained_positions=True)
    assert window_size(asked, config) == 256


def test_a_long_line_is_windowed_at_the_trained_length(pd_sentences):
    cws = zhbert.load("cws")
    text = "".join(pd_sentences[:12])  # several hundred characters: many 128-token windows
    assert len(text) > 400
    words = cws(text)
    assert "".join(w.text for w in words) == text.replace(" ", "")
    fill = zhbert.load("base").fill_mask(text[:300] + "[MASK]" + text[301:600])
    assert len(fill) == 1  # a text past the trained length is windowed, not refused
