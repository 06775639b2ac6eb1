"""Model names: bundled short names -> folders shipped inside the package, and any
name or folder a user passes -> the folder to load (:func:`resolve_model_path`).

The README's main command runs the demo on these; a missing one is reported with
the command that makes it.
"""

from __future__ import annotations

import re
from pathlib import Path

from .errors import ModelLoadError
from .model_folder import read_config  # noqa: F401  (read here by the modules that resolve models)

BUNDLED_DIR = Path(__file__).parent / "pretrained"
POS_MARKER = "zhbert_pos.json"  # zhbert/pos_on_segmenter.py: a POS head over a segmenter's features

# short name -> (folder, how to make it): each command from the raw data, on the 2-core CPU unless it says
# otherwise; `--trim-vocab` drops the vocabulary pieces zhbert's tokenizer never produces (same outputs).
BUNDLED = {
    "base": (
        "base",
        "bash bench/default_model.sh (pretraining stages 1-3 on CPU), bash bench/default_model_gpu.sh "
        "(stage 4, wwm on one GPU), stages 5-7 (char masking at 512 tokens; char masking + SOP at 128; mixed "
        "masking + SOP at 128, bash bench/fill_mask_long_run.sh; all on CPU, in bench/default_model.sh) and zhbert "
        "export runs/fm/run/final zhbert/pretrained/base --trim-vocab",
    ),
    "electra": (
        "electra",
        "bash bench/encoder_long_run.sh (ELECTRA from base's stage 6 on CPU, to checkpoint-12500), bash bench/encoder_long_run_gpu.sh "
        "run runs/long/electra/checkpoint-12500 ... (its end, 10,500 steps on one GPU), python bench/encoder_curve.py --run "
        "runs/long/electra --checkpoint runs/long-gpu/checkpoint-10500 --step 96500, then zhbert export "
        "runs/long/electra/curve/step-96500 zhbert/pretrained/electra --trim-vocab",
    ),
    "cws": (
        "cws",
        "source bench/earlier_base.sh (stage 6 of base, into runs/base-stage6); zhbert train cws --dataset news+weibo "
        "--encoder runs/base-stage6 --lexicon jieba --lexicon-dim 32 --batch-size 64 --epochs 4 --learning-rate 5e-4 "
        "--score-on dev --output-dir runs/cws-lex-b64-e4; zhbert export runs/cws-lex-b64-e4/model "
        "zhbert/pretrained/cws (chosen on the dev split among the candidates of bench/gpu_jobs/word_features.txt, "
        "trained on one GPU with bench/word_features_gpu.sh)",
    ),
    "cws-fast": (
        "cws-fast",
        "bash bench/cws_candidates.sh runs/cws-candidates (a two-standard teacher from base's stage 6, its reading of 5 M corpus "
        "characters, a 1 x 64 CRF student of it), then cp -r runs/cws-candidates/cws-fast-blend zhbert/pretrained/cws-fast",
    ),
    "pos": (
        "pos",
        "python -m zhbert.pos_on_segmenter --segmenter cws --epochs 3 --learning-rate 3e-3 --output-dir runs/pos-heldout; "
        "cp -r runs/pos-heldout/model zhbert/pretrained/pos (a head over cws's features: retrain it whenever cws changes)",
    ),
    "tagging": (
        "tagging",
        "zhbert train tagging --dataset usual --encoder electra --epochs 3 --learning-rate 2e-4 --score-on dev "
        "--output-dir runs/tagging-usual; zhbert export runs/tagging-usual/model zhbert/pretrained/tagging --trim-vocab",
    ),
    "ner": (
        "ner",
        "zhbert train ner --dataset sources --encoder electra --crf --lexicon jieba --lexicon-dim 32 --learning-rate 5e-4 "
        "--batch-size 64 --epochs 3 --score-on dev --output-dir runs/ner-sources; zhbert export runs/ner-sources/model "
        "zhbert/pretrained/ner --trim-vocab",
    ),
    "matching": (
        "matching",
        "zhbert train matching --dataset paraphrase --encoder electra --epochs 3 --learning-rate 2e-4 --truncate "
        "--score-on dev --output-dir runs/matching-paraphrase; zhbert export runs/matching-paraphrase/model "
        "zhbert/pretrained/matching --trim-vocab",
    ),
}


def bundled_path(name: str) -> Path:
    """Folder of a bundled model; raises with the list of names or the make command."""
    if name not in BUNDLED:
        raise ModelLoadError(f"unknown model {name!r}; bundled models: {', '.join(BUNDLED)} (or pass a local model folder)")
    folder, how = BUNDLED[name]
    path = BUNDLED_DIR / folder
    if not is_model_folder(path):
        raise ModelLoadError(f"bundled model {name!r} is missing at {path}; make it with: {how}")
    return path


def is_model_folder(path: Path) -> bool:
    return (path / "config.json").is_file() or (path / POS_MARKER).is_file()


def missing_bundled() -> list[tuple[str, Path, str]]:
    return [(n, BUNDLED_DIR / f, how) for n, (f, how) in BUNDLED.items() if not is_model_folder(BUNDLED_DIR / f)]


def resolve_model_path(name_or_path: str, local_files_only: bool = False) -> Path:
    """A bundled short name, a local folder holding ``config.json`` (or ``zhbert_pos.json``: a POS
    head over a segmenter, whose segmenter folder is checked when it is loaded), or a Hugging Face
    model id (``org/name``) found in the local Hugging Face cache (:func:`hub_model_path`)."""
    from .model_folder import check_model_folder, no_config_problem  # torch-free, but only needed for folders

    path = Path(name_or_path)
    if path.is_dir():
        if (path / POS_MARKER).is_file() and not (path / "config.json").is_file():
            return path
        if not (path / "config.json").is_file():
            raise ModelLoadError(no_config_problem(path))
        check_model_folder(path)  # sizes, weights' shapes and the tokenizer, before anything is used
        return path
    if path.exists():
        raise ModelLoadError(f"{path}: expected a model folder, found a file")
    if name_or_path not in BUNDLED and HUB_ID.match(name_or_path):
        path = hub_model_path(name_or_path, local_files_only)
        check_model_folder(path)
        return path
    return bundled_path(name_or_path)


# a Hugging Face model id: one owner, one name (a relative folder that does not exist looks the same)
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
HUB_FILES = [
    "config.json",
    "*.safetensors",
    "model.safetensors.index.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
    "special_tokens_map.json",
]


def hub_model_path(repo_id: str, local_files_only: bool = False) -> Path:
    """The folder of ``repo_id`` in the local Hugging Face cache (``HF_HUB_CACHE`` / ``HF_HOME``, as
    transformers reads them). Missing there, it is downloaded (its config, safetensors weights and
    tokenizer files only; no pickled weights, no code), unless ``local_files_only`` or ``HF_HUB_OFFLINE``."""
    from huggingface_hub import constants, snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    offline = local_files_only or constants.HF_HUB_OFFLINE
    try:
        return Path(snapshot_download(repo_id, local_files_only=True, allow_patterns=HUB_FILES))
    except LocalEntryNotFoundError:
        if offline:
            why = "local_files_only=True" if local_files_only else "HF_HUB_OFFLINE is set"
            raise ModelLoadError(
                f"{repo_id!r}: not a bundled model ({', '.join(BUNDLED)}), not a local folder, and not in the local "
                f"Hugging Face cache ({constants.HF_HUB_CACHE}); {why}, so it is not downloaded"
            ) from None
    try:
        return Path(snapshot_download(repo_id, allow_patterns=HUB_FILES))
    except Exception as e:  # no network, no such repository, a gated one: say which, in one line
        raise ModelLoadError(
            f"{repo_id!r}: not a bundled model ({', '.join(BUNDLED)}), not a local folder, not in the local Hugging Face "
            f"cache ({constants.HF_HUB_CACHE}), and the download failed: {str(e).splitlines()[0]}"
        ) from None
