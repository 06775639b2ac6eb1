"""A model folder is input: checked before anything in it is used.

Every path from a user to a model (``zhbert.load``, ``info``, ``pretrain --init``, ``probe``,
``export``, the recipes' ``--encoder``, the demo) goes through
:func:`zhbert.models_registry.resolve_model_path`, which calls :func:`check_model_folder`.
It reads only JSON and the safetensors header, never the weights, and raises one
:class:`~zhbert.errors.ModelLoadError` naming the folder's file and what is wrong:

* ``config.json``: size and nesting (``read_config``), and every size a model allocates from
  (vocabulary, width, layers, heads, positions) a whole number under a sane maximum, so a
  ``"vocab_size": 1000000000`` is refused before a terabyte is asked for;
* weights: ``model.safetensors`` present, or the shards ``model.safetensors.index.json`` names
  (pickle files are refused: loading one can run code), and the embedding tables the shapes
  ``config.json`` says;
* ``tokenizer.json``: every token id (vocabulary, added tokens, the post-processor's special
  tokens) inside the embedding table's rows, so no text can index past it; and only the
  normaliser, pre-tokeniser and decoder types zhbert and stock BERT tokenizers use. A regex
  (``Replace``/``Split`` with a pattern) must be one zhbert itself writes: a regex from a folder
  can backtrack for minutes or panic the Rust tokenizer.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from .errors import ModelLoadError

__all__ = ["check_model_folder", "no_config_problem", "weight_files", "CONFIG_LIMITS"]

#: the largest value each config size may take (BERT-large is 30,522 / 1,024 / 24 / 16 / 4,096 / 512)
CONFIG_LIMITS = {
    "vocab_size": 1_000_000,
    "hidden_size": 16_384,
    "num_hidden_layers": 256,
    "num_attention_heads": 1_024,
    "intermediate_size": 65_536,
    "max_position_embeddings": 65_536,
    "type_vocab_size": 1_024,
}
#: sizes that may be 0 (DeBERTa-v2 without token types)
CONFIG_MAY_BE_ZERO = {"type_vocab_size"}
MAX_TOKENIZER_BYTES = 64 * 2**20
# tokenizers' component types a BERT folder uses (zhbert's own, and stock BertTokenizerFast's)
ALLOWED_TYPES = {
    "normalizer": {
        *("Sequence", "Replace", "NFC", "NFD", "NFKC", "NFKD", "StripAccents", "Lowercase", "Precompiled", "BertNormalizer", "Strip"),
    },
    "pre_tokenizer": {"Sequence", "WhitespaceSplit", "Whitespace", "Split", "BertPreTokenizer", "Punctuation", "Digits"},
    "decoder": {"WordPiece", "Sequence", "Strip", "Fuse"},
    "post_processor": {"TemplateProcessing", "BertProcessing", "Sequence"},
    "model": {"WordPiece", "WordLevel"},
}


def _our_regexes() -> set[str]:
    from .tokenizer import NORMALIZER_VERSIONS, _our_pipeline_json

    found: set[str] = set()
    for version in NORMALIZER_VERSIONS:
        for part in _our_pipeline_json(version):
            _regexes(part, found)
    return found


def _regexes(node, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        pattern = node.get("pattern")
        if isinstance(pattern, dict) and "Regex" in pattern:
            out.add(pattern["Regex"])
        for value in node.values():
            _regexes(value, out)
    elif isinstance(node, list):
        for value in node:
            _regexes(value, out)
    return out


def _types(node, component: str, where: str) -> None:
    """Every ``type`` in a component (nested ``Sequence`` steps included) must be an allowed one."""
    if isinstance(node, dict):
        kind = node.get("type")
        if kind is not None and kind not in ALLOWED_TYPES[component]:
            allowed = ", ".join(sorted(ALLOWED_TYPES[component]))
            raise ModelLoadError(f"{where}: {component} type {kind!r} is not one zhbert reads (allowed: {allowed})")
        for key in ("normalizers", "pretokenizers", "decoders", "processors"):
            for step in node.get(key) or []:
                _types(step, component, where)


MAX_CONFIG_BYTES = 10 * 2**20


def no_config_problem(path: str | Path) -> str:
    """The error for a folder without ``config.json``, pointing at the model folders inside it: a
    training run's output folder (``runs/my-ner``) holds its model in ``model/`` (a pretraining
    run's in ``final/``), and users pass the run's folder."""
    path = Path(path)
    if path.name.startswith("models--") and (path / "snapshots").is_dir():
        return _hub_cache_repo_problem(path)
    if path.is_dir() and ((path / "bert_config.json").is_file() or any(path.glob("*.ckpt*.index"))):
        return (
            f"{path}: a TensorFlow checkpoint (google-research/bert's form), not a model folder: "
            f"`zhbert convert-tf {path} OUT` writes one from it"
        )
    entries = itertools.islice(path.iterdir(), 10_000) if path.is_dir() else []  # a home folder passed by mistake stays quick
    inside = sorted(p for p in entries if (p / "config.json").is_file())
    where = f": the model folder{'s' if len(inside) > 1 else ''} inside it {'are' if len(inside) > 1 else 'is'} " if inside else ""
    return f"{path}: not a model folder (config.json is missing){where}{', '.join(map(str, inside[:3]))}"


def _hub_cache_repo_problem(path: Path) -> str:
    """A model's folder in the Hugging Face cache (``models--org--name``, as huggingface_hub lays it
    out): its files are in ``snapshots/REVISION``, and its id (``org/name``) finds them."""
    model_id = path.name[len("models--") :].replace("--", "/")
    ref = path / "refs" / "main"
    revision = ref.read_text(encoding="utf-8", errors="replace").strip()[:100] if ref.is_file() else ""
    snapshot = path / "snapshots" / revision if revision and (path / "snapshots" / revision / "config.json").is_file() else None
    if snapshot is None:
        snapshot = next((p for p in sorted((path / "snapshots").iterdir()) if (p / "config.json").is_file()), None)
    where = f", or its snapshot folder {snapshot}" if snapshot else " (no snapshot in it holds a config.json)"
    from huggingface_hub import constants

    if Path(constants.HF_HUB_CACHE).resolve() != path.parent.resolve():  # the id is looked up in the cache in use
        model_id += f" with HF_HUB_CACHE={path.parent}"
    return f"{path}: a model's folder in the Hugging Face cache, not a model folder: give its id, {model_id}{where}"


def read_config(path: Path, name: str = "config.json") -> dict:
    """``config.json`` (or another JSON config, such as google-research/bert's ``bert_config.json``)
    of a model folder as a dict, or a :class:`ModelLoadError` naming the file."""
    file = Path(path) / name
    try:
        size = file.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise ModelLoadError(f"{file}: {size:,} bytes; a model config is a few KB (at most {MAX_CONFIG_BYTES:,} read)")
        config = json.loads(file.read_text(encoding="utf-8"))
    except RecursionError:  # nesting deeper than the JSON decoder recurses: never a real config
        raise ModelLoadError(f"{file}: JSON nested too deeply to be a model config") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ModelLoadError(f"{file}: not a readable JSON config ({type(e).__name__}: {str(e)[:120]})") from None
    if not isinstance(config, dict):
        raise ModelLoadError(f"{file}: expected a JSON object, found {type(config).__name__}")
    return config


def _check_config(path: Path) -> dict:
    config = read_config(path)
    for key, limit in CONFIG_LIMITS.items():
        if key not in config:
            continue
        value = config[key]
        least = 0 if key in CONFIG_MAY_BE_ZERO else 1
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= limit:
            raise ModelLoadError(f"{path / 'config.json'}: {key} is {value!r}; expected a whole number from {least} to {limit:,}")
    return config


WEIGHTS = "model.safetensors"
#: where save_pretrained lists the files of weights saved in shards (a model past max_shard_size)
WEIGHTS_INDEX = "model.safetensors.index.json"


def _pickle_problem(path: Path) -> str | None:
    pickles = [p.name for p in path.glob("*.bin")] + [p.name for p in path.glob("*.pt")]
    if not pickles:
        return None
    return (
        f"{path}: weights only as {pickles[0]} (pickle, which can run code when loaded); zhbert reads model.safetensors: "
        "load it once where you trust it and save_pretrained() writes safetensors"
    )


def weight_files(path: str | Path) -> list[Path]:
    """The safetensors files holding a folder's weights: ``model.safetensors``, or the shards that
    ``model.safetensors.index.json`` names (each a file in the folder itself). None of them is a
    :class:`ModelLoadError` naming the file that is missing."""
    path = Path(path)
    if (path / WEIGHTS).is_file():
        return [path / WEIGHTS]
    index = path / WEIGHTS_INDEX
    if not index.is_file():
        raise ModelLoadError(
            _pickle_problem(path) or f"{path / WEIGHTS}: model.safetensors is missing (only safetensors weights are loaded)"
        )
    try:
        if index.stat().st_size > MAX_TOKENIZER_BYTES:  # a real index lists a few thousand tensors
            raise ValueError(f"{index.stat().st_size:,} bytes")
        weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        if not isinstance(weight_map, dict) or not weight_map or not all(isinstance(v, str) for v in weight_map.values()):
            raise ValueError("'weight_map' is not an object of tensor names to file names")
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, RecursionError) as e:
        raise ModelLoadError(f"{index}: not a readable index of weight shards ({type(e).__name__}: {str(e)[:120]})") from None
    files = []
    for name in sorted(set(weight_map.values())):
        if Path(name).name != name or not name.endswith(".safetensors"):  # no path out of the folder, no pickle
            raise ModelLoadError(f"{index}: names {name!r}; a shard is a .safetensors file in the folder itself")
        if not (path / name).is_file():
            raise ModelLoadError(f"{path / name}: missing (a shard of the weights {WEIGHTS_INDEX} lists)")
        files.append(path / name)
    return files


def _embedding_rows(path: Path, config: dict) -> int | None:
    """Rows of the word-embedding table from the safetensors header, checked against the config."""
    from safetensors import SafetensorError, safe_open

    if not (path / WEIGHTS).is_file() and not (path / WEIGHTS_INDEX).is_file():
        problem = _pickle_problem(path)
        if problem:
            raise ModelLoadError(problem)
        return None  # absent: the loader reports it
    words = []  # (shape, file) of each word-embedding table
    for weights in weight_files(path):
        try:
            with safe_open(str(weights), framework="pt") as f:
                words += [(tuple(f.get_slice(k).get_shape()), weights) for k in f.keys() if k.endswith("word_embeddings.weight")]
        except (SafetensorError, OSError, ValueError) as e:
            raise ModelLoadError(f"{weights}: not a readable safetensors file ({str(e)[:160]})") from None
    if not words:
        return None
    (rows, *_, width), weights = words[0]
    expected = (config.get("vocab_size"), config.get("embedding_size", config.get("hidden_size")))
    if (rows, width) != expected and None not in expected:
        raise ModelLoadError(
            f"{weights}: the word embeddings are {rows:,} x {width:,}, but config.json says vocab_size {expected[0]:,} "
            f"and width {expected[1]:,}"
        )
    return rows


def _check_tokenizer(path: Path, rows: int | None) -> None:
    file = path / "tokenizer.json"
    if not file.is_file():
        return
    size = file.stat().st_size
    if size > MAX_TOKENIZER_BYTES:
        raise ModelLoadError(f"{file}: {size:,} bytes; a BERT tokenizer is a few MB (at most {MAX_TOKENIZER_BYTES:,} read)")
    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except RecursionError:
        raise ModelLoadError(f"{file}: JSON nested too deeply to be a tokenizer") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ModelLoadError(f"{file}: not a readable tokenizer ({type(e).__name__}: {str(e)[:120]})") from None
    if not isinstance(doc, dict):
        raise ModelLoadError(f"{file}: expected a JSON object, found {type(doc).__name__}")
    for component in ("normalizer", "pre_tokenizer", "decoder", "post_processor", "model"):
        _types(doc.get(component), component, str(file))
    foreign = sorted(_regexes({k: doc.get(k) for k in ("normalizer", "pre_tokenizer", "decoder")}, set()) - _our_regexes())
    if foreign:
        raise ModelLoadError(
            f"{file}: a regex zhbert did not write ({foreign[0][:60]!r}); regexes from a model folder are refused "
            "(one can backtrack for minutes or crash the tokenizer)"
        )
    if rows is None:
        return
    vocab = (doc.get("model") or {}).get("vocab")
    ids = list(vocab.values()) if isinstance(vocab, dict) else []
    ids += [t.get("id") for t in doc.get("added_tokens") or [] if isinstance(t, dict)]
    post = doc.get("post_processor") or {}
    for special in (post.get("special_tokens") or {}).values() if isinstance(post.get("special_tokens"), dict) else []:
        ids += list(special.get("ids") or [])
    bad = [i for i in ids if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < rows]
    if bad:
        raise ModelLoadError(f"{file}: token id {bad[0]!r} is outside the {rows:,} rows of the model's embedding table")


def check_model_folder(path: str | Path) -> None:
    """Raise a :class:`ModelLoadError` naming the file if the folder's config, weights header or
    tokenizer is not what a model zhbert can safely run (see the module docstring)."""
    path = Path(path)
    config = _check_config(path)
    rows = _embedding_rows(path, config)
    _check_tokenizer(path, rows)
