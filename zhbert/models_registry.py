"""Model names: bundled short names -> folders shipped inside the package, and any
name or folder a user passes -> the folder to load (:func:`resolve_model_path`).

The README's main command runs the demo on these; a missing one is reported with
the command that makes it.
"""

from __future__ import annotations

from pathlib import Path

from .errors import ModelLoadError
from .model_folder import read_config  # noqa: F401  (read here by the modules that resolve models)

BUNDLED_DIR = Path(__file__).parent / "pretrained"
POS_MARKER = "zhbert_pos.json"  # zhbert/pos_on_segmenter.py: a POS head over a segmenter's features

# short name -> (folder, how to make it). The task models: full training sets, 3 epochs, fine-tuned on one
# GPU with bench/recipe_rows_gpu.sh (bench/gpu_jobs/full.txt); on a CPU the same command takes longer.
_FT = "--encoder base --epochs 3 --learning_rate 2e-4"
BUNDLED = {
    "base": (
        "base",
        "bash bench/default_model.sh (pretraining stages 1-3 on CPU), bash bench/default_model_gpu.sh "
        "(stage 4, wwm on one GPU), stages 5 and 6 (char masking at 512 tokens; char masking + SOP at 128, on CPU, "
        "in bench/default_model.sh) and zhbert export runs/sop-long/final zhbert/pretrained/base",
    ),
    "cws": (
        "cws",
        "zhbert train cws --dataset news+weibo --encoder base --lexicon jieba --lexicon_dim 32 --batch_size 64 --epochs 4 "
        "--learning_rate 5e-4 --score_on dev --output_dir runs/cws-lex-b64-e4; zhbert export runs/cws-lex-b64-e4/model "
        "zhbert/pretrained/cws (chosen on the dev split among the candidates of bench/gpu_jobs/word_features.txt, "
        "trained on one GPU with bench/word_features_gpu.sh)",
    ),
    "cws-fast": (
        "cws-fast",
        "a 2 x 128 student of an earlier cws, before word features (bench/LOG.md, 'A fast segmenter distilled from cws'): "
        "python corpora/silver_segmentation.py --output runs/silver/cws.txt --chars 5000000; "
        "zhbert small-encoder --teacher cws --layers 2 --hidden 128 --output runs/student-2x128; "
        "zhbert train cws --dataset news+weibo --encoder runs/student-2x128 --extra_train runs/silver/cws.txt "
        "--epochs 5 --batch_size 64 --learning_rate 1e-3 --output_dir runs/cws-fast2; the same with "
        "--encoder runs/cws-fast2/model --epochs 3 --learning_rate 3e-4 --output_dir runs/cws-fast3; "
        "zhbert train cws --dataset news+weibo --encoder runs/cws-fast3/model --epochs 2 --batch_size 64 --learning_rate 1e-4 "
        "--output_dir runs/cws-fast4; the same from runs/cws-fast4/model with --learning_rate 5e-5 --output_dir runs/cws-fast5; "
        "zhbert train cws --dataset pku --encoder runs/cws-fast5/model --epochs 2 --batch_size 64 --learning_rate 5e-5 "
        "--output_dir runs/cws-fast6; zhbert export runs/cws-fast6/model zhbert/pretrained/cws-fast",
    ),
    "pos": (
        "pos",
        "python -m zhbert.pos_on_segmenter --segmenter cws --epochs 2 --learning-rate 3e-3 --output-dir runs/pos-on-cws; "
        "cp -r runs/pos-on-cws/model zhbert/pretrained/pos (a head over cws's features: retrain it whenever cws changes)",
    ),
    "tagging": (
        "tagging",
        f"zhbert train tagging --dataset usual {_FT} --output_dir runs/rec/tagging-usual-full; "
        "zhbert export runs/rec/tagging-usual-full/model zhbert/pretrained/tagging",
    ),
    "ner": (
        "ner",
        "zhbert train ner --dataset msra --encoder base --lexicon jieba --lexicon_dim 32 --crf --batch_size 64 --epochs 4 "
        "--learning_rate 5e-4 --score_on dev --output_dir runs/ner-lexcrf-b64-e4; zhbert export runs/ner-lexcrf-b64-e4/model "
        "zhbert/pretrained/ner (chosen on the dev split, as cws)",
    ),
    "matching": (
        "matching",
        f"zhbert train matching --dataset paraphrase {_FT} --output_dir runs/rec/matching-paraphrase-full; "
        "zhbert export runs/rec/matching-paraphrase-full/model zhbert/pretrained/matching",
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


def resolve_model_path(name_or_path: str) -> Path:
    """A bundled short name or a local folder holding ``config.json`` (or ``zhbert_pos.json``: a POS
    head over a segmenter, whose segmenter folder is checked when it is loaded)."""
    from .model_folder import check_model_folder  # torch-free, but only needed for folders

    path = Path(name_or_path)
    if path.is_dir():
        if (path / POS_MARKER).is_file() and not (path / "config.json").is_file():
            return path
        if not (path / "config.json").is_file():
            raise ModelLoadError(f"{path}: not a model folder (config.json is missing)")
        check_model_folder(path)  # sizes, weights' shapes and the tokenizer, before anything is used
        return path
    if path.exists():
        raise ModelLoadError(f"{path}: expected a model folder, found a file")
    return bundled_path(name_or_path)
