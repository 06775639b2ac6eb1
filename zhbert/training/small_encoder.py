"""A small encoder to distil into: fewer layers and a narrower hidden size than its teacher,
its embeddings taken from the teacher's.

A model with 2 layers of width 128 runs about 4x faster than the bundled 4 x 256 encoder on
this CPU (bench/LOG.md, the pipeline-ceiling table), fast enough to outrun pkuseg, but
trained from random weights on a few million characters it would know nothing about rare
characters. So the new encoder starts from the teacher's character knowledge: its word,
position and segment embeddings are the teacher's projected onto their first ``hidden``
principal components (one projection for all three, since the teacher adds them before its
first layer norm); the transformer layers start random, drawn from ``seed`` on a private
generator state, so the same command writes the same encoder (a distillation recipe then repeats
from its commands alone) and the caller's random state is left as it was. The teacher's
tokenizer, vocabulary and pretraining record (trained length, normalisation) carry over unchanged.
"""

from __future__ import annotations

from pathlib import Path

import torch

__all__ = ["small_encoder"]


def small_encoder(
    teacher: str | Path,
    output: str | Path,
    layers: int = 2,
    hidden: int = 128,
    heads: int = 2,
    intermediate: int | None = None,
    seed: int = 0,
    overwrite: bool = False,
) -> Path:
    """Save a ``layers`` x ``hidden`` BERT encoder with the teacher's projected embeddings to ``output`` (a new or
    empty folder, or a model folder with ``overwrite``: :func:`zhbert.destination.check_destination`)."""
    from transformers import BertConfig, BertModel

    from ..destination import check_destination, staged_folder
    from ..encoder_info import KEY
    from ..models_registry import resolve_model_path
    from ..tokenizer import load_tokenizer, save_tokenizer

    src = resolve_model_path(str(teacher))
    check_destination(output, [src], overwrite, what="output")  # before the teacher is read
    from ..encoders import read_encoder_config

    model_type = read_encoder_config(src).model_type
    if model_type != "bert":  # the projection reads BERT's three embedding tables, added before one layer norm
        raise ValueError(f"{src}: a small encoder is built from a BERT teacher's embeddings; this one is {model_type}")
    big = BertModel.from_pretrained(str(src), local_files_only=True, trust_remote_code=False, add_pooling_layer=False)
    if hidden > big.config.hidden_size or hidden % heads:
        raise ValueError(f"hidden {hidden} must be at most the teacher's {big.config.hidden_size} and divisible by heads ({heads})")
    cfg = big.config.to_dict()
    for k in ("architectures", "zhbert_head", "id2label", "label2id", "_name_or_path", "transformers_version"):
        cfg.pop(k, None)
    cfg.update(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads, intermediate_size=intermediate or 4 * hidden)
    config = BertConfig(**cfg)
    if KEY in cfg:  # the teacher's pretraining record: same positions and normalisation seen
        note = f"{layers} x {hidden} encoder, embeddings projected from {src.name}; layers random (seed {seed})"
        setattr(config, KEY, {**cfg[KEY], "note": note})
    with torch.random.fork_rng(devices=[]):  # the random layers from the seed, the caller's RNG untouched
        torch.manual_seed(seed)
        small = BertModel(config, add_pooling_layer=True)
    emb = big.embeddings
    words = emb.word_embeddings.weight.detach()
    centre = words.mean(0)
    _, _, v = torch.linalg.svd(words - centre, full_matrices=False)
    proj = v[:hidden].T  # teacher width -> hidden, the directions of most variance
    with torch.no_grad():
        small.embeddings.word_embeddings.weight.copy_((words - centre) @ proj)
        small.embeddings.position_embeddings.weight.copy_(emb.position_embeddings.weight[: config.max_position_embeddings] @ proj)
        small.embeddings.token_type_embeddings.weight.copy_(emb.token_type_embeddings.weight @ proj)
    out = Path(output)
    with staged_folder(out) as staging:  # an earlier encoder there is replaced only once this one is complete
        small.save_pretrained(str(staging))
        save_tokenizer(load_tokenizer(src), staging)
    return out
