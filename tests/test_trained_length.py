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
    trained = 128  # base: seen 512, but measured unusable past 128 (bench/LOG.md, stage 5)
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


def test_a_continued_encoder_keeps_what_its_checkpoint_saw(tiny_encoder, pd_sentences, tmp_path):
    """Continuing at 32 tokens from a checkpoint that saw 64 records the usable length it
    inherits and keeps the checkpoint's own record (its notes, its longer seen length) whole."""
    from transformers import AutoConfig, BertForMaskedLM

    from zhbert.training.pretrain import PretrainConfig, pretrain

    earlier = {"max_length": 64, "normalizer": "zhbert-1", "seen_max_length": 64, "note": "stage 1 of a test"}
    start = tmp_path / "start"
    model = BertForMaskedLM.from_pretrained(tiny_encoder)
    model.config.zhbert_encoder = earlier
    model.save_pretrained(start)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        if (tiny_encoder / f).is_file():
            (start / f).write_bytes((tiny_encoder / f).read_bytes())
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(pd_sentences[:200]) + "\n", encoding="utf-8")
    cfg = PretrainConfig(corpus=[str(corpus)], output=str(tmp_path / "run"), init=str(start), masking="char", max_length=32)
    cfg.batch_size, cfg.max_steps, cfg.save_steps, cfg.num_proc = 2, 1, 1, 1
    record = AutoConfig.from_pretrained(pretrain(cfg)).zhbert_encoder
    assert record["max_length"] == 64  # positions up to 64 were trained, by the earlier stage
    assert record["continued_from"] == earlier
    assert trained_length(AutoConfig.from_pretrained(tmp_path / "run" / "final")) == 64


def test_plain_pipelines_stop_at_the_trained_length_or_window_with_stride(tiny_encoder, tokenizer, tmp_path):
    """Every saved folder tells plain transformers the encoder's trained length (model_max_length):
    a pipeline truncates there instead of reading untrained positions, and stride= windows the rest."""
    import json

    from transformers import pipeline

    from zhbert.heads import HeadConfig, new_head, save_head
    from zhbert.models_registry import BUNDLED_DIR

    for name in ("base", "electra", "cws", "ner", "tagging", "matching", "cws-fast"):
        cfg = json.loads((BUNDLED_DIR / name / "tokenizer_config.json").read_text())
        assert cfg["model_max_length"] == 128, name
    head = HeadConfig(kind="token", labels=["O", "B-PER", "I-PER"], scheme="BIO")
    save_head(new_head(tiny_encoder, head), tokenizer, tmp_path / "m")
    saved = json.loads((tmp_path / "m" / "tokenizer_config.json").read_text())
    assert saved["model_max_length"] == json.loads((tmp_path / "m" / "config.json").read_text())["zhbert_encoder"]["max_length"]
    text = "江泽民主席在北京会见了美国总统克林顿。" * 30  # 570 characters
    folder = str(tmp_path / "m")  # a stock BertForTokenClassification folder; every tag kept, O too
    plain = pipeline("token-classification", model=folder, aggregation_strategy="simple", ignore_labels=[])
    assert max(e["end"] for e in plain(text)) <= saved["model_max_length"] < len(text)
    windowed = pipeline("token-classification", model=folder, aggregation_strategy="simple", ignore_labels=[], stride=16)
    assert max(e["end"] for e in windowed(text)) == len(text)
