"""A part-of-speech head over a segmenter's own features: the model side (build, save, load, vote).

A linear layer reads the features the segmenter's classifier reads (the encoder's layers, mixed by
learned scalar weights, and its SoftLexicon word features), gives each character a BMES x POS tag,
and each word takes the part of speech its characters vote for (ties: the first character's). The
encoder and the word features stay the segmenter's, frozen and shared.

A folder holds ``zhbert_pos.json`` (the segmenter, the SHA-256 of its weights, the head's settings)
and ``pos_head.safetensors``. A segmenter whose weights changed since is refused, since the head
reads features of those weights. Training is :mod:`zhbert.pos_on_segmenter`.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import torch

from ..errors import ModelLoadError
from ..lexicon import file_sha256
from ..models_registry import POS_MARKER
from .config import HeadConfig
from .model import ZhBertForTask, task_model_class

__all__ = [
    "MARKER",
    "WEIGHTS",
    "FORMAT",
    "pos_model",
    "head_state",
    "check_pos_destination",
    "save_pos_folder",
    "load_pos_folder",
    "attach_head",
    "vote",
]

MARKER = POS_MARKER
WEIGHTS = "pos_head.safetensors"
FORMAT = "zhbert-pos-on-segmenter-1"


def pos_model(segmenter: ZhBertForTask, head: HeadConfig) -> ZhBertForTask:
    """A frozen-mode token head sharing ``segmenter``'s encoder and word features (one copy in
    memory, so a user dictionary added to the segmenter's lexicon reaches both)."""
    model = task_model_class(segmenter.config.model_type)(segmenter.config, head, shared_encoder=segmenter.base_model)
    if segmenter.word_features is not None:
        model.word_features = segmenter.word_features
        model.word_features.requires_grad_(False)
    model.freeze_encoder()
    return model.eval()


def head_state(model: ZhBertForTask) -> dict[str, torch.Tensor]:
    """The head's own weights: fusion and classifier (the encoder and word features are the segmenter's)."""
    return {k: v for k, v in model.state_dict().items() if not k.startswith((model.base_model_prefix + ".", "word_features."))}


#: every file a POS head's folder holds: a rerun replaces a folder of these, and nothing else
OWN_FILES = (MARKER, WEIGHTS, "metrics.json")


def check_pos_destination(output: Path) -> Path:
    """Raise ``ValueError`` (one line naming the file) unless ``output`` is new, empty, or a POS head's folder
    zhbert saved (which a rerun replaces whole): checked before training, so that no run ends in a refusal
    or in a user's file written over."""
    from ..destination import foreign_file

    if output.is_symlink() or (output.exists() and not output.is_dir()):
        raise ValueError(f"{output}: exists and is not a folder; choose another --output-dir")
    entries = sorted(p.name for p in output.iterdir()) if output.is_dir() else []
    stranger = next((name for name in entries if name not in OWN_FILES), None)
    theirs = (
        output / stranger
        if stranger
        else foreign_file(output, entries, MARKER, lambda r: isinstance(r, dict) and r.get("format") == FORMAT)
    )
    if theirs is not None:
        raise ValueError(f"{theirs}: not a file of a POS head zhbert saved; a run would replace {output}: choose another --output-dir")
    return output


def save_pos_folder(model: ZhBertForTask, segmenter: str, segmenter_path: Path, output: Path, metrics: dict | None = None) -> Path:
    """Write the head's folder (checked by :func:`check_pos_destination`); an earlier one is replaced only
    once the new one is complete."""
    from safetensors.torch import save_file

    from ..destination import staged_folder

    check_pos_destination(output)
    record = {
        "format": FORMAT,
        "segmenter": segmenter,
        "segmenter_sha256": file_sha256(segmenter_path / "model.safetensors"),
        "head": model.head.to_dict(),
    }
    with staged_folder(output) as staging:
        save_file({k: v.to(torch.float16).contiguous() for k, v in head_state(model).items()}, str(staging / WEIGHTS))
        (staging / MARKER).write_text(json.dumps(record, ensure_ascii=False, indent=2), encoding="utf-8")
        if metrics is not None:
            (staging / "metrics.json").write_text(json.dumps(metrics, ensure_ascii=False, indent=2), encoding="utf-8")
    return output


def load_pos_folder(path: Path) -> tuple[Path, HeadConfig, dict[str, torch.Tensor]]:
    """The segmenter folder, the head's settings and its weights, checked: errors name the file."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    from ..models_registry import resolve_model_path

    marker = path / MARKER
    try:
        if marker.stat().st_size > 1 << 20:
            raise ModelLoadError(f"{marker}: {marker.stat().st_size:,} bytes; this file is a few KB")
        record = json.loads(marker.read_text(encoding="utf-8"))
        if record.get("format") != FORMAT:
            raise ModelLoadError(f"{marker}: format {record.get('format')!r}; this zhbert reads {FORMAT!r}")
        head = HeadConfig.from_dict(record["head"])
        segmenter = str(record["segmenter"])
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, RecursionError) as e:
        raise ModelLoadError(f"{marker}: not a POS head record ({type(e).__name__}: {e})") from None
    seg_path = resolve_model_path(segmenter)
    if seg_path.resolve() == path.resolve():
        raise ModelLoadError(f"{marker}: names its own folder as its segmenter; it must name a segmentation model (such as cws)")
    if not (seg_path / "model.safetensors").is_file():
        raise ModelLoadError(
            f"{marker}: its segmenter {segmenter!r} has no model.safetensors ({seg_path}); it must name a segmentation model"
        )
    if file_sha256(seg_path / "model.safetensors") != record.get("segmenter_sha256"):
        raise ModelLoadError(
            f"{marker}: trained on the features of segmenter {segmenter!r} as it was; {seg_path / 'model.safetensors'} "
            "has changed since (SHA-256 differs): retrain the head (python -m zhbert.pos_on_segmenter)"
        )
    try:
        weights = {k: v.float() for k, v in load_file(str(path / WEIGHTS)).items()}
    except (OSError, SafetensorError, ValueError) as e:
        raise ModelLoadError(f"{path / WEIGHTS}: {e}") from None
    return seg_path, head, weights


def attach_head(segmenter: ZhBertForTask, head: HeadConfig, weights: dict[str, torch.Tensor], where: Path) -> ZhBertForTask:
    model = pos_model(segmenter, head)
    expected = {k: v.shape for k, v in head_state(model).items()}
    got = {k: v.shape for k, v in weights.items()}
    if expected != got:
        raise ModelLoadError(f"{where / WEIGHTS}: weights {sorted(got)} do not fit the head in {where / MARKER}")
    model.load_state_dict({**model.state_dict(), **weights})
    return model.eval()


def vote(words, tags) -> list[tuple[str, float]]:
    """Each word's POS and its mean probability: the tag its characters' BMES x POS tags name most
    often (ties: the earliest), from ``tags`` (a :class:`~zhbert.heads.inference.TokenTags`)."""
    per_char: dict[int, tuple[str, float]] = {}
    scores = tags.scores or (1.0,) * len(tags.tags)
    for (s, e), tag, p in zip(tags.encoding.offsets, tags.tags, scores):
        if tag != "O":  # the scheme's outside tag names no part of speech
            for k in range(s, e):
                per_char[k] = (tag.split("-", 1)[-1], p)
    out = []
    for w in words:
        seen = [per_char[k] for k in range(w.start, w.end) if k in per_char]
        if not seen:
            out.append(("x", 0.0))  # no character read with a tag: PKU's tag for what is no morpheme
            continue
        counts = Counter(t for t, _ in seen)  # in order of first appearance, so max() breaks ties by the earliest
        best = max(counts, key=counts.get)
        out.append((best, sum(p for t, p in seen if t == best) / counts[best]))
    return out
