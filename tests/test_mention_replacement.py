"""`--mention-replacement`: NER training copies with entities swapped for training entities of the same type."""

from pathlib import Path

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


MODERN_NAMES = Path(__file__).resolve().parents[1] / "bench" / "data" / "modern_names.tsv"


def test_names_from_a_list_replace_only_the_types_it_lists(shared):
    """`--mention-names`: the names a copy brings in are the list's, other types stay, the text around them stays."""
    from zhbert.data.tasks import load_task_data

    data = load_task_data("ner", "msra")
    rows = data.train[:300]
    pool = {"ORG": ["字节跳动", "拼多多"], "PER": ["雷军"]}
    copies = mention_replacement(rows, data.scheme, 1, seed=4, pool=pool)
    with_listed = [r for r in rows if any(t in pool for t, _, _ in tags_to_spans(r["tags"], data.scheme))]
    assert 0.5 * len(with_listed) < len(copies) <= len(with_listed)  # a sentence with only places yields no copy
    skeletons = {_skeleton(r, data.scheme) for r in rows}
    brought = set()
    for c in copies:
        assert check_sequence(c["tags"], data.scheme) is None and _skeleton(c, data.scheme) in skeletons
        brought |= {c["text"][s:e] for t, s, e in tags_to_spans(c["tags"], data.scheme) if t in pool}
    # every place is the sentence's own; every listed name that turns up is of its type
    assert {"字节跳动", "拼多多", "雷军"} <= brought
    originals = {r["text"][s:e] for r in rows for t, s, e in tags_to_spans(r["tags"], data.scheme) if t == "LOC"}
    assert all(c["text"][s:e] in originals for c in copies for t, s, e in tags_to_spans(c["tags"], data.scheme) if t == "LOC")
    assert not any("雷军" == c["text"][s:e] for c in copies for t, s, e in tags_to_spans(c["tags"], data.scheme) if t != "PER")


def test_the_recipe_reads_the_names_file_and_says_what_it_drew(shared, tmp_path):
    from zhbert.errors import DataFormatError

    data = load_splits(
        RecipeArguments(dataset="msra", max_train_samples=300, mention_replacement=1, mention_names=str(MODERN_NAMES), seed=3), "ner"
    )
    assert any(n.startswith("mention replacement:") and "for a name of" in n and "314 ORG, 184 PER" in n for n in data.notes)
    listed = {line.split("\t")[0] for line in MODERN_NAMES.read_text(encoding="utf-8").splitlines()}
    drawn = {r["text"][s:e] for r in data.train[300:] for t, s, e in tags_to_spans(r["tags"], data.scheme) if t in ("ORG", "PER")}
    assert len(drawn & listed) > 25
    bad = tmp_path / "names.tsv"
    bad.write_text("字节跳动\tORG\n雷军\n", encoding="utf-8")
    no_type = r"names\.tsv:2: '雷军' has no entity type: write name<TAB>TYPE, TYPE one of LOC, ORG, PER \(ner-msra's types\)"
    with pytest.raises(DataFormatError, match=no_type):
        load_splits(RecipeArguments(dataset="msra", max_train_samples=50, mention_replacement=1, mention_names=str(bad)), "ner")
    bad.write_text("字节跳动\tORG\n埃隆 马斯克\tPER\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"names\.tsv:2: '埃隆 马斯克' holds whitespace, which no training sentence does"):
        load_splits(RecipeArguments(dataset="msra", max_train_samples=50, mention_replacement=1, mention_names=str(bad)), "ner")
    bad.write_text("字节跳动\tCOMPANY\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"names\.tsv:1: '字节跳动' has the type 'COMPANY'"):
        load_splits(RecipeArguments(dataset="msra", max_train_samples=50, mention_replacement=1, mention_names=str(bad)), "ner")
    with pytest.raises(ValueError, match="--mention-names gives the names --mention-replacement brings in"):
        load_splits(RecipeArguments(dataset="msra", max_train_samples=50, mention_names=str(MODERN_NAMES)), "ner")


def test_the_modern_names_list_holds_no_entity_of_a_split_the_project_scores(shared):
    """bench/data/modern_names.tsv is measured on dev splits: none of its names may be an entity there (or in a test split)."""
    from zhbert.data.tasks import NER_SOURCES, load_task_data

    listed = {line.split("\t")[0] for line in MODERN_NAMES.read_text(encoding="utf-8").splitlines()}
    assert len(listed) == 498
    for name in (*NER_SOURCES, "peoples_daily"):
        data = load_task_data("ner", name)
        for split in (data.dev, data.test):
            found = {r["text"][s:e] for r in split for _, s, e in tags_to_spans(r["tags"], data.scheme)}
            assert not found & listed, (name, sorted(found & listed)[:5])
