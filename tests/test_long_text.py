"""A long text's windows run in batches like separate sentences, and batching changes nothing."""

import numpy as np

import zhbert
from zhbert.heads import predict_tags


def test_windows_of_one_long_text_batched_equal_one_at_a_time(pd_sentences):
    text = "".join(pd_sentences[:80])
    assert len(text) > 3000
    cws = zhbert.load("cws")
    batched = predict_tags(cws.model, cws.tokenizer, [text], batch_size=64)[0]
    single = predict_tags(cws.model, cws.tokenizer, [text], batch_size=1)[0]
    assert batched.tags == single.tags
    assert np.allclose(batched.scores, single.scores, atol=1e-5)
    assert [w.text for w in cws(text, batch_size=64)] == [w.text for w in cws(text, batch_size=1)]
    base = zhbert.load("base")
    a = base.features(text, representation="mean-last-4", pooled=False, batch_size=64, return_tensors="np")
    b = base.features(text, representation="mean-last-4", pooled=False, batch_size=1, return_tensors="np")
    assert a["offsets"] == b["offsets"] and np.allclose(a["vectors"], b["vectors"], atol=1e-4)
    assert a["vectors"].shape == (len(a["offsets"]), 256)


def test_features_as_arrays(pd_sentences):
    base = zhbert.load("base")
    arr = base.features(list(pd_sentences[:5]), return_tensors="np")
    assert arr.shape == (5, 256) and arr.dtype == np.float32
    as_lists = base.features(list(pd_sentences[:5]))
    assert np.allclose(arr, np.array(as_lists), atol=1e-6)
