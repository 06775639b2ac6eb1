"""Metric code against hand-computed values."""

import pytest

from zhbert.metrics import classification_scores, entity_prf, multilabel_scores, word_prf


def test_sighan_word_f1_worked_example():
    # gold: 共同 / 创造 / 美好 / 的 / 新 / 世纪   (6 words)
    # pred: 共同 / 创造 / 美 / 好 / 的 / 新世纪   (6 words; 共同, 创造, 的 right)
    gold = [["共同", "创造", "美好", "的", "新", "世纪"]]
    pred = [["共同", "创造", "美", "好", "的", "新世纪"]]
    s = word_prf(gold, pred, train_words={"共同", "创造", "的", "新"})
    assert s["precision"] == pytest.approx(3 / 6) and s["recall"] == pytest.approx(3 / 6) and s["f1"] == pytest.approx(0.5)
    # OOV gold words: 美好, 世纪 -> neither found
    assert s["oov_rate"] == pytest.approx(2 / 6) and s["oov_recall"] == 0.0
    with pytest.raises(ValueError, match="spell different texts"):
        word_prf([["你好"]], [["你", "们"]])


def test_entity_f1_bio_and_bmes():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "I-ORG", "I-ORG"]]
    pred = [["B-PER", "I-PER", "O", "O"], ["B-ORG", "I-ORG", "O"]]
    s = entity_prf(gold, pred, "BIO")
    # 3 gold entities, 2 predicted, 1 right (PER)
    assert s["overall"]["precision"] == pytest.approx(1 / 2) and s["overall"]["recall"] == pytest.approx(1 / 3)
    assert s["per_type"]["PER"]["f1"] == 1.0 and s["per_type"]["LOC"]["f1"] == 0.0
    bmes = entity_prf([["B-NAME", "M-NAME", "E-NAME", "S-ORG"]], [["B-NAME", "M-NAME", "E-NAME", "O"]], "BMES")
    assert bmes["overall"]["precision"] == 1.0 and bmes["overall"]["recall"] == pytest.approx(0.5)


def test_classification_and_multilabel():
    s = classification_scores([0, 0, 1, 2], [0, 1, 1, 2], 3)
    assert s["accuracy"] == 0.75
    # F1: class0 2*1/(2+0+1)=2/3, class1 2*1/(2+1+0)=2/3, class2 1 -> macro 7/9
    assert s["macro_f1"] == pytest.approx(7 / 9)
    m = multilabel_scores([[0, 1], [2], []], [[0], [2, 1], []], 3)
    # tp: 0@ex0, 2@ex1 = 2; fp: 1@ex1 = 1; fn: 1@ex0 = 1 -> micro 4/6
    assert m["micro_f1"] == pytest.approx(4 / 6)
    assert m["exact_match"] == pytest.approx(1 / 3)
    # per label: 0 -> 1.0, 1 -> 0 (fp 1, fn 1), 2 -> 1.0
    assert m["macro_f1"] == pytest.approx(2 / 3)
