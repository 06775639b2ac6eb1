"""NER sources in one type set (PER/LOC/ORG) and the leave-one-source-out datasets built on them:
real rows of each source mapped as documented, the left-out source never in training."""

from __future__ import annotations

import pytest

from zhbert.data.ner_sources import to_shared_types
from zhbert.data.tasks import NER_SOURCES, load_task_data
from zhbert.tags import tags_to_spans


def _entities(row):
    return [(row["text"][a:b], t) for t, a, b in tags_to_spans(row["tags"], "BIO")]


def _first(rows, text_part):
    return next(r for r in rows if text_part in r["text"])


def test_real_rows_keep_their_names_and_drop_the_other_types(shared):
    cluener = load_task_data("ner", "cluener")
    row = _first(cluener.dev, "彭小军认为，国内银行现在走的是台湾的发卡模式")
    (mapped,) = to_shared_types([row], "cluener", "BIO")
    assert _entities(mapped) == [("彭小军", "PER"), ("台湾", "LOC")] and mapped["criterion"] == "cluener"
    weibo = load_task_data("ner", "weibo")
    nominal = next(r for r in weibo.train if any(t.endswith(".NOM") for t in r["tags"]))
    assert all(t.endswith(("PER", "LOC", "ORG")) or t == "O" for t in to_shared_types([nominal], "weibo", "BIO")[0]["tags"])
    resume = load_task_data("ner", "resume")
    row = _first(resume.train, "高勇：男，中国国籍")
    kinds = {t for _, t in _entities(to_shared_types([row], "resume", "BMES")[0])}
    assert kinds == {"PER"}  # 高勇; 中国国籍 (CONT) and the titles are not among the three types


@pytest.mark.parametrize("left_out", ["cluener", "weibo"])
def test_the_left_out_source_is_scored_and_never_trained_on(shared, left_out):
    data = load_task_data("ner", f"sources-minus-{left_out}")
    assert data.eval_split == "dev" and data.labels == ["O", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-PER", "I-PER"]
    assert {r["criterion"] for r in data.train} == set(NER_SOURCES) - {left_out}
    assert not any("criterion" in r for r in data.test)  # a head with criteria reads them under its default, as a user's text
    trained = {r["text"] for r in data.train}
    assert not any(r["text"] in trained for r in data.test[:500])
    assert left_out not in {r["criterion"] for r in data.dev}


def test_all_sources_in_one_shuffled_training_set(shared):
    data = load_task_data("ner", "sources")
    assert {r["criterion"] for r in data.train} == set(NER_SOURCES) == {"msra", "cluener", "weibo", "resume"}
    assert {r["criterion"] for r in data.train[:2000]} == set(NER_SOURCES)  # shuffled: the first rows sample every source
    # People's Daily NER is MSRA's own text, not a source of its own
    msra = {r["text"] for r in data.train if r["criterion"] == "msra"}
    pd_dev = [r["text"] for r in load_task_data("ner", "peoples_daily").dev]
    assert sum(t in msra for t in pd_dev) > 0.8 * len(pd_dev)


def test_a_head_with_one_standard_per_source_scores_the_left_out_one(shared, tiny_encoder, tmp_path):
    import zhbert

    record = zhbert.train(
        "ner", dataset="sources-minus-resume", criteria="msra,cluener,weibo", encoder=str(tiny_encoder), preset="tiny",
        output_dir=str(tmp_path),
    )  # fmt: skip
    assert record["scored_on"] == "dev" and 0 <= record["score"] <= 1
    assert zhbert.load(str(tmp_path / "model")).model.head.criteria == ["msra", "cluener", "weibo"]


@pytest.mark.parametrize("source, split", [("weibo", "test"), ("resume", "test"), ("cluener", "dev")])
def test_each_source_alone_in_the_three_types(shared, source, split):
    data = load_task_data("ner", f"{source}-per-loc-org")
    own = load_task_data("ner", source)
    assert data.labels == ["O", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-PER", "I-PER"] and data.eval_split == split
    assert [r["text"] for r in data.test] == [r["text"] for r in (own.dev if split == "dev" else own.test)]
