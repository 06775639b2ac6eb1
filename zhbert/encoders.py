"""The pretrained encoders zhbert's heads sit on, and how to reach the parts of each.

A head is an encoder plus zhbert's layers. The encoder is what ``AutoModel`` builds from a
folder's ``config.json``: BERT (and the BERT-architecture RoBERTa-wwm, MacBERT, LERT, RBT3,
MiniRBT), ELECTRA discriminators, ERNIE, ALBERT, RoFormer, DeBERTa-v2 and Megatron-BERT. Every
one of them reads ``input_ids``, ``attention_mask`` and ``token_type_ids``, returns the
hidden states of every layer, and keeps its weights under its own prefix (``bert.``,
``electra.``, ``ernie.``, ``albert.``, ``roformer.``, ``deberta.``), the names its own
``*ForTokenClassification`` uses. A zhbert model class is built per encoder type
(:func:`on_encoder`) so that transformers' own loading reads any of their checkpoints:
a bare encoder, a pretraining checkpoint or a fine-tuned one.

Only the types listed in ``ENCODER_TYPES`` are accepted: each is tested end to end (fine-tune,
save, load, predict). Nothing here runs code from a model folder.
"""

from __future__ import annotations

import functools
import inspect
import re
from pathlib import Path

from .errors import ModelLoadError

__all__ = [
    "ENCODER_TYPES",
    "check_encoder_type",
    "read_encoder_config",
    "on_encoder",
    "build_encoder",
    "encoder_depth",
    "token_type_table",
    "masked_lm_class",
    "plain_head_class",
]

# model_type -> what users know it as (said in the refusal of any other type)
ENCODER_TYPES = {
    "bert": "BERT, RoBERTa-wwm, MacBERT, LERT, RBT3, MiniRBT",
    "electra": "ELECTRA discriminators",
    "ernie": "ERNIE 1.0 / 3.0",
    "albert": "ALBERT",
    "roformer": "RoFormer",
    "deberta-v2": "DeBERTa-v2 (Erlangshen)",
    "megatron-bert": "Megatron-BERT",
}


def check_encoder_type(model_type, where) -> str:
    """``model_type`` if zhbert's heads read that encoder, else a ModelLoadError naming ``where``."""
    if model_type not in ENCODER_TYPES:
        known = "; ".join(f"{t} ({what})" for t, what in ENCODER_TYPES.items())
        raise ModelLoadError(f"{where}: model_type {model_type!r} is not an encoder zhbert reads; it reads {known}")
    return model_type


def read_encoder_config(path: str | Path):
    """The folder's ``config.json`` as its own config class (``AutoConfig``; never remote code),
    refused by name when the encoder type is not one zhbert reads."""
    from transformers import AutoConfig

    from .model_folder import read_config

    path = Path(path)
    check_encoder_type(read_config(path).get("model_type"), path / "config.json")
    return AutoConfig.from_pretrained(str(path), local_files_only=True, trust_remote_code=False)


def _encoder_class(model_type: str):
    from transformers import CONFIG_MAPPING, MODEL_MAPPING

    check_encoder_type(model_type, "config.json")
    return CONFIG_MAPPING[model_type], MODEL_MAPPING[CONFIG_MAPPING[model_type]]


@functools.cache
def on_encoder(model_class: type, model_type: str) -> type:
    """``model_class`` (a zhbert model written on BERT: ``class X(Mixin, BertPreTrainedModel)``)
    rebuilt on the ``PreTrainedModel`` base of ``model_type``: that base's config class, weight
    prefix, attention support and weight initialisation. The class for ``bert`` is ``model_class``
    itself, so every zhbert folder saved before keeps its meaning."""
    if model_type == "bert":
        return model_class
    config_class, encoder = _encoder_class(model_type)
    base = encoder.__mro__[1]  # e.g. ElectraModel -> ElectraPreTrainedModel
    mixin, bert_base = model_class.__bases__
    assert bert_base.__name__ == "BertPreTrainedModel", f"{model_class.__name__} is not written as (Mixin, BertPreTrainedModel)"
    attributes = {"config_class": config_class, "__module__": model_class.__module__, "__qualname__": model_class.__qualname__}
    return type(model_class.__name__, (mixin, base), attributes)


def build_encoder(config):
    """A fresh encoder of the config's type, with its pooler where the type has one (BERT,
    ERNIE, ALBERT, Megatron-BERT: pretrained on NSP/SOP); the others pool the ``[CLS]`` state."""
    _, encoder = _encoder_class(config.model_type)
    if "add_pooling_layer" in inspect.signature(encoder.__init__).parameters:
        return encoder(config, add_pooling_layer=True)
    return encoder(config)


_LAYER = re.compile(r"\.layer\.(\d+)\.")


def encoder_depth(name: str, prefix: str, layers: int) -> int:
    """Where an encoder parameter sits, counted from the input: 0 for the embeddings (and what
    projects or positions them), i + 1 for layer i, ``layers`` for what sits on top (a pooler,
    ALBERT's one shared layer group). ``name`` is a parameter name under ``prefix``."""
    rest = name[len(prefix) + 1 :]
    found = _LAYER.search("." + rest)
    if found and rest.startswith("encoder."):
        return int(found.group(1)) + 1
    if "embed" in rest.split(".", 2)[0] or rest.startswith(("encoder.embed", "encoder.rel_embeddings")):
        return 0
    return layers


def token_type_table(model):
    """The encoder's token-type (segment) embedding table, or None when it has none
    (DeBERTa-v2 with ``type_vocab_size`` 0)."""
    return getattr(getattr(model.base_model, "embeddings", None), "token_type_embeddings", None)


def masked_lm_class(model_type: str):
    """transformers' masked-LM class for the encoder type (``AutoModelForMaskedLM``'s choice)."""
    from transformers import MODEL_FOR_MASKED_LM_MAPPING

    config_class, _ = _encoder_class(model_type)
    return MODEL_FOR_MASKED_LM_MAPPING[config_class]


# encoder types whose own *ForSequenceClassification is zhbert's plain ``cls`` head: one linear
# layer on the pooler's output (the others put a two-layer classifier, or another pooler, on [CLS])
_POOLED_CLASSIFIERS = ("bert", "ernie", "albert", "megatron-bert")


def plain_head_class(model_type: str, kind: str) -> str | None:
    """The name of transformers' own class that computes zhbert's plain head of ``kind``
    (``token``: a linear layer on the last layer; ``sequence``/``pair``: one on the pooled
    ``[CLS]``) with the same weight names, or None when the encoder type has none."""
    from transformers import MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING, MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING

    config_class, _ = _encoder_class(model_type)
    if kind == "token":
        return MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING[config_class].__name__
    if model_type in _POOLED_CLASSIFIERS:
        return MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING[config_class].__name__
    return None
