"""Every head x mode x representation trains on real data; frozen really freezes;
save/load round-trips; bad weights and bad inputs give clear outcomes."""

import subprocess
import sys
from dataclasses import replace

import pytest
import torch
from edge_cases import EDGE_CASES

from zhbert.data.peoples_daily import NER_LABELS
from zhbert.errors import ModelLoadError
from zhbert.fusion import REPRESENTATIONS
from zhbert.heads import (
    HeadConfig,
    TaskCollator,
    char_spans,
    load_head,
    new_head,
    predict_scores,
    predict_tags,
    save_head,
    stock_architecture,
)
from zhbert.heads.inputs import token_tags_from_chars
from zhbert.tokenizer import encode

WEIBO_LABELS = ["neutral", "angry", "happy", "sad", "fear", "surprise"]
NLPCC_LABELS = ["anger", "disgust", "fear", "happiness", "like", "sadness", "surprise"]


@pytest.fixture(scope="module")
def ner_examples(peoples_daily, tokenizer):
    rows = [r for r in peoples_daily.select(range(200)) if 10 <= len(r["text"]) <= 50 and r["entities"]][:12]
    out = []
    for r in rows:
        enc = encode(tokenizer, r["text"])
        out.append({"input_ids": list(enc.ids), "tags": token_tags_from_chars(enc.offsets, r["ner_tags"], NER_LABELS, "BIO")})
    return out


@pytest.fixture(scope="module")
def weibo_examples(datasets_dir, tokenizer):
    from zhbert.data import read_smp2020_ewect

    ds = read_smp2020_ewect(str(datasets_dir / "smp2020_ewect_usual" / "dev.tsv")).select(range(12))
    return [{"input_ids": list(encode(tokenizer, t).ids), "label": l} for t, l in zip(ds["text"], ds["label"])]


@pytest.fixture(scope="module")
def multilabel_examples(datasets_dir, tokenizer):
    from zhbert.data import read_nlpcc2014_emotion

    ds = read_nlpcc2014_emotion(str(datasets_dir / "nlpcc2014_weibo_emotion" / "Training data for Emotion Expression Identification.xml"))
    rows = [r for r in ds.select(range(300)) if len(r["labels"]) == 2][:8] + [r for r in ds.select(range(300)) if len(r["labels"]) == 1][:4]
    return [{"input_ids": list(encode(tokenizer, r["text"]).ids)[:100], "label": [float(i in r["labels"]) for i in range(7)]} for r in rows]


@pytest.fixture(scope="module")
def pair_examples(datasets_dir, tokenizer):
    from zhbert.data import read_pair_tsv

    ds = read_pair_tsv(str(datasets_dir / "lcqmc" / "dev.txt")).select(range(12))
    return [
        {"input_ids": list(encode(tokenizer, a).ids), "input_ids_b": list(encode(tokenizer, b).ids), "label": l}
        for a, b, l in zip(ds["sentence1"], ds["sentence2"], ds["label"])
    ]


HEADS = {
    "sequence": dict(kind="sequence", labels=WEIBO_LABELS),
    "multilabel": dict(kind="sequence", labels=NLPCC_LABELS, multi_label=True),
    "pair-cross": dict(kind="pair", labels=["0", "1"]),
    "pair-bi": dict(kind="pair", labels=["0", "1"], pair_encoding="bi"),
    "token": dict(kind="token", labels=NER_LABELS, scheme="BIO"),
    "token-crf": dict(kind="token", labels=NER_LABELS, scheme="BIO", crf=True),
    # the BERT paper's feature-based NER head: a two-layer BiLSTM over the features (here under a CRF)
    "token-bilstm-crf": dict(kind="token", labels=NER_LABELS, scheme="BIO", crf=True, bilstm_layers=2),
}


def _examples(kind, request):
    name = {
        "sequence": "weibo_examples",
        "multilabel": "multilabel_examples",
        "pair-cross": "pair_examples",
        "pair-bi": "pair_examples",
        "token": "ner_examples",
        "token-crf": "ner_examples",
        "token-bilstm-crf": "ner_examples",
    }[kind]
    return request.getfixturevalue(name)


def _train(model, batch, steps=8, lr=3e-3):
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr)
    model.train()
    losses = []
    for _ in range(steps):
        torch.manual_seed(0)  # same dropout draws each step: the loss change is the training's doing
        loss = model(**batch).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return losses


@pytest.mark.parametrize("representation", REPRESENTATIONS)
@pytest.mark.parametrize("mode", ["finetune", "frozen"])
@pytest.mark.parametrize("kind", sorted(HEADS))
def test_every_head_mode_and_representation_trains(kind, mode, representation, tiny_encoder, tokenizer, request):
    head = HeadConfig(**HEADS[kind], mode=mode, representation=representation, window=64)
    model = new_head(tiny_encoder, head)
    before = {k: v.clone() for k, v in model.bert.state_dict().items()}
    batch = TaskCollator(tokenizer, head, 64)(_examples(kind, request)[:8])
    losses = _train(model, batch, steps=5)
    assert losses[-1] < losses[0], losses
    after = model.bert.state_dict()
    if mode == "frozen":  # bit-identical encoder
        assert all(torch.equal(before[k], after[k]) for k in before)
        assert not any(p.requires_grad for p in model.bert.parameters())
    else:
        assert any(not torch.equal(before[k], after[k]) for k in before if "pooler" not in k)
    out = model(**batch)
    if representation == "scalar-mix":
        assert out.layer_weights.shape == (5,) and float(out.layer_weights.detach().sum()) == pytest.approx(1.0)
        assert model.fusion.scalar_mix.weights.grad is not None and model.fusion.scalar_mix.weights.grad.abs().sum() > 0
    if representation == "layer-attention":
        w = out.layer_weights
        assert w.shape[-1] == 5 and torch.allclose(w.sum(-1), torch.ones(w.shape[:-1]), atol=1e-5)


@pytest.mark.parametrize("kind", sorted(HEADS))
def test_save_load_round_trip(kind, tiny_encoder, tokenizer, tmp_path, request):
    head = HeadConfig(**HEADS[kind], representation="scalar-mix" if "crf" in kind else None, window=64)
    model = new_head(tiny_encoder, head)
    batch = TaskCollator(tokenizer, head, 64)(_examples(kind, request)[:8])
    _train(model, batch, steps=2)
    model.eval()
    save_head(model, tokenizer, tmp_path / "m")
    loaded = load_head(tmp_path / "m")
    assert loaded.head == model.head
    saved, reloaded = model.state_dict(), loaded.state_dict()
    assert saved.keys() == reloaded.keys() and all(torch.equal(saved[k], reloaded[k]) for k in saved)  # every weight, bit for bit
    # the same weights give the same logits; a BiLSTM may take another CPU kernel for a fresh module
    # (differences of 1e-8 seen in CI), so the forward pass is compared to 1e-6, not bit for bit
    torch.testing.assert_close(loaded(**batch).logits, model(**batch).logits, rtol=0, atol=1e-6)
    # the encoder opens in plain transformers, and so does a stock-compatible head
    from transformers import AutoModel

    enc = AutoModel.from_pretrained(str(tmp_path / "m"))
    torch.testing.assert_close(enc.embeddings.word_embeddings.weight, model.bert.embeddings.word_embeddings.weight)


def test_stock_heads_load_in_plain_transformers_fresh_process(tiny_encoder, tokenizer, tmp_path, ner_examples):
    head = HeadConfig(**HEADS["token"], window=32)
    model = new_head(tiny_encoder, head).eval()
    save_head(model, tokenizer, tmp_path / "ner")
    batch = TaskCollator(tokenizer, head, 32)(ner_examples[:2])
    torch.save({k: v for k, v in batch.items() if k != "labels"}, tmp_path / "batch.pt")
    torch.save(model(**batch).logits, tmp_path / "expected.pt")
    code = f"""
import torch
from transformers import AutoModelForTokenClassification
m = AutoModelForTokenClassification.from_pretrained({str(tmp_path / "ner")!r}).eval()
assert type(m).__name__ == "BertForTokenClassification", type(m)
b = torch.load({str(tmp_path / "batch.pt")!r})
with torch.no_grad():
    got = m(input_ids=b["input_ids"], attention_mask=b["attention_mask"]).logits
assert torch.equal(got, torch.load({str(tmp_path / "expected.pt")!r}))
print("same")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "same" in r.stdout, r.stderr[-2000:]


def test_corrupt_or_truncated_weights_name_the_file(tiny_encoder, tokenizer, tmp_path):
    from zhbert.errors import ModelLoadError

    model = new_head(tiny_encoder, HeadConfig(**HEADS["sequence"]))
    path = save_head(model, tokenizer, tmp_path / "m")
    weights = path / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelLoadError, match=r"model\.safetensors: corrupt or truncated"):
        load_head(path)
    weights.write_bytes(b"not a safetensors file at all")
    with pytest.raises(ModelLoadError, match=r"model\.safetensors"):
        load_head(path)
    weights.unlink()
    with pytest.raises(ModelLoadError, match=r"model\.safetensors is missing"):
        load_head(path)
    (path / "config.json").unlink()
    with pytest.raises(ModelLoadError, match=r"config\.json is missing"):
        load_head(path)


@pytest.mark.parametrize("kind", ["token", "token-crf", "token-bilstm-crf"])
def test_token_head_edge_cases_and_long_text(kind, tiny_encoder, tokenizer, peoples_daily):
    model = new_head(tiny_encoder, HeadConfig(**HEADS[kind], window=32)).eval()
    long_text = "".join(peoples_daily.select(range(400))["text"])[:100_000]
    texts = EDGE_CASES + [long_text]
    preds = predict_tags(model, tokenizer, texts, batch_size=64)
    for text, p in zip(texts, preds):
        assert len(p.tags) == len(p.encoding.ids)  # every token predicted, nothing truncated
        spans = char_spans(p, "BIO")
        assert spans == sorted(spans, key=lambda s: (s[1], s[2])) and all(a[2] <= b[1] for a, b in zip(spans, spans[1:]))
        assert all(0 <= s < e <= len(text) for _, s, e in spans)
    # batch equals one-by-one, and deterministic
    one = [predict_tags(model, tokenizer, [t])[0].tags for t in EDGE_CASES]
    assert one == [p.tags for p in preds[: len(EDGE_CASES)]]


def test_sequence_and_pair_edge_cases(tiny_encoder, tokenizer):
    seq = new_head(tiny_encoder, HeadConfig(**HEADS["sequence"], window=32)).eval()
    long_text = "中国人民" * 25_000
    probs = predict_scores(seq, tokenizer, EDGE_CASES + [long_text])
    assert probs.shape == (len(EDGE_CASES) + 1, 6) and torch.allclose(probs.sum(-1), torch.ones(len(EDGE_CASES) + 1), atol=1e-5)
    # batch composition (padding, batch size) must not change a text's scores; not bit-for-bit,
    # since CPU kernels pick different reduction orders for different shapes (seen once in CI)
    assert torch.allclose(
        predict_scores(seq, tokenizer, EDGE_CASES[4:6]), predict_scores(seq, tokenizer, EDGE_CASES)[4:6], atol=1e-6, rtol=0
    )
    cross = new_head(tiny_encoder, HeadConfig(**HEADS["pair-cross"], window=32)).eval()
    with pytest.raises(ValueError, match="exceeds the 32-token window"):
        predict_scores(cross, tokenizer, [("很长的问题" * 10, "另一个问题")])
    bi = new_head(tiny_encoder, HeadConfig(**HEADS["pair-bi"], window=32)).eval()
    assert predict_scores(bi, tokenizer, [("很长的问题" * 10, "另一个问题"), ("", "😀")]).shape == (2, 2)


def test_fine_tune_on_trainer_learns_weibo_posts(tiny_encoder, tokenizer, weibo_examples, tmp_path):
    from zhbert.training.finetune import FinetuneConfig, fine_tune

    head = HeadConfig(**HEADS["sequence"], window=64)
    model = new_head(tiny_encoder, head)
    rows = weibo_examples[:8]
    batch = TaskCollator(tokenizer, head, 64)(rows)
    model.eval()
    before = float(model(**batch).loss.detach())
    fine_tune(
        model,
        tokenizer,
        rows,
        FinetuneConfig(output=str(tmp_path), max_steps=15, batch_size=8, learning_rate=1e-3, warmup=0.0, logging_steps=5),
    )
    assert float(model(**batch).loss.detach()) < before


def test_keep_best_epoch_ends_on_the_best_scoring_epochs_weights(tiny_encoder, tokenizer, weibo_examples, tmp_path):
    """`--best-epoch-on-dev`: the weights after training are the best epoch's, not the last's."""
    from zhbert.training.finetune import FinetuneConfig, KeepBestEpoch, fine_tune

    model = new_head(tiny_encoder, HeadConfig(**HEADS["sequence"], window=64))
    snapshots, scripted = [], iter([0.4, 0.9, 0.9, 0.2])  # epoch 2 is best; the tie at 3 keeps 2

    def score():
        assert not model.training  # scored in eval mode (no dropout)
        snapshots.append({k: v.clone() for k, v in model.state_dict().items()})
        return next(scripted)

    keep = KeepBestEpoch(model, score)
    rows = weibo_examples[:16]  # 2 steps an epoch at batch size 8
    fine_tune(model, tokenizer, rows, FinetuneConfig(output=str(tmp_path), epochs=4, batch_size=8, learning_rate=1e-3, warmup=0.0), keep)
    assert keep.scores == [0.4, 0.9, 0.9, 0.2] and keep.best_epoch == 2
    final = model.state_dict()
    assert all(torch.equal(final[k], snapshots[1][k]) for k in final)
    assert not all(torch.equal(final[k], snapshots[3][k]) for k in final)  # the last epoch did move the weights


def test_average_last_epochs_ends_on_the_mean_of_the_last_epochs_weights(tiny_encoder, tokenizer, ner_examples, tmp_path):
    from zhbert.training.finetune import AverageLastEpochs, FinetuneConfig, fine_tune

    model = new_head(tiny_encoder, HeadConfig(**HEADS["token-crf"], window=64))
    average = AverageLastEpochs(model, 3)
    snapshots = []
    original = average.on_epoch_end

    def record(*args, **kwargs):  # what the callback saw at each epoch's end
        snapshots.append({k: v.clone() for k, v in model.state_dict().items()})
        return original(*args, **kwargs)

    average.on_epoch_end = record
    config = FinetuneConfig(output=str(tmp_path), epochs=4, batch_size=8, learning_rate=1e-3, warmup=0.0)
    fine_tune(model, tokenizer, ner_examples[:16], config, average)
    assert len(snapshots) == 4 and average.epochs == 4 and len(average.states) == 3  # epoch 1 fell out
    final = model.state_dict()
    crf = "crf.transitions"
    torch.testing.assert_close(final[crf], (snapshots[1][crf] + snapshots[2][crf] + snapshots[3][crf]) / 3)
    assert not torch.equal(final[crf], snapshots[3][crf])
    ids = [k for k, v in final.items() if not v.is_floating_point()]  # integer buffers are copied, not averaged
    assert all(torch.equal(final[k], snapshots[3][k]) for k in ids)
    with pytest.raises(ValueError, match="at least 2 epochs"):
        AverageLastEpochs(model, 1)


def test_frozen_feature_cache_skips_the_encoder(tiny_encoder, tokenizer, ner_examples):
    head = HeadConfig(**HEADS["token-crf"], mode="frozen", representation="scalar-mix", window=64)
    model = new_head(tiny_encoder, head)
    batch = TaskCollator(tokenizer, head, 64)(ner_examples[:6])
    reference = model(**batch).loss
    model.enable_feature_cache()
    calls = []
    hook = model.bert.register_forward_hook(lambda *a: calls.append(1))
    first = model(**batch).loss
    smaller = TaskCollator(tokenizer, head, 64)(ner_examples[:3])  # other padding, same rows
    model(**smaller)
    second = model(**batch).loss
    hook.remove()
    assert len(calls) == 1  # only the first batch ran the encoder
    torch.testing.assert_close(first, reference, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(second, first)
    second.backward()  # cached features still train the head
    assert model.fusion.scalar_mix.weights.grad is not None
    with pytest.raises(ValueError, match="needs mode='frozen'"):
        new_head(tiny_encoder, HeadConfig(**HEADS["token"])).enable_feature_cache()


def test_bilstm_head_reads_each_window_without_its_padding(tiny_encoder, tokenizer, ner_examples):
    """The BERT paper's feature-based NER head: a two-layer BiLSTM, the encoder's width each way.
    Its weights start at torch's LSTM init (new_head builds missing weights empty), and a
    sentence's emissions do not depend on a longer sentence padding it in the batch."""
    head = HeadConfig(**HEADS["token-bilstm-crf"], mode="frozen", window=64)
    model = new_head(tiny_encoder, head).eval()
    lstm, hidden = model.bilstm.lstm, model.config.hidden_size
    assert lstm.num_layers == 2 and lstm.bidirectional and lstm.hidden_size == hidden and model.classifier.in_features == 2 * hidden
    bound = hidden**-0.5
    for name, p in lstm.named_parameters():
        assert torch.isfinite(p).all() and p.abs().max() <= bound and p.abs().max() > bound / 2, name
    assert stock_architecture(head) is None  # no plain-transformers class has a BiLSTM
    short, long = sorted(ner_examples[:6], key=lambda e: len(e["input_ids"]))[::5]
    assert len(short["input_ids"]) < len(long["input_ids"])
    coll = TaskCollator(tokenizer, head, 64)
    alone = model(**{k: v for k, v in coll([short]).items() if k != "labels"}).logits
    padded = model(**{k: v for k, v in coll([short, long]).items() if k != "labels"}).logits
    n = alone.size(1)
    torch.testing.assert_close(padded[0, :n], alone[0], rtol=0, atol=1e-5)
    with pytest.raises(ValueError, match="BiLSTM .* applies to token heads only"):
        HeadConfig(**HEADS["sequence"], bilstm_layers=2)
    with pytest.raises(ValueError, match="bilstm_layers must be 0"):
        HeadConfig(**HEADS["token"], bilstm_layers=-1)


def test_bilstm_predicts_what_its_packed_training_path_computes(tiny_encoder, tokenizer, ner_examples):
    """Training packs a batch's padding away; prediction runs each direction on the padded batch (oneDNN's
    fused kernel on CPU), the backward one on rows reversed in place. Both give the same outputs on the
    real tokens of People's Daily sentences of different lengths, and zeros on the padding."""
    head = HeadConfig(**HEADS["token-bilstm-crf"], mode="frozen", window=64)
    bilstm = new_head(tiny_encoder, head).bilstm
    bilstm.lstm.dropout = 0.0  # train mode would otherwise drop between the layers
    mask = TaskCollator(tokenizer, head, 64)(ner_examples[:8])["attention_mask"]
    assert len(set(mask.sum(1).tolist())) > 3 and (mask == 0).any()
    features = torch.randn(*mask.shape, bilstm.lstm.input_size, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        predicted = bilstm.eval()(features, mask)
        trained = bilstm.train()(features, mask)
    torch.testing.assert_close(predicted, trained, rtol=0, atol=1e-5)
    assert (predicted[mask == 0] == 0).all() and (predicted[mask == 1] != 0).all()
    with torch.no_grad():  # a float or bool mask, as transformers accepts, gives the same lengths
        assert torch.equal(bilstm.eval()(features, mask.float()), predicted) and torch.equal(bilstm(features, mask.bool()), predicted)


def _same_weights_and_emissions(back, model, batch) -> None:
    """Every weight read back bit for bit; the emissions equal up to float32 rounding: the LSTM kernel
    may sum in another order for weights that sit elsewhere in memory (3.7e-9 apart on an AMD EPYC)."""
    saved, read = model.state_dict(), back.state_dict()
    assert saved.keys() == read.keys() and all(torch.equal(saved[k], read[k]) for k in saved)
    torch.testing.assert_close(back(**batch).logits, model(**batch).logits, rtol=1e-5, atol=1e-6)


def test_bilstm_hidden_sizes_the_bilstm_and_is_read_back(tiny_encoder, tokenizer, ner_examples, tmp_path):
    """`bilstm_hidden`: a BiLSTM narrower than the encoder (what a bundled model's size budget leaves
    room for); the folder records it, so the same BiLSTM is rebuilt and gives the same emissions."""
    head = HeadConfig(**HEADS["token-bilstm-crf"], bilstm_hidden=8, window=64)
    model = new_head(tiny_encoder, head).eval()
    assert model.bilstm.lstm.hidden_size == 8 and model.classifier.in_features == 16
    back = load_head(save_head(model, tokenizer, tmp_path / "m")).eval()
    assert back.head.bilstm_hidden == 8 and back.bilstm.lstm.hidden_size == 8
    batch = {k: v for k, v in TaskCollator(tokenizer, head, 64)(ner_examples[:4]).items() if k != "labels"}
    _same_weights_and_emissions(back, model, batch)
    with pytest.raises(ModelLoadError, match="its head has bilstm_hidden=8, this one None"):
        new_head(tmp_path / "m", HeadConfig(**HEADS["token-bilstm-crf"]), carry_output_layer=True)
    # with the skip connection the tagger reads the features (encoder, 32) beside the BiLSTM's 2 x 8
    skip = replace(head, bilstm_skip=True)
    model = new_head(tiny_encoder, skip).eval()
    assert model.classifier.in_features == 16 + model.config.hidden_size
    back = load_head(save_head(model, tokenizer, tmp_path / "skip")).eval()
    _same_weights_and_emissions(back, model, batch)
    with pytest.raises(ModelLoadError, match="its head has bilstm_skip=True, this one False"):
        new_head(tmp_path / "skip", head, carry_output_layer=True)
    with pytest.raises(ValueError, match="bilstm_skip passes the features around a BiLSTM; this head has none"):
        HeadConfig(**HEADS["token-crf"], bilstm_skip=True)
    with pytest.raises(ValueError, match="bilstm_hidden=8 sizes a BiLSTM; this head has none"):
        HeadConfig(**HEADS["token-crf"], bilstm_hidden=8)
    with pytest.raises(ValueError, match="bilstm_hidden must be 1 or more"):
        HeadConfig(**HEADS["token-bilstm-crf"], bilstm_hidden=0)


@pytest.mark.parametrize("crf", [False, True])
def test_example_weights_scale_each_sentences_share_of_the_loss(tiny_encoder, tokenizer, ner_examples, crf):
    """`--extra-train-weight`: a silver sentence of weight w adds w times its loss term; the mean
    still runs over every row (softmax: every tag), so half-weight rows count half, in any batch."""
    head = HeadConfig(**HEADS["token"], crf=crf)
    model = new_head(tiny_encoder, head).eval()
    collate = TaskCollator(tokenizer, head, 64)
    a, b = ner_examples[0], ner_examples[1]
    assert "example_weights" not in collate([a, b]) and "example_weights" not in collate([{**a, "weight": 1.0}, b])
    weighted = collate([{**a, "weight": 1.0}, {**b, "weight": 0.5}])
    assert weighted["example_weights"].tolist() == [1.0, 0.5]
    with torch.no_grad():
        both = model(**collate([a, b])).loss
        half = model(**weighted).loss
        only_a = model(**{**weighted, "example_weights": torch.tensor([1.0, 0.0])}).loss
        only_b = model(**{**weighted, "example_weights": torch.tensor([0.0, 1.0])}).loss
    torch.testing.assert_close(only_a + only_b, both)  # the two sentences' terms add up to the plain loss
    torch.testing.assert_close(half, only_a + 0.5 * only_b)
    assert only_a > 0 and only_b > 0


def test_fgm_moves_the_batchs_embeddings_along_the_gradient_and_puts_them_back(tiny_encoder, tokenizer, ner_examples, tmp_path):
    """`--fgm-epsilon`: inside the adversarial pass the word embeddings of the batch's tokens are moved
    by epsilon (L2 norm) along the loss gradient; afterwards they are what they were, bit for bit;
    and every training step runs the model twice (clean, then adversarial)."""
    from zhbert.training.finetune import FinetuneConfig, fine_tune, perturbed_embeddings

    head = HeadConfig(**HEADS["token-crf"], window=64)
    model = new_head(tiny_encoder, head)
    table = model.bert.embeddings.word_embeddings.weight
    with perturbed_embeddings(model, 1.0) as moved:  # no gradient yet: nothing to follow
        assert not moved
    model(**TaskCollator(tokenizer, head, 64)(ner_examples[:4])).loss.backward()
    before = table.detach().clone()
    with perturbed_embeddings(model, 0.5) as moved:
        step = table.detach() - before
        assert moved and torch.allclose(step.norm(), torch.tensor(0.5), rtol=1e-4)
        torch.testing.assert_close(step, 0.5 * table.grad / table.grad.norm(), atol=1e-6, rtol=1e-4)
        batch_tokens = {i for e in ner_examples[:4] for i in e["input_ids"]}
        assert set(step.abs().sum(1).nonzero().squeeze(1).tolist()) <= batch_tokens | {tokenizer.cls_token_id, tokenizer.sep_token_id}
    assert torch.equal(table.detach(), before)

    calls = []
    for epsilon in (0.0, 1.0):
        fresh = new_head(tiny_encoder, head)
        forward = fresh.forward
        fresh.forward = lambda *a, _f=forward, **kw: (calls.append(epsilon), _f(*a, **kw))[1]
        cfg = FinetuneConfig(output=str(tmp_path / str(epsilon)), max_steps=3, batch_size=4, fgm_epsilon=epsilon)
        fine_tune(fresh, tokenizer, ner_examples[:12], cfg)
    assert calls.count(0.0) == 3 and calls.count(1.0) == 6
    with pytest.raises(ValueError, match="a frozen encoder has none"):
        frozen = new_head(tiny_encoder, HeadConfig(**HEADS["token-crf"], window=64, mode="frozen"))
        fine_tune(frozen, tokenizer, ner_examples[:4], FinetuneConfig(output=str(tmp_path / "f"), max_steps=1, fgm_epsilon=1.0))


@pytest.mark.parametrize("kind", ["token-crf", "token"])
def test_rdrop_adds_the_two_passes_disagreement_to_their_mean_loss(kind, tiny_encoder, tokenizer, ner_examples, tmp_path):
    """`--rdrop-alpha`: two passes under different dropout draws; without dropout they agree and the
    loss is the plain loss, with it the KL term is positive and scaled as the head's own loss; training
    runs the model twice a step."""
    from zhbert.training.finetune import FinetuneConfig, fine_tune, rdrop_loss

    head = HeadConfig(**HEADS[kind], window=64)
    batch = TaskCollator(tokenizer, head, 64)(ner_examples[:4])
    model = new_head(tiny_encoder, head)
    model.train()
    torch.manual_seed(3)
    one, two = model(**batch), model(**batch)  # as rdrop_loss runs them, from the same seed
    assert not torch.allclose(one.logits, two.logits)  # dropout draws differ
    for alpha in (0.0, 2.0):
        torch.manual_seed(3)
        got = rdrop_loss(model, batch, alpha)
        labelled = batch["labels"] != -100
        p, q = torch.log_softmax(one.logits[labelled], -1), torch.log_softmax(two.logits[labelled], -1)
        kl = 0.5 * (
            torch.nn.functional.kl_div(q, p, log_target=True, reduction="none")
            + torch.nn.functional.kl_div(p, q, log_target=True, reduction="none")
        ).sum(-1)
        scaled = kl.sum() / 4 if kind == "token-crf" else kl.mean()  # four sentences under a CRF; tokens under softmax
        torch.testing.assert_close(got, (one.loss + two.loss) / 2 + alpha * scaled)
    model.eval()  # no dropout: the two passes agree, the KL term is nothing
    torch.testing.assert_close(rdrop_loss(model, batch, 5.0), model(**batch).loss)

    calls = []
    fresh = new_head(tiny_encoder, head)
    forward = fresh.forward
    fresh.forward = lambda *a, _f=forward, **kw: (calls.append(1), _f(*a, **kw))[1]
    fine_tune(fresh, tokenizer, ner_examples[:12], FinetuneConfig(output=str(tmp_path / "r"), max_steps=3, batch_size=4, rdrop_alpha=1.0))
    assert len(calls) == 6
    with pytest.raises(ValueError, match="R-Drop and FGM each replace the training step"):
        fine_tune(
            fresh, tokenizer, ner_examples[:4], FinetuneConfig(output=str(tmp_path / "b"), max_steps=1, rdrop_alpha=1.0, fgm_epsilon=1.0)
        )
    with pytest.raises(ValueError, match="token heads only, not a sequence head"):
        sequence = new_head(tiny_encoder, HeadConfig(**HEADS["sequence"], window=64))
        fine_tune(sequence, tokenizer, ner_examples[:4], FinetuneConfig(output=str(tmp_path / "s"), max_steps=1, rdrop_alpha=1.0))


def test_layer_lr_decay_slows_the_lower_encoder_layers(tiny_encoder):
    """`--layer-lr-decay D`: encoder layer i of L (from 1) learns at the rate x D^(L - i), the embeddings at
    x D^L, the pooler at the rate; the head stays at x20 and carried head layers, if asked, at the rate."""
    from zhbert.training.finetune import FinetuneConfig, _param_groups

    model = new_head(tiny_encoder, HeadConfig(**HEADS["token-crf"], window=64))
    names = {id(p): n for n, p in model.named_parameters()}
    groups = _param_groups(model, FinetuneConfig(learning_rate=1e-3, layer_lr_decay=0.5), frozen=False)
    rate = {names[id(p)]: g["lr"] for g in groups for p in g["params"]}
    assert len(rate) == sum(p.requires_grad for p in model.parameters())  # every trained parameter, once
    assert rate["bert.embeddings.word_embeddings.weight"] == 1e-3 * 0.5**4
    assert rate["bert.encoder.layer.0.attention.self.query.weight"] == 1e-3 * 0.5**3
    assert rate["bert.encoder.layer.3.output.dense.weight"] == rate["bert.pooler.dense.weight"] == 1e-3
    assert rate["classifier.weight"] == rate["crf.transitions"] == 2e-2
    assert [g["lr"] for g in groups] == sorted({1e-3 * 0.5**k for k in range(5)} | {2e-2})
    plain = _param_groups(model, FinetuneConfig(learning_rate=1e-3), frozen=False)
    assert [g["lr"] for g in plain] == [1e-3, 2e-2]  # 1: off, the encoder in one group
    with pytest.raises(ValueError, match="layer_lr_decay must be above 0 and at most 1 \\(1: off\\), got 1.5"):
        _param_groups(model, FinetuneConfig(layer_lr_decay=1.5), frozen=False)
    frozen = new_head(tiny_encoder, HeadConfig(**HEADS["token-crf"], window=64, mode="frozen"))
    with pytest.raises(ValueError, match="a frozen encoder learns nothing"):
        _param_groups(frozen, FinetuneConfig(layer_lr_decay=0.8), frozen=True)


def test_recipe_head_rate_warmup_and_weight_decay_reach_the_optimizer(tiny_encoder, tmp_path):
    """`--head-learning-rate`, `--warmup` and `--weight-decay` of a recipe's command line set the head's
    parameter group, the scheduler's warm-up and AdamW's decay; a rate of 0 or less is refused by name."""
    from zhbert.recipes.arguments import finalize_args, parse_args
    from zhbert.recipes.common import finetune_config
    from zhbert.training.finetune import _param_groups, training_arguments

    model = new_head(tiny_encoder, HeadConfig(**HEADS["token-crf"], window=64))
    names = {id(p): n for n, p in model.named_parameters()}
    argv = ["--learning-rate", "2e-4", "--output-dir", str(tmp_path)]
    flags = ["--head-learning-rate", "1e-2", "--warmup", "0.25", "--weight-decay", "0.05"]
    default, chosen = (finetune_config(finalize_args(parse_args(argv + extra), "resume")) for extra in ([], flags))
    for cfg, head_rate in ((default, 2e-4 * 20), (chosen, 1e-2)):
        rate = {names[id(p)]: g["lr"] for g in _param_groups(model, cfg, frozen=False) for p in g["params"]}
        assert rate["classifier.weight"] == rate["crf.transitions"] == head_rate
        assert rate["bert.encoder.layer.0.attention.self.query.weight"] == 2e-4
    arguments = training_arguments(chosen, batch_size=8, by_length=False)
    assert (arguments.warmup_steps, arguments.weight_decay) == (0.25, 0.05)
    assert (default.warmup, default.weight_decay) == (0.1, 0.01)  # the recipes' defaults before these flags existed
    with pytest.raises(ValueError, match="head_learning_rate must be above 0, got 0.0"):
        _param_groups(model, finetune_config(finalize_args(parse_args(argv + ["--head-learning-rate", "0"]), "resume")), frozen=False)
    with pytest.raises(ValueError, match="warmup and weight_decay must be 0 or more, got -1.0 and 0.01"):
        _param_groups(model, finetune_config(finalize_args(parse_args(argv + ["--warmup", "-1"]), "resume")), frozen=False)


def test_recipe_dropout_flags_reach_the_model_and_its_folder(tiny_encoder, tokenizer, tmp_path):
    """`--classifier-dropout` and `--hidden-dropout` set the head's and the encoder's dropout of the model
    a recipe trains, are written to its config.json and read back; out-of-range values and the flags with
    --evaluate-only are refused by name; without them the checkpoint's dropout stays."""
    from zhbert.recipes.arguments import finalize_args, parse_args
    from zhbert.recipes.common import prepare_model

    head = HeadConfig(**HEADS["token-crf"], window=64, bilstm_layers=1)
    argv = ["--encoder", str(tiny_encoder), "--output-dir", str(tmp_path)]
    default, _ = prepare_model(finalize_args(parse_args(argv), "resume"), head)
    chosen, _ = prepare_model(finalize_args(parse_args(argv + ["--classifier-dropout", "0.3", "--hidden-dropout", "0.2"]), "resume"), head)
    checkpoint = default.config.hidden_dropout_prob
    assert default.dropout.p == checkpoint and default.bert.encoder.layer[0].output.dropout.p == checkpoint
    assert chosen.dropout.p == 0.3 and chosen.bert.encoder.layer[0].output.dropout.p == 0.2
    back = load_head(save_head(chosen, tokenizer, tmp_path / "model"))
    assert (back.config.classifier_dropout, back.config.hidden_dropout_prob, back.dropout.p) == (0.3, 0.2, 0.3)
    with pytest.raises(ValueError, match=r"classifier_dropout is a probability in \[0, 1\), got 1.0"):
        prepare_model(finalize_args(parse_args(argv + ["--classifier-dropout", "1"]), "resume"), head)
    evaluate = ["--evaluate-only", str(tmp_path / "model"), "--hidden-dropout", "0.2"]
    with pytest.raises(ValueError, match="--hidden-dropout is a training option"):
        prepare_model(finalize_args(parse_args(argv + evaluate), "resume"), head)


def test_init_seed_gives_runs_of_other_seeds_the_same_first_weights(tiny_encoder, tmp_path):
    """`--init-seed` draws a run's first weights (new head layers, word-feature tables) apart from `--seed`:
    runs that share it start equal whatever their seeds (the setting a soup averages), runs that do not
    start apart; with --evaluate-only it is refused by name."""
    from zhbert.recipes.arguments import finalize_args, parse_args
    from zhbert.recipes.common import prepare_model

    head = HeadConfig(**HEADS["token-crf"], window=64, lexicon="jieba", lexicon_dim=8)
    argv = ["--encoder", str(tiny_encoder), "--output-dir", str(tmp_path)]

    def first_weights(*extra):
        model, _ = prepare_model(finalize_args(parse_args(argv + list(extra)), "resume"), head)
        return {k: v for k, v in model.state_dict().items() if not k.startswith("bert.")}

    shared = [first_weights("--seed", seed, "--init-seed", "42") for seed in ("2", "3")]
    own = first_weights("--seed", "2")
    assert shared[0].keys() == own.keys() and any(k.startswith("word_features.") for k in own)
    assert all(torch.equal(shared[0][k], shared[1][k]) for k in own)
    assert all(torch.equal(shared[0][k], v) for k, v in first_weights().items())  # --seed 42, the default
    assert not torch.equal(shared[0]["classifier.weight"], own["classifier.weight"])
    with pytest.raises(ValueError, match="--init-seed draws the first weights of a model to train; .* is only scored"):
        prepare_model(finalize_args(parse_args(argv + ["--init-seed", "1", "--evaluate-only", str(tmp_path)]), "resume"), head)
