"""What ``zhbert predict`` reads: lines of text (or ``a<TAB>b`` pairs), JSON lines, the hub's
Parquet files and ``save_to_disk`` folders, and CoNLL files, each streamed in bounded chunks as
``(line or row, text or pair, fields written back)``. Errors name file:line."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ..errors import DataFormatError, clip
from ..text import MAX_TEXT_CHARS

MAX_PREDICT_LINE = MAX_TEXT_CHARS  # the API's limit per text, for the same reason
PREDICT_CHUNK_CHARS = 200_000  # characters passed to the model per call at most, whatever --batch-size says
#: the fields of an input record written back beside its prediction (CLUE's JSON says id, the hub's Parquet idx)
KEPT_FIELDS = ("id", "idx")
#: the key (column) of a pre-tokenised text, as run_ner.py and the hub's NER datasets store one
TOKENS_KEY = "tokens"
#: the first line of a CoNLL file: a token, then a tag (O, B-LOC, S-PER, ...) or more columns ending in one
_LOOKS_LIKE_CONLL = re.compile(r"^\S+(?:[ \t]+\S+)*[ \t]+(?:O|[BIMESLU]-[A-Za-z_.]+)$")
INPUT_FORMATS = ("lines", "jsonl", "csv", "parquet", "conll", "conllu")


def next_chunk(rows, size: int) -> list:
    """The next ``size`` rows of ``rows`` (``(line number, text or pair)``), fewer once they hold
    :data:`PREDICT_CHUNK_CHARS` characters: memory stays bounded with long lines."""
    chunk, chars = [], 0
    for row in rows:  # a for loop's break leaves the generator open: the next call goes on from here
        chunk.append(row)
        chars += len(row[1]) if isinstance(row[1], str) else sum(map(len, row[1]))
        if len(chunk) >= size or chars >= PREDICT_CHUNK_CHARS:
            break
    return chunk


def _checked_length(text: str, name: str, lineno: int) -> str:
    if len(text) > MAX_PREDICT_LINE:  # one text is held in memory whole with all its tokens
        problem = f"a text of {len(text):,} characters: predict takes up to {MAX_PREDICT_LINE:,} ({clip(text, 40)}); split it"
        raise DataFormatError(name, lineno, problem)
    return text


def _text_names(record: dict, pairs: bool, text_column: str, name: str, lineno: int, where: str) -> list[str]:
    """The keys of a record's text (or pair); a text model reads a record holding only ``tokens``
    (and no text) as its tokens joined, as training reads them."""
    from ..data.user_files import TEXT_NAMES, text_names

    if not pairs and TOKENS_KEY in record and text_column == "text" and not any(n in record for n in TEXT_NAMES):
        return [TOKENS_KEY]
    return list(text_names(pairs, record, text_column, name, lineno, where))


def _keyed_input(record: dict, name: str, lineno: int, names: list):
    """(text or pair, the fields written back) of one record whose texts are under ``names``."""
    from ..data.jsonio import record_texts

    kept = {k: record[k] for k in KEPT_FIELDS if k in record}
    if names == [TOKENS_KEY]:
        tokens = record.get(TOKENS_KEY)
        if not isinstance(tokens, list) or not all(isinstance(t, str) and t for t in tokens):
            raise DataFormatError(name, lineno, f"{TOKENS_KEY!r} should be a list of non-empty strings, found {clip(tokens)}")
        return _checked_length("".join(tokens), name, lineno), {**kept, TOKENS_KEY: tokens}
    texts = [_checked_length(text, name, lineno) for text in record_texts(record, names, name, lineno)]
    return (tuple(texts) if len(names) == 2 else texts[0]), kept


def _json_input(line: str, name: str, lineno: int, pairs: bool, text_column: str, names: list):
    """(text or pair, what to write back: the record's ``id``) of one JSON-lines record; ``names``
    holds the keys found in the first record, for every record after it."""
    from ..data.jsonio import json_line_record

    record = json_line_record(line, name, lineno)
    if not names:
        names.extend(_text_names(record, pairs, text_column, name, lineno, "key"))
    return _keyed_input(record, name, lineno, names)


def hub_inputs(file: str, pairs: bool, text_column: str):
    """(row, text or pair, fields written back) of a Parquet file or a folder ``Dataset.save_to_disk``
    wrote, read a batch of rows at a time."""
    from ..data.hub_files import iter_hub_records

    if file == "-":
        raise ValueError("--format parquet reads a file, not stdin (Parquet keeps its index at the end of the file)")
    names: list = []
    for row, record in iter_hub_records(file):
        if not names:
            names.extend(_text_names(record, pairs, text_column, file, row, "column"))
        yield (row, *_keyed_input(record, file, row, names))


def input_lines(file: str):
    """(line number, line) of a UTF-8 file or stdin, streamed: a line is read with a byte cap, so
    memory stays bounded whatever the input (a stream with no newline is refused at the cap, not
    read whole); errors name file:line. A lone CR also ends a line."""
    from ..data.source import _check_path
    from ..file_encoding import SNIFF_BYTES, not_text_problem, not_utf8_advice

    name = "<stdin>" if file == "-" else file
    if file != "-" and not (Path(file).exists() and not Path(file).is_file() and not Path(file).is_dir()):
        _check_path(Path(file))  # a pipe (/dev/stdin, <(...)) is read as stdin is, once, as a stream
    stream = sys.stdin.buffer if file == "-" else open(file, "rb")  # noqa: SIM115 (closed below)
    cap = 4 * MAX_PREDICT_LINE + 2  # UTF-8 takes at most 4 bytes a character, plus CRLF
    lineno, seen_text = 0, False
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
            for k, line in enumerate(text.rstrip("\n").rstrip("\r").split("\r")):
                lineno += k > 0
                seen_text = seen_text or bool(line.strip())
                yield lineno, line
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    if file != "-" and not seen_text:
        raise DataFormatError(name, 1, "file holds only whitespace")


def read_inputs(file: str, pairs: bool, jsonl: bool = False, text_column: str = "text", sniff: bool = True, classifier: bool = False):
    """(line number, text or pair, fields written back) from a UTF-8 file or stdin. With ``jsonl``
    each line is a JSON object whose text is read by key (and a blank line is skipped); without it,
    a first line that is a JSON object, or (with ``sniff``: the format was not given) a token and
    its tag as a CoNLL file holds them, or for a ``classifier`` a text and its label (a tab), is
    refused rather than predicted as text."""
    from ..data.jsonio import looks_like_json_object

    name = "<stdin>" if file == "-" else file
    seen_text, names = False, []
    for lineno, line in input_lines(file):
        if len(line) > MAX_PREDICT_LINE:  # one text is held in memory whole with all its tokens
            problem = (
                f"line of {len(line):,} characters: predict takes up to {MAX_PREDICT_LINE:,} per line ({clip(line, 40)}); "
                "split the text into lines"
            )
            raise DataFormatError(name, lineno, problem)
        if not seen_text and line.strip() and not jsonl:
            if looks_like_json_object(line):
                problem = "a JSON object, read as text it would be predicted as one: give --format jsonl (or a .jsonl file)"
                raise DataFormatError(name, lineno, problem)
            if sniff and not pairs and line.startswith(("# sent_id", "# newdoc", "# text = ")):
                problem = "a CoNLL-U comment, as Universal Dependencies' treebanks start a sentence: give --format conllu"
                raise DataFormatError(name, lineno, problem)
            if sniff and classifier and "\t" in line.strip():
                problem = (
                    "a tab in the line, as a labelled file (text<TAB>label) has one: score it with zhbert train tagging "
                    "--evaluate-only MODEL --test-file FILE, or predict its texts alone (cut -f1 FILE, or -f2 where the label "
                    "comes first); --format lines "
                    "reads the whole line as a text"
                )
                raise DataFormatError(name, lineno, problem)
            if sniff and not pairs and _LOOKS_LIKE_CONLL.match(line.strip()):
                problem = (
                    f"a token and its tag ({clip(line.strip())}), as a CoNLL file holds them: give --format conll to read a "
                    "sentence from each run of lines (--format lines reads each line as a text)"
                )
                raise DataFormatError(name, lineno, problem)
        seen_text = seen_text or bool(line.strip())
        if jsonl:
            if line.strip():
                yield (lineno, *_json_input(line, name, lineno, pairs, text_column, names))
        elif pairs:
            cols = line.split("\t")
            if len(cols) != 2:
                labelled = (
                    ": a labelled file (text_a, text_b, label) is scored with zhbert train matching --evaluate-only MODEL "
                    "--test-file FILE, and its pairs alone are cut -f1,2 FILE"
                    if len(cols) == 3
                    else ""
                )
                raise DataFormatError(name, lineno, f"a matching model needs 'text_a<TAB>text_b', found {len(cols)} column(s){labelled}")
            yield lineno, (cols[0], cols[1]), {}
        else:
            yield lineno, line, {}


def csv_inputs(file: str, pairs: bool, text_column: str):
    """(line, text or pair, fields written back) of a CSV file with a header row (a spreadsheet's
    export): the text under ``--text-column`` (or the names training reads), a pair under
    ``text_a``/``text_b`` and the other names training reads; ``id`` or ``idx`` written back. A
    quoted cell may span lines; one is never longer than a text may be."""
    from ..data.csv_rows import csv_records

    name = "<stdin>" if file == "-" else file
    header, records = csv_records((line + "\n" for _, line in input_lines(file)), name, MAX_PREDICT_LINE)
    names = _text_names(dict.fromkeys(header), pairs, text_column, name, 1, "column")
    for start, record in records:
        yield (start, *_keyed_input(record, name, start, names))


def _conllu_token(line: str, name: str, lineno: int) -> str | None:
    """The word (FORM) of a CoNLL-U line; None for a comment, a multiword token's range or an empty node."""
    from ..data.conllu import conllu_cells

    cells = conllu_cells(line, name, lineno)
    return None if cells is None else cells[1]


def conll_inputs(file: str, conllu: bool = False):
    """(first line, sentence, ``{"tokens": [...]}``) of a CoNLL file: a token a line (its first
    column; tags or other columns after it are not read), a blank line (or ``-DOCSTART-``) between
    sentences; with ``conllu``, Universal Dependencies' CoNLL-U (the word in its second column).
    The sentence is its tokens joined, as training reads them."""
    from ..data.char_tagged import is_document_marker

    name = "<stdin>" if file == "-" else file
    tokens: list[str] = []
    first = chars = 0
    for lineno, line in input_lines(file):
        if not line.strip() or (not conllu and is_document_marker(line)):
            if tokens:
                yield first, "".join(tokens), {TOKENS_KEY: tokens}
                tokens, chars = [], 0
            continue
        token = _conllu_token(line, name, lineno) if conllu else line.split(maxsplit=1)[0]
        if not token:
            continue
        if not tokens:
            first = lineno
        chars += len(token)
        if chars > MAX_PREDICT_LINE:  # checked while reading: the sentence is never held whole
            problem = (
                f"a sentence of more than {MAX_PREDICT_LINE:,} characters (no blank line from here to line {lineno}): "
                "end each sentence with a blank line"
            )
            raise DataFormatError(name, first, problem)
        tokens.append(token)
    if tokens:
        yield first, "".join(tokens), {TOKENS_KEY: tokens}


def predicted_token_tags(tokens: list[str], entities) -> list[str]:
    """A BIO tag for each input token from entities found in the tokens' joined text: a token takes
    the entity its first character lies in, as training turns characters' tags into tokens' tags."""
    from ..tags import spans_to_tags, token_tags

    starts, at = [], 0
    for token in tokens:
        starts.append(at)
        at += len(token)
    char_tags = spans_to_tags(at, [(e.label, e.start, e.end) for e in entities], "BIO")
    return token_tags(char_tags, starts, "BIO")
