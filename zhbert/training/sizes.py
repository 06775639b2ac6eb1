"""Named model sizes for pretraining from scratch (hidden, layers, heads, FFN)."""

from __future__ import annotations

from transformers import BertConfig

SIZES = {
    # name: (layers, hidden, heads, intermediate); tiny for tests, mini is the bundled default
    "tiny": (2, 128, 2, 512),
    "mini": (4, 256, 4, 1024),
    "small": (4, 512, 8, 2048),
    "medium": (8, 512, 8, 2048),
    "base": (12, 768, 12, 3072),
}


def bert_config(size: str, vocab_size: int, max_position_embeddings: int = 512, **overrides) -> BertConfig:
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; choose one of {', '.join(SIZES)}")
    layers, hidden, heads, ffn = SIZES[size]
    kw = dict(
        vocab_size=vocab_size,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=ffn,
        max_position_embeddings=max_position_embeddings,
        type_vocab_size=2,
        attn_implementation="sdpa",
    )
    kw.update(overrides)
    return BertConfig(**kw)
