"""bench/data/everyday_requests.tsv: request pairs written for this project, read by bench/matching_transfer.py."""

import collections

import pytest


def test_each_request_has_a_paraphrase_and_a_near_worded_different(repo_script):
    module = repo_script("bench/matching_transfer.py")
    rows = module.read_requests()
    assert len(rows) == 480 and len({k for k, *_ in rows}) == 24
    assert len({(a, b) for _, a, b, _ in rows}) == 480  # no pair twice
    by_kind = collections.Counter((k, same) for k, _, _, same in rows)
    assert set(by_kind.values()) == {10}  # ten paraphrases and ten differents of every kind
    # every first text is asked twice: once against a rewording, once against a text one slot away
    firsts = collections.Counter((k, a) for k, a, _, _ in rows)
    assert set(firsts.values()) == {2}
    assert ("home", "打开客厅的灯", "打开卧室的灯", False) in rows and ("home", "打开客厅的灯", "把客厅的灯开一下", True) in rows
    # the bench's own four everyday pairs stay unseen by a head trained on these
    texts = {t for _, a, b, _ in rows for t in (a, b)}
    assert not texts & {t for pair, _ in module.EVERYDAY for t in pair}


def test_a_malformed_request_line_is_named(repo_script, tmp_path):
    bad = tmp_path / "requests.tsv"
    bad.write_text("alarm\t叫我起床\t叫醒我\tparaphrase\nalarm\t叫我起床\t叫醒我\tsame\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=rf"{bad}:2: expected KIND<TAB>TEXT<TAB>TEXT<TAB>paraphrase\|different"):
        repo_script("bench/matching_transfer.py").read_requests(bad)


def test_a_trained_model_is_asked_every_request_without_training(repo_script, capsys):
    import re

    repo_script("bench/matching_transfer.py").main(["--ask-only", "matching"])
    row = re.search(r"^\| matching \| (\d) / 4 \| ([\d.]+) \((\d+) / (\d+)\) \|$", capsys.readouterr().out, re.M)
    right, acc, found_same, found_different = int(row[1]), float(row[2]), int(row[3]), int(row[4])
    # all 480 pairs asked: the accuracy is the mean of the two classes' shares (240 pairs each)
    assert 0 <= right <= 4 and abs(acc - (found_same + found_different) / 2) <= 1
    assert any(abs(acc - 100 * k / 480) < 0.05 for k in range(481))
