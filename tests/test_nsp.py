"""Next-sentence and sentence-order prediction pairs on real People's Daily paragraphs, and NSP / SOP runs."""

import subprocess
import sys

import pytest
from datasets import Dataset
from pretrain_cli import TINY, pretrain_cli


@pytest.fixture(scope="module")
def paragraphs():
    from zhbert.data import read_peoples_daily

    pd = read_peoples_daily(split_sentences=False)
    return [t for t in pd.select(range(0, 3000, 5))["text"] if t]


@pytest.fixture(scope="module")
def pairs(paragraphs, tokenizer):
    from zhbert.training.nsp_pairs import pair_segments
    from zhbert.training.pretrain_data import prepare

    prepared = prepare(Dataset.from_dict({"text": paragraphs}), tokenizer, "wwm", num_proc=1)
    return prepared, pair_segments(prepared, tokenizer, max_length=64, seed=3)


def _segments(ex, tokenizer):
    ids, types = ex["input_ids"], ex["token_type_ids"]
    assert ids[0] == tokenizer.cls_token_id and ids[-1] == tokenizer.sep_token_id
    seps = [k for k, t in enumerate(ids) if t == tokenizer.sep_token_id]
    assert len(seps) == 2, "exactly [CLS] A [SEP] B [SEP]"
    a, b = ids[1 : seps[0]], ids[seps[0] + 1 : -1]
    assert types == [0] * (seps[0] + 1) + [1] * (len(ids) - seps[0] - 1)
    return a, b


def test_pairs_are_well_formed_and_balanced(pairs, tokenizer):
    prepared, p = pairs
    labels = p["next_sentence_label"]
    assert 0.4 < sum(labels) / len(labels) < 0.6  # 50% random next
    for ex in p:
        a, b = _segments(ex, tokenizer)
        assert a and b and len(ex["input_ids"]) <= 64
        assert len(ex["word_ids"]) == len(ex["input_ids"])
        assert all(u == -1 for u, t in zip(ex["word_ids"], ex["input_ids"]) if t in (tokenizer.cls_token_id, tokenizer.sep_token_id))


def test_true_next_is_the_continuation_and_nothing_is_dropped(pairs, tokenizer):
    prepared, p = pairs
    docs = [" ".join(map(str, ids)) for ids in prepared["input_ids"]]
    own_tokens = 0
    for ex in p:
        a, b = _segments(ex, tokenizer)
        own_tokens += len(a)
        if ex["next_sentence_label"] == 0:
            own_tokens += len(b)
            joined = " ".join(map(str, a + b))
            assert any(joined in d for d in docs), "a true next segment continues A in the same document"
    # every token of every document is in exactly one A or true-next B
    assert own_tokens == sum(len(ids) for ids in prepared["input_ids"])


def test_sop_pairs_are_one_document_in_or_out_of_order(paragraphs, tokenizer):
    from zhbert.training.nsp_pairs import pair_segments
    from zhbert.training.pretrain_data import prepare

    prepared = prepare(Dataset.from_dict({"text": paragraphs}), tokenizer, "char", num_proc=1)
    p = pair_segments(prepared, tokenizer, max_length=64, seed=3, objective="sop")
    labels = p["next_sentence_label"]
    assert 0.4 < sum(labels) / len(labels) < 0.6  # half the pairs swapped
    docs = [" ".join(map(str, ids)) for ids in prepared["input_ids"]]
    tokens = 0
    for ex in p:
        a, b = _segments(ex, tokenizer)
        first, second = (a, b) if ex["next_sentence_label"] == 0 else (b, a)
        assert first and len(ex["input_ids"]) <= 64
        joined = " ".join(map(str, first + second))
        assert any(joined in d for d in docs), "SOP never mixes documents: swapped back, B continues A"
        tokens += len(a) + len(b)
    assert tokens == sum(len(ids) for ids in prepared["input_ids"])  # every token once, none from elsewhere
    # the same seed gives the same pairs; the NSP pairs of that seed are different ones
    assert pair_segments(prepared, tokenizer, max_length=64, seed=3, objective="sop")["input_ids"] == p["input_ids"]
    assert pair_segments(prepared, tokenizer, max_length=64, seed=3)["input_ids"] != p["input_ids"]
    with pytest.raises(ValueError, match="unknown pair objective 'nspp'"):
        pair_segments(prepared, tokenizer, objective="nspp")


def test_ernie_units_survive_pairing(paragraphs, tokenizer):
    # regression: pairing kept only word ids, so `--masking ernie --nsp` died with KeyError 'ernie_ids'
    from zhbert.training.nsp_pairs import pair_segments
    from zhbert.training.pretrain_data import prepare

    prepared = prepare(Dataset.from_dict({"text": paragraphs[:120]}), tokenizer, "ernie", num_proc=1)
    p = pair_segments(prepared, tokenizer, max_length=64, seed=3)
    n_merged = 0
    for ex in p:
        words, ernie = ex["word_ids"], ex["ernie_ids"]
        assert len(ernie) == len(ex["input_ids"])
        assert all((w == -1) == (e == -1) for w, e in zip(words, ernie))
        units = sorted(set(ernie) - {-1})
        assert units == list(range(len(units)))  # renumbered per example, in order of appearance
        n_merged += len(set(words) - {-1}) - len(set(ernie) - {-1})
    assert n_merged > 0  # entities and phrases join several words


@pytest.mark.parametrize("objective", ["--nsp", "--sop"])
def test_pretrain_with_a_pair_objective_saves_a_pretraining_model(tmp_path, paragraphs, objective):
    import json

    from transformers import AutoModelForMaskedLM, BertForPreTraining

    corpus = tmp_path / "pd.txt"
    corpus.write_text("\n".join(paragraphs[:200]) + "\n", encoding="utf-8")
    out = tmp_path / "pairs"
    r = pretrain_cli("--corpus", corpus, "--output", out, objective, *TINY, "--masking", "ernie", "--max-steps", "4", "--save-steps", "4")
    assert r.returncode == 0, r.stderr[-3000:]
    model, info = BertForPreTraining.from_pretrained(str(out / "final"), output_loading_info=True)
    assert not info["missing_keys"]  # the pair head was trained and saved
    assert type(AutoModelForMaskedLM.from_pretrained(str(out / "final"))).__name__ == "BertForMaskedLM"
    # zhbert.load reads it for fill-mask without a warning about the pooler and pair head it does not use
    from zhbert.api import _fill_mask_class

    _, info = _fill_mask_class().from_pretrained(str(out / "final"), output_loading_info=True)
    assert not info["unexpected_keys"] and not info["missing_keys"]
    saved = json.loads((out / "final" / "zhbert_pretrain.json").read_text())
    assert (saved["nsp"], saved["sop"]) == (objective == "--nsp", objective == "--sop")


def test_nsp_and_sop_together_are_refused(tmp_path):
    cmd = [sys.executable, "-m", "zhbert", "pretrain", "--corpus", str(tmp_path), "--output", str(tmp_path / "x"), "--nsp", "--sop"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "--nsp and --sop both train the one pair head" in r.stderr, r.stderr[-2000:]
