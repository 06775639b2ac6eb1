"""`--document-context`: character taggers trained and scored on windows of consecutive whole
sentences (real Resume sentences, in file order), each sentence's spans cut back out."""

import pytest

from zhbert.heads import HeadConfig, TokenTags, new_head
from zhbert.recipes.common import char_tag_examples, consecutive_groups, document_examples, predict_test_spans
from zhbert.tokenizer import encode


def test_groups_are_greedy_runs_of_consecutive_items_within_the_budget():
    assert consecutive_groups([30, 40, 50, 20, 90, 10], 100) == [range(0, 2), range(2, 4), range(4, 6)]
    # an item over the budget is a group of its own, and the next one starts afresh
    assert consecutive_groups([10, 150, 20, 30], 100) == [range(0, 1), range(1, 2), range(2, 4)]
    assert consecutive_groups([], 100) == []


def test_resume_sentences_pack_into_windows_keeping_every_token_and_tag_in_order(shared, tokenizer):
    from zhbert.data.tasks import load_task_data

    data = load_task_data("ner", "resume")
    rows = data.train[:120]
    assert rows[0]["text"] == "高勇：男，中国国籍，无境外居留权，"  # a resume: its first sentences in file order
    examples = char_tag_examples(tokenizer, rows, data.labels, data.scheme)
    docs = document_examples(examples, 62)
    for key in ("input_ids", "tags"):
        assert [x for e in docs for x in e[key]] == [x for e in examples for x in e[key]]
    lengths = [len(e["input_ids"]) for e in examples]
    assert len(examples) * 3 // 4 > len(docs) > len(examples) // 3  # Resume sentences average 30 tokens: 1-2 per window
    # each window holds whole sentences within 62 tokens, and the next sentence would not have fitted
    cursor = 0
    for d in docs:
        n, used = 0, 0
        while cursor + n < len(lengths) and used + lengths[cursor + n] <= len(d["input_ids"]):
            used += lengths[cursor + n]
            n += 1
        assert used == len(d["input_ids"]) and (used <= 62 or n == 1)
        cursor += n
        if cursor < len(lengths):
            assert used + lengths[cursor] > 62
    assert cursor == len(lengths)
    with pytest.raises(ValueError, match="weighted extra sentences cannot share it"):
        document_examples([{**examples[0], "weight": 0.5}, examples[1]], 62)


def test_spans_read_in_a_document_are_cut_back_to_their_sentences(shared, tokenizer, tiny_encoder, monkeypatch):
    """A span the joined read puts across a line break comes back as two spans, one per sentence."""
    import zhbert.heads
    from zhbert.data.tasks import load_task_data

    data = load_task_data("ner", "resume")
    rows = data.test[:4]
    texts = [r["text"] for r in rows]
    model = new_head(str(tiny_encoder), HeadConfig(kind="token", labels=data.labels, scheme=data.scheme))
    read = []

    def joined_read(model, tokenizer, joined, batch_size=16):
        read.extend(joined)
        out = []
        for enc in encode(tokenizer, joined):
            tags = ["O"] * len(enc)
            br = enc.text.find("\n")
            # NAME over the last two tokens before the first line break and the first two after it
            first = next(k for k, (s, _) in enumerate(enc.offsets) if s > br) if br >= 0 else None
            if first is not None:
                tags[first - 2 : first + 2] = ["B-NAME", "M-NAME", "M-NAME", "E-NAME"]
            out.append(TokenTags(enc, tuple(tags)))
        return out

    monkeypatch.setattr(zhbert.heads, "predict_tags", joined_read)
    got_texts, spans = predict_test_spans(model, tokenizer, data, rows, documents=True)
    assert got_texts == texts and len(spans) == 4
    # the two short opening sentences (常建良，男，/ 1963年出生，...) share a window; the two long ones have one each
    assert read == [texts[0] + "\n" + texts[1], texts[2], texts[3]]
    n0 = len(texts[0])
    assert spans[0] == [("NAME", n0 - 2, n0)] and texts[0][n0 - 2 :] == "男，"
    assert spans[1] == [("NAME", 0, 5)] and texts[1][:5] == "1963年"  # two tokens after the break: 1963 is one
    assert spans[2] == spans[3] == []


def test_the_ner_recipe_trains_and_scores_documents_and_saves_a_packed_reader(shared, tiny_encoder, tmp_path):
    from zhbert.recipes import RECIPES

    recipe = RECIPES["ner"]
    common = dict(dataset="resume", preset="tiny", window=64, crf=True, document_context=True)
    trained = recipe.run(recipe.arguments(encoder=str(tiny_encoder), output_dir=str(tmp_path / "t"), **common))
    assert trained["head"]["window_align"] == "packed"
    assert "document context: consecutive sentences of each split packed into windows of up to 62 tokens" in trained["notes"]
    again = recipe.run(recipe.arguments(evaluate_only=str(tmp_path / "t" / "model"), output_dir=str(tmp_path / "e"), **common))
    assert again["metrics"] == trained["metrics"]
    with pytest.raises(ValueError, match="--window-align sentence contradicts it"):
        recipe.run(recipe.arguments(encoder=str(tiny_encoder), output_dir=str(tmp_path / "x"), window_align="sentence", **common))
    tagging = RECIPES["tagging"]
    with pytest.raises(ValueError, match="token heads only, not a sequence head"):
        tagging.run(tagging.arguments(dataset="usual", preset="tiny", document_context=True, output_dir=str(tmp_path / "y")))
