"""Copy a model folder for shipping: weights as fp16 safetensors (half the bytes), every
other file (config, tokenizer) unchanged. Loading with zhbert gives fp32 again."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from safetensors.torch import load_file, save_file

from .errors import ModelLoadError

__all__ = ["export_model"]

WEIGHTS = "model.safetensors"


def export_model(src: str | Path, dst: str | Path, fp16: bool = True) -> Path:
    src, dst = Path(src), Path(dst)
    if not (src / "config.json").is_file() or not (src / WEIGHTS).is_file():
        raise ModelLoadError(f"{src}: not a model folder (needs config.json and {WEIGHTS})")
    if dst.resolve() == src.resolve():
        raise ValueError(f"{dst}: export needs a different folder from its source")
    staging = dst.with_name(dst.name + ".tmp")  # replace the old export only once the new one is complete
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for f in src.iterdir():
        if f.is_file() and f.name != WEIGHTS and not f.name.startswith(("training_args", "optimizer", "scheduler", "rng_state")):
            shutil.copy2(f, staging / f.name)
    tensors = load_file(str(src / WEIGHTS))
    if fp16:
        tensors = {k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in tensors.items()}
        config = json.loads((staging / "config.json").read_text(encoding="utf-8"))
        config["dtype"] = "float16"
        (staging / "config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    save_file(tensors, str(staging / WEIGHTS), metadata={"format": "pt"})
    shutil.rmtree(dst, ignore_errors=True)
    staging.rename(dst)
    return dst
