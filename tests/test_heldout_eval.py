"""`zhbert pretrain --eval-corpus`: the held-out text read, refused when it cannot be held out, and scored the
same way every time (the runs themselves are in test_pretrain_resume.py and test_electra.py)."""

from __future__ import annotations

import json

import pytest
import torch
from transformers import AutoTokenizer, BertConfig

from zhbert.errors import DataFormatError
from zhbert.training.heldout import heldout_scores, read_heldout
from zhbert.training.mlm_model import SparseBertForMaskedLM
from zhbert.training.pretrain import PretrainConfig


def test_text_given_to_both_corpora_is_refused(pd_corpus_file):
    with pytest.raises(ValueError, match="is also given to --corpus: held-out text must be text the run does not train on"):
        PretrainConfig(corpus=[str(pd_corpus_file)], eval_corpus=[str(pd_corpus_file)])


def test_a_prepared_corpus_or_an_empty_file_is_refused_by_name(tmp_path):
    prepared = tmp_path / "news.zhcorpus"
    prepared.write_bytes(b"\0")
    with pytest.raises(ValueError, match="news.zhcorpus: a .zhcorpus file is already tokenised"):
        read_heldout([str(prepared)], 1000)
    blank = tmp_path / "blank.txt"
    blank.write_text("\n  \n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="blank.txt:1: file holds only whitespace"):
        read_heldout([str(blank)], 1000)


def test_the_budget_cuts_at_a_character_and_words_spell_each_text(pd_heldout_file):
    heldout = read_heldout([str(pd_heldout_file)], 300)
    assert heldout.chars == 300 == sum(map(len, heldout.texts)) and heldout.cut
    lines = pd_heldout_file.read_text(encoding="utf-8").splitlines()
    assert heldout.texts[:-1] == lines[: len(heldout.texts) - 1] and lines[len(heldout.texts) - 1].startswith(heldout.texts[-1])
    assert ["".join(words) for words in heldout.words] == heldout.texts
    whole = read_heldout([str(pd_heldout_file)], 10**6)
    assert not whole.cut and whole.documents_read == len(lines) == 60


def test_held_out_text_is_read_no_further_than_the_budget(pd_heldout_file, tmp_path):
    """A held-out file of gigabytes is not read (nor cached) whole for its first characters: a damaged byte
    2 MB in is never reached by a budget of 1,000, and is named by its line by one that reaches it."""
    lines = pd_heldout_file.read_text(encoding="utf-8").splitlines()
    big = tmp_path / "news.txt"
    repeats = 2_000_000 // len("\n".join(lines).encode()) + 1
    good = ("\n".join(lines) + "\n") * repeats
    big.write_bytes(good.encode() + b"\xff\xfe\n")
    first = read_heldout([str(big)], 1000)
    assert first.chars == 1000 and first.texts[0] == lines[0]
    with pytest.raises(DataFormatError, match=f"news.txt:{good.count(chr(10)) + 1}: invalid UTF-8"):
        read_heldout([str(big)], 10**7)
    with pytest.raises(DataFormatError, match="missing.txt: file not found"):  # every file checked before reading
        read_heldout([str(big), str(tmp_path / "missing.txt")], 1000)


def test_scores_repeat_and_leave_the_callers_randomness_and_mode(pd_heldout_file):
    tokenizer = AutoTokenizer.from_pretrained("zhbert/pretrained/base")
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
    torch.manual_seed(0)
    model = SparseBertForMaskedLM(config).train()
    heldout = read_heldout([str(pd_heldout_file)], 2000)
    torch.manual_seed(7)
    first = heldout_scores(model, tokenizer, heldout, max_length=64)
    after = torch.rand(4)
    torch.manual_seed(7)
    assert heldout_scores(model, tokenizer, heldout, max_length=64) == first and torch.equal(torch.rand(4), after)
    torch.manual_seed(7)
    assert torch.equal(torch.rand(4), after)  # evaluation drew nothing from the global generator
    assert model.training  # back in train mode for the next step
    # an untrained model is near uniform over the vocabulary: its perplexity is of the vocabulary's size
    assert 0.3 * len(tokenizer) < first["char_perplexity"] < 3 * len(tokenizer) and first["char_blanks"] > 200


def test_logits_at_the_blanks_alone_score_as_the_full_output_does(pd_heldout_file):
    """The view computes the vocabulary projection at the blanks only; a long text read in windows that do not
    overlap scores each blank once, as overlapping windows do."""
    from zhbert.training.heldout import _GeneratorView
    from zhbert.training.mlm_eval import evaluate_mlm

    tokenizer = AutoTokenizer.from_pretrained("zhbert/pretrained/base")
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
    torch.manual_seed(0)
    model = SparseBertForMaskedLM(config)

    class FullOutput(torch.nn.Module):  # what evaluate_mlm reads from any masked LM: .logits everywhere
        def __init__(self):
            super().__init__()
            self.model, self.config = model, config  # a submodule, so that evaluate_mlm's eval() reaches it

        def forward(self, **inputs):
            return self.model(**inputs)

    texts = ["".join(pd_heldout_file.read_text(encoding="utf-8").splitlines()[:6])]  # one text of several windows
    full = evaluate_mlm(FullOutput(), tokenizer, texts, max_length=64)
    sparse = evaluate_mlm(_GeneratorView(model), tokenizer, texts, max_length=64)
    assert sparse.blanks == full.blanks > 30 and sparse.accuracy == full.accuracy
    assert sparse.perplexity == pytest.approx(full.perplexity, rel=1e-5)
    assert evaluate_mlm(_GeneratorView(model), tokenizer, texts, max_length=64, overlap=False).blanks == full.blanks


def test_eval_split_trains_on_the_rest_and_holds_out_every_nth_document(pd_corpus_file):
    from zhbert.training.pretrain import _read_text_corpus

    cfg = PretrainConfig(corpus=[str(pd_corpus_file)], eval_split=0.05)
    train = _read_text_corpus(cfg)["text"]
    held = _read_text_corpus(cfg, part="heldout")["text"]
    lines = pd_corpus_file.read_text(encoding="utf-8").splitlines()
    assert held == lines[19::20] and len(held) == 15  # the 20th, 40th, ... of 300 sentences
    assert train == [line for i, line in enumerate(lines) if i % 20 != 19] and not set(train) & set(held)
    # what is held out is also what --extend-vocab counts and the run prepares: the training part alone
    assert _read_text_corpus(PretrainConfig(corpus=[str(pd_corpus_file)]))["text"] == lines


@pytest.mark.parametrize(
    "options, message",
    [
        ({"eval_split": 0.05, "eval_corpus": ["other.txt"]}, "--eval-split holds out part of --corpus; --eval-corpus gives other text"),
        ({"eval_split": 0.6}, "--eval-split is a share of the documents between 0 and 0.5, got 0.6"),
        ({"eval_steps": -1}, "--eval-steps must be 0 or more"),
    ],
)
def test_held_out_options_that_cannot_work_are_refused_before_any_reading(pd_corpus_file, options, message):
    with pytest.raises(ValueError, match=message):
        PretrainConfig(corpus=[str(pd_corpus_file)], **options)


def test_eval_split_of_a_prepared_corpus_is_refused(tmp_path, pd_corpus_file):
    from zhbert.training.pretrain import prepare_corpus

    prepared = tmp_path / "pd.zhcorpus"
    prepare_corpus([str(pd_corpus_file)], str(prepared), num_proc=1, max_docs=20)
    with pytest.raises(ValueError, match="--eval-split holds out text, and a .zhcorpus file is already tokenised"):
        PretrainConfig(corpus=[str(prepared)], eval_split=0.1)


def test_eval_split_from_the_command_line(pd_corpus_file, tmp_path):
    from pretrain_cli import TINY, pretrain_cli

    r = pretrain_cli(
        "--corpus", pd_corpus_file, "--output", tmp_path, *TINY, "--max-steps", "2", "--save-steps", "2", "--eval-split", "0.1"
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "of the 30 documents --eval-split 0.1 keeps out of training" in r.stderr
    rows = [json.loads(line) for line in (tmp_path / "eval_log.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [0, 2] and rows[0]["eval_char_blanks"] == rows[1]["eval_char_blanks"] > 100
    assert "held-out, step 0 -> 2: fill-mask " in r.stderr  # the run's summary, its last line of scores
    assert f"the checkpoint of the lowest is kept: {tmp_path / 'checkpoint-2'}" in r.stderr


def test_the_checkpoint_of_the_lowest_perplexity_survives_the_trainers_rotation(tmp_path):
    from types import SimpleNamespace

    from transformers import TrainerState
    from transformers.trainer_utils import rotate_checkpoints

    from zhbert.training.heldout import HeldOutEvaluation

    args, state = SimpleNamespace(output_dir=str(tmp_path), save_steps=100), TrainerState(max_steps=450)
    for step, perplexity in [(0, 30.0), (50, 20.0), (100, 40.0), (200, 35.0), (300, 47.0), (400, 46.0), (450, 45.0)]:
        state.global_step = step
        HeldOutEvaluation._keep_if_best(args, state, {"char_perplexity": perplexity})
        if step % 100 == 0 and step or step == 450:  # the Trainer saves, then rotates keeping two
            (tmp_path / f"checkpoint-{step}").mkdir()
            rotate_checkpoints(str(tmp_path), save_total_limit=2, best_model_checkpoint=state.best_model_checkpoint)
    # step 0 is the model continued and step 50 had no checkpoint: the best saved one is step 200's
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint-200", "checkpoint-450"]
    assert state.best_metric == 35.0
    electra = TrainerState(max_steps=100)
    electra.global_step = 100
    HeldOutEvaluation._keep_if_best(args, electra, {"char_perplexity": 1.0, "rtd_loss": 0.1})
    assert electra.best_model_checkpoint is None  # the generator's perplexity does not choose an encoder


def test_the_summary_says_when_no_step_beat_the_model_continued():
    from zhbert.training.heldout import held_out_summary

    def row(step, char, word, perplexity):
        return {"step": step, "eval_char_accuracy": char, "eval_word_accuracy": word, "eval_char_perplexity": perplexity}

    # a run stopped after scoring step 100 and resumed from an earlier checkpoint scores it again: the later row counts
    worse = held_out_summary(
        [row(0, 0.2951, 0.2528, 59.1), row(100, 0.5, 0.5, 10.0), row(100, 0.2762, 0.2615, 71.6), row(300, 0.2733, 0.2647, 72.7)]
    )
    assert worse.startswith("held-out, step 0 -> 300: fill-mask 29.51% -> 27.33% of characters, 25.28% -> 26.47% of words")
    assert "perplexity 59.10 -> 72.70 (lowest at step 0); no later step reached" in worse
    better = held_out_summary([row(0, 0.29, 0.25, 59.1), row(100, 0.31, 0.27, 50.2), row(200, 0.32, 0.28, 52.0)], "run/checkpoint-100")
    assert better.endswith("perplexity 59.10 -> 52.00 (lowest at step 100); the checkpoint of the lowest is kept: run/checkpoint-100")


def test_a_loaded_masked_lm_scores_blanks_as_pretraining_logs_them(pd_heldout_file):
    import zhbert

    base = zhbert.load("base")
    heldout = read_heldout([str(pd_heldout_file)], 1200)
    scores = base.score_blanks(heldout.texts, 1200)
    assert scores == heldout_scores(base.model, base.tokenizer, heldout, max_length=base.window)
    assert scores["char_blanks"] > 150 and 0.15 < scores["char_accuracy"] < 0.9
    with pytest.raises(TypeError, match="a list of texts"):
        base.score_blanks("北京是中国的首都")
    with pytest.raises(ValueError, match="no masked-LM head"):
        zhbert.load("electra").score_blanks(heldout.texts)
