"""Commands on model folders: info, export, convert-tf, small-encoder, soup, static-embeddings, demo."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

from .app import OUTPUT_DIR, _fail, app


@app.command()
def info(model: str = typer.Argument(..., help="bundled model name or a local model folder")) -> None:
    """Config and parameter count (embeddings / attention / feed-forward / heads)."""
    from ..model_info import describe

    try:
        typer.echo(json.dumps(describe(model), ensure_ascii=False, indent=2))
    except (FileNotFoundError, KeyError, OSError, ValueError) as e:
        _fail(str(e).strip("'\""))


@app.command()
def export(
    source: str = typer.Argument(..., help="a bundled model's name or a save_pretrained model folder"),
    dest: Path = typer.Argument(..., help="a new or empty folder to write the copy to (an existing model folder needs --overwrite)"),
    fp16: bool = typer.Option(True, help="store weights as fp16 (zhbert loads them as fp32)"),
    trained_length: Optional[int] = typer.Option(None, help="the encoder's pretraining length, recorded when the folder lacks it"),
    trim_vocab: bool = typer.Option(
        False, help="leave out the vocabulary rows at its end that the tokenizer never emits (same outputs, smaller file)"
    ),
    overwrite: bool = typer.Option(False, help="replace a model folder already at DEST (a folder holding anything else is never replaced)"),
    onnx: bool = typer.Option(
        False, "--onnx", help="also write the encoder as DEST/onnx/model.onnx for backend='onnx' (task heads; pip install 'zhbert[onnx]')"
    ),
    int8: bool = typer.Option(False, "--int8", help="with --onnx: also DEST/onnx/model_qint8.onnx, int8 weights (backend='onnx-int8')"),
    blend_criteria: Optional[str] = typer.Option(
        None,
        "--blend-criteria",
        metavar="NAME",
        help="a head trained with --criteria: add NAME, a reading between its standards (the mean of their segment rows), as the default",
    ),
) -> None:
    """Copy a model folder for shipping, weights in fp16 safetensors; with --onnx, the encoder as an ONNX graph too."""
    from ..errors import ZhbertError
    from ..export import export_model

    try:
        out = export_model(
            source, dest, fp16, trained_length, trim_vocab, overwrite=overwrite, onnx=onnx, int8=int8, blend_criteria=blend_criteria
        )
    except (OSError, ValueError, ZhbertError) as e:
        _fail(str(e))
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) / 1e6
    typer.echo(f"exported {source} -> {out} ({size:.1f} MB)")
    only = json.loads((out / "config.json").read_text(encoding="utf-8")).get("zhbert_only")
    if only:  # the folder's README.md and config.json say it too
        typer.echo(f"note: {out} {only}".replace("FOLDER", str(out)))


@app.command("convert-tf")
def convert_tf(
    source: Path = typer.Argument(
        ..., help="a folder with bert_config.json, vocab.txt and a TensorFlow checkpoint (bert_model.ckpt.*), or a checkpoint prefix in one"
    ),
    dest: Path = typer.Argument(..., help="a new or empty folder to write to (an existing model folder needs --overwrite)"),
    cased: bool = typer.Option(False, "--cased", help="keep letter case (google-research/bert's Chinese models were trained lower-cased)"),
    overwrite: bool = typer.Option(False, help="replace a model folder already at DEST (a folder holding anything else is never replaced)"),
) -> None:
    """A BERT checkpoint in google-research/bert's TensorFlow form (bert_model.ckpt) as a model folder; no TensorFlow needed."""
    from ..errors import ZhbertError
    from ..tf_bert import convert_tf_bert

    try:
        notes = convert_tf_bert(source, dest, cased=cased, overwrite=overwrite)
    except (OSError, ValueError, ZhbertError) as e:
        _fail(str(e))
    for note in notes:
        typer.echo(note)
    typer.echo(f"wrote {dest}: `--encoder {dest}` fine-tunes it, `zhbert pretrain --init {dest}` continues its pretraining")


@app.command("small-encoder")
def small_encoder_command(
    teacher: str = typer.Option(..., "--teacher", help="bundled model name or a BERT folder whose embeddings start the new encoder"),
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder to write"),
    layers: int = typer.Option(2, help="transformer layers"),
    hidden: int = typer.Option(128, help="hidden size (at most the teacher's)"),
    heads: int = typer.Option(2, help="attention heads"),
    seed: int = typer.Option(0, help="draws the random layers: the same seed writes the same encoder"),
    overwrite: bool = typer.Option(
        False, help="replace a model folder already at the output (a folder holding anything else is never replaced)"
    ),
) -> None:
    """A small encoder to distil into: the teacher's embeddings projected to HIDDEN, random layers."""
    from ..training.small_encoder import small_encoder

    try:
        out = small_encoder(teacher, output, layers, hidden, heads, seed=seed, overwrite=overwrite)
    except (OSError, ValueError) as e:
        _fail(str(e))
    typer.echo(f"{layers} x {hidden} encoder from {teacher}'s embeddings -> {out}")


@app.command()
def soup(
    folders: List[Path] = typer.Argument(..., help="task folders of one recipe, fine-tuned from the same encoder with different seeds"),
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder to write the souped head to"),
    greedy: Optional[str] = typer.Option(
        None,
        help="a greedy soup: score each run and each trial soup with this recipe (ner, cws, ...) on --dataset's dev split, "
        "best run first, and keep a run only if the soup's dev score does not fall",
    ),
    dataset: Optional[str] = typer.Option(None, help="--greedy's dataset (default: the recipe's own)"),
    max_eval_samples: Optional[int] = typer.Option(None, help="--greedy: score on the first N dev examples only"),
    overwrite: bool = typer.Option(
        False, help="replace a model folder already at the output (a folder holding anything else is never replaced)"
    ),
) -> None:
    """Average the weights of several runs of one recipe into one head (a uniform model soup, or with
    --greedy the greedy soup chosen on a dev split)."""
    from ..model_soup import MANIFEST, greedy_soup
    from ..model_soup import soup as make_soup

    if greedy is None and (dataset or max_eval_samples):
        _fail("--dataset and --max-eval-samples choose what --greedy scores on; a uniform soup scores nothing")
    try:
        if greedy is None:
            manifest = make_soup(folders, output, overwrite=overwrite)
        else:
            from ..recipes import recipe

            scorer, options = recipe(greedy), {k: v for k, v in (("dataset", dataset), ("max_eval_samples", max_eval_samples)) if v}
            names = {str(f): f"run {i + 1}" for i, f in enumerate(folders)}

            def score(folder: Path) -> float:
                with contextlib.redirect_stdout(sys.stderr):  # the recipe's result rows: stdout is the soup's line
                    value = scorer.dev_score(folder, **options)
                typer.echo(f"greedy soup: {names.get(str(folder), 'trial soup')} {folder} dev {100 * value:.2f}", err=True)
                return value

            metric = f"zhbert train {greedy} --score-on dev: {scorer.arguments(**options).dataset} dev split"
            manifest = greedy_soup(folders, output, score, metric=metric, overwrite=overwrite)
    except (OSError, ValueError) as e:  # ModelLoadError is an OSError
        _fail(str(e))
    far, n = max(i["distance"] for i in manifest["ingredients"]), len(manifest["ingredients"])
    if greedy and n == 1:  # no trial soup held the best run's score
        typer.echo(
            f"no soup of the {len(folders)} runs held the best run's dev {100 * manifest['greedy']['score']:.2f}: {output} is a copy of it"
        )
    else:
        chosen = f" of {len(folders)} (dev {100 * manifest['greedy']['score']:.2f})" if greedy else ""
        typer.echo(f"souped {n} runs{chosen} -> {output} (furthest ingredient {far:.3f} from the soup; {MANIFEST} names them)")


@app.command("static-embeddings")
def static_embeddings_command(
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder to write"),
    tokenizer: str = typer.Option("base", help="the model whose tokenizer the bigram vectors are over (the encoder you will train)"),
    word_dim: int = typer.Option(50, help="word vector size: the head's --lexicon-dim"),
    bigram_dim: int = typer.Option(50, help="bigram vector size: the head's --bigram-dim"),
    chars: int = typer.Option(10_000_000, help="characters of the shared corpora to read (never a dev/test sentence)"),
    epochs: int = typer.Option(5, help="word2vec epochs"),
    seed: int = typer.Option(42, help="word2vec seed"),
) -> None:
    """word2vec word and bigram vectors from the raw corpora, to start a head's word features (--static-embeddings)."""
    from ..static_embeddings import train_static_embeddings

    try:
        m = train_static_embeddings(tokenizer, output, word_dim, bigram_dim, chars, epochs=epochs, seed=seed)
    except (OSError, ValueError) as e:
        _fail(str(e))
    typer.echo(
        f"{m['chars']:,} characters ({m['sentences']:,} sentences): {m['words']['items']:,} words, "
        f"{m['bigrams']['items']:,} bigrams -> {output}"
    )


#: the predictor each tab of the demo shows, by the name ``--model TAB=FOLDER`` gives it
DEMO_TABS = {
    "cws": "Segmenter",
    "pos": "POSTagger",
    "ner": "EntityRecognizer",
    "tagging": "Classifier",
    "matching": "Matcher",
    "base": "MaskedLM",
}


def _demo_models(given: list[str]) -> dict[str, str]:
    """``TAB=FOLDER`` options as ``{tab: folder}``, each folder loaded once to check it is a model of its tab's kind."""
    from ..api import load
    from ..errors import ZhbertError

    models = {}
    for item in given:
        tab, sep, folder = item.partition("=")
        if not sep or tab not in DEMO_TABS or not folder:
            _fail(
                f"--model {item!r}: expected TAB=FOLDER, TAB one of {', '.join(DEMO_TABS)} (base: the fill-mask and attention tabs)", code=2
            )
        try:
            kind = type(load(folder)).__name__
        except (ZhbertError, OSError, ValueError) as e:
            _fail(f"--model {item}: {e}")
        if kind != DEMO_TABS[tab]:
            _fail(f"--model {item}: {folder} loads as {kind}; the {tab} tab takes what loads as {DEMO_TABS[tab]}")
        models[tab] = folder
    return models


@app.command()
def demo(
    host: str = typer.Option("127.0.0.1", help="address to listen on"),
    port: int = typer.Option(7860, help="port"),
    model: List[str] = typer.Option(
        [],
        "--model",
        help="TAB=FOLDER: your model in a tab instead of the bundled one (cws, pos, ner, tagging, matching, base); repeatable",
    ),
) -> None:
    """Launch the Gradio demo over the bundled models (or yours, with --model TAB=FOLDER)."""
    from ..models_registry import missing_bundled

    models = _demo_models(model)
    missing = [m for m in missing_bundled() if m[0] not in models]
    if missing:
        lines = [f"  {name}: missing at {path}; make it with: {how}" for name, path, how in missing]
        _fail("the demo needs the bundled default models, and these are missing:\n" + "\n".join(lines))
    try:
        from ..demo import main as launch
    except ImportError as e:  # gradio is the optional "demo" extra
        _fail(f"the demo needs gradio ({e}); install it with: pip install 'zhbert[demo]'")
    launch(host, port, models)
