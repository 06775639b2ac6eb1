import torch

from zhbert.heads.thresholds import apply_thresholds, tune_thresholds


def test_thresholds_by_hand():
    probs = torch.tensor([[0.9, 0.2], [0.6, 0.35], [0.4, 0.3], [0.1, 0.1]])
    gold = torch.tensor([[1, 1], [1, 1], [0, 0], [0, 0]])
    t = tune_thresholds(probs, gold)
    # label 0: any threshold in (0.4, 0.6] is perfect; 0.5 is nearest the default
    assert t[0] == 0.5
    # label 1: gold rows have 0.2 and 0.35 but row 2 has 0.3 -> best F1 0.8 at t = 0.15 (3 predicted, 2 right)
    assert abs(t[1] - 0.15) < 1e-6
    assert apply_thresholds(probs, t).tolist() == [[True, True], [True, True], [False, True], [False, False]]


def test_label_absent_from_dev_keeps_default():
    assert tune_thresholds(torch.tensor([[0.7], [0.2]]), torch.tensor([[0], [0]])) == [0.5]
