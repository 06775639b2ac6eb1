"""A dev split of entities the training part never shows (``hold_out_by_entity``, dataset ``ner/msra-unseen``)."""

from collections import Counter

from seqeval.metrics.sequence_labeling import get_entities


def _keys(row: dict) -> set[tuple[str, str]]:
    return {(row["text"][a : b + 1], kind) for kind, a, b in get_entities(list(row["tags"]))}


def test_held_out_msra_entities_never_occur_in_the_training_part(shared):
    from zhbert.data.tasks import hold_out_by_entity, load_task_data

    rows = load_task_data("ner", "msra").train[:3000]
    train, dev, held = hold_out_by_entity(rows, 0.2)
    # a partition of the real sentences, each part in its original order
    dev_ids = set(map(id, dev))
    assert [id(r) for r in rows if id(r) not in dev_ids] == list(map(id, train))
    assert [id(r) for r in rows if id(r) in dev_ids] == list(map(id, dev))
    in_train = set().union(*map(_keys, train))
    once = [k for k, n in Counter(k for r in rows for k in _keys(r)).items() if n == 1]
    assert len(held) == int(len(once) * 0.2) > 100  # a fifth of the once-seen entities of 3,000 sentences
    assert held <= set(once)
    assert not held & in_train  # the point of the split: none of them is seen in training
    assert all(_keys(r) & held for r in dev)  # and every dev sentence holds one
    assert 0.02 < len(dev) / len(rows) < 0.15
    # other entities of the dev sentences stay seen when training has them: the mix is not all unseen
    assert any(k in in_train for r in dev for k in _keys(r))
    again = hold_out_by_entity(rows, 0.2)
    assert again[2] == held and hold_out_by_entity(rows, 0.2, seed=14)[2] != held


def test_msra_unseen_keeps_msras_test_split_and_says_how_dev_was_drawn(shared):
    from zhbert.data.tasks import load_task_data

    msra, unseen = load_task_data("ner", "msra"), load_task_data("ner", "msra-unseen")
    assert unseen.test == msra.test and unseen.labels == msra.labels
    assert len(unseen.train) + len(unseen.dev) == len(msra.train) + len(msra.dev) == 50_658
    assert "none of them in train" in unseen.notes[0] and f"{len(unseen.dev):,} sentences" in unseen.notes[0]
