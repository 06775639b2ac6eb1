"""ELECTRA-style replaced-token detection (``zhbert pretrain --objective electra``) on real
People's Daily text with a tiny config: the loss parts, save/load as stock transformers folders,
kill -9 and resume to the same weights, and a head fine-tuned on the discriminator."""

import json

import pytest
import torch
from pretrain_cli import RESUMABLE, pretrain_cli
from safetensors.torch import load_file
from transformers import BertConfig


@pytest.fixture(scope="module")
def corpus_file(pd_corpus_file):
    return pd_corpus_file


def _run(corpus, out, *extra, env_extra=None):
    electra = ["--objective", "electra", "--generator-width", "0.5"]
    return pretrain_cli("--corpus", corpus, "--output", out, *RESUMABLE, *electra, *extra, env_extra=env_extra)


@pytest.fixture(scope="module")
def reference(corpus_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("electra")
    r = _run(corpus_file, out)
    assert r.returncode == 0, r.stderr[-3000:]
    return out


def _tiny_model(width=0.5):
    from zhbert.training.electra import ElectraPretrainingModel, generator_config

    config = BertConfig(vocab_size=300, hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128)
    torch.manual_seed(0)
    return ElectraPretrainingModel(config, generator_config(config, width))


def test_generator_shares_the_discriminators_embeddings_and_is_narrower():
    model = _tiny_model(0.25)
    gen, disc = model.generator, model.discriminator
    assert gen.config.hidden_size == 16 and gen.config.num_hidden_layers == disc.config.num_hidden_layers
    for name in ("word_embeddings", "position_embeddings", "token_type_embeddings", "LayerNorm"):
        assert getattr(gen.electra.embeddings, name) is getattr(disc.embeddings, name)
    assert gen.generator_lm_head.weight is disc.embeddings.word_embeddings.weight


def test_loss_is_mlm_plus_weighted_replaced_token_detection():
    model = _tiny_model()
    ids = torch.randint(10, 300, (4, 20), generator=torch.Generator().manual_seed(1))
    labels = torch.full_like(ids, -100)
    labels[:, 2:5] = ids[:, 2:5]
    masked = ids.clone()
    masked[:, 2:5] = 3
    mask = torch.ones_like(ids)
    mask[0, 15:] = 0  # padding takes no part in either loss
    out = model(input_ids=masked, attention_mask=mask, token_type_ids=torch.zeros_like(ids), labels=labels)
    torch.testing.assert_close(out.loss, out.mlm_loss + 50.0 * out.rtd_loss)
    # an untrained generator over 300 tokens replaces nearly every masked token: 3 of ~20 per row
    assert 0.1 < float(out.replaced_share) < 0.2
    out.loss.backward()
    assert model.generator.electra.encoder.layer[0].attention.self.query.weight.grad.abs().sum() > 0
    assert model.discriminator_head.dense_prediction.weight.grad.abs().sum() > 0


def test_replacements_replay_from_the_global_seed():
    model = _tiny_model()
    model.eval()
    ids = torch.randint(10, 300, (2, 16), generator=torch.Generator().manual_seed(2))
    labels = torch.full_like(ids, -100)
    labels[:, 4:8] = ids[:, 4:8]
    kw = dict(input_ids=ids, attention_mask=torch.ones_like(ids), token_type_ids=torch.zeros_like(ids), labels=labels)
    torch.manual_seed(5)
    a = model(**kw).rtd_loss
    torch.manual_seed(5)
    assert torch.equal(a, model(**kw).rtd_loss)


def test_replacements_are_drawn_from_the_generators_softmax():
    from zhbert.training.electra import gumbel_sample

    probs = torch.tensor([0.7, 0.2, 0.1, 0.0])
    logits = probs.clamp_min(1e-12).log().expand(40_000, 4).contiguous()
    torch.manual_seed(0)
    share = torch.bincount(gumbel_sample(logits), minlength=4).float() / 40_000
    torch.testing.assert_close(share, probs, atol=0.01, rtol=0)
    assert share[3] == 0  # a token the generator gives no probability is never sampled


def test_replacements_are_the_plain_gumbel_max_formulas_bit_for_bit():
    # runs begun before the in-place sampling resume with the same replacements
    from zhbert.training.electra import gumbel_sample

    logits = torch.randn(64, 3000, generator=torch.Generator().manual_seed(3))
    torch.manual_seed(7)
    noise = torch.rand_like(logits, dtype=torch.float32).clamp_(1e-9, 1.0)
    plain = (logits - torch.log(-torch.log(noise))).argmax(-1)
    after_plain = torch.rand(3)
    torch.manual_seed(7)
    assert torch.equal(gumbel_sample(logits), plain)
    assert torch.equal(torch.rand(3), after_plain)  # and it takes as many random numbers, so later draws agree too


def test_pretrain_saves_a_stock_bert_encoder_and_a_stock_generator(reference):
    from transformers import AutoModel, AutoModelForMaskedLM, BertModel

    final = reference / "final"
    config = json.loads((final / "config.json").read_text())
    assert config["model_type"] == "bert" and config["architectures"] == ["BertModel"]
    assert not any(k.startswith("zhbert_generator") for k in config)
    encoder = AutoModel.from_pretrained(str(final))
    assert type(encoder) is BertModel and encoder.config.hidden_size == 128
    generator = AutoModelForMaskedLM.from_pretrained(str(final / "generator"))
    assert type(generator).__name__ == "ElectraForMaskedLM" and generator.config.hidden_size == 64
    torch.testing.assert_close(generator.electra.embeddings.word_embeddings.weight, encoder.embeddings.word_embeddings.weight)
    # the generator answers fill-mask through a plain pipeline
    from transformers import pipeline

    fill = pipeline("fill-mask", model=str(final / "generator"), tokenizer=str(final / "generator"))
    assert len(fill("中华人民共[MASK]国")) == 5
    rows = [json.loads(line) for line in (reference / "loss_log.jsonl").read_text().splitlines()]
    assert {"mlm_loss", "rtd_loss", "replaced_share", "rtd_accuracy"} <= rows[-1].keys()
    assert abs(rows[-1]["loss"] - (rows[-1]["mlm_loss"] + 50 * rows[-1]["rtd_loss"])) < 0.05 * rows[-1]["loss"]
    # every row after the first interval says how fast the loop ran against this machine's matmul peak
    assert all(r["token_slots_per_s"] > 0 and 0 < r["mfu"] < 1.5 and r["matmul_peak_gflops"] > 1 for r in rows)


def test_kill_then_resume_ends_with_the_same_weights(corpus_file, pd_heldout_file, tmp_path, reference):
    # with held-out evaluation on, which must leave the weights as the reference's (run without it)
    heldout = ["--eval-corpus", pd_heldout_file, "--eval-chars", "1500"]
    r = _run(corpus_file, tmp_path, *heldout, env_extra={"ZHBERT_FAULT_AT_STEP": "6"})
    assert r.returncode == -9
    assert (tmp_path / "checkpoint-4" / "zhbert_complete.json").is_file()
    r = _run(corpus_file, tmp_path, *heldout)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "resuming from" in r.stderr
    rows = [json.loads(line) for line in (tmp_path / "eval_log.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [0, 4, 8, 12]  # the resumed start (step 4) is not evaluated again
    # the generator fills the blanks; the discriminator tells replacements from originals, better than at the start
    assert all(0 <= row["eval_rtd_accuracy"] <= 1 and row["eval_char_perplexity"] > 1 for row in rows)
    assert rows[-1]["eval_rtd_loss"] < rows[0]["eval_rtd_loss"]
    for part in ("model.safetensors", "generator/model.safetensors"):
        a, b = load_file(str(reference / "final" / part)), load_file(str(tmp_path / "final" / part))
        assert a.keys() == b.keys()
        for k in a:
            assert torch.equal(a[k], b[k]), (part, k)


def test_continues_from_a_bert_checkpoint_and_a_head_fine_tunes_on_it(corpus_file, tmp_path, reference):
    from transformers import BertForMaskedLM

    init = tmp_path / "plain"
    BertForMaskedLM(
        BertConfig(vocab_size=21128, hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128)
    ).save_pretrained(init)
    out = tmp_path / "continued"
    r = _run(corpus_file, out, "--init", str(init), "--max-steps", "3", "--save-steps", "3")
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"{init} has no generator/: the generator and replaced-token head start new" in r.stderr
    assert "--freeze-encoder-steps N (such as half of --max-steps) holds the encoder" in r.stderr
    start = BertForMaskedLM.from_pretrained(str(init)).bert.encoder.layer[0].attention.self.query.weight
    after = load_file(str(out / "final" / "model.safetensors"))["encoder.layer.0.attention.self.query.weight"]
    assert after.shape == start.shape and not torch.equal(after, start)  # it started there and trained


def test_continuing_an_electra_run_keeps_its_generator_and_from_a_checkpoint_its_head_too(reference, caplog):
    """A long run continues the pilot's winner: from its final/ the generator is loaded (only the small
    replaced-token head starts fresh), from one of its checkpoints every part is."""
    from zhbert.training.electra import ElectraPretrainingModel
    from zhbert.training.pretrain import PretrainConfig, _starting_model

    saved_generator = load_file(str(reference / "final" / "generator" / "model.safetensors"))
    model, fresh = ElectraPretrainingModel.from_bert(str(reference / "final"), generator_width=0.5)
    assert fresh == ["discriminator_head"]
    key = "electra.encoder.layer.0.attention.self.query.weight"
    torch.testing.assert_close(model.generator.state_dict()[key], saved_generator[key])
    assert model.generator.electra.embeddings.word_embeddings is model.discriminator.embeddings.word_embeddings
    with pytest.raises(ValueError, match="--generator-width 0.25 makes .*: give its width"):
        ElectraPretrainingModel.from_bert(str(reference / "final"), generator_width=0.25)

    with caplog.at_level("WARNING", logger="zhbert"):
        _starting_model(PretrainConfig(corpus=["x"], output="y", objective="electra", init=str(reference / "final"), generator_width=0.5))
    assert "initialised fresh" in caplog.text and "no generator/" not in caplog.text  # only the head is new

    checkpoint = reference / "checkpoint-12"
    cfg = PretrainConfig(corpus=["x"], output="y", objective="electra", init=str(checkpoint), generator_width=0.5)
    _, model, _ = _starting_model(cfg)
    state = load_file(str(checkpoint / "model.safetensors"))
    for name in ("discriminator_head.dense.weight", "generator.electra.encoder.layer.1.output.dense.weight"):
        torch.testing.assert_close(model.state_dict()[name], state[name])
    with pytest.raises(ValueError, match="trained with --rtd-weight 50; continue it with the same"):
        _starting_model(PretrainConfig(corpus=["x"], output="y", objective="electra", init=str(checkpoint), rtd_weight=20))


def test_the_parts_a_continued_run_draws_fresh_come_from_its_seed(reference):
    """From a stock BERT folder an ELECTRA run draws its generator and replaced-token head, a
    masked-LM run its MLM head: with the same --seed a rerun starts from the same weights whatever
    ran before it in the process, so the whole run repeats; another seed draws others."""
    from zhbert.training.pretrain import PretrainConfig, _starting_model

    def start(objective, seed, disturb):
        torch.rand(disturb)  # whatever consumed the global generator before
        cfg = PretrainConfig(corpus=["x"], output="y", objective=objective, init=str(reference / "final"), generator_width=0.5, seed=seed)
        return _starting_model(cfg)[1].state_dict()

    for objective, fresh in (("electra", "discriminator_head.dense.weight"), ("mlm", "cls.predictions.transform.dense.weight")):
        first, again, other = start(objective, 7, 3), start(objective, 7, 11), start(objective, 8, 3)
        assert first.keys() == again.keys()
        for k in first:
            assert torch.equal(first[k], again[k]), (objective, k)
        assert not torch.equal(first[fresh], other[fresh]), objective


def test_a_task_head_starts_from_the_discriminator(reference, tokenizer, tmp_path):
    import zhbert
    from zhbert.heads.config import HeadConfig
    from zhbert.heads.io import new_head, save_head

    head = new_head(reference / "final", HeadConfig(kind="token", labels=["B", "M", "E", "S"], scheme="BMES-untyped", window=64))
    disc = load_file(str(reference / "final" / "model.safetensors"))
    for key in ("encoder.layer.1.output.dense.weight", "embeddings.word_embeddings.weight"):
        torch.testing.assert_close(head.state_dict()["bert." + key], disc[key])
    words = zhbert.load(str(save_head(head, tokenizer, tmp_path / "cws")))("中华人民共和国成立于一九四九年。")
    assert "".join(w.text for w in words) == "中华人民共和国成立于一九四九年。"


def test_objective_is_checked():
    from zhbert.training.pretrain import PretrainConfig

    with pytest.raises(ValueError, match="unknown objective"):
        PretrainConfig(objective="clm")
    with pytest.raises(ValueError, match="no pair head"):
        PretrainConfig(objective="electra", sop=True)


def test_a_masked_lm_head_continues_on_the_discriminator(corpus_file, reference, tmp_path):
    """The other way to fill masks with an ELECTRA encoder: a short masked-LM run from its folder
    (the MLM head starts fresh), which zhbert.load then serves as fill-mask."""
    import zhbert

    out = tmp_path / "mlm-on-disc"
    r = pretrain_cli("--corpus", corpus_file, "--output", out, "--init", reference / "final",
                     "--max-steps", "3", "--save-steps", "3", "--batch-size", "4", "--num-proc", "1", "--max-length", "64")  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    assert "initialised fresh" in r.stderr and "cls.predictions" in r.stderr
    masked = zhbert.load(str(out / "final"))
    assert masked.has_mlm_head and len(masked.fill_mask("中华人民共[MASK]国")) == 1


def test_useful_flops_count_the_generator_and_both_heads():
    from zhbert.training.flops import encoder_flops_per_token, train_flops_per_token

    model = _tiny_model(0.25)  # discriminator 2 x 64 (FFN 128), generator 2 x 16 (FFN 64), vocabulary 300
    disc = 6 * 2 * (4 * 64 * 64 + 2 * 64 * 128) + 12 * 2 * 32 * 64
    assert encoder_flops_per_token(64, 2, 128, 32) == disc
    gen = 6 * 2 * (4 * 16 * 16 + 2 * 16 * 64) + 12 * 2 * 32 * 16 + 6 * 64 * 16
    heads = 6 * (16 * 64 + 64 * 300) * 0.15 + 6 * (64 * 64 + 64)
    assert train_flops_per_token(model, 32, 0.15) == pytest.approx(disc + gen + heads)
    mlm = 6 * (64 * 64 + 64 * 300) * 0.15
    assert train_flops_per_token(model.discriminator, 32, 0.15) == pytest.approx(disc + mlm)


def test_a_matmul_peak_read_while_the_core_was_shared_is_raised_at_a_later_log():
    """MFU is measured against the highest peak seen: one read low at the start (another process on the core)
    is measured again at a log, so the MFU cannot stay above 1 for it."""
    from types import SimpleNamespace

    from zhbert.training.flops import matmul_peak
    from zhbert.training.pretrain import _Throughput

    throughput = _Throughput(SimpleNamespace(stats={"masked": 15, "tokens": 100}), 32, recheck_s=0.0)
    args = SimpleNamespace(per_device_train_batch_size=4, gradient_accumulation_steps=1)
    throughput.on_train_begin(args, SimpleNamespace(global_step=0), None)
    true_peak = throughput.peak
    throughput.peak = true_peak / 1000  # as if read while the core was busy
    model, logs = _tiny_model(0.25), {"loss": 1.0}
    torch.manual_seed(3)
    before = torch.rand(3)
    torch.manual_seed(3)
    throughput.on_log(args, SimpleNamespace(global_step=5), None, logs=logs, model=model)
    assert torch.equal(torch.rand(3), before)  # measuring draws nothing from the run's generator
    assert throughput.peak > true_peak / 10 and logs["matmul_peak_gflops"] == round(throughput.peak / 1e9, 1)
    assert 0 < logs["mfu"] < 1.5 and logs["threads"] == torch.get_num_threads()
    assert matmul_peak(trials=1) > 0


def test_a_checkpoint_part_way_becomes_an_encoder_folder(reference, tmp_path):
    """What a long run's probes read: the discriminator of checkpoint-8 as a stock BertModel folder."""
    from transformers import AutoModelForMaskedLM, BertModel

    from zhbert.training.pretrain import encoder_from_checkpoint

    out = encoder_from_checkpoint(reference / "checkpoint-8", tmp_path / "step-8")
    encoder = BertModel.from_pretrained(str(out))
    stored = load_file(str(reference / "checkpoint-8" / "model.safetensors"))
    torch.testing.assert_close(encoder.encoder.layer[1].output.dense.weight, stored["discriminator.encoder.layer.1.output.dense.weight"])
    assert type(AutoModelForMaskedLM.from_pretrained(str(out / "generator"))).__name__ == "ElectraForMaskedLM"
    assert (out / "tokenizer.json").is_file() and (out / "generator" / "tokenizer.json").is_file()


@pytest.fixture(scope="module")
def plain_bert(tmp_path_factory):
    """A stock BERT folder without a generator: an ELECTRA run continued from it draws a new generator and head."""
    from transformers import BertForMaskedLM

    torch.manual_seed(0)
    init = tmp_path_factory.mktemp("plain-bert")
    config = BertConfig(vocab_size=21128, hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128)
    BertForMaskedLM(config).save_pretrained(init)
    return init


def test_a_frozen_start_holds_the_encoder_while_the_new_generator_learns_then_trains_it(corpus_file, plain_bert, tmp_path):
    """--freeze-encoder-steps 8 of 12: at checkpoint-8 the encoder and its embeddings are --init's to the bit while
    the new generator and replaced-token head have moved; by the end the encoder has trained. A run killed while
    the encoder was held (step 6) resumes across the boundary to the same weights as the uninterrupted run."""
    init = load_file(str(plain_bert / "model.safetensors"))
    held = ["--init", plain_bert, "--freeze-encoder-steps", "8"]
    whole = tmp_path / "whole"
    r = _run(corpus_file, whole, *held)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "the encoder is held for the first 8 steps" in r.stderr and "has no generator/" not in r.stderr  # warned of nothing
    at_8 = load_file(str(whole / "checkpoint-8" / "model.safetensors"))
    encoder = {k.removeprefix("discriminator."): v for k, v in at_8.items() if k.startswith("discriminator.")}
    assert "embeddings.word_embeddings.weight" in encoder and "encoder.layer.1.output.dense.weight" in encoder
    for key, value in encoder.items():
        if not key.startswith("pooler."):  # a masked LM has no pooler: it starts fresh, and nothing trains it
            assert torch.equal(value, init["bert." + key]), key
    # the new parts learnt meanwhile: the generator against its fresh draw (same seed, no steps), the head's loss fell
    from zhbert.training.pretrain import PretrainConfig, _starting_model

    cfg = PretrainConfig(corpus=["x"], output="y", objective="electra", init=str(plain_bert), generator_width=0.5)
    fresh = _starting_model(cfg)[1].state_dict()
    for key in ("generator.electra.encoder.layer.0.attention.self.query.weight", "discriminator_head.dense.weight"):
        assert not torch.equal(at_8[key], fresh[key]), key
    final = load_file(str(whole / "final" / "model.safetensors"))
    assert not torch.equal(final["encoder.layer.1.output.dense.weight"], init["bert.encoder.layer.1.output.dense.weight"])
    # held steps run no backward pass through the encoder: their MFU counts its forward pass only
    rows = {row["step"]: row for row in map(json.loads, (whole / "loss_log.jsonl").read_text().splitlines())}
    assert all(0 < rows[s]["mfu"] < 1.5 for s in rows)

    resumed = tmp_path / "resumed"
    r = _run(corpus_file, resumed, *held, env_extra={"ZHBERT_FAULT_AT_STEP": "6"})
    assert r.returncode == -9 and (resumed / "checkpoint-4" / "zhbert_complete.json").is_file()
    r = _run(corpus_file, resumed, *held)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "resuming from" in r.stderr
    for part in ("model.safetensors", "generator/model.safetensors"):
        a, b = load_file(str(whole / "final" / part)), load_file(str(resumed / "final" / part))
        for k in a:
            assert torch.equal(a[k], b[k]), (part, k)


def test_freeze_encoder_steps_is_checked(monkeypatch):
    from zhbert.training.pretrain import PretrainConfig, _frozen_encoder

    with pytest.raises(ValueError, match="from scratch every part is new"):
        PretrainConfig(freeze_encoder_steps=5)
    with pytest.raises(ValueError, match="--freeze-encoder-steps 10 of --max-steps 10: the encoder would never train"):
        PretrainConfig(init="base", freeze_encoder_steps=10, max_steps=10)
    with pytest.raises(ValueError, match="must be 0 or more"):
        PretrainConfig(init="base", freeze_encoder_steps=-1)
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(ValueError, match="runs in one process"):
        _frozen_encoder(PretrainConfig(init="base", freeze_encoder_steps=5))
    assert _frozen_encoder(PretrainConfig(init="base")) == []


def test_a_held_encoder_counts_its_forward_pass_only():
    from zhbert.training.flops import encoder_flops_per_token, train_flops_per_token

    model = _tiny_model(0.25)
    disc = encoder_flops_per_token(64, 2, 128, 32)
    assert train_flops_per_token(model, 32, 0.15) - train_flops_per_token(model, 32, 0.15, encoder_trains=False) == pytest.approx(
        disc * 2 / 3
    )


def test_the_held_steps_of_a_logged_interval_follow_the_callbacks_rule():
    """The MFU of an interval and the callback read one rule: steps 1..N are held."""
    from zhbert.training.encoder_warmup import FrozenEncoderSteps, held_steps

    hold = FrozenEncoderSteps(8)
    assert [s for s in range(12) if hold.frozen_at(s)] == list(range(8))  # about to run steps 1..8
    assert held_steps(0, 5, 8) == 5 and held_steps(5, 10, 8) == 3 and held_steps(8, 12, 8) == 0  # across the boundary
    assert held_steps(6, 10, 8) == sum(hold.frozen_at(s) for s in range(6, 10))  # a resumed interval
    assert held_steps(0, 10, 0) == 0


def test_a_held_masked_lm_trains_only_its_head_until_the_step_count_says():
    """The same hold for --objective mlm: the encoder (embeddings and layers) is held, the masked-LM head's
    transform and bias train; from step N on everything trains, and the model leaves the run trainable."""
    from types import SimpleNamespace

    from zhbert.training.encoder_warmup import FrozenEncoderSteps
    from zhbert.training.mlm_model import SparseBertForMaskedLM

    model = SparseBertForMaskedLM(
        BertConfig(vocab_size=300, hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128)
    )
    hold = FrozenEncoderSteps(3)
    trainable = lambda: {n for n, p in model.named_parameters() if p.requires_grad}  # noqa: E731
    hold.on_step_begin(None, SimpleNamespace(global_step=2), None, model=model)  # step 3 about to run: held
    assert trainable() and all(n.startswith("cls.") for n in trainable())
    assert "cls.predictions.transform.dense.weight" in trainable() and "cls.predictions.bias" in trainable()
    hold.on_step_begin(None, SimpleNamespace(global_step=3), None, model=model)  # step 4: everything
    assert trainable() == {n for n, _ in model.named_parameters()}
    hold.on_step_begin(None, SimpleNamespace(global_step=0), None, model=model)
    hold.on_train_end(None, None, None, model=model)
    assert trainable() == {n for n, _ in model.named_parameters()}
