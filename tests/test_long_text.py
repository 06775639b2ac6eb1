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


def test_fill_mask_recomputes_only_windows_a_fill_changes(pd_sentences):
    """Masks spread over a long text: reusing the probabilities of windows a fill did not touch gives
    the same answers as recomputing every window after every fill (and bounds a 20-mask demo request)."""
    import torch

    base = zhbert.load("base")
    text = "".join(pd_sentences[:40])[:1500]
    step = len(text) // 6
    masked = "".join(text[i * step : (i + 1) * step - 2] + "[MASK][MASK]" for i in range(6))
    fast = [f.token for f in base.fill_mask(masked, top_k=1)]
    ids, _, masks = base._ids(masked)
    special = sorted(set(base.tokenizer.all_special_ids))
    done: dict[int, str] = {}
    while len(done) < len(masks):  # the reference: every open mask recomputed after every fill
        open_masks = [k for k in masks if k not in done]
        with torch.no_grad():  # as fill_mask itself runs
            probs = base._mask_probs(ids, open_masks)
        for p in probs.values():
            p[special] = 0
        best = max(open_masks, key=lambda k: float(probs[k].max()))
        ids[best] = int(torch.argmax(probs[best]))
        done[best] = base.tokenizer.convert_ids_to_tokens(ids[best])
    assert fast == [done[k] for k in masks] and len(fast) == 12
