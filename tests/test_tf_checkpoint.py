"""`zhbert convert-tf`: BERT checkpoints in google-research/bert's TensorFlow form, as Google's
Chinese BERT and the Chinese encoders after it were released (bert_config.json, vocab.txt,
bert_model.ckpt.*), read without TensorFlow.

The fixture in tests/fixtures/tf_bert_tiny was written by TensorFlow itself
(tests/fixtures/make_tf_bert_tiny.py), with the original's variable names, two Adam slots and a
global step; expected.json holds the original model's outputs on one input, computed in TensorFlow
as modeling.py computes them.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from zhbert.errors import ModelLoadError

FIXTURE = Path(__file__).parent / "fixtures" / "tf_bert_tiny"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    out = tmp_path_factory.mktemp("converted") / "bert"
    run = subprocess.run(
        [sys.executable, "-m", "zhbert", "convert-tf", str(FIXTURE), str(out)], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    return out, run.stdout


def test_a_tensorflow_bert_checkpoint_converts_to_the_model_it_was(converted):
    """The converted folder computes what the TensorFlow original computed, in plain transformers:
    the encoder's states, the masked-LM logits (the decoder tied to the word embeddings, the output
    bias read) and the next-sentence logits (stored (out, in), not transposed like the kernels),
    with the tanh GELU the original was trained with. Before, transformers 5 could not read the
    checkpoint at all, and zhbert called its folder 'not a model folder'."""
    from transformers import AutoTokenizer, BertForPreTraining

    out, printed = converted
    assert "left out 3 variables of training state" in printed and "46 tensors" in printed
    model = BertForPreTraining.from_pretrained(str(out)).eval()
    assert model.config.hidden_act == "gelu_new"
    tokenizer = AutoTokenizer.from_pretrained(str(out))
    encoded = tokenizer("北京是中国的[MASK]都", "李白", return_tensors="pt")
    assert encoded["input_ids"][0].tolist() == EXPECTED["input_ids"]
    assert encoded["token_type_ids"][0].tolist() == EXPECTED["token_type_ids"]
    with torch.no_grad():
        outputs = model(**encoded, output_hidden_states=True)
    np.testing.assert_allclose(outputs.hidden_states[-1][0].numpy(), EXPECTED["last_hidden_state"], atol=2e-5)
    np.testing.assert_allclose(outputs.prediction_logits[0].numpy(), EXPECTED["mlm_logits"], atol=2e-5)
    np.testing.assert_allclose(outputs.seq_relationship_logits[0].numpy(), EXPECTED["nsp_logits"][0], atol=2e-5)


def test_the_converted_folder_fills_masks_and_fine_tunes_in_zhbert(converted, tmp_path):
    import zhbert

    out, _ = converted
    vocab = (FIXTURE / "vocab.txt").read_text(encoding="utf-8").split("\n")
    mask_at = EXPECTED["input_ids"].index(vocab.index("[MASK]"))
    logits = np.array(EXPECTED["mlm_logits"][mask_at])
    logits[[vocab.index(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")]] = -np.inf
    filled = zhbert.load(str(out)).fill_mask("北京是中国的[MASK]都", top_k=3)
    assert filled[0].token == vocab[int(logits.argmax())]  # the original's own best candidate
    sentences = ["李 B-PER\n白 I-PER\n是 O\n唐 O\n代 O\n诗 O\n人 O", "北 B-LOC\n京 I-LOC\n是 O\n中 B-LOC\n国 I-LOC\n的 O\n首 O\n都 O"]
    train = tmp_path / "ner.conll"
    train.write_text("\n\n".join(sentences * 4) + "\n", encoding="utf-8")
    record = zhbert.train(
        "ner", train_file=str(train), encoder=str(out), max_steps=2, validation_share=0.25, output_dir=str(tmp_path / "ner")
    )
    assert record["scored_on"] == "dev" and (tmp_path / "ner" / "model" / "model.safetensors").is_file()


def test_a_checkpoint_given_where_a_model_folder_goes_names_the_command_that_converts_it():
    from zhbert.models_registry import resolve_model_path

    with pytest.raises(ModelLoadError, match=rf"{FIXTURE}: a TensorFlow checkpoint .*`zhbert convert-tf {FIXTURE} OUT`"):
        resolve_model_path(str(FIXTURE))


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "chinese_L-2_H-8_A-2"
    shutil.copytree(FIXTURE, folder)
    return folder


def test_a_damaged_or_mismatched_checkpoint_is_named_not_half_converted(tmp_path):
    """A cut download, an index that is not one, a config for another checkpoint (fewer layers: the
    other layers' variables would be dropped), a vocabulary of another size: each an error naming
    the file, and nothing written."""
    from zhbert.tf_bert import convert_tf_bert

    out = tmp_path / "out"
    cut = _copy(tmp_path / "cut")
    data = cut / "bert_model.ckpt.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[:4000])
    with pytest.raises(ModelLoadError, match=rf"{data}: 4,000 bytes, but .* ends at byte .* \(a cut download\?\)"):
        convert_tf_bert(cut, out)
    garbage = _copy(tmp_path / "garbage")
    (garbage / "bert_model.ckpt.index").write_bytes(b"\x00" * 100)
    with pytest.raises(ModelLoadError, match="not a readable TensorFlow checkpoint index: .*no table footer"):
        convert_tf_bert(garbage, out)
    fewer = _copy(tmp_path / "fewer")
    config = json.loads((fewer / "bert_config.json").read_text(encoding="utf-8"))
    (fewer / "bert_config.json").write_text(json.dumps({**config, "num_hidden_layers": 1}), encoding="utf-8")
    with pytest.raises(ModelLoadError, match="does not have: bert/encoder/layer_1/attention/output/LayerNorm/beta, .* and 13 more"):
        convert_tf_bert(fewer, out)
    huge = _copy(tmp_path / "huge")  # before, 2.7 billion weights (10.8 GB) were allocated before any shape was compared
    (huge / "bert_config.json").write_text(json.dumps({**config, "hidden_size": 8192, "intermediate_size": 65536}), encoding="utf-8")
    probe = (
        "import sys\nfrom zhbert.tf_bert import convert_tf_bert\ntry:\n    convert_tf_bert(sys.argv[1], sys.argv[2])\n"
        "except Exception as e:\n    print(e)\n"
        # this process's own peak: getrusage's ru_maxrss keeps the forking parent's across exec (a pytest worker's GBs)
        "print(next(int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmHWM:')) // 1024)"
    )
    run = subprocess.run([sys.executable, "-c", probe, str(huge), str(out)], capture_output=True, text=True, timeout=300)
    message, peak_mb = run.stdout.strip().rsplit("\n", 1)
    assert "word_embeddings is [33, 8]; bert_config.json makes bert.embeddings.word_embeddings.weight [33, 8192]" in message
    assert int(peak_mb) < 2000, peak_mb
    words = _copy(tmp_path / "words")
    (words / "vocab.txt").write_text((FIXTURE / "vocab.txt").read_text(encoding="utf-8") + "新\n", encoding="utf-8")
    with pytest.raises(ModelLoadError, match="vocab.txt: 34 tokens, but bert_config.json says vocab_size 33"):
        convert_tf_bert(words, out)
    assert not out.exists()


def test_a_folder_of_several_checkpoints_takes_the_newest_or_asks(tmp_path):
    """A run of run_pretraining.py leaves model.ckpt-N for several N and a `checkpoint` file naming
    the newest (with the paths of the machine that wrote it)."""
    from zhbert.tf_checkpoint import checkpoint_prefix

    folder = tmp_path / "pretraining_output"
    folder.mkdir()
    for step in (1000, 2000):
        for f in FIXTURE.glob("bert_model.ckpt.*"):
            shutil.copy(f, folder / f.name.replace("bert_model.ckpt", f"model.ckpt-{step}"))
    with pytest.raises(ModelLoadError, match=rf"{folder}: 2 TensorFlow checkpoints \(model.ckpt-1000, model.ckpt-2000\); name one"):
        checkpoint_prefix(folder)
    (folder / "checkpoint").write_text(
        'model_checkpoint_path: "gs://bucket/run/model.ckpt-1000"\nall_model_checkpoint_paths: "gs://bucket/run/model.ckpt-1000"\n'
    )
    assert checkpoint_prefix(folder) == folder / "model.ckpt-1000"
    assert checkpoint_prefix(folder / "model.ckpt-2000") == folder / "model.ckpt-2000"
    assert checkpoint_prefix(folder / "model.ckpt-2000.index") == folder / "model.ckpt-2000"


def test_convert_tf_never_writes_over_a_folder_it_did_not_make(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("mine", encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "zhbert", "convert-tf", str(FIXTURE), str(notes)], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 1 and "not empty and not a model folder (it holds todo.txt)" in run.stderr
    assert sorted(p.name for p in notes.iterdir()) == ["todo.txt"]
