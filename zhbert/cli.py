"""The ``zhbert`` command line (typer). Each subcommand is a thin layer over a
Python function so everything the CLI does is also importable."""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import time
from pathlib import Path
from typing import List, Optional

import typer

from .text import MAX_TEXT_CHARS

app = typer.Typer(
    name="zhbert",
    help="Chinese BERT: pretrain with Chinese masking, fine-tune task heads, predict, demo.",
    no_args_is_help=True,
    add_completion=False,
)


# Every command that writes a folder takes the same flag: --output-dir, as zhbert train spells it,
# with the spellings older versions used (--output, -o, --output_dir) kept as aliases.
OUTPUT_DIR = ("--output-dir", "--output", "-o", "--output_dir")


def _recipe_names() -> list[str]:
    from .recipes import RECIPES

    return list(RECIPES)


def _fail(message: str, code: int = 1) -> None:
    typer.secho(f"zhbert: error: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code)


@app.command()
def info(model: str = typer.Argument(..., help="bundled model name or a local model folder")) -> None:
    """Config and parameter count (embeddings / attention / feed-forward / heads)."""
    from .model_info import describe

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
) -> None:
    """Copy a model folder for shipping, weights in fp16 safetensors; with --onnx, the encoder as an ONNX graph too."""
    from .errors import ZhbertError
    from .export import export_model

    try:
        out = export_model(source, dest, fp16, trained_length, trim_vocab, overwrite=overwrite, onnx=onnx, int8=int8)
    except (OSError, ValueError, ZhbertError) as e:
        _fail(str(e))
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) / 1e6
    typer.echo(f"exported {source} -> {out} ({size:.1f} MB)")
    only = json.loads((out / "config.json").read_text(encoding="utf-8")).get("zhbert_only")
    if only:  # the folder's README.md and config.json say it too
        typer.echo(f"note: {out} {only}".replace("FOLDER", str(out)))


@app.command("small-encoder")
def small_encoder_command(
    teacher: str = typer.Option(..., "--teacher", help="bundled model name or a BERT folder whose embeddings start the new encoder"),
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder to write"),
    layers: int = typer.Option(2, help="transformer layers"),
    hidden: int = typer.Option(128, help="hidden size (at most the teacher's)"),
    heads: int = typer.Option(2, help="attention heads"),
    seed: int = typer.Option(0, help="draws the random layers: the same seed writes the same encoder"),
) -> None:
    """A small encoder to distil into: the teacher's embeddings projected to HIDDEN, random layers."""
    from .training.small_encoder import small_encoder

    try:
        out = small_encoder(teacher, output, layers, hidden, heads, seed=seed)
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
    from .model_soup import MANIFEST, greedy_soup
    from .model_soup import soup as make_soup

    if greedy is None and (dataset or max_eval_samples):
        _fail("--dataset and --max-eval-samples choose what --greedy scores on; a uniform soup scores nothing")
    try:
        if greedy is None:
            manifest = make_soup(folders, output, overwrite=overwrite)
        else:
            from .recipes import recipe

            scorer, options = recipe(greedy), {k: v for k, v in (("dataset", dataset), ("max_eval_samples", max_eval_samples)) if v}
            names = {str(f): f"run {i + 1}" for i, f in enumerate(folders)}

            def score(folder: Path) -> float:
                with contextlib.redirect_stdout(sys.stderr):  # the recipe's result rows: stdout is the soup's line
                    value = scorer.dev_score(folder, **options)
                typer.echo(f"greedy soup: {names.get(str(folder), 'trial soup')} {folder} dev {100 * value:.2f}", err=True)
                return value

            metric = f"zhbert train {greedy} --score_on dev: {scorer.arguments(**options).dataset} dev split"
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
    word_dim: int = typer.Option(50, help="word vector size: the head's --lexicon_dim"),
    bigram_dim: int = typer.Option(50, help="bigram vector size: the head's --bigram_dim"),
    chars: int = typer.Option(10_000_000, help="characters of the shared corpora to read (never a dev/test sentence)"),
    epochs: int = typer.Option(5, help="word2vec epochs"),
    seed: int = typer.Option(42, help="word2vec seed"),
) -> None:
    """word2vec word and bigram vectors from the raw corpora, to start a head's word features (--static_embeddings)."""
    from .static_embeddings import train_static_embeddings

    try:
        m = train_static_embeddings(tokenizer, output, word_dim, bigram_dim, chars, epochs=epochs, seed=seed)
    except (OSError, ValueError) as e:
        _fail(str(e))
    typer.echo(
        f"{m['chars']:,} characters ({m['sentences']:,} sentences): {m['words']['items']:,} words, "
        f"{m['bigrams']['items']:,} bigrams -> {output}"
    )


@app.command()
def demo(
    host: str = typer.Option("127.0.0.1", help="address to listen on"),
    port: int = typer.Option(7860, help="port"),
) -> None:
    """Launch the Gradio demo over the bundled models."""
    from .models_registry import missing_bundled

    missing = missing_bundled()
    if missing:
        lines = [f"  {name}: missing at {path}; make it with: {how}" for name, path, how in missing]
        _fail("the demo needs the bundled default models, and these are missing:\n" + "\n".join(lines))
    try:
        from .demo import main as launch
    except ImportError as e:  # gradio is the optional "demo" extra
        _fail(f"the demo needs gradio ({e}); install it with: pip install 'zhbert[demo]'")
    launch(host, port)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []})
def pretrain(ctx: typer.Context) -> None:
    """Pretraining: masked LM (every masking strategy, optional NSP or SOP) or ELECTRA's replaced-token detection; rerun to resume.
    `zhbert pretrain --help` lists the options."""
    from transformers import HfArgumentParser

    from .errors import DataFormatError, Interrupted, ZhbertError
    from .training.pretrain import PretrainConfig
    from .training.pretrain import pretrain as run

    parser = HfArgumentParser(
        PretrainConfig, prog="zhbert pretrain", description="Pretraining (masked LM or ELECTRA); rerun the same command to resume."
    )
    try:
        (cfg,) = parser.parse_args_into_dataclasses(args=list(ctx.args))
    except ValueError as e:  # PretrainConfig's own checks (e.g. --nsp with --sop)
        _fail(str(e), code=2)
    if not cfg.corpus:
        _fail("--corpus is required (text files or folders, or one *.zhcorpus file)", code=2)
    try:
        final = run(cfg)
    except Interrupted as e:
        typer.echo(err=True)
        _fail(str(e), code=130)  # the shell's code for a run stopped by Ctrl-C
    except (DataFormatError, FileNotFoundError, ValueError, ZhbertError) as e:
        typer.echo(err=True)  # end a progress bar's line, so that the error starts a line of its own
        _fail(str(e))
    typer.echo(f"saved {final}")


@app.command("prepare-corpus")
def prepare_corpus(
    corpus: List[Path] = typer.Option(..., "--corpus", help="text files or folders (*.txt), one document per line"),
    output: Path = typer.Option(..., "--output", "-o", help="the portable file to write (*.zhcorpus)"),
    masking: str = typer.Option("wwm", help="the masking strategy it is for: the file holds the units that strategy needs"),
    tokenizer_from: Optional[Path] = typer.Option(None, "--tokenizer-from", help="use this checkpoint's vocabulary (default: zhbert's)"),
    num_proc: int = typer.Option(2, help="processes for word-boundary preprocessing"),
    max_docs: Optional[int] = typer.Option(None, help="use only the first N documents"),
    doc_format: str = typer.Option("line", help="line or blank-line"),
    user_dict: Optional[Path] = typer.Option(None, help="jieba user dictionary for word/entity units"),
) -> None:
    """Tokenise + segment a corpus once into a compact file that `zhbert pretrain --corpus` reads (e.g. on a GPU machine)."""
    from .errors import DataFormatError
    from .training.pretrain import prepare_corpus as run

    try:
        meta = run(
            [str(c) for c in corpus],
            str(output),
            masking=masking,
            tokenizer_from=str(tokenizer_from) if tokenizer_from else None,
            num_proc=num_proc,
            doc_format=doc_format,
            user_dict=str(user_dict) if user_dict else None,
            max_docs=max_docs,
        )
    except (DataFormatError, FileNotFoundError, ValueError) as e:
        _fail(str(e))
    typer.echo(
        f"wrote {output}: {meta['documents']:,} documents, {meta['tokens']:,} tokens, units {', '.join(meta['units'])}, "
        f"{output.stat().st_size / 1e6:.1f} MB"
    )


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []})
def train(
    ctx: typer.Context,
    task: Optional[str] = typer.Argument(None, help="the recipe: " + ", ".join(_recipe_names())),
) -> None:
    """Fine-tune a task head with its recipe; `zhbert train <recipe> --help` lists the recipe's arguments."""
    from .recipes import RECIPES

    if task in (None, "--help", "-h"):
        typer.echo("usage: zhbert train RECIPE [ARGS]  (zhbert train RECIPE --help for its arguments)\n\nrecipes:")
        for r in RECIPES.values():
            typer.echo(f"  {r.name:<10} {r.summary} (default dataset: {r.default_dataset})")
        raise typer.Exit(0 if task else 2)
    if task not in RECIPES:
        _fail(f"unknown task {task!r}; the recipes are {', '.join(RECIPES)}")
    RECIPES[task].main(list(ctx.args))


def _result_json(pred, item, result) -> dict:
    from .api import Classifier, EntityRecognizer, MaskedLM, Matcher, MultiTask, Segmenter

    if isinstance(pred, MultiTask):  # one object per head, each as that head's own predictor writes it
        heads = {name: _result_json(pred[name], item, r) for name, r in result.items()}
        return {"text": item, **{name: {k: v for k, v in h.items() if k != "text"} for name, h in heads.items()}}
    if isinstance(pred, Matcher):
        return {"text_a": item[0], "text_b": item[1], **result.to_dict()}
    if isinstance(pred, Segmenter):
        return {"text": item, "words": [w.to_dict() for w in result]}
    if isinstance(pred, EntityRecognizer):
        return {"text": item, "entities": [e.to_dict() for e in result]}
    if isinstance(pred, Classifier):
        return {"text": item, **result.to_dict()}
    if isinstance(pred, MaskedLM):
        return {"text": item, "masks": [m.to_dict() for m in result]}
    raise TypeError(type(pred).__name__)


MAX_PREDICT_LINE = MAX_TEXT_CHARS  # the API's limit per text, for the same reason
PREDICT_CHUNK_CHARS = 200_000  # characters passed to the model per call at most, whatever --batch-size says


def _next_chunk(rows, size: int) -> list:
    """The next ``size`` rows of ``rows`` (``(line number, text or pair)``), fewer once they hold
    :data:`PREDICT_CHUNK_CHARS` characters: memory stays bounded with long lines."""
    chunk, chars = [], 0
    for row in rows:  # a for loop's break leaves the generator open: the next call goes on from here
        chunk.append(row)
        chars += len(row[1]) if isinstance(row[1], str) else sum(map(len, row[1]))
        if len(chunk) >= size or chars >= PREDICT_CHUNK_CHARS:
            break
    return chunk


def _read_inputs(file: str, pairs: bool):
    """(line number, text or pair) from a UTF-8 file or stdin, streamed: a line is read with a byte
    cap, so memory stays bounded whatever the input (a stream with no newline is refused at the
    cap, not read whole); errors name file:line."""
    from .data.source import _check_path
    from .errors import DataFormatError, clip

    name = "<stdin>" if file == "-" else file
    if file != "-":
        _check_path(Path(file))
    stream = sys.stdin.buffer if file == "-" else open(file, "rb")  # noqa: SIM115 (closed below)
    cap = 4 * MAX_PREDICT_LINE + 2  # UTF-8 takes at most 4 bytes a character, plus CRLF
    lineno, seen_text = 0, False
    try:
        while True:
            raw = stream.readline(cap + 1)
            if not raw:
                break
            lineno += 1
            if len(raw) > cap and not raw.endswith(b"\n"):
                problem = f"line of more than {MAX_PREDICT_LINE:,} characters: predict takes up to that many per line; split the text"
                raise DataFormatError(name, lineno, problem)
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if b"\x00" in raw:
                raise DataFormatError(name, lineno, "binary data (NUL byte); expected UTF-8 text")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                problem = f"invalid UTF-8 byte 0x{raw[e.start]:02x} at byte offset {e.start} of the line"
                raise DataFormatError(name, lineno, problem) from None
            text = text.rstrip("\n").rstrip("\r")
            for k, line in enumerate(text.split("\r")):  # a lone CR (old Mac line ends) also ends a line
                lineno += k > 0
                if len(line) > MAX_PREDICT_LINE:  # one text is held in memory whole with all its tokens
                    raise DataFormatError(
                        name,
                        lineno,
                        f"line of {len(line):,} characters: predict takes up to {MAX_PREDICT_LINE:,} "
                        f"per line ({clip(line, 40)}); split the text into lines",
                    )
                seen_text = seen_text or bool(line.strip())
                if pairs:
                    cols = line.split("\t")
                    if len(cols) != 2:
                        raise DataFormatError(name, lineno, f"a matching model needs 'text_a<TAB>text_b', found {len(cols)} column(s)")
                    yield lineno, (cols[0], cols[1])
                else:
                    yield lineno, line
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    if file != "-" and not seen_text:
        raise DataFormatError(name, 1, "file holds only whitespace")


@app.command()
def predict(
    model: str = typer.Option(..., "--model", help="bundled model name or a model folder"),
    file: str = typer.Argument("-", help="input file, one text per line (pairs: a<TAB>b), or - for stdin"),
    batch_size: int = typer.Option(
        256,
        help="texts passed to the model per call (at most 200,000 characters); the model batches them by its token budget. "
        "Typed at a terminal, each line is answered at once",
    ),
    person_names: str = typer.Option(
        "split", help="segmentation models: split (the PKU standard: surname / given name) or whole (one word, found by the ner model)"
    ),
    backend: str = typer.Option("torch", help="torch; int8 (CPU: linear layers in int8, faster, slightly different answers); onnx or onnx-int8 (a folder exported with --onnx)"),
    user_dict: Optional[str] = typer.Option(
        None, "--user-dict", help="segmentation and NER: a dictionary file (word, 'word FREQ [POS]', or word<TAB>TYPE for NER)"
    ),
    dict_mode: str = typer.Option("force", "--dict-mode", help="force (listed words always whole) or prefer (a lexicon head weighs them)"),
    web_units: str = typer.Option(
        "default",
        "--web-units",
        help="segmentation and NER: 'default' (URLs, e-mail, @mentions, #topics#, emoji each one unit), 'none', "
        "or kinds joined by commas (url,email,mention,topic,emoji,number,latin)",
    ),
    criterion: Optional[str] = typer.Option(
        None, help="segmentation and NER models trained on several standards (--criteria): the one to tag by (default: their first)"
    ),
) -> None:
    """Predict with a model: one text per line in, JSON lines out, in input order."""
    from tqdm import tqdm

    from .api import PERSON_NAMES, MaskedLM, Matcher, Segmenter, load
    from .errors import ZhbertError

    if batch_size < 1:
        _fail(f"--batch-size must be at least 1, got {batch_size}", code=2)
    try:
        presets = {"default": True, "none": False}
        units = presets[web_units] if web_units in presets else [k.strip() for k in web_units.split(",") if k.strip()]
        pred = load(model, backend=backend, user_dict=user_dict, dict_mode=dict_mode, web_units=units, criterion=criterion)
        rows = _read_inputs(file, pairs=isinstance(pred, Matcher))
        if file == "-" and sys.stdin.isatty():
            batch_size = 1  # someone typing: an answer per line, not per 256
        chunk = _next_chunk(rows, batch_size)  # the first batch: a bad file fails before any output
    except (ZhbertError, OSError, ValueError) as e:
        _fail(str(e))
    run = pred.fill_mask if isinstance(pred, MaskedLM) else pred
    if isinstance(pred, Segmenter):
        if person_names not in PERSON_NAMES:
            _fail(f"--person-names must be one of {', '.join(PERSON_NAMES)}, got {person_names!r}", code=2)
        run = functools.partial(pred, person_names=person_names)
    bad: list[str] = []
    done = 0
    bar = tqdm(unit=" lines", disable=file == "-", file=sys.stderr)
    while chunk:
        try:
            results = list(zip(chunk, run([item for _, item in chunk])))
        except ValueError:  # find the bad line(s); every valid line is still predicted
            results = []
            for lineno, item in chunk:
                try:
                    results.append(((lineno, item), run([item])[0]))
                except ValueError as e:
                    bad.append(f"{'<stdin>' if file == '-' else file}:{lineno}: {e}")
        for (_, item), result in results:
            typer.echo(json.dumps(_result_json(pred, item, result), ensure_ascii=False))
        bar.update(len(chunk))
        done += len(chunk)
        try:
            chunk = _next_chunk(rows, batch_size)
        except (ZhbertError, OSError, ValueError) as e:  # a bad line further on: what came before is written
            bar.close()
            _fail(f"{e} (the {done:,} lines before it were written)")
    bar.close()
    if bad:
        for line in bad[:20]:
            typer.secho(f"zhbert: error: {line}", fg=typer.colors.RED, err=True)
        _fail(f"{len(bad)} line(s) could not be predicted (listed above); the other {done - len(bad)} were written")


@app.command("fill-mask")
def fill_mask(
    text: str = typer.Argument(..., help="text with one or more [MASK]"),
    model: str = typer.Option("base", "--model", help="bundled model name or a masked-LM folder"),
    top_k: int = typer.Option(5, help="candidates per [MASK]"),
    order: str = typer.Option("confident", help="several masks: confident (most confident first), left-to-right or all-at-once"),
) -> None:
    """Top-k candidates for each [MASK]; several masks fill one at a time (or all at once)."""
    from .api import MaskedLM, load
    from .errors import ZhbertError

    try:
        pred = load(model)
        if not isinstance(pred, MaskedLM):
            _fail(f"{model}: not a masked language model (it is a {type(pred).__name__})")
        result = pred.fill_mask(text, top_k=top_k, order=order)
    except (ZhbertError, OSError, ValueError, TypeError) as e:
        _fail(str(e))
    typer.echo(json.dumps({"text": text, "masks": [m.to_dict() for m in result]}, ensure_ascii=False))


@app.command()
def probe(
    model: str = typer.Argument(..., help="bundled model name or a local model folder (its encoder is probed)"),
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder for probe.json, probe.md and the plots"),
    tasks: List[str] = typer.Option(["pos", "entity", "boundary", "pair"], "--task", help="pos, entity, boundary, pair"),
    sentences: int = typer.Option(1200, help="held-out People's Daily sentences (70% train the probes)"),
    pairs: int = typer.Option(2000, help="LCQMC pairs (half from dev to train, half from test to score)"),
    compare_random: bool = typer.Option(True, help="also probe a randomly initialised twin of the same size"),
    pca_layer: Optional[int] = typer.Option(None, help="also plot a 2-D PCA of this layer's vectors by POS"),
    pca_remove_position: bool = typer.Option(
        True, help="subtract each token position's mean vector before the PCA (else the position code dominates the plot)"
    ),
    steps: int = typer.Option(200, help="L-BFGS iterations per probe"),
) -> None:
    """Layer-wise linear probes (POS, entities, word boundaries, pairs) with a plot per layer."""
    import torch
    from transformers import BertModel

    from .models_registry import resolve_model_path
    from .probing import PROBE_TASKS, pca_plot, probe_model, random_twin, write_report
    from .tokenizer import load_tokenizer

    unknown = [t for t in tasks if t not in PROBE_TASKS]
    if unknown:
        _fail(f"unknown probe task(s) {', '.join(unknown)}; choose from {', '.join(PROBE_TASKS)}", code=2)
    try:
        path = resolve_model_path(model)
        encoder = BertModel.from_pretrained(
            path, add_pooling_layer=False, dtype=torch.float32, local_files_only=True, trust_remote_code=False
        ).eval()
        tokenizer = load_tokenizer(path)
    except (OSError, ValueError) as e:
        _fail(str(e))
    name = Path(model).name
    results = probe_model(encoder, tokenizer, name, tasks, sentences, pairs, steps=steps)
    if compare_random:
        results += probe_model(random_twin(encoder), tokenizer, "random init", tasks, sentences, pairs, steps=steps)
    files = write_report(results, output, title=f"Linear probes per layer: {name}")
    if pca_layer is not None:
        files["pca"] = pca_plot(encoder, tokenizer, output, pca_layer, remove_position=pca_remove_position)
    typer.echo((output / "probe.md").read_text(encoding="utf-8"))
    typer.echo(json.dumps({k: str(v) for k, v in files.items()}))


study_app = typer.Typer(
    help="Studies of application modes, masking, long texts, multi-task and word information (tables and plots; docs/studies.md).",
    no_args_is_help=True,
)
app.add_typer(study_app, name="study")


def _recipe_options(max_train_samples, max_eval_samples, epochs, max_steps, preset) -> dict:
    return {
        "max_train_samples": max_train_samples,
        "max_eval_samples": max_eval_samples,
        "epochs": epochs,
        "max_steps": max_steps,
        "preset": preset,
    }


@study_app.command("modes")
def study_modes(
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder for the runs, modes.md, modes.json and modes.png"),
    encoder: str = typer.Option("base", help="bundled model name or a local BERT folder"),
    tasks: List[str] = typer.Option(None, "--task", help="a recipe (repeat the flag); default: every recipe (zhbert train --help)"),
    seeds: List[int] = typer.Option([1, 2, 3], "--seed"),
    representations: List[str] = typer.Option(
        None, "--representation", help="default: every representation of zhbert.fusion's study grid (zhbert train ner --help)"
    ),
    bert_table: bool = typer.Option(True, help="add the BERT paper's feature-based NER rows"),
    max_train_samples: Optional[int] = typer.Option(None),
    max_eval_samples: Optional[int] = typer.Option(None),
    epochs: Optional[float] = typer.Option(None),
    max_steps: Optional[int] = typer.Option(None),
    preset: str = typer.Option("full", help="recipe preset: tiny (tests) or full"),
    finetune_learning_rate: Optional[float] = typer.Option(
        None, help="encoder LR of fine-tuned runs (recipe default 5e-5); feature-based runs keep their 1e-3 head LR"
    ),
    frozen_learning_rate: Optional[float] = typer.Option(None, help="head LR of feature-based runs (recipe default 1e-3)"),
    modes: Optional[List[str]] = typer.Option(None, "--mode", help="finetune and/or frozen (repeat the flag); default: both"),
) -> None:
    """Fine-tune vs feature-based x every representation, several seeds; BERT Table 7 on Chinese."""
    from .fusion import REPRESENTATIONS
    from .heads.config import MODES
    from .studies import STUDY_TASKS
    from .studies.modes import run_modes, write_modes_report

    tasks = tasks or list(STUDY_TASKS)
    bad = [t for t in tasks if t not in STUDY_TASKS] + [r for r in representations or [] if r not in REPRESENTATIONS]
    bad += [m for m in modes or [] if m not in MODES]
    if bad:
        _fail(
            f"unknown task, representation or mode: {', '.join(bad)}; tasks: {', '.join(STUDY_TASKS)}; "
            f"representations: {', '.join(REPRESENTATIONS)}; modes: {', '.join(MODES)}",
            code=2,
        )
    start = time.perf_counter()
    try:
        rows = run_modes(
            encoder,
            output,
            tasks,
            seeds,
            representations=representations or REPRESENTATIONS,
            bert_table=bert_table,
            recipe_args=_recipe_options(max_train_samples, max_eval_samples, epochs, max_steps, preset),
            finetune_learning_rate=finetune_learning_rate,
            frozen_learning_rate=frozen_learning_rate,
            modes=tuple(modes or MODES),
        )
    except RuntimeError as e:
        _fail(str(e))
    meta = {"encoder": encoder, "seeds": seeds, "wall_seconds": time.perf_counter() - start, "argv": sys.argv[1:]}
    files = write_modes_report(rows, output, meta)
    typer.echo(files["table"].read_text(encoding="utf-8"))


@study_app.command("modes-report")
def study_modes_report(
    sources: List[Path] = typer.Option(..., "--from", help="a modes.json of zhbert study modes (repeat); a cell in several: the last wins"),
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder for the merged modes.md, modes.json and modes.png"),
) -> None:
    """One report (table, claims, plot) from mode studies of one encoder run in parts."""
    from .studies.modes import merge_mode_reports, write_modes_report

    try:
        rows, meta = merge_mode_reports(sources)
    except ValueError as e:
        _fail(str(e))
    files = write_modes_report(rows, output, meta)
    typer.echo(files["table"].read_text(encoding="utf-8"))


@study_app.command("masking")
def study_masking(
    corpus: List[Path] = typer.Option(..., "--corpus", help="pretraining text (files or folders)"),
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder for pretraining runs, fine-tuning runs and masking.md"),
    maskings: List[str] = typer.Option(None, "--masking", help="a masking strategy (repeat the flag); default: every one"),
    nsp: List[str] = typer.Option(["no", "yes"], "--nsp", help="no, yes or both (repeat the flag)"),
    size: str = typer.Option("tiny"),
    steps: int = typer.Option(2000),
    batch_size: int = typer.Option(32),
    max_length: int = typer.Option(128),
    max_docs: Optional[int] = typer.Option(None),
    tasks: List[str] = typer.Option(None, "--task", help="a recipe (repeat the flag); default: every recipe"),
    seeds: List[int] = typer.Option([1], "--seed"),
    max_train_samples: Optional[int] = typer.Option(None),
    max_eval_samples: Optional[int] = typer.Option(None),
    epochs: Optional[float] = typer.Option(None),
    max_steps: Optional[int] = typer.Option(None),
    preset: str = typer.Option("full"),
    fill_mask_sentences: int = typer.Option(2000, help="held-out People's Daily sentences for char and whole-word fill-mask (0: skip)"),
    pretrain_learning_rate: float = typer.Option(5e-4, help="peak learning rate of every pretraining run"),
    learning_rate: Optional[float] = typer.Option(None, help="encoder learning rate of every fine-tuning run (recipe default if unset)"),
    init: Optional[str] = typer.Option(
        None,
        help="continue every run from this checkpoint folder or bundled model (e.g. base) "
        "instead of pretraining from scratch; adds its own row, 'init'",
    ),
    untrained: bool = typer.Option(
        True,
        help="from scratch: add the row 'none', the runs' common starting weights fine-tuned without pretraining "
        "(the control that shows whether pretraining helped at all)",
    ),
) -> None:
    """Pretrain one configuration per masking (and NSP) with the same budget; fine-tune each on the tasks."""
    from .errors import ModelLoadError
    from .masking import MASKERS
    from .studies import STUDY_TASKS
    from .studies.masking import run_masking, write_masking_report

    maskings, tasks = maskings or list(MASKERS), tasks or list(STUDY_TASKS)
    bad = [m for m in maskings if m not in MASKERS] + [t for t in tasks if t not in STUDY_TASKS]
    if bad:
        _fail(f"unknown masking or task: {', '.join(bad)}; maskings: {', '.join(MASKERS)}; tasks: {', '.join(STUDY_TASKS)}", code=2)

    if not set(nsp) <= {"no", "yes"}:
        _fail("--nsp takes no or yes", code=2)
    start = time.perf_counter()
    try:
        rows = run_masking(
            [str(c) for c in corpus],
            output,
            maskings,
            tuple(v == "yes" for v in nsp),
            size,
            steps,
            batch_size,
            max_length,
            max_docs,
            tasks,
            seeds,
            recipe_args={**_recipe_options(max_train_samples, max_eval_samples, epochs, max_steps, preset), "learning_rate": learning_rate},
            fill_mask_sentences=fill_mask_sentences,
            learning_rate=pretrain_learning_rate,
            init=init,
            untrained=untrained,
        )
    except (RuntimeError, ValueError, FileNotFoundError, ModelLoadError) as e:
        _fail(str(e))
    meta = {
        "size": size if init is None else None,
        "init": init,
        "steps": steps,
        "batch_size": batch_size,
        "max_length": max_length,
        "pretrain_learning_rate": pretrain_learning_rate,
        "wall_seconds": time.perf_counter() - start,
        "argv": sys.argv[1:],
    }
    files = write_masking_report(rows, output, meta)
    typer.echo(files["table"].read_text(encoding="utf-8"))


@study_app.command("long")
def study_long(
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder for long.md and long.json"),
    model: str = typer.Option("ner", "--model", help="a NER model: bundled name or folder"),
    dataset: str = typer.Option("msra", help="the NER dataset whose scored split makes the documents"),
    min_chars: int = typer.Option(1500, help="characters per long document (consecutive sentences joined)"),
    max_sentences: Optional[int] = typer.Option(None, help="use only the first N sentences (tests)"),
) -> None:
    """Long texts: truncation vs overlapping windows of several strides, against each sentence alone."""
    from .errors import ZhbertError
    from .studies.long_text import run_long, write_long_report

    start = time.perf_counter()
    try:
        rows = run_long(model, "ner", dataset, min_chars, max_sentences)
    except (ZhbertError, FileNotFoundError, ValueError) as e:
        _fail(str(e))
    meta = {"model": model, "dataset": dataset, "min_chars": min_chars, "wall_seconds": time.perf_counter() - start, "argv": sys.argv[1:]}
    files = write_long_report(rows, output, meta)
    typer.echo(files["table"].read_text(encoding="utf-8"))


@study_app.command("long-classification")
def study_long_classification(
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder for the runs, long_classification.md and .json"),
    encoder: str = typer.Option("base", help="bundled model name or a local BERT folder"),
    dataset: str = typer.Option("sources", help="a tagging dataset of long texts (sources: 1,000-1,200 character corpus excerpts)"),
    seeds: List[int] = typer.Option([1, 2, 3], "--seed"),
    batch_size: Optional[int] = typer.Option(None, help="documents per step (each is several windows)"),
    max_train_samples: Optional[int] = typer.Option(None),
    max_eval_samples: Optional[int] = typer.Option(None),
    epochs: Optional[float] = typer.Option(None),
    max_steps: Optional[int] = typer.Option(None),
    preset: str = typer.Option("full", help="recipe preset: tiny (tests) or full"),
    learning_rate: Optional[float] = typer.Option(None, help="encoder learning rate of every run (recipe default 5e-5)"),
) -> None:
    """Long-text classification: truncation vs overlapping windows pooled by mean or mean-max, several seeds."""
    from .errors import ZhbertError
    from .studies.long_text import run_long_classification, write_long_classification_report

    start = time.perf_counter()
    options = _recipe_options(max_train_samples, max_eval_samples, epochs, max_steps, preset)
    if batch_size is not None:
        options["batch_size"] = batch_size
    if learning_rate is not None:
        options["learning_rate"] = learning_rate
    try:
        rows = run_long_classification(encoder, output, dataset, tuple(seeds), recipe_args=options)
    except (ZhbertError, FileNotFoundError, ValueError) as e:
        _fail(str(e))
    meta = {"encoder": encoder, "dataset": dataset, "seeds": seeds, "wall_seconds": time.perf_counter() - start, "argv": sys.argv[1:]}
    files = write_long_classification_report(rows, output, meta)
    typer.echo(files["table"].read_text(encoding="utf-8"))


@study_app.command("multitask")
def study_multitask(
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder for the runs, multitask.md and multitask.json"),
    encoder: str = typer.Option("base", help="bundled model name or a local BERT folder"),
    tasks: str = typer.Option("ner=msra,cws=pku,tagging=usual", "--tasks", help="recipe=dataset pairs, comma-separated"),
    seeds: List[int] = typer.Option([1], "--seed"),
    max_train_samples: Optional[int] = typer.Option(None),
    max_eval_samples: Optional[int] = typer.Option(None),
    epochs: Optional[float] = typer.Option(None),
    max_steps: Optional[int] = typer.Option(None, help="steps of each single-task run; the multi-task run gets as many per task"),
    preset: str = typer.Option("full", help="recipe preset: tiny (tests) or full"),
    learning_rate: Optional[float] = typer.Option(None, help="encoder learning rate of every run, single- and multi-task"),
) -> None:
    """One shared encoder on several tasks against a single-task model per task, same budget."""
    from .errors import ZhbertError
    from .studies.multitask import run_multitask_study, write_multitask_report

    start = time.perf_counter()
    try:
        options = _recipe_options(max_train_samples, max_eval_samples, epochs, max_steps, preset)
        rows = run_multitask_study(encoder, output, tasks, seeds, recipe_args={**options, "learning_rate": learning_rate})
    except (ZhbertError, FileNotFoundError, ValueError) as e:
        _fail(str(e))
    meta = {"encoder": encoder, "tasks": tasks, "seeds": seeds, "wall_seconds": time.perf_counter() - start, "argv": sys.argv[1:]}
    files = write_multitask_report(rows, output, meta)
    typer.echo(files["table"].read_text(encoding="utf-8"))


@study_app.command("words")
def study_words(
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder for the runs, words.md, words.json and words.png"),
    encoder: str = typer.Option("base", help="the encoder without word information (bundled name or a local BERT folder)"),
    wwm_encoder: Optional[str] = typer.Option(
        None, "--wwm-encoder", help="an encoder pretrained with word information (zhbert pretrain --masking wwm or ernie)"
    ),
    tasks: str = typer.Option("ner=msra,ner=weibo,ner=resume,cws=pku", "--tasks", help="recipe=dataset pairs of token recipes"),
    seeds: List[int] = typer.Option([1, 2, 3], "--seed"),
    bigram_dim: int = typer.Option(50, help="size of the bigram embeddings in the bigram conditions"),
    static_embeddings: Optional[str] = typer.Option(
        None, "--static-embeddings", help="a `zhbert static-embeddings` folder: adds the fine-tuning features started from word2vec"
    ),
    only: Optional[str] = typer.Option(
        None,
        "--conditions",
        help="run only these, comma-separated: neither, lexicon, bigrams, fine-tuning, word2vec-start, pretraining, both "
        "(default: every one the options allow)",
    ),
    max_train_samples: Optional[int] = typer.Option(None),
    max_eval_samples: Optional[int] = typer.Option(None),
    epochs: Optional[float] = typer.Option(None),
    max_steps: Optional[int] = typer.Option(None),
    preset: str = typer.Option("full", help="recipe preset: tiny (tests) or full"),
    learning_rate: Optional[float] = typer.Option(None, help="encoder learning rate of every run"),
) -> None:
    """Word information in pretraining, at fine-tuning (lexicon, bigrams), both or neither: same tasks, seeds, budget."""
    from .errors import ZhbertError
    from .studies.words import run_words_study, write_words_report

    start = time.perf_counter()
    try:
        options = _recipe_options(max_train_samples, max_eval_samples, epochs, max_steps, preset)
        recipe_args = {**options, "learning_rate": learning_rate}
        rows = run_words_study(encoder, output, tasks, seeds, wwm_encoder, bigram_dim, recipe_args, static_embeddings, only)
    except (ZhbertError, FileNotFoundError, ValueError) as e:
        _fail(str(e))
    meta = {"encoder": encoder, "wwm_encoder": wwm_encoder, "static_embeddings": static_embeddings, "tasks": tasks, "seeds": seeds}
    meta["conditions"] = only
    meta["wall_seconds"] = time.perf_counter() - start
    files = write_words_report(rows, output, {**meta, "argv": sys.argv[1:]})
    typer.echo(files["table"].read_text(encoding="utf-8"))


def _setup_logging() -> None:
    import logging

    log = logging.getLogger("zhbert")
    if not any(isinstance(h, logging.StreamHandler) for h in log.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("zhbert: %(levelname)s: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    # transformers' per-load progress bars and load reports would bury the one line a command prints
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()


def main() -> None:  # console-script entry point
    from .training.process_group import close_process_group

    _setup_logging()
    try:
        app()
    except SystemExit as e:  # typer ends every command with one, 0 on success
        if not e.code:
            close_process_group()
        raise
    close_process_group()


if __name__ == "__main__":  # pragma: no cover
    main()
