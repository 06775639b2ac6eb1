"""Parameter counts broken down the way the BERT paper counts them."""

from __future__ import annotations

import json

from .model_soup import MANIFEST as SOUP_MANIFEST
from .models_registry import POS_MARKER, read_config, resolve_model_path
from .tags import entity_types


def count_parameters(model) -> dict[str, int]:
    """Split parameters into embeddings / attention / feed-forward / layer norm / other."""
    parts = {"embeddings": 0, "attention": 0, "feed_forward": 0, "layer_norm": 0, "pooler_and_heads": 0}
    for name, p in model.named_parameters():
        n = p.numel()
        if ".embeddings." in f".{name}" or name.startswith("embeddings."):
            parts["embeddings"] += n
        elif "LayerNorm" in name or "layer_norm" in name:
            parts["layer_norm"] += n
        elif ".attention." in name:
            parts["attention"] += n
        elif ".intermediate." in name or (".output." in name and ".attention." not in name and ".layer." in name):
            parts["feed_forward"] += n
        else:
            parts["pooler_and_heads"] += n
    parts["total"] = sum(parts.values())
    return parts


def describe(name_or_path: str) -> dict:
    from transformers import AutoConfig, AutoModel

    path = resolve_model_path(name_or_path)
    if (path / POS_MARKER).is_file():
        return _describe_pos(path)
    read_config(path)  # a damaged or non-object config.json is named as such
    config = AutoConfig.from_pretrained(str(path), local_files_only=True, trust_remote_code=False)
    model = AutoModel.from_config(config)
    head = getattr(config, "zhbert_head", None) or {}
    word_features = []
    if head.get("lexicon"):
        added = " + lexicon_words.txt" if head.get("lexicon_words_sha256") else ""  # a word list trained in, kept in the folder
        word_features.append(f"lexicon {head['lexicon']}{added}")
    if head.get("bigram_dim"):
        word_features.append(f"bigrams {head['bigram_dim']}")
    if head:  # CRF, BiLSTM, layer fusion, ...: anything else plain transformers cannot compute
        from .heads.config import HeadConfig
        from .model_card import zhbert_only_reasons

        word_features += [r for r in zhbert_only_reasons(HeadConfig.from_dict(dict(head)), config.model_type) if "features" not in r]
    # annotation standards a head was trained on (--criteria), and what criterion=None reads by (the first
    # unless `zhbert export --blend-criteria` made a reading between them the default)
    criteria = (
        {"criteria": list(head["criteria"]), "default_criterion": head.get("default_criterion") or head["criteria"][0]}
        if head.get("criteria")
        else {}
    )
    soup = {}
    if (path / SOUP_MANIFEST).is_file():  # `zhbert soup`: the mean of these runs' weights
        soup = {"soup_of": [i["folder"] for i in json.loads((path / SOUP_MANIFEST).read_text(encoding="utf-8"))["ingredients"]]}
    return {
        "path": str(path),
        "model_type": config.model_type,
        "architectures": getattr(config, "architectures", None),
        # word features are computed by zhbert: plain transformers opens the encoder, not the head
        "plain_transformers": "encoder only (zhbert-only head: " + ", ".join(word_features) + ")"
        if word_features
        else "yes, in a pipeline",
        "layers": config.num_hidden_layers,
        "hidden": config.hidden_size,
        "heads": config.num_attention_heads,
        "intermediate": config.intermediate_size,
        "vocab_size": config.vocab_size,
        **_never_emitted(path, config.vocab_size),
        "max_position_embeddings": config.max_position_embeddings,
        "parameters": count_parameters(model),
        **criteria,
        **soup,
        **_task_heads(config, path),
    }


def _head_summary(head: dict) -> dict:
    """What a task head answers with: its kind, its labels and, for an entity model, its types."""
    labels = list(head.get("labels") or [])
    out = {"kind": head.get("kind", head.get("task")), "labels": labels}
    scheme = head.get("scheme")
    if scheme:
        out["scheme"] = scheme
        types = entity_types(labels)
        if types:
            out["types"] = types  # what a typed user dictionary may name (word<TAB>TYPE)
    return out


def _task_heads(config, path) -> dict:
    """``task_head`` for a task folder (a plain transformers classifier's as zhbert reads it, or why it
    does not), ``task_heads`` by name for a multi-task one; nothing for an encoder."""
    from .errors import ModelLoadError
    from .heads.io import plain_head_settings

    many = getattr(config, "zhbert_heads", None)
    if many:
        return {"task_heads": {name: _head_summary(h) for name, h in many.items()}}
    head = getattr(config, "zhbert_head", None)
    if head:
        return {"task_head": _head_summary(head)}
    try:
        plain = plain_head_settings(config.to_dict(), path / "config.json")
    except ModelLoadError as e:
        return {"task_head": f"not read by zhbert.load: {e}"}
    return {"task_head": _head_summary(plain.to_dict())} if plain else {}


def _never_emitted(path, vocab_size: int) -> dict:
    """The vocabulary rows at the end that the folder's tokenizer never produces, which
    ``zhbert export --trim-vocab`` leaves out (:mod:`zhbert.vocab_trim`); nothing when there are none."""
    from .tokenizer import load_tokenizer
    from .vocab_trim import emitted_vocab_size

    if not (path / "tokenizer.json").is_file():
        return {}
    rows = vocab_size - emitted_vocab_size(load_tokenizer(path))
    return {"vocab_never_emitted": rows, "trim": "zhbert export --trim-vocab leaves them out"} if rows > 0 else {}


def _describe_pos(path) -> dict:
    """A POS head over a segmenter (:mod:`zhbert.heads.pos`): the segmenter, described as
    above, and the head's own size."""
    from .heads.pos import load_pos_folder

    seg_path, head, weights = load_pos_folder(path)
    return {
        "path": str(path),
        "kind": "POS head over a segmenter's frozen features (zhbert-only)",
        "segmenter": describe(str(seg_path)),
        "tags": sorted({label.split("-", 1)[-1] for label in head.labels} - {"O"}),
        "task_head": _head_summary(head.to_dict()),
        "head_parameters": sum(w.numel() for w in weights.values()),
        "plain_transformers": "no (the tags are computed by zhbert from the segmenter's features)",
    }
