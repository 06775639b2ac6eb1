"""`--mention-replacement`: NER training copies with entities swapped for training entities of the same type."""

import pytest

from zhbert.data.mention_replacement import mention_replacement, mentions_by_type
from zhbert.recipes.arguments import RecipeArguments
from zhbert.recipes.common import load_splits
from zhbert.tags import check_sequence, tags_to_spans


def _skeleton(row: dict, scheme: str) -> tuple:
    """The sentence with its entities cut out: the text between them and their types, in order."""
    parts, cursor = [], 0
    for typ, s, e in tags_to_spans(row["tags"], scheme):
        parts += [row["text"][cursor:s], typ]
        cursor = e
    return (*parts, row["text"][cursor:])


def test_copies_of_real_resume_sentences_keep_their_context_and_draw_training_mentions(shared):
    from zhbert.data.tasks import load_task_data

    data = load_task_data("ner", "resume")
    rows = data.train[:400]
    pool = mentions_by_type(rows, data.scheme)
    assert "高勇" in pool["NAME"] and "董事" in pool["TITLE"] and pool["NAME"] == sorted(pool["NAME"])
    copies = mention_replacement(rows, data.scheme, 2, seed=7)
    with_entities = sum(bool(tags_to_spans(r["tags"], data.scheme)) for r in rows)
    # about half the mentions are redrawn: most sentences with entities yield a changed copy per pass
    assert with_entities < len(copies) < 2 * with_entities
    skeletons = {_skeleton(r, data.scheme) for r in rows}
    for c in copies:
        assert len(c["tags"]) == len(c["text"]) and check_sequence(c["tags"], data.scheme) is None
        assert _skeleton(c, data.scheme) in skeletons  # only the entities changed
        for typ, s, e in tags_to_spans(c["tags"], data.scheme):
            assert c["text"][s:e] in pool[typ]  # each mention, kept or drawn, is a training mention of its type
    assert mention_replacement(rows, data.scheme, 2, seed=7) == copies
    assert mention_replacement(rows, data.scheme, 2, seed=8) != copies
    assert mention_replacement(rows, data.scheme, 0, seed=7) == []
    # one sentence alone: each mention can only be drawn as itself, and a copy identical to its sentence is left out
    assert rows[0]["text"].startswith("高勇：男，中国国籍") and mention_replacement(rows[:1], data.scheme, 3, seed=7) == []
    with pytest.raises(ValueError, match="copies must be 0 or more, got -1"):
        mention_replacement(rows, data.scheme, -1, seed=7)


def test_the_recipe_adds_the_copies_to_training_only_and_says_so(shared):
    plain = load_splits(RecipeArguments(dataset="resume", max_train_samples=300), "ner")
    data = load_splits(RecipeArguments(dataset="resume", max_train_samples=300, mention_replacement=1, seed=3), "ner")
    assert data.train[:300] == plain.train and len(data.train) > 500
    assert data.test == plain.test and data.dev == plain.dev
    assert any(n.startswith(f"mention replacement: {len(data.train) - 300:,} copies") for n in data.notes)
    with pytest.raises(ValueError, match="--mention-replacement swaps entities of the same type: ner only, not cws"):
        load_splits(RecipeArguments(dataset="pku", mention_replacement=1, max_train_samples=10), "cws")
    with pytest.raises(ValueError, match="--mention-replacement is a training option: --evaluate-only m trains nothing"):
        load_splits(RecipeArguments(dataset="resume", mention_replacement=1, evaluate_only="m"), "ner")


def test_runs_of_real_msra_names_are_tagged_one_entity_each(shared):
    from zhbert.data.mention_replacement import RUN_LENGTHS, mention_runs
    from zhbert.data.tasks import load_task_data

    data = load_task_data("ner", "msra")
    rows = data.train[:300]
    pool = mentions_by_type(rows, data.scheme)
    copies = mention_runs(rows, data.scheme, ["PER"], seed=5)
    with_people = [r for r in rows if any(t == "PER" for t, _, _ in tags_to_spans(r["tags"], data.scheme))]
    assert len(copies) == len(with_people) > 20  # one copy per sentence with a person, none for the others
    lengths = set()
    for row, copy in zip(with_people, copies):
        assert check_sequence(copy["tags"], data.scheme) is None
        before, after = tags_to_spans(row["tags"], data.scheme), tags_to_spans(copy["tags"], data.scheme)
        # exactly one person became a run: the other entities and the text around them are the sentence's own
        grown = len(after) - len(before) + 1
        assert RUN_LENGTHS[0] <= grown <= RUN_LENGTHS[1]
        lengths.add(grown)
        runs = [(t, s, e) for i, (t, s, e) in enumerate(after) if 0 < i and after[i - 1][2] == s and after[i - 1][0] == t == "PER"]
        assert len(runs) >= grown - 1  # the run's names touch, each its own entity, each a training person
        assert all(copy["text"][s:e] in pool["PER"] for t, s, e in after if t == "PER" and (t, s, e) not in before)
        assert [t for t, _, _ in before if t != "PER"] == [t for t, _, _ in after if t != "PER"]
    assert lengths == set(range(RUN_LENGTHS[0], RUN_LENGTHS[1] + 1))
    assert mention_runs(rows, data.scheme, ["PER"], seed=5) == copies and mention_runs(rows, data.scheme, ["PER"], seed=6) != copies
    with pytest.raises(ValueError, match=r"no mentions of type NAME to draw from \(types: LOC, ORG, PER\)"):
        mention_runs(rows, data.scheme, ["NAME"], seed=5)


def test_the_recipe_adds_runs_to_training_only_and_names_a_wrong_type(shared):
    plain = load_splits(RecipeArguments(dataset="resume", max_train_samples=200), "ner")
    data = load_splits(RecipeArguments(dataset="resume", max_train_samples=200, mention_runs="NAME", seed=3), "ner")
    assert data.train[:200] == plain.train and data.dev == plain.dev and data.test == plain.test
    assert any(n.startswith(f"mention runs: {len(data.train) - 200:,} copies of training sentences, one NAME entity") for n in data.notes)
    with pytest.raises(ValueError, match=r"--mention-runs PER: mention runs: no mentions of type PER to draw from \(types: .*NAME"):
        load_splits(RecipeArguments(dataset="resume", max_train_samples=200, mention_runs="PER"), "ner")
    with pytest.raises(ValueError, match="--mention-runs writes entities of one type back to back: ner only, not cws"):
        load_splits(RecipeArguments(dataset="pku", mention_runs="PER", max_train_samples=10), "cws")
    with pytest.raises(ValueError, match="--mention-runs is a training option: --evaluate-only m trains nothing"):
        load_splits(RecipeArguments(dataset="resume", mention_runs="PER", evaluate_only="m"), "ner")
