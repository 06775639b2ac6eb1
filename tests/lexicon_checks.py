"""One check shared by the lexicon tests: two lexicons are the same, array for array."""

import numpy as np

from zhbert.lexicon import TokenLexicon


def assert_same_lexicon(a: TokenLexicon, b: TokenLexicon) -> None:
    for name in (*TokenLexicon._ARRAYS, *TokenLexicon._ENTRY_ARRAYS, *TokenLexicon._FLAT_ARRAYS):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    for k, v in a._trie.arrays().items():
        assert np.array_equal(v, b._trie.arrays()[k]), k
    assert a._trie.vocab == b._trie.vocab and a.tags == b.tags and a.bucket_count == b.bucket_count
    assert a.unreadable == b.unreadable and a._counts == b._counts and a.source == b.source
    assert a._columns == b._columns
    assert a.dictionary.entries == b.dictionary.entries
