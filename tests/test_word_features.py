"""Lexicon (SoftLexicon) and bigram features in token heads: matching, save/load, prefer."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

import zhbert
from zhbert.errors import ModelLoadError
from zhbert.heads import HeadConfig, load_head, new_head, predict_tags, save_head
from zhbert.lexicon import SETS, TokenTrie, _key, unique_first, unique_inverse, unique_values, word_token_ids


def _head(**kw) -> HeadConfig:
    return HeadConfig(kind="token", labels=["B", "M", "E", "S"], scheme="BMES-untyped", lexicon="jieba", lexicon_dim=8, **kw)


def test_lexicon_sets_on_a_real_sentence(tiny_encoder, tokenizer):
    model = new_head(tiny_encoder, _head())
    lex = model.word_features.lexicon
    assert len(lex) > 300_000  # jieba's dict.txt, less the words the vocabulary cannot read
    text = "研究生命起源的科学家们"
    ids = [tokenizer.cls_token_id, *tokenizer(text, add_special_tokens=False)["input_ids"], tokenizer.sep_token_id]
    m = lex.match([ids], [len(ids)])
    member = {(int(p) - 1, SETS[int(s)]) for p, s in zip(m.positions, m.sets)}  # character index, set
    assert (0, "B") in member and (1, "E") in member  # 研究
    assert (2, "B") in member and (3, "E") in member  # 生命
    assert (1, "M") in member and (2, "E") in member  # 研究生, the word a dictionary cut would wrongly take
    assert (7, "B") in member and (8, "M") in member and (9, "E") in member  # 科学家
    assert all(0 <= p < len(ids) for p in m.positions)


def test_lexicon_matches_list_every_word_as_its_sets(tiny_encoder, tokenizer, pd_sentences):
    """The memberships are each matched word's tokens in the order the feature sums add them: by
    row, by last token, the longest word first (an Aho-Corasick automaton's order, here
    ``pyahocorasick`` over the same words as the independent reference), each word as B, E, then
    the M's between, or S for a one-token word."""
    import ahocorasick

    lex = new_head(tiny_encoder, _head()).word_features.lexicon
    ids = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in pd_sentences[:8]]
    rows = [[tokenizer.cls_token_id, *i, tokenizer.sep_token_id] for i in ids]
    lengths = [len(r) - 1 for r in rows]  # the last token ([SEP]) outside the row, as padding would be
    lengths[3] = 0  # an empty row
    m = lex.match(rows, lengths)
    automaton = ahocorasick.Automaton()
    for e, row in zip(lex.dictionary, word_token_ids([e.word for e in lex.dictionary], tokenizer)):
        k = lex.index_of(row) if tokenizer.unk_token_id not in row else None
        if k is not None:
            automaton.add_word(_key(row), (k, len(row)))
    automaton.make_automaton()
    expected = []
    for r, (row, n) in enumerate(zip(rows, lengths)):
        for end, (k, size) in automaton.iter(_key(row[:n])):
            start = end - size + 1
            cells = [(start, 3)] if start == end else [(start, 0), (end, 2), *((p, 1) for p in range(start + 1, end))]
            expected += [(r, p, s, k) for p, s in cells]
    got = list(zip(m.rows.tolist(), m.positions.tolist(), m.sets.tolist(), m.words.tolist()))
    assert len(got) > 100 and got == expected
    assert all(p < n for r, p, _, _ in got for n in [lengths[r]])
    assert 3 not in m.rows.tolist()


def test_token_trie_finds_every_word_within_its_row():
    words = [[5, 6], [5], [6, 7, 8], [7, 8], [9, 9, 9], [4]]
    trie = TokenTrie(words, vocab=10)
    tokens = np.array([5, 6, 7, 8, 9, 9, 9, -1, 5, 6, 12, 4], dtype=np.int64)
    limit = np.array([5] * 5 + [12] * 7)  # row 0: tokens 0-4; row 1: 5-11 (so 9 9 9 crosses the edge and is not found)
    start, size, word = trie.find_all(tokens, limit)
    found = sorted(zip(start.tolist(), size.tolist(), word.tolist()))
    assert found == [(0, 1, 1), (0, 2, 0), (1, 3, 2), (2, 2, 3), (8, 1, 1), (8, 2, 0), (11, 1, 5)]
    assert trie.find([6, 7, 8]) == 2 and trie.find([6, 7]) is None and trie.find([]) is None and trie.find([10]) is None
    with pytest.raises(ValueError, match=r"token ids must lie in \[0, 10\)"):
        TokenTrie([[3, 10]], vocab=10)
    with pytest.raises(ValueError, match="word 1 has no tokens"):
        TokenTrie([[3], []], vocab=10)
    empty = TokenTrie([], vocab=10)
    assert all(len(a) == 0 for a in empty.find_all(tokens, limit)) and empty.find([5]) is None


def test_nested_user_words_over_a_run_of_one_character_stay_bounded(tokenizer, caplog):
    """A user dictionary of 啊, 啊啊, ... (100 nested words) over a run of 啊 made every token a member
    of thousands of words (2.5 GB and 90 s for 100,000 characters with cws-fast): words past
    MAX_MATCH_TOKENS join no feature, said once, and every shorter word matches as before."""
    import logging

    from zhbert.dictionary import read_dictionary
    from zhbert.lexicon import MAX_MATCH_TOKENS, TokenLexicon

    nested = read_dictionary(["啊" * k for k in range(1, 101)])
    with caplog.at_level(logging.WARNING, logger="zhbert.lexicon"):
        lex = TokenLexicon(nested, tokenizer, 4096)
    assert f"68 word(s) of more than {MAX_MATCH_TOKENS} tokens join no lexicon feature" in caplog.text
    row = tokenizer("啊" * 200, add_special_tokens=False)["input_ids"]
    m = lex.match([row], [len(row)])
    per_token = np.bincount(m.positions, minlength=len(row))
    assert per_token.max() <= sum(range(1, MAX_MATCH_TOKENS + 1))  # was 5,050 at the middle of the run
    assert len(set(m.words.tolist())) == MAX_MATCH_TOKENS and lex._sizes[m.words].max() == MAX_MATCH_TOKENS


def test_prediction_reads_the_cached_word_table_exactly_as_training_computes_the_features(tiny_encoder, tokenizer, pd_sentences):
    """Without gradients the lexicon vectors come from a table of every word's weighted vector;
    it must give the training path's features bit for bit, and follow the weights when they move."""
    torch.manual_seed(0)
    wf = new_head(tiny_encoder, _head(bigram_dim=8)).word_features
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    rows = [[cls, *tokenizer(t, add_special_tokens=False)["input_ids"][:40], sep] for t in pd_sentences[:16]]
    ids = torch.zeros(len(rows), max(map(len, rows)), dtype=torch.long)
    for r, row in enumerate(rows):
        ids[r, : len(row)] = torch.tensor(row)
    mask = (ids != 0).long()
    with torch.no_grad():
        cached = wf(ids, mask)
    trained = wf(ids, mask).detach()  # gradients on: the features computed word by word
    assert torch.equal(cached, trained)
    with torch.no_grad():
        wf.tag_embeddings.weight.add_(1.0)  # an optimiser step writes in place, as this does
        moved = wf(ids, mask)
    assert torch.equal(moved, wf(ids, mask).detach()) and not torch.equal(moved, cached)


def test_lexicon_head_round_trips_bit_for_bit(tiny_encoder, tokenizer, tmp_path, pd_sentences):
    torch.manual_seed(0)
    model = new_head(tiny_encoder, _head(bigram_dim=8, crf=True, bilstm_layers=1))
    with torch.no_grad():  # away from the initial values, so a weight left behind would show
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    save_head(model, tokenizer, tmp_path / "m")
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert config["architectures"] == ["ZhBertForTask"]  # zhbert-only: plain transformers cannot compute the features
    assert len(config["zhbert_head"]["lexicon_sha256"]) == 64
    from zhbert.agreement import compare
    from zhbert.model_info import describe

    expected = "encoder only (zhbert-only head: lexicon jieba, bigrams 8, a CRF over the tags, a BiLSTM over the encoder)"
    assert describe(str(tmp_path / "m"))["plain_transformers"] == expected
    with pytest.raises(ValueError, match="zhbert-only head"):
        compare("m", tmp_path / "m", ["北京"])
    loaded = load_head(tmp_path / "m")
    a, b = model.state_dict(), loaded.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    texts = pd_sentences[:12]
    assert [p.tags for p in predict_tags(model.eval(), tokenizer, texts)] == [p.tags for p in predict_tags(loaded, tokenizer, texts)]


def test_a_task_folder_starts_another_task(tiny_encoder, tokenizer, tmp_path):
    """Intermediate-task transfer (`--encoder ner` for Weibo NER): the encoder and the word-feature
    tables of a trained task model carry over bit for bit; its output layer and CRF start anew,
    whether the new labels differ in number or only in meaning."""
    torch.manual_seed(0)
    first = new_head(tiny_encoder, _head(crf=True))
    with torch.no_grad():
        for p in first.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    save_head(first, tokenizer, tmp_path / "first")
    old = first.state_dict()
    typed = ["O", "B-PER", "I-PER"]
    for labels, scheme in ((typed, "BIO"), (["S", "E", "M", "B"], "BMES-untyped")):
        head = HeadConfig(kind="token", labels=labels, scheme=scheme, crf=True, lexicon="jieba", lexicon_dim=8)
        second = new_head(tmp_path / "first", head)
        new = second.state_dict()
        kept = [k for k in new if k.startswith(("bert.encoder.", "bert.embeddings.", "word_features."))]
        assert kept and all(torch.equal(new[k], old[k]) for k in kept)
        assert second.head.labels == labels and not second.crf.transitions.detach().any()
        assert not torch.equal(new["classifier.bias"], old["classifier.bias"][: len(labels)])
        assert not new["classifier.bias"].any()


def test_carry_output_layer_continues_the_same_task_and_refuses_another(tiny_encoder, tokenizer, tmp_path, pd_sentences):
    """`--carry-output-layer` (a student's later stages): every weight of a folder of the same task,
    output layer and CRF included, carries over bit for bit, so the new head tags as the saved one
    did before any training; other tags, another order, no CRF, other features or a plain encoder
    are refused by name."""
    torch.manual_seed(0)
    first = new_head(tiny_encoder, _head(crf=True, bigram_dim=4, bigram_buckets=64))
    with torch.no_grad():
        for p in first.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    save_head(first, tokenizer, tmp_path / "first")
    same = _head(crf=True, bigram_dim=4, bigram_buckets=64)
    second = new_head(tmp_path / "first", same, carry_output_layer=True)
    old, new = first.state_dict(), second.state_dict()
    assert old.keys() == new.keys() and all(torch.equal(old[k], new[k]) for k in old)
    assert second.crf.transitions.detach().any()
    assert {"classifier.weight", "crf.transitions"} <= set(second.carried_head_parameters)
    texts = pd_sentences[:8]
    assert [p.tags for p in predict_tags(first.eval(), tokenizer, texts)] == [p.tags for p in predict_tags(second.eval(), tokenizer, texts)]
    # without the flag the same folder's output layer starts anew (intermediate-task transfer)
    assert not new_head(tmp_path / "first", same).crf.transitions.detach().any()
    # a folder saved before a head setting existed (its config.json lacks the key) carries over as
    # if it held the default: a stage-2 student saved before `bilstm_skip` was refused by stage 3
    config_path = tmp_path / "first" / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    for name in ("bilstm_hidden", "bilstm_skip"):
        del config["zhbert_head"][name]
    config_path.write_text(json.dumps(config), encoding="utf-8")
    older = new_head(tmp_path / "first", same, carry_output_layer=True).state_dict()
    assert all(torch.equal(old[k], older[k]) for k in old)
    refused = (
        (replace(same, labels=["S", "E", "M", "B"]), r"its head has labels=\['B', 'M', 'E', 'S'\], this one \['S'"),
        (_head(bigram_dim=4, bigram_buckets=64), "its head has crf=True, this one False"),
        (_head(crf=True), "its head has bigram_dim=4, this one 0"),
        (replace(same, bilstm_layers=1), "its head has bilstm_layers=0, this one 1"),
    )
    for head, problem in refused:
        with pytest.raises(ModelLoadError, match=f"first: --carry-output-layer: {problem}"):
            new_head(tmp_path / "first", head, carry_output_layer=True)
    with pytest.raises(ModelLoadError, match="--carry-output-layer: not a zhbert task folder"):
        new_head(tiny_encoder, same, carry_output_layer=True)
    # the recipe's flag: refused where it cannot mean anything
    from zhbert.recipes.arguments import finalize_args, parse_args
    from zhbert.recipes.common import prepare_model

    argv = ["--encoder", str(tmp_path / "first"), "--output-dir", str(tmp_path / "out"), "--carry-output-layer"]
    misuse = ((["--random-init"], "--random-init draws every weight anew"), (["--evaluate-only", str(tmp_path / "first")], "only scored"))
    for extra, problem in misuse:
        with pytest.raises(ValueError, match=f"--carry-output-layer .*{problem}"):
            prepare_model(finalize_args(parse_args(argv + extra), "pku"), same)
    continued, _ = prepare_model(finalize_args(parse_args(argv), "pku"), same)
    assert torch.equal(continued.crf.transitions, first.crf.transitions)


def test_a_different_dictionary_is_refused_by_name(tiny_encoder, tokenizer, tmp_path):
    save_head(new_head(tiny_encoder, _head()), tokenizer, tmp_path / "m")
    cfg = tmp_path / "m" / "config.json"
    data = json.loads(cfg.read_text())
    data["zhbert_head"]["lexicon_sha256"] = "0" * 64
    cfg.write_text(json.dumps(data))
    with pytest.raises(ModelLoadError, match=r"m: the head was trained with a different dict.txt"):
        load_head(tmp_path / "m")


def test_a_word_list_trained_into_the_lexicon_travels_with_the_folder(tiny_encoder, tokenizer, tmp_path, pd_sentences):
    """`--lexicon-words`: a domain word list joins jieba's words for training; the folder keeps it
    (lexicon_words.txt, checksummed) and a loaded head matches its words as the trained one did."""
    words = tmp_path / "domain.txt"
    words.write_text("\ufeff鑫淼垚\tORG\r\n高级经济师\tTITLE\r\n", encoding="utf-8")  # a BOM and CRLF, as users write them
    with pytest.raises(ValueError, match="domain.txt: a word list is added to a lexicon"):
        new_head(tiny_encoder, HeadConfig(kind="token", labels=["B", "M", "E", "S"], scheme="BMES-untyped"), words)
    model = new_head(tiny_encoder, _head(crf=True), words)
    plain = new_head(tiny_encoder, _head(crf=True))
    ids = tokenizer("他是鑫淼垚的高级经济师", add_special_tokens=False)["input_ids"]
    assert plain.word_features.lexicon.row_of(ids[2:5]) is None  # not a jieba word
    assert model.word_features.lexicon.row_of(ids[2:5]) is not None
    assert len(model.word_features.lexicon) == len(plain.word_features.lexicon) + 2
    trained = words.read_bytes()
    words.write_text("别的词\n", encoding="utf-8")  # the user's file edited while the model trains changes nothing
    save_head(model, tokenizer, tmp_path / "m")
    assert (tmp_path / "m" / "lexicon_words.txt").read_bytes() == trained
    loaded = load_head(tmp_path / "m")
    assert loaded.word_features.lexicon.row_of(ids[2:5]) is not None
    texts = [*pd_sentences[:8], "他是鑫淼垚的高级经济师"]
    assert [p.scores for p in predict_tags(model.eval(), tokenizer, texts)] == [p.scores for p in predict_tags(loaded, tokenizer, texts)]
    from zhbert.model_info import describe

    expected = "encoder only (zhbert-only head: lexicon jieba + lexicon_words.txt, a CRF over the tags)"
    assert describe(str(tmp_path / "m"))["plain_transformers"] == expected
    # saved again (a folder loaded and saved elsewhere): the word list goes with it
    save_head(loaded, tokenizer, tmp_path / "again")
    assert load_head(tmp_path / "again").word_features.lexicon.row_of(ids[2:5]) is not None
    (tmp_path / "m" / "lexicon_words.txt").write_text("鑫淼垚\tORG\n", encoding="utf-8")
    with pytest.raises(ModelLoadError, match=r"lexicon_words.txt: not the word list the head was trained with"):
        load_head(tmp_path / "m")
    (tmp_path / "m" / "lexicon_words.txt").unlink()
    with pytest.raises(ModelLoadError, match=r"lexicon_words.txt: missing: the head was trained with this word list"):
        load_head(tmp_path / "m")


def test_prefer_adds_words_the_lexicon_head_reads(tiny_encoder, tokenizer, tmp_path):
    """A head whose tags read only the lexicon sets (weights set by hand): a preferred word with a
    high frequency turns three single characters into one word, only for the predictor given it."""
    model = new_head(tiny_encoder, _head())
    d = model.config.hidden_size
    with torch.no_grad():
        for p in model.word_features.parameters():
            p.zero_()
        model.word_features.length_embeddings.weight[:, 0] = 1.0  # e(w) = [1, 0, ...]: v_X[0] = 4 * mass_X / Z
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([0.0, 0.0, 0.0, 0.1]))  # no word at all: S
        for tag, s in enumerate(SETS):  # logit(B) = v_B[0], logit(M) = v_M[0], ...
            model.classifier.weight[tag, d + SETS.index(s) * 8] = 1.0
    save_head(model, tokenizer, tmp_path / "m")
    text = "他叫鑫淼垚。"
    plain = zhbert.load(str(tmp_path / "m"))
    assert "鑫淼垚" not in [w.text for w in plain(text)]
    preferring = zhbert.load(str(tmp_path / "m"), user_dict=["鑫淼垚 100000"], dict_mode="prefer")
    assert "鑫淼垚" in [w.text for w in preferring(text)]
    assert "鑫淼垚" not in [w.text for w in plain(text)]  # the first predictor's lexicon is its own


def test_multitask_refuses_word_features():
    from transformers import BertConfig

    from zhbert.heads.multitask import ZhBertMultiTask

    config = BertConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    with pytest.raises(ValueError, match="single-task heads"):
        ZhBertMultiTask(config, {"cws": _head()})


def test_fast_lexicon_build_equals_the_tokenizer_and_the_checked_reader(tokenizer):
    """The shortcuts that make a lexicon load in seconds give exactly what the slow paths give,
    on all of jieba's dictionary."""
    from zhbert.dictionary import jieba_dictionary_path, read_dictionary
    from zhbert.lexicon import read_jieba_dict, word_token_ids

    checked = read_dictionary(jieba_dictionary_path())
    fast = read_jieba_dict(jieba_dictionary_path())
    assert fast.entries == checked.entries and fast.duplicates == checked.duplicates > 0
    words = [e.word for e in checked]
    reference = [e.ids for e in tokenizer.backend_tokenizer.encode_batch_fast(words, add_special_tokens=False)]
    assert word_token_ids(words, tokenizer) == reference


def test_a_user_word_list_grows_the_lexicon_exactly_as_a_full_build(tokenizer, datasets_dir):
    """``with_words`` tokenises only the added words, yet gives the lexicon built from the merged
    dictionary at once, array for array: new words, known words bare (kept) and with a frequency or
    a tag (replaced), spellings that tokenise alike (frequencies summed, the first one's tag), words
    the vocabulary cannot read, and a second list on top of the first."""
    import random

    from lexicon_checks import assert_lexicon_is_reference, assert_same_lexicon, reference_lexicon

    from zhbert.dictionary import read_dictionary
    from zhbert.lexicon import TokenLexicon
    from zhbert.lexicon_cache import shared_lexicon

    base = shared_lexicon("jieba", tokenizer, 4096)
    names = (*TokenLexicon._ARRAYS, *TokenLexicon._ENTRY_ARRAYS, *TokenLexicon._FLAT_ARRAYS)
    before = {n: getattr(base, n).copy() for n in names}, [list(c) for c in base._columns], base.unreadable
    rng = random.Random(7)
    words = (datasets_dir / "sighan2005_icwb2" / "msr_training_words.utf8").read_text(encoding="utf-8").split()
    lines = [w if rng.random() < 0.5 else f"{w} {rng.randint(1, 900)}" for w in rng.sample(words, 4000)]
    lines += ["区块链 12 nz", "北京 3", "中国", "臺灣 7 ns", "台湾大学 2", "中国\tORG", "新冠肺炎 5 n", "新冠肺炎病毒", "🙂", "㐀㐁"]
    first = read_dictionary(lines)
    second = read_dictionary(["再加一个词 9", "中国 1 ns", "区块链", "北京"])
    grown = base.with_words(first, tokenizer)
    built = TokenLexicon(base.dictionary.merged(first), tokenizer, 4096)
    assert_same_lexicon(grown, built)
    assert_lexicon_is_reference(grown, reference_lexicon(base.dictionary.merged(first), tokenizer, 4096, grown.tags))
    assert len(grown) > len(base) + 1000 and grown.unreadable >= base.unreadable
    assert_same_lexicon(grown.with_words(second, tokenizer), TokenLexicon(built.dictionary.merged(second), tokenizer, 4096))
    # the base lexicon, shared by every predictor of this tokenizer, is untouched
    assert all(np.array_equal(getattr(base, n), a) for n, a in before[0].items())
    assert [list(c) for c in base._columns] == before[1] and base.unreadable == before[2]
    assert "区块链" not in base.dictionary.entries


def test_word_token_arrays_fall_back_where_characters_are_not_tokens():
    """The shortcut (a Han word = its characters' tokens) is taken only when the tokenizer agrees:
    one that keeps 中国 whole, or reads a character as two tokens, gets every word encoded."""
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from zhbert.lexicon import word_token_arrays

    vocab = {"[UNK]": 0, "中国": 1, "中": 2, "国": 3, "人": 4, "a": 5, "##b": 6, "龘": 7}
    words = ["中国", "中国人", "人", "国中", "ab", "中", "龘龘", "人中国"]
    whole = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    whole.pre_tokenizer = pre_tokenizers.Whitespace()  # 中国 stays one word, one token
    split = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    bert = normalizers.BertNormalizer(handle_chinese_chars=True, lowercase=False)  # each Han character a word
    split.normalizer, split.pre_tokenizer = bert, pre_tokenizers.BertPreTokenizer()
    doubled = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    doubled.normalizer = normalizers.Sequence([normalizers.Replace(Regex("国"), "人国"), bert])  # one character, two tokens
    doubled.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    for backend in (whole, split, doubled):
        tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]")
        flat, sizes = word_token_arrays(words, tokenizer)
        expected = [e.ids for e in backend.encode_batch(words, add_special_tokens=False)]
        assert sizes.tolist() == [len(ids) for ids in expected]
        assert flat.tolist() == [i for ids in expected for i in ids]
    assert doubled.encode("国", add_special_tokens=False).ids == [4, 3] and whole.encode("中国").ids == [1]
    assert split.encode("中国人", add_special_tokens=False).ids == [2, 3, 4]  # the shortcut's case
    assert word_token_arrays([], tokenizer)[0].tolist() == []


def test_the_lexicons_table_uniques_are_numpys():
    """unique_values / unique_inverse / unique_first (a lookup table instead of a sort where the values
    are small) give what np.unique gives, dtypes included; large, negative or empty inputs take np.unique."""
    rng = np.random.default_rng(0)
    cases = [
        rng.integers(0, 50, 1000),
        rng.integers(0x4E00, 0x9FFF, 200_000).astype(np.uint32),  # code points, as CharTrie reads them
        rng.integers(-5, 5, 100),
        rng.integers(0, 1 << 40, 1000),
        np.zeros(0, dtype=np.int64),
        np.array([7]),
    ]
    for v in cases:
        want_u, want_first, want_inv = np.unique(v, return_index=True, return_inverse=True)
        u, inv = unique_inverse(v)
        assert u.dtype == want_u.dtype and np.array_equal(u, want_u) and np.array_equal(inv, want_inv.reshape(-1))
        u, first = unique_first(v)
        assert np.array_equal(u, want_u) and np.array_equal(first, want_first)
        assert np.array_equal(unique_values(v), want_u) and unique_values(v).dtype == want_u.dtype
