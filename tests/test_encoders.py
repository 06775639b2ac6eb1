"""Every encoder type zhbert reads, end to end: a tiny random-weight folder of each architecture
(saved with ``save_pretrained``, as a checkpoint from the hub would be), fine-tuned on real rows
cut from Resume NER and LCQMC with ``zhbert.train``, saved, opened with ``zhbert.load`` and run on
real sentences; continued pretraining where the folder has a masked-LM head."""

from __future__ import annotations

import json

import pytest
import torch

import zhbert
from zhbert.encoders import ENCODER_TYPES, encoder_depth
from zhbert.errors import ModelLoadError

TINY = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
# what each architecture needs beyond TINY to be the kind of checkpoint users bring
ARCHITECTURES = {
    "bert": {},
    "electra": dict(embedding_size=16),  # a small discriminator: embeddings narrower than the layers
    "ernie": dict(type_vocab_size=4),  # ERNIE 3.0's four token types
    "albert": dict(embedding_size=16),  # factorised embeddings, one shared layer group
    "roformer": dict(embedding_size=32),  # rotary positions
    "deberta-v2": dict(type_vocab_size=0, relative_attention=True, position_biased_input=False, max_relative_positions=64),
    "megatron-bert": {},
}
SENTENCE = "高勇：男，中国国籍，无境外居留权，现任北京大学教授。"


def _save_checkpoint(model_type: str, folder, tokenizer):
    from transformers import AutoConfig, AutoModelForMaskedLM, ElectraForPreTraining

    torch.manual_seed(0)
    config = AutoConfig.for_model(model_type, vocab_size=len(tokenizer), **TINY, **ARCHITECTURES[model_type])
    # an ELECTRA discriminator ships its replaced-token head, not a masked LM
    model = ElectraForPreTraining(config) if model_type == "electra" else AutoModelForMaskedLM.from_config(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory, tokenizer):
    root = tmp_path_factory.mktemp("encoders")
    return {t: _save_checkpoint(t, root / t, tokenizer) for t in ARCHITECTURES}


def test_the_tested_architectures_are_the_ones_accepted():
    assert set(ARCHITECTURES) == set(ENCODER_TYPES)


@pytest.mark.parametrize("model_type", list(ARCHITECTURES))
def test_fine_tune_save_load_predict(model_type, checkpoints, resume_conll, tmp_path):
    out = tmp_path / "run"
    record = zhbert.train(
        "ner", train_file=str(resume_conll), encoder=str(checkpoints[model_type]), preset="tiny", max_steps=2, output_dir=str(out), crf=True
    )
    assert record["scored_on"] == "dev" and 0 <= record["score"] <= 1
    config = json.loads((out / "model" / "config.json").read_text(encoding="utf-8"))
    assert config["model_type"] == model_type and "M-NAME" in config["zhbert_head"]["labels"]
    tagger = zhbert.load(str(out / "model"))
    spans = tagger(SENTENCE)
    assert all(SENTENCE[s.start : s.end] == s.text for s in spans)
    assert [s.start for s in spans] == sorted(s.start for s in spans)
    assert tagger([SENTENCE, "王小明在北京大学读书"])[0] == spans  # batch equals one by one
    # the encoder's weights are the trained ones, under the encoder's own prefix
    from safetensors import safe_open

    prefix = tagger.model.base_model_prefix
    with safe_open(str(out / "model" / "model.safetensors"), "pt") as f:
        names = list(f.keys())
    assert any(n.startswith(f"{prefix}.encoder.") for n in names) and any(n.startswith("crf.") for n in names)


def test_pair_heads_on_encoders_without_a_pooler(checkpoints, datasets_dir, tmp_path):
    """ELECTRA and DeBERTa-v2 have no pooler: the [CLS] state is the pair's vector; a stock head on
    ELECTRA says it needs zhbert, since ELECTRA's own sequence classifier has two layers."""
    lines = (datasets_dir / "lcqmc" / "dev.txt").read_text(encoding="utf-8").splitlines()[:60]
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for model_type in ("electra", "deberta-v2"):
        out = tmp_path / model_type
        zhbert.train(
            "matching", train_file=str(pairs), encoder=str(checkpoints[model_type]), preset="tiny", max_steps=2, output_dir=str(out)
        )
        match = zhbert.load(str(out / "model"))(("花呗怎么还款", "蚂蚁花呗如何还钱"))
        assert match.label in ("0", "1") and abs(sum(c.score for c in match.scores) - 1) < 1e-5
    config = json.loads((tmp_path / "electra" / "model" / "config.json").read_text(encoding="utf-8"))
    assert config["architectures"] == ["ZhBertForTask"] and "[CLS] state" in config["zhbert_only"]


def test_a_plain_token_head_opens_in_plain_transformers(checkpoints, tokenizer, tmp_path):
    """A linear token head on ELECTRA is ElectraForTokenClassification: same names, same logits."""
    from transformers import AutoModelForTokenClassification

    from zhbert.heads import HeadConfig, new_head, save_head

    head = HeadConfig(kind="token", labels=["O", "B-PER", "I-PER"], scheme="BIO", representation="last", window=32)
    model = new_head(checkpoints["electra"], head).eval()
    save_head(model, tokenizer, tmp_path / "electra-ner")
    config = json.loads((tmp_path / "electra-ner" / "config.json").read_text(encoding="utf-8"))
    assert config["architectures"] == ["ElectraForTokenClassification"] and "zhbert_only" not in config
    plain = AutoModelForTokenClassification.from_pretrained(tmp_path / "electra-ner").eval()
    ids = torch.tensor([tokenizer("王小明在北京大学读书")["input_ids"]])
    with torch.no_grad():
        ours = model(input_ids=ids, attention_mask=torch.ones_like(ids), token_type_ids=torch.zeros_like(ids)).logits
        theirs = plain(input_ids=ids).logits
    torch.testing.assert_close(ours, theirs)


def test_fill_mask_and_features_on_other_encoders(checkpoints):
    albert = zhbert.load(str(checkpoints["albert"]))
    assert albert.has_mlm_head
    (fill,) = albert.fill_mask("北京是中国的[MASK]都", top_k=3)
    assert len(fill.candidates) == 3 and fill.start == 6
    assert albert.features("北京大学", return_tensors="np").shape == (32,)  # the pooled [CLS]
    electra = zhbert.load(str(checkpoints["electra"]))  # a discriminator: no masked-LM head to answer with
    assert not electra.has_mlm_head
    with pytest.raises(ValueError, match="no masked-LM head"):
        electra.fill_mask("北京是中国的[MASK]都")


def test_another_model_type_is_refused_by_name(tmp_path, tokenizer):
    from transformers import GPT2Config, GPT2Model

    GPT2Model(GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=len(tokenizer))).save_pretrained(tmp_path / "gpt2")
    tokenizer.save_pretrained(tmp_path / "gpt2")
    with pytest.raises(ModelLoadError, match=r"gpt2.config\.json: model_type 'gpt2' is not an encoder zhbert reads; it reads bert"):
        zhbert.load(str(tmp_path / "gpt2"))
    from zhbert.heads import HeadConfig, new_head

    with pytest.raises(ModelLoadError, match="model_type 'gpt2'"):
        new_head(tmp_path / "gpt2", HeadConfig(kind="token", labels=["O", "B-PER", "I-PER"], scheme="BIO"))


def test_continued_pretraining_on_an_encoder_with_a_masked_lm_head(checkpoints, pd_corpus_file, tmp_path):
    from zhbert.training.pretrain import PretrainConfig, pretrain

    final = pretrain(
        PretrainConfig(
            corpus=[str(pd_corpus_file)],
            init=str(checkpoints["ernie"]),
            output=str(tmp_path / "ernie"),
            max_steps=2,
            batch_size=4,
            max_length=32,
            num_proc=1,
            logging_steps=1,
        )  # fmt: skip
    )
    config = json.loads((final / "config.json").read_text(encoding="utf-8"))
    assert config["model_type"] == "ernie" and config["architectures"] == ["ErnieForMaskedLM"]
    assert zhbert.load(str(final)).has_mlm_head
    with pytest.raises(ValueError, match="NSP / SOP continue BERT's pair head"):
        pretrain(PretrainConfig(corpus=[str(pd_corpus_file)], init=str(checkpoints["ernie"]), output=str(tmp_path / "nsp"), nsp=True))
    with pytest.raises(ValueError, match="the ELECTRA objective trains a BERT discriminator"):
        pretrain(
            PretrainConfig(corpus=[str(pd_corpus_file)], init=str(checkpoints["albert"]), output=str(tmp_path / "e"), objective="electra")
        )


@pytest.mark.parametrize(
    "name, depth",
    [
        ("bert.embeddings.word_embeddings.weight", 0),
        ("bert.encoder.layer.1.output.dense.weight", 2),
        ("bert.pooler.dense.weight", 4),
        ("electra.embeddings_project.weight", 0),
        ("albert.encoder.embedding_hidden_mapping_in.weight", 0),
        ("albert.encoder.albert_layer_groups.0.albert_layers.0.ffn.weight", 4),  # one group shared by every layer
        ("roformer.encoder.embed_positions.weight", 0),
        ("deberta.encoder.rel_embeddings.weight", 0),
        ("deberta.encoder.layer.0.attention.self.query_proj.weight", 1),
    ],
)
def test_layer_depth_for_layer_wise_learning_rates(name, depth):
    assert encoder_depth(name, name.split(".")[0], 4) == depth


def test_multi_task_and_soup_on_electra(checkpoints, tokenizer, tmp_path):
    """A multi-task folder stores the ELECTRA encoder once under ``electra.``; a soup of two runs
    on it is the mean of their weights."""
    from safetensors import safe_open

    from zhbert.heads import HeadConfig, load_head, new_head, save_head
    from zhbert.heads.multitask import load_multitask, new_multitask, predict_all, save_multitask
    from zhbert.model_soup import soup

    ner = HeadConfig(kind="token", labels=["O", "B-PER", "I-PER"], scheme="BIO", crf=True, window=32)
    heads = {"ner": ner, "tagging": HeadConfig(kind="sequence", labels=["a", "b"], window=32)}
    folder = save_multitask(new_multitask(checkpoints["electra"], heads), tokenizer, tmp_path / "mt")
    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        assert sum(k.startswith("electra.embeddings.word_embeddings") for k in f.keys()) == 1
    together = predict_all(load_multitask(folder), tokenizer, [SENTENCE, "今天心情特别好"])
    assert len(together["ner"]) == 2 and tuple(together["tagging"].shape) == (2, 2)
    runs = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        model = new_head(checkpoints["electra"], ner)
        with torch.no_grad():
            for p in model.parameters():
                p.add_(0.001 * torch.randn_like(p))
        runs.append(save_head(model, tokenizer, tmp_path / f"run{seed}"))
    soup(runs, tmp_path / "soup")
    mean = load_head(tmp_path / "soup").state_dict()
    a, b = load_head(runs[0]).state_dict(), load_head(runs[1]).state_dict()
    name = "electra.encoder.layer.0.attention.self.query.weight"
    torch.testing.assert_close(mean[name], (a[name] + b[name]) / 2)
