"""Character tags become token tags, and training windows are cut, so that a CRF can fit every gold
sequence: a word piece covering a whole word (``100``, ``wto``) is ``S``, and no window starts
inside a word or an entity. Before, 14% of the PKU + Weibo training windows held a sequence the
CRF forbids (B then S), which it could never learn."""

import torch

from zhbert.crf import CRF, FORBIDDEN
from zhbert.data.segmented import words_to_bmes
from zhbert.heads import HeadConfig, TaskCollator
from zhbert.recipes.common import char_tag_examples
from zhbert.tags import check_sequence, entity_types, labels_for, token_tags
from zhbert.tokenizer import encode


def test_a_piece_covering_a_whole_word_is_tagged_single(tokenizer):
    words = ["他", "买", "了", "100", "个", "苹果", "，", "iPhone15", "的", "WTO", "标准"]
    enc = encode(tokenizer, "".join(words))
    assert [s for s, _ in enc.offsets] == [0, 1, 2, 3, 6, 7, 8, 9, 10, 16, 18, 19, 22, 23]  # 100, iphone ##15, wto: pieces
    tags = token_tags(words_to_bmes(words), [s for s, _ in enc.offsets], "BMES-untyped")
    assert tags == ["S", "S", "S", "S", "S", "B", "E", "S", "B", "E", "S", "S", "B", "E"]
    # the first character's tag alone gave B, S for "100 个" and B, B for "wto 标": both forbidden
    typed = token_tags(["B-m", "M-m", "E-m", "S-q", "O"], [0, 3, 4], "BMES")
    assert typed == ["S-m", "S-q", "O"]


def test_a_word_inside_another_words_piece_joins_it():
    # "12" one piece, gold "1" | "2年": the piece takes the span it starts in, the next word keeps the rest
    assert token_tags(["S", "B", "E"], [0, 2], "BMES-untyped") == ["S", "S"]
    # BIO: a piece starting before an entity stays O, the entity starts at its first own token
    assert token_tags(["O", "B-LOC", "I-LOC", "O"], [0, 2, 3], "BIO") == ["O", "B-LOC", "O"]


def test_every_training_window_of_real_weibo_segmentation_is_a_sequence_the_crf_allows(tokenizer):
    from zhbert.data.tasks import load_task_data

    data = load_task_data("cws", "weibo")
    rows = data.train[:3000]
    examples = char_tag_examples(tokenizer, rows, data.labels, data.scheme)
    pieces = sum(1 for r in rows for s, e in encode(tokenizer, r["text"]).offsets if e - s > 1)
    assert pieces > 300  # the case this guards: many multi-character pieces in real posts
    head = HeadConfig(kind="token", labels=data.labels, scheme=data.scheme, crf=True)
    collator = TaskCollator(tokenizer, head, 34)  # 32 tokens a window: long posts are cut
    crf = CRF(data.labels, data.scheme)
    cut = 0
    for e in examples:
        spans = collator.training_spans(e["tags"])
        assert [i for a, b in spans for i in range(a, b)] == list(range(len(e["tags"])))  # each token once
        cut += len(spans) > 1
        for a, b in spans:
            window = e["tags"][a:b]
            assert check_sequence([data.labels[t] for t in window], data.scheme) is None, (e, a, b)
    assert cut > 100
    batch = collator(examples[:64])
    labels = batch["labels"][:, 1:]
    mask = labels != -100
    nll = -crf.log_likelihood(torch.zeros(*labels.shape, len(data.labels)), labels.clamp(min=0), mask)
    assert nll.max() < -FORBIDDEN / 10  # no gold path pays the forbidden-transition penalty


def test_entity_types_read_back_the_types_a_label_list_was_made_from():
    for scheme in ("BIO", "BIOES", "BMES"):
        assert entity_types(labels_for(["PER", "ORG", "LOC", "ORG"], scheme)) == ["LOC", "ORG", "PER"]
    # Resume's own labels, untyped words and O name no type
    assert entity_types(["O", "B-NAME", "I-NAME", "E-TITLE", "S-RACE"]) == ["NAME", "RACE", "TITLE"]
    assert entity_types(["B", "M", "E", "S"]) == [] and entity_types(["O"]) == []
