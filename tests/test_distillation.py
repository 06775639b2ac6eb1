"""Soft-target distillation (`--distill-from`): the teacher's logits travel with the examples in the
student's windows, the loss is the documented mix, training follows the teacher, and mismatched
teachers are refused."""

import json

import pytest
import torch
from test_recipes import _recipe

from zhbert.data.peoples_daily import NER_LABELS
from zhbert.heads import HeadConfig, TaskCollator, new_head
from zhbert.heads.inputs import token_tags_from_chars, window_batch
from zhbert.tokenizer import encode
from zhbert.training.distillation import check_teacher, distillation_loss, with_teacher_logits
from zhbert.training.finetune import FinetuneConfig, fine_tune

HEAD = dict(kind="token", labels=NER_LABELS, scheme="BIO", window=16)


@pytest.fixture(scope="module")
def examples(peoples_daily, tokenizer):
    """People's Daily sentences with entities; some longer than one 16-token window."""
    rows = [r for r in peoples_daily.select(range(300)) if 10 <= len(r["text"]) <= 60 and r["entities"]][:12]
    assert any(len(r["text"]) > 14 for r in rows)
    out = []
    for r in rows:
        enc = encode(tokenizer, r["text"])
        out.append({"input_ids": list(enc.ids), "tags": token_tags_from_chars(enc.offsets, r["ner_tags"], NER_LABELS, "BIO")})
    return out


def test_teacher_logits_are_the_teachers_own_in_the_students_windows(tiny_encoder, tokenizer, examples):
    torch.manual_seed(0)
    teacher, student = new_head(tiny_encoder, HeadConfig(**HEAD)).eval(), new_head(tiny_encoder, HeadConfig(**HEAD))
    taught = with_teacher_logits(teacher, student, tokenizer, examples, batch_size=5)
    collator = TaskCollator(tokenizer, student.head, 16)
    n = len(NER_LABELS)
    for e, t in zip(examples, taught):
        assert t["input_ids"] == e["input_ids"] and t["teacher_logits"].shape == (len(e["input_ids"]) * n,)
        logits = torch.as_tensor(t["teacher_logits"].astype("float32")).reshape(-1, n)
        assert logits.abs().sum(1).gt(0).all()  # every token read, the ones past the first window too
        for a, b in collator.spans(len(e["input_ids"]))[-1:]:  # the last window's tokens keep its logits
            with torch.no_grad():
                direct = teacher(**window_batch([e["input_ids"][a:b]], collator.cls, collator.sep, collator.pad)).logits[0, 1 : 1 + b - a]
            torch.testing.assert_close(logits[a:b], direct, atol=2e-2, rtol=1e-2)  # stored as float16
    batch = collator(taught[:4])
    labelled = batch["labels"] != -100
    assert batch["teacher_logits"].shape == (*batch["input_ids"].shape, n)
    assert batch["teacher_logits"][~labelled].eq(0).all() and batch["teacher_logits"][labelled].abs().sum(-1).gt(0).all()


def test_the_loss_mixes_the_tag_loss_and_the_softened_kl(tiny_encoder, tokenizer, examples):
    torch.manual_seed(0)
    teacher, student = new_head(tiny_encoder, HeadConfig(**HEAD)).eval(), new_head(tiny_encoder, HeadConfig(**HEAD)).eval()
    batch = TaskCollator(tokenizer, student.head, 16)(with_teacher_logits(teacher, student, tokenizer, examples[:6]))
    plain = {k: v for k, v in batch.items() if k != "teacher_logits"}
    out = student(**plain)
    labelled = batch["labels"] != -100
    for alpha, temperature in ((0.5, 1.0), (0.8, 2.0)):
        s = torch.log_softmax(out.logits[labelled] / temperature, -1)
        t = torch.log_softmax(batch["teacher_logits"][labelled] / temperature, -1)
        kl = torch.nn.functional.kl_div(s, t, log_target=True, reduction="batchmean") * temperature**2
        torch.testing.assert_close(distillation_loss(student, batch, alpha, temperature), (1 - alpha) * out.loss + alpha * kl)
    # a teacher that says what the student says adds nothing
    own = {**batch, "teacher_logits": out.logits.detach()}
    torch.testing.assert_close(distillation_loss(student, own, 0.3, 2.0), 0.7 * out.loss)
    # a row's weight (--extra-train-weight) scales its soft terms as it scales its tag loss
    weighted = {**batch, "example_weights": (torch.arange(len(batch["input_ids"])) % 2).float()}
    assert distillation_loss(student, weighted, 1.0, 1.0) < distillation_loss(student, batch, 1.0, 1.0)


def test_a_crf_teaches_and_learns_through_its_marginals(tiny_encoder, tokenizer, examples):
    """Posterior distillation: a CRF teacher's stored logits soften back into its marginals at T, and a
    CRF student's soft term is KL(teacher || its marginals), summed per sentence, averaged over sentences."""
    torch.manual_seed(0)
    crf_head = HeadConfig(**{**HEAD, "crf": True})
    teacher, student = new_head(tiny_encoder, crf_head).eval(), new_head(tiny_encoder, crf_head).eval()
    with torch.no_grad():
        for crf in (teacher.crf, student.crf):
            for p in crf.parameters():
                p.normal_()
    check_teacher(teacher, tokenizer, student, tokenizer, "T")  # CRFs on both sides are welcome
    short = [e for e in examples if len(e["input_ids"]) <= 14][:3]
    assert short
    for temperature in (1.0, 2.0):
        taught = with_teacher_logits(teacher, student, tokenizer, short, temperature=temperature)
        for e, t in zip(short, taught):
            n = len(e["input_ids"])
            stored = torch.as_tensor(t["teacher_logits"].astype("float32")).reshape(n, -1)
            with torch.no_grad():
                ids = window_batch([e["input_ids"]], tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id)
                em = teacher(**ids).logits[:, 1 : 1 + n]
                want = teacher.crf.log_marginals(em, torch.ones(1, n), temperature)[0]
            torch.testing.assert_close(torch.log_softmax(stored / temperature, -1), want, atol=2e-2, rtol=1e-2)

    batch = TaskCollator(tokenizer, student.head, 16)(with_teacher_logits(teacher, student, tokenizer, examples[:6]))
    plain = {k: v for k, v in batch.items() if k != "teacher_logits"}
    out = student(**plain)
    labelled = batch["labels"] != -100
    rows = []
    for i in range(len(labelled)):  # each sentence alone: no batching, no padding
        n = int(labelled[i].sum())
        s = student.crf.log_marginals(out.logits[i : i + 1, 1 : 1 + n], torch.ones(1, n))[0]
        t = torch.log_softmax(batch["teacher_logits"][i, 1 : 1 + n], -1)
        rows.append((t.exp() * (t - s)).sum())
    torch.testing.assert_close(distillation_loss(student, batch, 0.4, 1.0), 0.6 * out.loss + 0.4 * torch.stack(rows).mean())
    # a teacher that says what the student's CRF says adds nothing
    own = torch.zeros_like(out.logits)
    own[:, 1:] = student.crf.log_marginals(out.logits[:, 1:], labelled[:, 1:]).detach()
    torch.testing.assert_close(distillation_loss(student, {**batch, "teacher_logits": own}, 0.3, 1.0), 0.7 * out.loss)


@pytest.mark.parametrize("crf", [False, True])
def test_training_follows_the_teacher_and_mismatches_are_refused(tiny_encoder, tokenizer, examples, tmp_path, crf):
    torch.manual_seed(0)
    student = new_head(tiny_encoder, HeadConfig(**HEAD, crf=crf))
    target = NER_LABELS.index("B-ORG")
    # a teacher sure of B-ORG everywhere, against gold tags that are mostly O: alpha 1 follows the teacher alone
    taught = [{**e, "teacher_logits": torch.nn.functional.one_hot(torch.full((len(e["input_ids"]),), target), len(NER_LABELS))
               .float().mul(8).numpy().astype("float16").reshape(-1)} for e in examples]  # fmt: skip
    cfg = FinetuneConfig(output=str(tmp_path / "d"), max_steps=30, batch_size=4, learning_rate=5e-3, distill_alpha=1.0)
    fine_tune(student, tokenizer, taught, cfg)
    batch = TaskCollator(tokenizer, student.head, 16)(examples)
    with torch.no_grad():
        logits = student(**batch).logits
    labelled = batch["labels"] != -100
    tags = torch.tensor(sum(student.decode_tokens(logits, labelled), [])) if crf else logits.argmax(-1)[labelled]
    gold = batch["labels"][labelled]
    assert (tags == target).float().mean() > 0.9 > (gold == target).float().mean()

    with pytest.raises(ValueError, match="the examples carry no teacher_logits"):
        fine_tune(student, tokenizer, examples, FinetuneConfig(output=str(tmp_path / "n"), max_steps=1, distill_alpha=0.5))
    with pytest.raises(ValueError, match="0 < alpha <= 1"):
        fine_tune(student, tokenizer, taught, FinetuneConfig(output=str(tmp_path / "a"), max_steps=1, distill_alpha=1.5))
    with pytest.raises(ValueError, match="R-Drop or FGM"):
        fine_tune(student, tokenizer, taught, FinetuneConfig(output=str(tmp_path / "r"), max_steps=1, distill_alpha=0.5, rdrop_alpha=1.0))
    other = new_head(tiny_encoder, HeadConfig(kind="token", labels=["B", "M", "E", "S"], scheme="BMES-untyped"))
    with pytest.raises(ValueError, match=r"T: the teacher's tags \['B', 'M', 'E', 'S'\] are not the student's"):
        check_teacher(other, tokenizer, student, tokenizer, "T")
    sequence = new_head(tiny_encoder, HeadConfig(kind="sequence", labels=["0", "1"]))
    with pytest.raises(ValueError, match="token heads only, not a sequence head"):
        check_teacher(student, tokenizer, sequence, tokenizer, "T")


def test_cws_recipe_distils_from_a_trained_segmenter(tiny_encoder, tmp_path):
    """`zhbert train cws --distill-from FOLDER`: the teacher (here a tiny cws trained first) reads the
    training sentences, the run says so in its notes; with --evaluate-only, or its settings without a
    teacher, it is refused."""
    _recipe("cws", tiny_encoder, tmp_path / "teacher", "--dataset", "pku")
    teacher = tmp_path / "teacher" / "model"
    r, m = _recipe("cws", tiny_encoder, tmp_path / "student", "--dataset", "pku", "--distill-from", str(teacher), "--distill-alpha", "0.7")
    assert f"soft targets from {teacher} (--distill-alpha 0.7, --distill-temperature 1.0)" in m["notes"]
    assert json.loads((tmp_path / "student" / "model" / "config.json").read_text())["zhbert_head"]["labels"] == ["B", "M", "E", "S"]
    with pytest.raises(AssertionError, match="is a training option"):
        _recipe("cws", tiny_encoder, tmp_path / "e", "--dataset", "pku", "--evaluate-only", str(teacher), "--distill-from", str(teacher))
    from zhbert.recipes.arguments import RecipeArguments
    from zhbert.recipes.common import finetune_config

    with pytest.raises(ValueError, match="--distill-alpha, --distill-temperature: settings of --distill-from: give the teacher"):
        finetune_config(RecipeArguments(distill_alpha=0.7, distill_temperature=2.0))
