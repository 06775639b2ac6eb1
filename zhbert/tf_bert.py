"""A BERT checkpoint in google-research/bert's TensorFlow form, written as a model folder.

Google's ``chinese_L-12_H-768_A-12`` and the Chinese encoders released the same way (the
whole-word-masking RoBERTa and MacBERT downloads, a user's own ``run_pretraining.py`` output) come
as ``bert_config.json``, ``vocab.txt`` and ``bert_model.ckpt.*``. transformers 5 no longer converts
them; this does, without TensorFlow (:mod:`zhbert.tf_checkpoint`), into the folder
``save_pretrained`` writes (``BertForPreTraining``: the encoder, its masked-LM head and its
next-sentence head), which every zhbert command and plain transformers read.

Every variable of the checkpoint is either written or named: a checkpoint of another model
(ALBERT, ELECTRA) or with layers the config does not have is refused, not half converted.
Optimizer state (Adam's moments, the step count) is left out and counted.
"""

from __future__ import annotations

import re
from pathlib import Path

from .errors import ModelLoadError

__all__ = ["convert_tf_bert", "tf_bert_names"]

#: google-research/bert's config file
TF_CONFIG = "bert_config.json"
_CONFIG_KEYS = (
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "hidden_act",
    "hidden_dropout_prob",
    "attention_probs_dropout_prob",
    "max_position_embeddings",
    "type_vocab_size",
    "initializer_range",
)
# what a checkpoint saved during training holds beside the model: the optimizer's slots and counters
_TRAINING_STATE = re.compile(
    r"(.*/(adam_[mv]|Adam(_\d+)?|Momentum|Adagrad)|global_step|good_steps|loss_scale|current_loss_scale|bad_steps)"
)
# TF kernels are (in, out); torch's Linear weights are (out, in)
_LAYER_PARTS = {
    "attention/self/query": "attention.self.query",
    "attention/self/key": "attention.self.key",
    "attention/self/value": "attention.self.value",
    "attention/output/dense": "attention.output.dense",
    "intermediate/dense": "intermediate.dense",
    "output/dense": "output.dense",
}
_NORMS = {"attention/output/LayerNorm": "attention.output.LayerNorm", "output/LayerNorm": "output.LayerNorm"}


def tf_bert_names(layers: int) -> dict[str, tuple[str, bool]]:
    """google-research/bert's variable names -> (``BertForPreTraining`` parameter, transposed)."""
    names = {
        "bert/embeddings/word_embeddings": ("bert.embeddings.word_embeddings.weight", False),
        "bert/embeddings/token_type_embeddings": ("bert.embeddings.token_type_embeddings.weight", False),
        "bert/embeddings/position_embeddings": ("bert.embeddings.position_embeddings.weight", False),
        "bert/embeddings/LayerNorm/gamma": ("bert.embeddings.LayerNorm.weight", False),
        "bert/embeddings/LayerNorm/beta": ("bert.embeddings.LayerNorm.bias", False),
        "bert/pooler/dense/kernel": ("bert.pooler.dense.weight", True),
        "bert/pooler/dense/bias": ("bert.pooler.dense.bias", False),
        "cls/predictions/transform/dense/kernel": ("cls.predictions.transform.dense.weight", True),
        "cls/predictions/transform/dense/bias": ("cls.predictions.transform.dense.bias", False),
        "cls/predictions/transform/LayerNorm/gamma": ("cls.predictions.transform.LayerNorm.weight", False),
        "cls/predictions/transform/LayerNorm/beta": ("cls.predictions.transform.LayerNorm.bias", False),
        "cls/predictions/output_bias": ("cls.predictions.bias", False),
        "cls/seq_relationship/output_weights": ("cls.seq_relationship.weight", False),  # stored (out, in) already
        "cls/seq_relationship/output_bias": ("cls.seq_relationship.bias", False),
    }
    for i in range(layers):
        for tf_part, pt_part in _LAYER_PARTS.items():
            names[f"bert/encoder/layer_{i}/{tf_part}/kernel"] = (f"bert.encoder.layer.{i}.{pt_part}.weight", True)
            names[f"bert/encoder/layer_{i}/{tf_part}/bias"] = (f"bert.encoder.layer.{i}.{pt_part}.bias", False)
        for tf_part, pt_part in _NORMS.items():
            names[f"bert/encoder/layer_{i}/{tf_part}/gamma"] = (f"bert.encoder.layer.{i}.{pt_part}.weight", False)
            names[f"bert/encoder/layer_{i}/{tf_part}/beta"] = (f"bert.encoder.layer.{i}.{pt_part}.bias", False)
    return names


def _read_config(folder: Path):
    from transformers import BertConfig

    from .model_folder import CONFIG_LIMITS, read_config

    path = folder / TF_CONFIG
    if not path.is_file():
        raise ModelLoadError(f"{path}: missing (google-research/bert's config, released beside the checkpoint)")
    raw = read_config(folder, TF_CONFIG)
    missing = [k for k in _CONFIG_KEYS[:5] if k not in raw]
    if missing:
        raise ModelLoadError(f"{path}: no {', '.join(missing)}: not a BERT config")
    for key, limit in CONFIG_LIMITS.items():
        value = raw.get(key, 1)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= limit:
            raise ModelLoadError(f"{path}: {key} is {value!r}; a whole number from 1 to {limit:,}")
    settings = {k: raw[k] for k in _CONFIG_KEYS if k in raw}
    # modeling.py's "gelu" is the tanh approximation, which transformers calls gelu_new; its
    # "gelu" is the exact one. The weights were trained with the approximation.
    if settings.get("hidden_act", "gelu") == "gelu":
        settings["hidden_act"] = "gelu_new"
    return BertConfig(**settings, architectures=["BertForPreTraining"])


def convert_tf_bert(source: str | Path, dest: str | Path, cased: bool = False, overwrite: bool = False) -> list[str]:
    """Write the TensorFlow BERT checkpoint at ``source`` (a folder with ``bert_config.json``,
    ``vocab.txt`` and one checkpoint, or a checkpoint prefix inside one) to ``dest`` as a model
    folder: config, safetensors weights and a fast tokenizer (lower-cased unless ``cased``, as
    google-research/bert's Chinese models were trained). Returns notes on what was left out.
    ``dest`` follows :mod:`zhbert.destination`: new, empty, or (with ``overwrite``) a model folder."""
    import numpy as np
    import torch
    from transformers import BertForPreTraining, BertTokenizerFast

    from .destination import check_destination, staged_folder
    from .tf_checkpoint import TFCheckpoint, checkpoint_prefix
    from .tokenizer import read_vocab

    prefix = checkpoint_prefix(source)
    folder = prefix.parent
    dest = check_destination(dest, [folder], overwrite, what="convert-tf")
    config = _read_config(folder)
    vocab = folder / "vocab.txt"
    if not vocab.is_file():
        raise ModelLoadError(f"{vocab}: missing (the checkpoint's vocabulary, released beside it)")
    tokens = read_vocab(vocab)
    if len(tokens) != config.vocab_size:
        raise ModelLoadError(f"{vocab}: {len(tokens):,} tokens, but {TF_CONFIG} says vocab_size {config.vocab_size:,}")
    checkpoint = TFCheckpoint(prefix)
    names = tf_bert_names(config.num_hidden_layers)
    state = [n for n in checkpoint.entries if _TRAINING_STATE.fullmatch(n)]
    unknown = sorted(n for n in checkpoint.entries if n not in names and n not in state)
    if unknown:
        more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
        raise ModelLoadError(
            f"{checkpoint.index}: variables google-research/bert's BERT of {config.num_hidden_layers} layers does not have: "
            f"{', '.join(unknown[:3])}{more} (another model, such as ALBERT or ELECTRA, or a config for another checkpoint)"
        )
    with torch.device("meta"):  # the shapes the config makes, nothing allocated: a config far larger than its checkpoint stops here
        params = {k: tuple(v.shape) for k, v in BertForPreTraining(config).state_dict().items()}
    present = {tf_name: pt for tf_name, pt in names.items() if tf_name in checkpoint.entries}
    absent = [tf_name for tf_name in names if tf_name not in present]
    for tf_name, (pt_name, transposed) in present.items():
        checkpoint.check(tf_name)
        shape = checkpoint.shape(tf_name)
        if (shape[::-1] if transposed else shape) != params[pt_name]:
            raise ModelLoadError(f"{checkpoint.index}: {tf_name} is {list(shape)}; {TF_CONFIG} makes {pt_name} {list(params[pt_name])}")
    encoder_absent = [n for n in absent if n.startswith("bert/") and not n.startswith("bert/pooler/")]
    if encoder_absent:
        more = f" (and {len(encoder_absent) - 1} more encoder weights)" if len(encoder_absent) > 1 else ""
        raise ModelLoadError(f"{checkpoint.index}: no {encoder_absent[0]}{more}")
    model = BertForPreTraining(config)
    weights = {}
    for tf_name, (pt_name, transposed) in present.items():
        value = checkpoint.read(tf_name)
        weights[pt_name] = torch.from_numpy(np.ascontiguousarray(value.T if transposed else value, dtype=np.float32))
    model.load_state_dict(weights, strict=False)  # the heads a checkpoint lacks keep their initialisation
    model.tie_weights()  # the masked-LM decoder is the word embeddings, as in modeling.py
    notes = [f"read {prefix} ({len(weights)} tensors, {sum(w.numel() for w in weights.values()):,} weights)"]
    if state:
        notes.append(f"left out {len(state)} variables of training state (optimizer slots, step counters), such as {state[0]}")
    for head, what in (
        ("bert/pooler/", "the pooler"),
        ("cls/predictions/", "the masked-LM head"),
        ("cls/seq_relationship/", "the next-sentence head"),
    ):
        lacking = [n for n in absent if n.startswith(head)]
        if lacking:
            notes.append(f"the checkpoint has no {what} ({lacking[0]}): initialised at random; fine-tuning trains it")
    # google-research/bert's own tokenisation (BasicTokenizer, then WordPiece), which the stock
    # BERT tokenizer repeats; given as a mapping, since transformers 5 ignores a vocab_file
    tokenizer = BertTokenizerFast(vocab={t: i for i, t in enumerate(tokens)}, do_lower_case=not cased, tokenize_chinese_chars=True)
    tokenizer.model_max_length = config.max_position_embeddings
    with staged_folder(dest) as staging:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
    return notes
