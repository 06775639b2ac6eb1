"""Prediction commands: predict (files or stdin to JSON lines) and fill-mask."""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Optional

import typer

from ..text import MAX_TEXT_CHARS
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


def _json_input(line: str, name: str, lineno: int, pairs: bool, text_column: str, names: list):
    """(text or pair, what to write back: the record's ``id``) of one JSON-lines record; ``names``
    holds the keys found in the first record, for every record after it."""
    from ..data.jsonio import json_line_record
    from ..data.user_files import text_names

    record = json_line_record(line, name, lineno)
    if not names:
        names.extend(text_names(pairs, record, text_column, name, lineno, "key"))
    return _keyed_input(record, name, lineno, names)


#: the fields of an input record written back beside its prediction (CLUE's JSON says id, the hub's Parquet idx)
KEPT_FIELDS = ("id", "idx")


def _keyed_input(record: dict, name: str, lineno: int, names: list):
    """(text or pair, the fields written back) of one record whose texts are under ``names``."""
    from ..data.jsonio import record_texts
    from ..errors import DataFormatError, clip

    texts = record_texts(record, names, name, lineno)
    for text in texts:
        if len(text) > MAX_PREDICT_LINE:
            problem = f"a text of {len(text):,} characters: predict takes up to {MAX_PREDICT_LINE:,} ({clip(text, 40)}); split it"
            raise DataFormatError(name, lineno, problem)
    return (tuple(texts) if len(names) == 2 else texts[0]), {k: record[k] for k in KEPT_FIELDS if k in record}


def _hub_inputs(file: str, pairs: bool, text_column: str):
    """(row, text or pair, fields written back) of a Parquet file or a folder ``Dataset.save_to_disk``
    wrote, read a batch of rows at a time."""
    from ..data.hub_files import iter_hub_records
    from ..data.user_files import text_names

    if file == "-":
        raise ValueError("--format parquet reads a file, not stdin (Parquet keeps its index at the end of the file)")
    names: list = []
    for row, record in iter_hub_records(file):
        if not names:
            names.extend(text_names(pairs, record, text_column, file, row, "column"))
        yield (row, *_keyed_input(record, file, row, names))


def _read_inputs(file: str, pairs: bool, jsonl: bool = False, text_column: str = "text"):
    """(line number, text or pair, fields written back) from a UTF-8 file or stdin, streamed: a line
    is read with a byte cap, so memory stays bounded whatever the input (a stream with no newline is
    refused at the cap, not read whole); errors name file:line. With ``jsonl`` each line is a JSON
    object whose text is read by key (and a blank line is skipped); without it, a first line that
    is a JSON object is refused rather than read as text."""
    from ..data.jsonio import looks_like_json_object
    from ..data.source import _check_path
    from ..errors import DataFormatError, clip
    from ..file_encoding import SNIFF_BYTES, not_text_problem, not_utf8_advice

    name = "<stdin>" if file == "-" else file
    if file != "-" and not (Path(file).exists() and not Path(file).is_file() and not Path(file).is_dir()):
        _check_path(Path(file))  # a pipe (/dev/stdin, <(...)) is read as stdin is, once, as a stream
    stream = sys.stdin.buffer if file == "-" else open(file, "rb")  # noqa: SIM115 (closed below)
    cap = 4 * MAX_PREDICT_LINE + 2  # UTF-8 takes at most 4 bytes a character, plus CRLF
    lineno, seen_text, names = 0, False, []
    try:
        head = stream.peek(SNIFF_BYTES)[:SNIFF_BYTES] if hasattr(stream, "peek") else b""  # peek: stdin is not read twice
        try:
            head.decode("utf-8")
            plain = b"\x00" not in head and not head.startswith((b"\xff\xfe", b"\xfe\xff"))
        except UnicodeDecodeError as e:
            plain = e.start >= len(head) - 3  # a character cut at the end of the sample is fine
        if not plain:  # Notepad's "Unicode", a spreadsheet, a compressed file: named, not called binary on its line 2
            problem = not_text_problem(head)
            if problem:
                raise DataFormatError(name, None, problem)
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
                problem = f"invalid UTF-8 byte 0x{raw[e.start]:02x} at byte offset {e.start} of the line{not_utf8_advice(raw)}"
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
                if not seen_text and line.strip() and not jsonl and looks_like_json_object(line):
                    raise DataFormatError(
                        name, lineno, "a JSON object, read as text it would be predicted as one: give --format jsonl (or a .jsonl file)"
                    )
                seen_text = seen_text or bool(line.strip())
                if jsonl:
                    if line.strip():
                        yield (lineno, *_json_input(line, name, lineno, pairs, text_column, names))
                elif pairs:
                    cols = line.split("\t")
                    if len(cols) != 2:
                        raise DataFormatError(name, lineno, f"a matching model needs 'text_a<TAB>text_b', found {len(cols)} column(s)")
                    yield lineno, (cols[0], cols[1]), {}
                else:
                    yield lineno, line, {}
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
    backend: str = typer.Option(
        "torch",
        help="torch; int8 (CPU: linear layers in int8, faster, slightly different answers); onnx, onnx-int8 (exported with --onnx)",
    ),
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
    input_format: str = typer.Option(
        "auto",
        "--format",
        help="lines (one text a line; pairs a<TAB>b), jsonl (one JSON object a line, as CLUE ships its sets: the text under "
        "--text-column, or text, sentence, content; a pair under text_a/text_b, sentence1/sentence2, ...; its id written back) "
        "or parquet (the Hugging Face hub's files, or a folder Dataset.save_to_disk wrote: the same columns; id or idx "
        "written back); auto: jsonl for a .json or .jsonl file, parquet for a Parquet file or such a folder",
    ),
    text_column: str = typer.Option("text", "--text-column", help="--format jsonl or parquet: the key (column) holding the text"),
    pairs: bool = typer.Option(
        False, "--pairs", help="a plain transformers sequence classifier trained on sentence pairs: read a<TAB>b pairs"
    ),
) -> None:
    """Predict with a model: one text per line in, JSON lines out, in input order."""
    from tqdm import tqdm

    from ..api import PERSON_NAMES, MaskedLM, Matcher, Segmenter, load
    from ..errors import ZhbertError

    if batch_size < 1:
        _fail(f"--batch-size must be at least 1, got {batch_size}", code=2)
    try:
        presets = {"default": True, "none": False}
        units = presets[web_units] if web_units in presets else [k.strip() for k in web_units.split(",") if k.strip()]
        pred = load(model, backend=backend, user_dict=user_dict, dict_mode=dict_mode, web_units=units, criterion=criterion, pairs=pairs)
        if input_format not in ("auto", "lines", "jsonl", "parquet"):
            _fail(f"--format must be auto, lines, jsonl or parquet, got {input_format!r}", code=2)
        from ..data.hub_files import is_parquet, is_saved_dataset

        if input_format == "parquet" or (input_format == "auto" and file != "-" and (is_parquet(file) or is_saved_dataset(file))):
            rows = _hub_inputs(file, pairs=isinstance(pred, Matcher), text_column=text_column)
        else:
            jsonl = input_format == "jsonl" or (input_format == "auto" and Path(file).suffix.lower() in (".json", ".jsonl"))
            rows = _read_inputs(file, pairs=isinstance(pred, Matcher), jsonl=jsonl, text_column=text_column)
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
            results = list(zip(chunk, run([item for _, item, _ in chunk])))
        except ValueError:  # find the bad line(s); every valid line is still predicted
            results = []
            for row in chunk:
                lineno, item, _ = row
                try:
                    results.append((row, run([item])[0]))
                except ValueError as e:
                    bad.append(f"{'<stdin>' if file == '-' else file}:{lineno}: {e}")
        for (_, item, kept), result in results:
            typer.echo(json.dumps({**kept, **_result_json(pred, item, result)}, ensure_ascii=False))
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
    from ..api import MaskedLM, load
    from ..errors import ZhbertError

    try:
        pred = load(model)
        if not isinstance(pred, MaskedLM):
            _fail(f"{model}: not a masked language model (it is a {type(pred).__name__})")
        result = pred.fill_mask(text, top_k=top_k, order=order)
    except (ZhbertError, OSError, ValueError, TypeError) as e:
        _fail(str(e))
    typer.echo(json.dumps({"text": text, "masks": [m.to_dict() for m in result]}, ensure_ascii=False))
