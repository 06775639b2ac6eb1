"""Masking properties on real People's Daily text with seeded generators."""

from collections import Counter

import pytest
import torch

from zhbert.masking import apply_80_10_10, get_masker
from zhbert.masking.units import ernie_spans, token_units, word_spans
from zhbert.tokenizer import encode

N_SENTENCES = 2000


@pytest.fixture(scope="module", params=["jieba", "rjieba"])
def pd_units(request, peoples_daily, tokenizer):
    """Units from both word-boundary backends: every masking property must hold for each."""
    if request.param == "rjieba":
        pytest.importorskip("rjieba", reason="rjieba (jieba-rs) is optional: pip install rjieba")
    rows = peoples_daily.select(range(0, 20 * N_SENTENCES, 20))
    rows = [r for r in rows if len(r["text"]) >= 8][:N_SENTENCES]
    encs = encode(tokenizer, [r["text"] for r in rows])
    out = []
    for r, enc in zip(rows, encs):
        ids = [tokenizer.cls_token_id] + list(enc.ids) + [tokenizer.sep_token_id]
        words = token_units(enc.offsets, word_spans(r["text"], backend=request.param))
        gold = [(e["start"], e["end"]) for e in r["entities"]]
        ernie = token_units(enc.offsets, [(s, e) for s, e, _ in ernie_spans(r["text"], gold_entities=gold)])
        out.append(
            {
                "text": r["text"],
                "offsets": enc.offsets,
                "gold": gold,
                "ids": torch.tensor(ids),
                "word_ids": torch.tensor([-1] + words + [-1]),
                "ernie_ids": torch.tensor([-1] + ernie + [-1]),
            }
        )
    return out


def _units(ex, masker):
    if masker.unit_column is None:
        return torch.where(ex["word_ids"] >= 0, torch.arange(len(ex["ids"])), -1)
    return ex[masker.unit_column]


@pytest.mark.parametrize("name", ["char", "wwm", "ernie", "ngram", "mixed"])
def test_rate_ratio_and_specials(pd_units, tokenizer, name):
    masker = get_masker(name)
    g = torch.Generator().manual_seed(0)
    n_units = n_sel_units = n_chars = n_sel_chars = 0
    actions = Counter()
    for ex in pd_units:
        sel, units = masker.choose(_units(ex, masker), g)  # units: those drawn for (mixed: after its split)
        inputs, labels, action = apply_80_10_10(ex["ids"], sel, units, masker.config, tokenizer.mask_token_id, len(tokenizer), g, 104)
        # special tokens never masked; labels -100 exactly where unselected
        assert not sel[0] and not sel[-1]
        assert torch.equal(labels != -100, sel)
        assert torch.equal(labels[sel], ex["ids"][sel])
        assert torch.equal(inputs[~sel], ex["ids"][~sel])
        u = units[units >= 0]
        n_units += len(set(u.tolist()))
        n_sel_units += len(set(units[sel].tolist()))
        n_chars += int((units >= 0).sum())
        n_sel_chars += int(sel.sum())
        for unit in set(units[sel].tolist()):  # one 80/10/10 decision per unit
            acts = set(action[units == unit].tolist())
            assert len(acts) == 1
            actions[acts.pop()] += 1
    # for n-gram masking the budget is in words; spans can end short of it
    rate = n_sel_units / n_units if name != "ngram" else None
    if rate is not None:
        assert abs(rate - 0.15) <= 0.015, rate
    assert 0.08 <= n_sel_chars / n_chars <= 0.25  # reported: share of masked characters
    total = sum(actions.values())
    assert abs(actions[1] / total - 0.8) < 0.03 and abs(actions[2] / total - 0.1) < 0.02 and abs(actions[3] / total - 0.1) < 0.02


def test_wwm_never_masks_part_of_a_word(pd_units):
    masker = get_masker("wwm")
    g = torch.Generator().manual_seed(1)
    for ex in pd_units[:500]:
        sel = masker.select(ex["word_ids"], g)
        for w in set(ex["word_ids"][ex["word_ids"] >= 0].tolist()):
            in_word = sel[ex["word_ids"] == w]
            assert in_word.all() or not in_word.any()


def test_mixed_masks_whole_words_and_single_characters(pd_units):
    """Every chosen unit is a whole jieba word or one character of a split word, about half of the
    chosen multi-character words whole; a split word's other characters are chosen on their own."""
    masker = get_masker("mixed")
    g = torch.Generator().manual_seed(4)
    whole = part = 0
    for ex in pd_units[:1000]:
        words = ex["word_ids"]
        sel, units = masker.choose(words, g)
        assert torch.equal(units < 0, words < 0) and not sel[0] and not sel[-1]
        for u in set(units[sel].tolist()):
            tokens = units == u
            word = set(words[tokens].tolist())
            assert len(word) == 1  # a unit never crosses a word boundary
            size = int((words == word.pop()).sum())
            if size > 1:
                if int(tokens.sum()) == size:
                    whole += 1
                else:
                    assert int(tokens.sum()) == 1
                    part += 1
    assert whole > 300 and part > 300
    # a word of n characters, split, offers n units; kept whole, one: chosen split characters outnumber
    # chosen whole words at word_prob 0.5, by about the mean length of the multi-character words
    assert 1.5 < part / whole < 3.5, (whole, part)
    a = masker.choose(pd_units[0]["word_ids"], torch.Generator().manual_seed(9))
    b = masker.choose(pd_units[0]["word_ids"], torch.Generator().manual_seed(9))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert torch.equal(get_masker("mixed", word_prob=1.0).mixed_units(words, g), words)  # all whole: wwm's units
    with pytest.raises(ValueError, match="word_prob"):
        get_masker("mixed", word_prob=1.5)


def test_ernie_covers_whole_gold_entities(pd_units):
    masker = get_masker("ernie")
    g = torch.Generator().manual_seed(2)
    checked = 0
    for ex in pd_units:
        sel = masker.select(ex["ernie_ids"], g)[1:-1]
        starts = [s for s, _ in ex["offsets"]]
        for s, e in ex["gold"]:
            toks = torch.tensor([s <= st < e for st in starts])
            if toks.any():
                picked = sel[toks]
                assert picked.all() or not picked.any(), (ex["text"], s, e)
                checked += int(picked.all())
    assert checked > 50  # many gold entities were masked, always whole


def test_ngram_lengths_follow_distribution(pd_units):
    masker = get_masker("ngram", ngram_probs=(0.6, 0.3, 0.1))
    g = torch.Generator().manual_seed(3)
    draws, placed = Counter(), Counter()
    long_examples = [ex for ex in pd_units if int((ex["word_ids"] >= 0).sum()) >= 40]
    for ex in long_examples:
        sel = masker.select(ex["word_ids"], g)
        draws.update(masker.last_draws)
        placed.update(masker.last_lengths)
        # placed spans cover exactly the selected words
        assert sum(masker.last_lengths) == len(set(ex["word_ids"][sel].tolist()))
    total = sum(draws.values())
    assert total > 500
    for n, p in zip((1, 2, 3), (0.6, 0.3, 0.1)):
        assert abs(draws[n] / total - p) < 0.03, (n, draws)
    # the budget cuts some final spans short, so placed spans skew a little shorter
    assert abs(placed[1] / sum(placed.values()) - 0.6) < 0.12 and placed[3] > 0


def test_same_seed_same_masks(pd_units):
    masker = get_masker("wwm")
    ex = pd_units[0]
    a = masker.select(ex["word_ids"], torch.Generator().manual_seed(7))
    b = masker.select(ex["word_ids"], torch.Generator().manual_seed(7))
    assert torch.equal(a, b)


def test_unknown_strategy_lists_choices():
    with pytest.raises(ValueError, match="char, wwm, ernie, ngram, mixed"):
        get_masker("span")


def test_the_collator_masks_mixed_units_with_one_action_each(pd_units, tokenizer):
    """Pretraining batches: the collator draws 80/10/10 over the units the strategy chose (a split
    word's characters each on their own), and the same example index gives the same batch."""
    from zhbert.training.mlm_collator import MaskingCollator

    examples = [{"input_ids": ex["ids"].tolist(), "word_ids": ex["word_ids"].tolist(), "idx": i} for i, ex in enumerate(pd_units[:300])]
    collator = MaskingCollator(tokenizer, get_masker("mixed"), seed=5)
    batch = collator(examples)
    assert all(torch.equal(batch[k], v) for k, v in collator(examples).items())
    split_words = whole_words = 0
    for row, ex in enumerate(examples):
        labels, words = batch["labels"][row, : len(ex["input_ids"])], torch.tensor(ex["word_ids"])
        chosen = labels != -100
        for w in set(words[chosen].tolist()):
            n_chosen, size = int((chosen & (words == w)).sum()), int((words == w).sum())
            whole_words += size > 1 and n_chosen == size
            split_words += n_chosen < size
    assert whole_words > 100 and split_words > 100
    assert 0.10 < collator.stats["masked"] / collator.stats["tokens"] < 0.20
