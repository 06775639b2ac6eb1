"""Parameter counts broken down the way the BERT paper counts them."""

from __future__ import annotations

from pathlib import Path

from .errors import ModelLoadError


def resolve_model_path(name_or_path: str) -> Path:
    """A bundled short name or a local folder holding ``config.json``."""
    path = Path(name_or_path)
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelLoadError(f"{path}: not a model folder (config.json is missing)")
        return path
    if path.exists():
        raise ModelLoadError(f"{path}: expected a model folder, found a file")
    from .models_registry import bundled_path

    return bundled_path(name_or_path)


def read_config(path: Path) -> dict:
    """``config.json`` of a model folder as a dict, or a :class:`ModelLoadError` naming the file."""
    import json

    file = Path(path) / "config.json"
    try:
        config = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ModelLoadError(f"{file}: not a readable JSON config ({type(e).__name__}: {str(e)[:120]})") from None
    if not isinstance(config, dict):
        raise ModelLoadError(f"{file}: expected a JSON object, found {type(config).__name__}")
    return config


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
    read_config(path)  # a damaged or non-object config.json is named as such
    config = AutoConfig.from_pretrained(str(path), local_files_only=True, trust_remote_code=False)
    model = AutoModel.from_config(config)
    return {
        "path": str(path),
        "model_type": config.model_type,
        "architectures": getattr(config, "architectures", None),
        "layers": config.num_hidden_layers,
        "hidden": config.hidden_size,
        "heads": config.num_attention_heads,
        "intermediate": config.intermediate_size,
        "vocab_size": config.vocab_size,
        "max_position_embeddings": config.max_position_embeddings,
        "parameters": count_parameters(model),
    }
