"""A model soup: one head whose weights are the mean of several fine-tuning runs.

Runs of one recipe that differ only in their seed end in the same basin when they start from
the same pretrained weights, and the mean of their weights scores above the runs themselves,
at no cost at prediction time (Wortsman et al., "Model soups", ICML 2022: the uniform soup).
Runs that started from different encoders do not share a basin: their mean is noise, so
such folders are refused by how far each lies from the mean, rather than souped.

Not every run improves a soup. The greedy soup of the same paper scores each run on held-out data,
starts from the best and adds the others in order of their score, keeping each only if the soup's
score does not fall: it is never below the best run on the data that chose it.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Callable, Iterable, Mapping

import torch

from .destination import check_destination, staged_folder

__all__ = ["mean_state_dict", "soup", "greedy_soup", "MANIFEST", "MAX_DISTANCE"]

MANIFEST = "zhbert_soup.json"
# How far an ingredient's encoder lies from the soup's (relative L2 distance): six seeds of
# Resume NER fine-tuned from `ner` lie 0.03 from their mean; two independent starts lie ~0.7.
MAX_DISTANCE = 0.3


def mean_state_dict(states: Iterable[Mapping[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The mean of each floating-point tensor; integer buffers (position ids) from the first state.

    A running sum in float64: ``states`` may be a generator that loads one run at a time, so
    memory stays at one run and the sum however many runs are averaged."""
    total: dict[str, torch.Tensor] | None = None
    n = 0
    for state in states:
        if total is None:
            dtypes = {k: v.dtype for k, v in state.items()}
            total = {k: v.detach().to(torch.float64, copy=True) if v.is_floating_point() else v.detach().clone() for k, v in state.items()}
        else:
            if state.keys() != total.keys():
                raise ValueError(f"state {n + 1} has other tensors than the first: {sorted(state.keys() ^ total.keys())[:3]}")
            for k, v in state.items():
                if v.is_floating_point():
                    total[k] += v.detach()
        n += 1
        del state  # before the generator loads the next run
    if total is None:
        raise ValueError("no states to average")
    return {k: (v / n).to(dtypes[k]) if v.is_floating_point() else v for k, v in total.items()}


def _encoder_tensors(state: Mapping[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    return {k: v for k, v in state.items() if k.startswith(prefix + ".") and v.is_floating_point()}


def _distance(weights: Path, centre: Mapping[str, torch.Tensor], centre_norm: float) -> float:
    """Relative L2 distance of a saved run's encoder from the soup's, read one tensor at a time."""
    from safetensors import safe_open

    squared = 0.0
    with safe_open(str(weights), framework="pt") as f:
        for name, c in centre.items():
            squared += float((f.get_tensor(name) - c).pow(2).sum(dtype=torch.float64))
    return squared**0.5 / centre_norm


def _check_folders(folders: list[str | Path], output: str | Path, overwrite: bool) -> tuple[list[Path], Path]:
    paths = [Path(f) for f in folders]
    if len(paths) < 2:
        raise ValueError(f"a soup needs at least 2 fine-tuned folders, got {len(paths)}")
    if len({p.resolve() for p in paths}) < len(paths):
        raise ValueError("a folder is given twice: each run is one ingredient")
    return paths, check_destination(output, paths, overwrite, what="soup")


def soup(folders: list[str | Path], output: str | Path, overwrite: bool = False) -> dict:
    """Write the uniform soup of ``folders`` (zhbert task folders of one recipe, different seeds)
    to ``output``, with ``zhbert_soup.json`` naming each ingredient by path and SHA-256 and its
    distance from the soup. Refused, naming the folder: fewer than two, a head, label set,
    encoder shape, tokenizer or word list that differs from the first folder's, or weights too
    far from the mean to share a start. Returns the manifest."""
    from .heads.io import load_head, save_head
    from .lexicon import file_sha256, tokenizer_sha256
    from .tokenizer import load_tokenizer

    paths, output = _check_folders(folders, output, overwrite)
    first, tokenizer = load_head(paths[0]), load_tokenizer(paths[0])
    settings, tok = first.head.to_dict(), tokenizer_sha256(tokenizer)
    shape = {k: getattr(first.config, k) for k in ("model_type", "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads")}
    buffers = {k: v for k, v in first.state_dict().items() if not v.is_floating_point()}

    def runs():  # one run's weights in memory at a time, each checked against the first
        yield first.state_dict()
        for path in paths[1:]:
            model = load_head(path)
            other = model.head.to_dict()
            differs = sorted(k for k in settings.keys() | other.keys() if settings.get(k) != other.get(k))
            if differs:
                raise ValueError(f"{path}: its head differs from {paths[0]}'s in {', '.join(differs)}: soup runs of one recipe only")
            theirs = {k: getattr(model.config, k) for k in shape}
            if theirs != shape:
                raise ValueError(f"{path}: encoder {theirs} is not {paths[0]}'s {shape}")
            if tokenizer_sha256(load_tokenizer(path)) != tok:
                raise ValueError(f"{path}: its tokenizer differs from {paths[0]}'s")
            state = model.state_dict()
            del model
            for name, value in state.items():
                if not value.is_floating_point() and not torch.equal(value, buffers[name]):
                    raise ValueError(f"{path}: buffer {name} differs from {paths[0]}'s")
            yield state
            del state

    mean = mean_state_dict(runs())
    # A second pass for the distances, from the files: the mean is known only once every run is in.
    centre = _encoder_tensors(mean, first.base_model_prefix)
    centre_norm = sum(float(c.pow(2).sum(dtype=torch.float64)) for c in centre.values()) ** 0.5
    distances = [_distance(p / "model.safetensors", centre, centre_norm) for p in paths]
    for path, d in zip(paths, distances):
        if d > MAX_DISTANCE:
            raise ValueError(
                f"{path}: its encoder lies {d:.2f} from the soup's (relative L2; seeds of one run lie under "
                f"{MAX_DISTANCE}): the folders did not start from the same encoder, and their mean would be noise"
            )
    first.load_state_dict(mean)
    manifest = {
        "method": "uniform soup: the mean of the ingredients' weights (Wortsman et al. 2022)",
        "ingredients": [
            {"folder": str(p), "model_sha256": file_sha256(p / "model.safetensors"), "distance": round(d, 4)}
            for p, d in zip(paths, distances)
        ],
    }
    with staged_folder(output) as staging:  # the old soup is replaced only once the new one is complete
        save_head(first, tokenizer, staging)
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def greedy_soup(
    folders: list[str | Path], output: str | Path, score: Callable[[Path], float], metric: str = "score", overwrite: bool = False
) -> dict:
    """Write the greedy soup of ``folders`` to ``output`` (Wortsman et al. 2022, recipe 1): each
    folder is scored with ``score`` (higher is better, on data that is not the test set), then,
    from the best run down, each is added to the soup if the soup's score does not fall.

    ``output`` is a soup folder as :func:`soup` writes it, or a copy of the best run when no
    addition held its score. Its ``zhbert_soup.json`` adds ``greedy``: ``metric`` (what ``score``
    measures), each run's score and each trial's, in the order tried. Returns the manifest."""
    paths, output = _check_folders(folders, output, overwrite)

    def scored(folder: Path) -> float:
        value = float(score(folder))
        if not math.isfinite(value):  # a NaN would compare false with everything and decide silently
            raise ValueError(f"{folder}: its score is {value}, not a number a soup can be chosen by")
        return value

    runs = [{"folder": str(p), "score": scored(p)} for p in paths]
    order = sorted(range(len(paths)), key=lambda i: -runs[i]["score"])  # ties keep the order given
    kept, best = [paths[order[0]]], runs[order[0]]["score"]
    trials = []
    with staged_folder(output) as staging:  # trial soups live inside the staging folder; only the output outlives the call
        trial, chosen = staging / "trial", staging / "chosen"
        for i in order[1:]:
            shutil.rmtree(trial, ignore_errors=True)
            soup([*kept, paths[i]], trial)
            value = scored(trial)
            trials.append({"added": str(paths[i]), "score": value, "kept": value >= best})
            if value >= best:  # Wortsman et al.'s rule: an equal score keeps the run (more runs, flatter basin)
                kept.append(paths[i])
                best = value
                shutil.rmtree(chosen, ignore_errors=True)
                trial.rename(chosen)
        shutil.rmtree(trial, ignore_errors=True)
        if len(kept) == 1:  # no run joined the best one: the soup is that run, as it is
            from .lexicon import file_sha256

            shutil.copytree(kept[0], chosen)
            method = "greedy soup (Wortsman et al. 2022): no other run held the best run's score, so this is that run"
            manifest = {
                "method": method,
                "ingredients": [{"folder": str(kept[0]), "model_sha256": file_sha256(kept[0] / "model.safetensors"), "distance": 0.0}],
            }
        else:
            manifest = json.loads((chosen / MANIFEST).read_text(encoding="utf-8"))
            manifest["method"] = "greedy soup (Wortsman et al. 2022): the mean of the weights of the runs kept"
        manifest["greedy"] = {"metric": metric, "score": best, "runs": runs, "trials": trials}
        (chosen / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        for entry in chosen.iterdir():
            entry.rename(staging / entry.name)
        chosen.rmdir()
    return manifest
