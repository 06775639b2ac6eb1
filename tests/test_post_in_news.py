"""The long-document dataset with its evidence in one place (``tagging/post-in-news``): a real
Weibo post hidden at a sentence boundary of a real news transcript (issue 20, question 4)."""

import random
from collections import Counter

import pytest

from zhbert.data.post_in_news import HOST_FOLDER, POST_LABELS, insert_post
from zhbert.data.source_excerpts import document_at
from zhbert.data.tasks import load_task_data
from zhbert.data.weibo import EWECT_LABELS


@pytest.fixture(scope="module")
def data():
    return load_task_data("tagging", "post-in-news")


@pytest.fixture(scope="module")
def usual():
    return load_task_data("tagging", "usual")


def test_each_document_is_a_transcript_excerpt_with_one_post_of_its_label_at_a_sentence_boundary(data, usual):
    assert data.labels == POST_LABELS
    assert (len(data.train), len(data.dev), len(data.test)) == (1000, 200, 500)
    for split_name, split in (("train", data.train), ("dev", data.dev), ("test", data.test)):
        assert Counter(r["label"] for r in split) == Counter({0: len(split) // 2, 1: len(split) // 2})
        # the post of each row comes from the same split of SMP2020-EWECT usual, with that emotion
        posts = {(r["text"].strip(), EWECT_LABELS[r["label"]]) for r in getattr(usual, split_name)}
        for r in split[:60]:
            assert (r["post"], POST_LABELS[r["label"]]) in posts
            at, post = r["position"], r["post"]
            assert r["text"][at : at + len(post)] == post
            host = r["text"][:at] + r["text"][at + len(post) :]
            assert 1000 <= len(host) <= 1200 and host in document_at(r["source"])
            assert r["source"].startswith(HOST_FOLDER + "/")
            assert at == 0 or host[at - 1] in "。！？!?" or at == len(host)
    # the evidence is spread over the whole document, not bunched at its start
    positions = [r["position"] / (len(r["text"]) - len(r["post"])) for r in data.test]
    assert 0.05 < sum(p < 0.1 for p in positions) / len(positions) < 0.2
    assert 0.3 < sum(p > 0.5 for p in positions) / len(positions) < 0.7


def test_no_transcript_or_post_is_in_two_splits(data):
    hosts = [{r["source"] for r in s} for s in (data.train, data.dev, data.test)]
    assert len(hosts[0]) == 1000 and not (hosts[0] & hosts[1] or hosts[0] & hosts[2] or hosts[1] & hosts[2])
    posts = [{r["post"] for r in s} for s in (data.train, data.dev, data.test)]
    assert not (posts[0] & posts[2] or posts[0] & posts[1])


def test_a_post_goes_in_whole_at_the_start_a_sentence_end_or_the_end():
    host = "今天天气很好。我们去公园散步！晚上回家"
    seen = set()
    for seed in range(60):
        text, at = insert_post(host, "气死我了", random.Random(seed))
        assert text.replace("气死我了", "", 1) == host
        seen.add(at)
    assert seen == {0, 7, 15, len(host)}
