"""Copy a model folder for shipping: weights as fp16 safetensors (half the bytes), every
other file (config, tokenizer) unchanged. Loading with zhbert gives fp32 again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from safetensors.torch import load_file, save_file

from .destination import check_destination, staged_folder
from .encoder_info import KEY
from .encoder_info import trained_length as encoder_trained_length
from .errors import ModelLoadError
from .model_folder import WEIGHTS, WEIGHTS_INDEX, weight_files
from .tokenizer import load_tokenizer, normalizer_name, save_tokenizer

__all__ = ["export_model"]

TOKENIZER_FILES = {"tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"}


def export_model(
    src: str | Path,
    dst: str | Path,
    fp16: bool = True,
    trained_length: int | None = None,
    trim_vocab: bool = False,
    overwrite: bool = False,
    onnx: bool = False,
    int8: bool = False,
    blend_criteria: str | None = None,
) -> Path:
    """Copy ``src`` to ``dst``. A folder older zhbert made gets its tokenizer converted to
    zhbert's normaliser and a ``zhbert_encoder`` record (``trained_length``: the encoder's
    pretraining length, when the folder cannot tell). ``trim_vocab``: leave out the vocabulary
    rows at its end that the tokenizer never emits (:mod:`zhbert.vocab_trim`); the same outputs.
    ``onnx``: also write the head's encoder as ``onnx/model.onnx`` (with ``int8``, ``onnx/model_qint8.onnx``
    too), which ``zhbert.load(dst, backend="onnx")`` runs (:mod:`zhbert.onnx_backend`).
    ``blend_criteria``: a name for a reading between the standards of a head trained with several
    (``--criteria``), the mean of their segment rows, made the default that ``criterion=None`` reads
    (:func:`zhbert.heads.criteria.blend_criteria`); the trained criteria keep their rows.
    ``dst`` must be new, empty, or (with ``overwrite``) a model folder: :mod:`zhbert.destination`."""
    from .models_registry import POS_MARKER, resolve_model_path

    src, dst = resolve_model_path(str(src)), Path(dst)  # a bundled model's name or a folder
    if (src / POS_MARKER).is_file():
        raise ModelLoadError(
            f"{src}: a POS head over a segmenter's features, already fp16 and small: ship it by copying the folder "
            "(its segmenter is named in zhbert_pos.json and must ship with it, unchanged)"
        )
    if not (src / "config.json").is_file():
        raise ModelLoadError(f"{src}: not a model folder (needs config.json and {WEIGHTS})")
    shards = weight_files(src)  # model.safetensors, or the shards its index names: exported as one file
    if int8 and not onnx:
        raise ValueError("--int8 quantises the ONNX graph: give --onnx with it")
    if onnx:
        from .heads.io import plain_head_settings
        from .model_folder import read_config

        config = read_config(src)
        if not config.get("zhbert_head") and plain_head_settings(config, src / "config.json") is None:
            raise ModelLoadError(
                f"{src}: --onnx exports task heads (segmentation, NER, tagging and matching folders); "
                "this folder is not one (a masked-LM encoder, a multi-task model or a POS head runs in torch)"
            )
    check_destination(dst, [src], overwrite, what="export")
    with staged_folder(dst) as staging:  # the old export is replaced only once the new one is complete
        _write_export(src, shards, staging, fp16, trained_length, trim_vocab, blend_criteria)
        if onnx:  # made from the staged weights, as zhbert.load will read them
            from .onnx_backend import export_onnx

            export_onnx(staging, int8=int8)
    return dst


def _write_export(
    src: Path, shards: list[Path], staging: Path, fp16: bool, trained_length: int | None, trim_vocab: bool, blend: str | None
) -> None:
    weights = {WEIGHTS, WEIGHTS_INDEX, *(f.name for f in shards)}
    for f in src.iterdir():
        if f.is_file() and f.name not in weights and not f.name.startswith(("training_args", "optimizer", "scheduler", "rng_state")):
            shutil.copy2(f, staging / f.name)
    config = json.loads((staging / "config.json").read_text(encoding="utf-8"))
    tensors = {name: tensor for shard in shards for name, tensor in load_file(str(shard)).items()}
    if blend is not None:
        from .heads.criteria import blend_criteria

        blend_criteria(tensors, config, blend)
    arch = config.get("architectures") or []
    if arch and arch[0].startswith("SparseBert"):  # zhbert's training-time subclass: name the stock class
        config["architectures"] = [arch[0].replace("SparseBert", "Bert")]
    head = config.get("zhbert_head")
    if not head and not config.get("zhbert_heads"):  # a plain transformers classifier: its head's settings written down
        from .heads.io import plain_head_settings

        try:
            plain = plain_head_settings(config, src / "config.json")
        except ModelLoadError:  # a classifier zhbert does not read as a head (ELECTRA's, tags of no scheme) ships as it is
            plain = None
        if plain is not None:
            head = config["zhbert_head"] = plain.to_dict()
    if head:
        from .heads.config import HeadConfig
        from .heads.model import stock_architecture
        from .model_card import CARD, ZHBERT_ONLY_KEY, write_model_card, zhbert_only_note, zhbert_only_reasons

        settings = HeadConfig.from_dict(dict(head))
        if arch == ["ZhBertForTask"]:  # a stock-compatible head names the class plain transformers has
            config["architectures"] = [stock_architecture(settings, config["model_type"]) or "ZhBertForTask"]
        reasons = zhbert_only_reasons(settings, config["model_type"])
        config.pop(ZHBERT_ONLY_KEY, None)
        if reasons:  # said in config.json and the model card, where a plain-transformers user looks
            config[ZHBERT_ONLY_KEY] = zhbert_only_note(reasons)
        if not (staging / CARD).is_file():
            write_model_card(staging, settings, reasons)
    tokenizer = None
    if (src / "tokenizer.json").is_file() or (src / "vocab.txt").is_file():
        tokenizer = load_tokenizer(src)  # converts the tokenizer of a folder older zhbert made
        for f in staging.iterdir():
            if f.name in TOKENIZER_FILES:
                f.unlink()
        if KEY not in config:
            config[KEY] = {"max_length": trained_length or encoder_trained_length(config, src), "normalizer": normalizer_name(tokenizer)}
        save_tokenizer(tokenizer, staging, max_length=config[KEY].get("max_length"))
    if trim_vocab:
        tensors = _trimmed(src, staging, config, tensors, tokenizer)
    (staging / "config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if fp16:
        tensors = {k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in tensors.items()}
        config = json.loads((staging / "config.json").read_text(encoding="utf-8"))
        # stored as fp16, run as fp32: with "float16" here transformers 5 keeps the halves
        # (100x slower on CPU); "float32" makes plain from_pretrained upcast them as zhbert does
        config["dtype"] = "float32"
        (staging / "config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    save_file(tensors, str(staging / WEIGHTS), metadata={"format": "pt"})


def _trimmed(src: Path, staging: Path, config: dict, tensors: dict, tokenizer) -> dict:
    """The weights and the staged tokenizer without the vocabulary's never-emitted tail; ``config``'s
    ``vocab_size`` updated in place."""
    from .vocab_trim import emitted_vocab_size, trim_tensors, trim_tokenizer_file

    if tokenizer is None or not (staging / "tokenizer.json").is_file() or "vocab_size" not in config:
        raise ValueError(f"{src}: --trim-vocab needs a tokenizer.json and a vocab_size in config.json")
    old, size = int(config["vocab_size"]), emitted_vocab_size(tokenizer)
    if size > old:
        raise ValueError(f"{src}: the tokenizer emits ids up to {size - 1:,}, past the model's {old:,} rows")
    tensors = trim_tensors(tensors, old, size)
    trim_tokenizer_file(staging / "tokenizer.json", size)
    config["vocab_size"] = size
    return tensors
