"""`zhbert pretrain --extend-vocab N`: characters a corpus writes and Chinese BERT's vocabulary reads
as [UNK] (铋, 缬, 髌 in medical questions) get rows of their own before continued pretraining.
Before, every one of them was the same [UNK] input, so 铋剂 and 缬剂 could not be told apart."""

import json

import pytest
import torch
from pretrain_cli import pretrain_cli

RARE = "铋缬髌"


@pytest.fixture(scope="module")
def medical_lines(shared):
    """Real questions from the medical QA corpus, those that write one of the characters the vocabulary lacks."""
    lines = []
    with open(shared / "corpora" / "medical_qa_toyhom" / "medical_qa_00.txt", encoding="utf-8") as f:
        for line in f:
            if any(c in line for c in RARE):
                lines.append(line.rstrip("\n"))
            if len(lines) == 60:
                break
    return lines


def test_the_corpus_characters_read_as_unk_are_counted(tokenizer, medical_lines):
    from zhbert.training.vocab_growth import unknown_characters

    assert all(tokenizer.tokenize(c) == ["[UNK]"] for c in RARE)
    found = dict(unknown_characters(tokenizer, medical_lines, min_count=3))
    assert set(RARE) <= set(found) and found["铋"] > found["髌"] >= 3
    assert all(c not in tokenizer.get_vocab() for c in found)
    rarer = dict(unknown_characters(tokenizer, medical_lines, min_count=found["缬"] + 1))
    assert "铋" in rarer and "缬" not in rarer  # below the count: left as [UNK]
    assert unknown_characters(tokenizer, ["北京是中国的首都。Bonjour"], min_count=1) == []
    from transformers import BertTokenizerFast

    # a stock BERT tokenizer (a converted Google checkpoint's) pads each Chinese character with spaces as it normalises
    stock = BertTokenizerFast(vocab={t: i for i, t in enumerate(tokenizer.convert_ids_to_tokens(range(len(tokenizer))))})
    assert dict(unknown_characters(stock, medical_lines, min_count=3)) == found


def test_the_count_tokenises_a_bounded_number_of_characters_at_once(tokenizer, medical_lines, monkeypatch):
    """Corpus documents run to 100,000 characters, and offsets take far more memory than text: before,
    1,000 documents went to the tokenizer at once, up to 100 M characters."""
    from zhbert.training import vocab_growth

    monkeypatch.setattr(vocab_growth, "_BATCH_CHARS", 5_000)
    seen = []
    real = vocab_growth._count_unknown
    monkeypatch.setattr(vocab_growth, "_count_unknown", lambda tok, batch, *a: seen.append(sum(map(len, batch))) or real(tok, batch, *a))
    found = vocab_growth.unknown_characters(tokenizer, medical_lines, min_count=3)
    longest = max(map(len, medical_lines))
    assert len(seen) > 1 and max(seen) < 5_000 + longest and sum(seen) == sum(map(len, medical_lines))
    monkeypatch.setattr(vocab_growth, "_BATCH_CHARS", 10**9)
    assert vocab_growth.unknown_characters(tokenizer, medical_lines, min_count=3) == found  # the same count in one batch


def test_a_grown_model_reads_and_predicts_the_new_characters_as_it_did_unk(tokenizer):
    """Each new row starts as [UNK]'s, so before the first step nothing the model computes changes:
    the same hidden states, and the new character scored as [UNK] was."""
    from transformers import BertConfig, BertForMaskedLM

    from zhbert.training.vocab_growth import grow_model, grow_tokenizer

    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
    model = BertForMaskedLM(config).eval()
    with torch.no_grad():
        model.cls.predictions.bias.normal_()  # a trained head's bias is not all zeros
    text = "胃药里的铋剂和缬沙坦"
    before = tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        old = model(**before).logits
    grown_tokenizer = grow_tokenizer(tokenizer, list(RARE))
    grow_model(model, len(RARE), tokenizer.unk_token_id)
    after = grown_tokenizer(text, return_tensors="pt")
    new_ids = [len(tokenizer) + k for k in range(len(RARE))]
    changed = [(b, a) for b, a in zip(before["input_ids"][0].tolist(), after["input_ids"][0].tolist()) if b != a]
    assert changed == [(tokenizer.unk_token_id, new_ids[0]), (tokenizer.unk_token_id, new_ids[1])]  # 铋, 缬: every other id kept
    assert grown_tokenizer.convert_ids_to_tokens(new_ids) == list(RARE) and model.config.vocab_size == len(grown_tokenizer)
    with torch.no_grad():
        new = model(**after).logits
    torch.testing.assert_close(new[..., : len(tokenizer)], old)
    for k in new_ids:
        torch.testing.assert_close(new[..., k], old[..., tokenizer.unk_token_id])


def test_an_electra_run_grows_the_table_its_generator_and_discriminator_share():
    from transformers import BertConfig

    from zhbert.training.electra import ElectraPretrainingModel, generator_config

    config = BertConfig(vocab_size=30, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    model = ElectraPretrainingModel(config, generator_config(config, 0.5))
    with torch.no_grad():
        model.generator.generator_lm_head.bias.normal_()
    unk_bias = model.generator.generator_lm_head.bias[1].item()
    model.grow_vocabulary(3, unk_id=1)
    table = model.discriminator.embeddings.word_embeddings.weight
    assert table.shape[0] == 33 and model.generator.electra.embeddings.word_embeddings.weight is table
    assert model.generator.generator_lm_head.weight is table and model.generator.config.vocab_size == 33 == model.config.vocab_size
    assert torch.equal(table[30:], table[1].expand(3, -1)) and model.generator.generator_lm_head.bias[30:].tolist() == [unk_bias] * 3


def test_pretrain_extend_vocab_adds_the_characters_and_a_resumed_run_adds_the_same(tiny_encoder, medical_lines, tmp_path):
    from zhbert.tokenizer import load_tokenizer

    corpus = tmp_path / "medical.txt"
    corpus.write_text("\n".join(medical_lines) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    common = ["--corpus", corpus, "--init", tiny_encoder, "--batch-size", "8", "--num-proc", "1", "--max-length", "64", "--save-steps", "2"]
    first = pretrain_cli(*common, "--extend-vocab", "3", "--max-steps", "2", "--output-dir", out)
    assert first.returncode == 0, first.stderr
    added = (out / "zhbert_added_vocab.txt").read_text(encoding="utf-8").split()
    assert set(RARE) <= set(added) and "characters added to the vocabulary: 铋" in first.stderr
    final = load_tokenizer(out / "final")
    base = len(load_tokenizer(tiny_encoder))
    assert [final.convert_tokens_to_ids(c) for c in added] == list(range(base, base + len(added)))
    assert json.loads((out / "final" / "config.json").read_text(encoding="utf-8"))["vocab_size"] == base + len(added)
    refused = pretrain_cli(*common, "--max-steps", "4", "--output-dir", out)
    assert refused.returncode == 1 and "from a different run (--extend-vocab: 3 then, 0 now)" in refused.stderr
    (out / "zhbert_run.json").unlink()  # a run begun before runs kept a record: the characters it added still say it
    refused = pretrain_cli(*common, "--max-steps", "4", "--output-dir", out)
    assert refused.returncode == 1 and "this run added" in refused.stderr and "resume it with --extend-vocab" in refused.stderr
    assert not (out / "zhbert_run.json").exists()  # a refused start records nothing
    resumed = pretrain_cli(*common, "--extend-vocab", "3", "--max-steps", "4", "--output-dir", out)
    assert resumed.returncode == 0 and "resuming from" in resumed.stderr, resumed.stderr
    assert len(load_tokenizer(out / "final")) == base + len(added)
