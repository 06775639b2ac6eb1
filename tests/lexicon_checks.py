"""One check shared by the lexicon tests: two lexicons are the same, array for array."""

import numpy as np

from zhbert.lexicon import TokenLexicon


def assert_same_lexicon(a: TokenLexicon, b: TokenLexicon) -> None:
    for name in (*TokenLexicon._ARRAYS, *TokenLexicon._ENTRY_ARRAYS, *TokenLexicon._FLAT_ARRAYS):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    for k, v in a._trie.arrays().items():
        assert v.dtype == b._trie.arrays()[k].dtype and np.array_equal(v, b._trie.arrays()[k]), k
    assert a._trie.vocab == b._trie.vocab and a.tags == b.tags and a.bucket_count == b.bucket_count
    assert a.unreadable == b.unreadable and a._counts == b._counts and a.source == b.source
    assert a._columns == b._columns
    assert a.dictionary.entries == b.dictionary.entries


def reference_lexicon(dictionary, tokenizer, buckets: int, tags: list[str]) -> dict:
    """The lexicon's word arrays as the plain loop computes them, one entry at a time: an
    independent reference for the vectorised build (and the token rows, for its trie)."""
    import math

    from zhbert.lexicon import DEFAULT_FREQ, ENTITY_TAG_ALIASES, MAX_WORD_TOKENS, _key, stable_bucket

    tag_index = {t: i for i, t in enumerate(tags)}
    backend = tokenizer.backend_tokenizer
    index, out, unreadable = {}, {k: [] for k in ("lengths", "tag_ids", "freqs", "buckets", "rows", "first")}, 0
    entry_word = []
    entries = list(dictionary)
    encoded = backend.encode_batch_fast([e.word for e in entries], add_special_tokens=False)
    for n, (e, enc) in enumerate(zip(entries, encoded)):
        row = enc.ids
        if not row or tokenizer.unk_token_id in row:
            unreadable += 1
            entry_word.append(-1)
            continue
        key = _key(row)
        if key in index:
            out["freqs"][index[key]] += e.freq or DEFAULT_FREQ
            entry_word.append(index[key])
            continue
        index[key] = len(out["rows"])
        entry_word.append(index[key])
        out["rows"].append(row)
        out["lengths"].append(min(len(row), MAX_WORD_TOKENS))
        out["tag_ids"].append(tag_index.get(ENTITY_TAG_ALIASES.get(e.tag, e.tag), 0) if e.tag else 0)
        out["freqs"].append(e.freq or DEFAULT_FREQ)
        out["buckets"].append(stable_bucket(key, buckets))
        out["first"].append(n)
    out["weights"] = np.array([math.log1p(f) for f in out["freqs"]], dtype=np.float32)
    return {**out, "unreadable": unreadable, "entry_word": entry_word}


def assert_lexicon_is_reference(lex: TokenLexicon, ref: dict) -> None:
    from zhbert.lexicon import TokenTrie

    for name in ("lengths", "tag_ids", "buckets", "first"):
        assert getattr(lex, name if name != "first" else "_first").tolist() == ref[name], name
    assert lex._freqs.tolist() == ref["freqs"] and lex.weights.dtype == np.float32 and np.array_equal(lex.weights, ref["weights"])
    assert lex._entry_word.tolist() == ref["entry_word"] and lex.unreadable == ref["unreadable"]
    assert lex._sizes.tolist() == [len(r) for r in ref["rows"]] and lex._tokens.tolist() == [t for r in ref["rows"] for t in r]
    trie = TokenTrie(ref["rows"], lex._trie.vocab)
    for k, v in trie.arrays().items():
        assert np.array_equal(v, lex._trie.arrays()[k]), k
