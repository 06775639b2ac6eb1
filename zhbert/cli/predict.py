"""Prediction commands: predict (files or stdin to JSON lines) and fill-mask."""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

from .app import _fail, app


def _result_json(pred, item, result) -> dict:
    from ..api import Classifier, EntityRecognizer, MaskedLM, Matcher, MultiTask, Segmenter

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


def _inputs(file: str, input_format: str, pairs: bool, text_column: str, classifier: bool = False):
    """The rows ``predict`` reads from ``file`` in ``input_format`` (auto: by its suffix or content)."""
    from ..data.hub_files import is_parquet, is_saved_dataset
    from .predict_inputs import INPUT_FORMATS, conll_inputs, csv_inputs, hub_inputs, read_inputs

    if input_format not in ("auto", *INPUT_FORMATS):
        _fail(f"--format must be auto, {', '.join(INPUT_FORMATS)}, got {input_format!r}", code=2)
    suffix = Path(file).suffix.lower()
    if input_format == "parquet" or (input_format == "auto" and file != "-" and (is_parquet(file) or is_saved_dataset(file))):
        return hub_inputs(file, pairs=pairs, text_column=text_column)
    if input_format == "csv" or (input_format == "auto" and suffix == ".csv"):
        return csv_inputs(file, pairs=pairs, text_column=text_column)
    if input_format in ("conll", "conllu") or (input_format == "auto" and suffix in (".conll", ".conllu")):
        if pairs:
            _fail("--format conll holds one text a sentence; a matching model reads pairs (lines, jsonl, csv or parquet)", code=2)
        return conll_inputs(file, conllu=input_format == "conllu" or (input_format == "auto" and suffix == ".conllu"))
    jsonl = input_format == "jsonl" or (input_format == "auto" and suffix in (".json", ".jsonl"))
    return read_inputs(file, pairs=pairs, jsonl=jsonl, text_column=text_column, sniff=input_format == "auto", classifier=classifier)


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
    backend: str = typer.Option(
        "torch",
        help="torch; int8 (CPU: linear layers in int8, faster, slightly different answers); onnx, onnx-int8 (exported with --onnx)",
    ),
    user_dict: Optional[str] = typer.Option(
        None,
        "--user-dict",
        help="segmentation and NER: a dictionary file (word, 'word FREQ [POS]', or word<TAB>TYPE for NER; nr/ns/nt are PER/LOC/ORG)",
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
    input_format: str = typer.Option(
        "auto",
        "--format",
        help="lines (one text a line; pairs a<TAB>b), jsonl (one JSON object a line, as CLUE ships its sets: the text under "
        "--text-column, or text, sentence, content, review, 文本, ...; a pair under text_a/text_b, sentence1/sentence2, ...; "
        "its id written back), csv (a header row naming the same columns, as a spreadsheet exports them), "
        "parquet (the Hugging Face hub's files, or a folder Dataset.save_to_disk wrote: the same columns; id or idx "
        "written back), conll (a token a line, first column, a blank line between sentences) or conllu (Universal "
        "Dependencies' treebanks: the FORM column). A record of tokens "
        "(the hub's NER datasets: tokens, no text) or a CoNLL sentence is read as its tokens joined; they are written back, and an "
        "NER model adds a BIO tag per token (tags). auto: jsonl for a .json or .jsonl file, csv for a .csv file, parquet "
        "for a Parquet file or such a folder, conll or conllu for a .conll or .conllu file",
    ),
    output_format: str = typer.Option(
        "jsonl",
        "--output-format",
        help="jsonl (one JSON object a text: offsets, scores) or text, the form training reads back: words separated by "
        "spaces (segmentation), word/TAG (POS), CoNLL with BIO tags (NER), text<TAB>label (tagging; several labels joined "
        "by ','), text_a<TAB>text_b<TAB>label (matching), the filled text (fill-mask); or label-studio (NER and tagging): "
        "one JSON array of Label Studio tasks with the answers as predictions, to import and correct",
    ),
    studio_label_name: str = typer.Option(
        "label",
        "--studio-label-name",
        help="--output-format label-studio: the name of the <Labels> or <Choices> tag in your labeling config "
        "(the NER template's is label, the text classification template's sentiment)",
    ),
    text_column: str = typer.Option("text", "--text-column", help="--format jsonl or parquet: the key (column) holding the text"),
    pairs: bool = typer.Option(
        False, "--pairs", help="a plain transformers sequence classifier trained on sentence pairs: read a<TAB>b pairs"
    ),
) -> None:
    """Predict with a model: one text per line in, JSON lines (or the text form training reads) out, in input order."""
    from tqdm import tqdm

    from ..api import PERSON_NAMES, Classifier, EntityRecognizer, MaskedLM, Matcher, MultiTask, Segmenter, load
    from ..errors import ZhbertError
    from .predict_inputs import TOKENS_KEY, next_chunk, predicted_token_tags
    from .predict_outputs import OUTPUT_FORMATS, STUDIO_FORMAT, studio_task, text_lines

    if batch_size < 1:
        _fail(f"--batch-size must be at least 1, got {batch_size}", code=2)
    if output_format not in OUTPUT_FORMATS:
        _fail(f"--output-format must be {' or '.join(OUTPUT_FORMATS)}, got {output_format!r}", code=2)
    try:
        presets = {"default": True, "none": False}
        units = presets[web_units] if web_units in presets else [k.strip() for k in web_units.split(",") if k.strip()]
        pred = load(model, backend=backend, user_dict=user_dict, dict_mode=dict_mode, web_units=units, criterion=criterion, pairs=pairs)
        rows = _inputs(file, input_format, isinstance(pred, Matcher), text_column, classifier=isinstance(pred, Classifier))
        if file == "-" and sys.stdin.isatty():
            batch_size = 1  # someone typing: an answer per line, not per 256
        chunk = next_chunk(rows, batch_size)  # the first batch: a bad file fails before any output
    except (ZhbertError, OSError, ValueError) as e:
        _fail(str(e))
    if output_format == "text" and isinstance(pred, MultiTask):
        _fail(f"{model}: a multi-task model answers with several heads, and the text form holds one: use --output-format jsonl", code=2)
    studio = output_format == STUDIO_FORMAT
    if studio and (not isinstance(pred, (EntityRecognizer, Classifier)) or (chunk and TOKENS_KEY in chunk[0][2])):
        what = "its tokens" if isinstance(pred, (EntityRecognizer, Classifier)) else f"a {type(pred).__name__}'s answers"
        _fail(
            f"{model}: Label Studio tasks here hold an NER or a tagging model's answers on texts, not {what}: use --output-format jsonl",
            code=2,
        )
    written = 0  # Label Studio tasks: one JSON array, opened before the first and closed after the last (or at an error)

    def close_array() -> None:
        if studio:
            typer.echo("[]" if not written else "]")

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
            results = list(zip(chunk, run([item for _, item, _ in chunk])))
        except ValueError:  # find the bad line(s); every valid line is still predicted
            results = []
            for row in chunk:
                lineno, item, _ = row
                try:
                    results.append((row, run([item])[0]))
                except ValueError as e:
                    bad.append(f"{'<stdin>' if file == '-' else file}:{lineno}: {e}")
        for (lineno, item, kept), result in results:
            if output_format == "text":
                try:
                    typer.echo("\n".join(text_lines(pred, item, result, kept)))
                except ValueError as e:
                    bad.append(f"{'<stdin>' if file == '-' else file}:{lineno}: {e}")
                continue
            if studio:
                task = json.dumps(studio_task(pred, item, result, kept, model, studio_label_name), ensure_ascii=False)
                typer.echo(("[" if not written else ",") + task)
                written += 1
                continue
            out = {**kept, **_result_json(pred, item, result)}
            if TOKENS_KEY in kept and isinstance(pred, EntityRecognizer):  # tags to score against the file's own
                out["tags"] = predicted_token_tags(kept[TOKENS_KEY], result)
            typer.echo(json.dumps(out, ensure_ascii=False))
        bar.update(len(chunk))
        done += len(chunk)
        try:
            chunk = next_chunk(rows, batch_size)
        except (ZhbertError, OSError, ValueError) as e:  # a bad line further on: what came before is written
            bar.close()
            close_array()
            _fail(f"{e} (the {done:,} lines before it were written)")
    bar.close()
    close_array()
    if bad:
        for line in bad[:20]:
            typer.secho(f"zhbert: error: {line}", fg=typer.colors.RED, err=True)
        _fail(f"{len(bad)} line(s) could not be predicted (listed above); the other {done - len(bad)} were written")


@app.command("fill-mask")
def fill_mask(
    text: str = typer.Argument(..., help="text with one or more [MASK]; - reads texts from standard input, one a line"),
    model: str = typer.Option("base", "--model", help="bundled model name or a masked-LM folder"),
    top_k: int = typer.Option(5, help="candidates per [MASK]"),
    order: str = typer.Option("confident", help="several masks: confident (most confident first), left-to-right or all-at-once"),
) -> None:
    """Top-k candidates for each [MASK]; several masks fill one at a time (or all at once)."""
    from ..api import MaskedLM, load
    from ..errors import ZhbertError

    try:
        pred = load(model)
        if not isinstance(pred, MaskedLM):
            _fail(f"{model}: not a masked language model (it is a {type(pred).__name__})")
    except (ZhbertError, OSError, ValueError, TypeError) as e:
        _fail(str(e))
    if text != "-":
        _fill_one(pred, text, top_k, order, "")
        return
    # "-": a JSON line for each line, as it is read (memory stays that of one line), as predict does
    from ..errors import DataFormatError
    from .predict_inputs import input_lines

    try:
        for lineno, line in input_lines("-"):
            _fill_one(pred, line, top_k, order, f"<stdin>:{lineno}: ")
    except DataFormatError as e:
        _fail(str(e))


def _fill_one(pred, text: str, top_k: int, order: str, where: str) -> None:
    """One text's masks as a JSON line; a blank line read from stdin answers with none, so that output line N is
    input line N's."""
    from ..errors import ZhbertError

    try:
        result = pred.fill_mask(text, top_k=top_k, order=order) if text.strip() or not where else []
    except (ZhbertError, ValueError, TypeError) as e:
        _fail(f"{where}{e}")
    typer.echo(json.dumps({"text": text, "masks": [m.to_dict() for m in result]}, ensure_ascii=False))


@app.command("mlm-score")
def mlm_score(
    heldout: List[Path] = typer.Argument(
        ..., help="held-out text: files or folders read as pretraining corpora (a document a line, JSON lines, CSV, ...)"
    ),
    model: List[str] = typer.Option(["base"], "--model", help="bundled model name or a masked-LM folder; repeat to compare several"),
    max_chars: int = typer.Option(100_000, help="read this many characters of the held-out text (its first ones)"),
) -> None:
    """How well masked LMs fill blanks in your held-out text: characters one at a time, whole jieba words, perplexity (a Markdown table)."""
    from ..api import MaskedLM, load
    from ..errors import DataFormatError, ZhbertError
    from ..training.heldout import read_heldout

    if max_chars < 1:
        _fail(f"--max-chars must be 1 or more, got {max_chars}")
    try:
        text = read_heldout([str(p) for p in heldout], max_chars)
    except (DataFormatError, OSError, ValueError) as e:
        _fail(str(e))
    # every model is loaded and checked before the table starts, so a wrong name fails before any output
    models = []
    for name in model:
        try:
            pred = load(name)
        except (ZhbertError, OSError, ValueError) as e:
            _fail(str(e))
        if not isinstance(pred, MaskedLM):
            _fail(f"{name}: not a masked language model (it is a {type(pred).__name__})")
        try:
            pred.require_mlm_head_for_scoring()
        except ValueError as e:
            _fail(str(e))
        models.append((name, pred))
    typer.echo(f"{text.chars:,} characters of {text.documents_read:,} documents\n")
    typer.echo("| model | characters top-1 | whole words top-1 | perplexity | character blanks |\n|---|---:|---:|---:|---:|")
    for name, pred in models:
        try:
            scores = pred.score_blanks(text.texts, max_chars)
        except (ZhbertError, OSError, ValueError) as e:
            _fail(str(e))
        typer.echo(
            f"| {name} | {100 * scores['char_accuracy']:.2f}% | {100 * scores['word_accuracy']:.2f}% | "
            f"{scores['char_perplexity']:.2f} | {scores['char_blanks']:,} |"
        )
