"""Training data from the user's own files: ``zhbert train TASK --train-file F [--validation-file F]
[--test-file F] [--format ...]``, as HF's ``run_ner.py`` takes ``--train-file``.

Formats, by task (``auto`` picks by the file's extension, and for NER JSON by each record's shape):

* ``ner``: ``conll`` - one character and its tag per line, a blank line between sentences, BIO,
  BIOES or BMES (detected); ``conll-words`` - the same with a word a line, each of its characters
  tagged within its entity; ``wordtag`` - People's Daily's ``word/POS`` lines, their names (``nr``, ``ns``,
  ``nt`` and their kinds; a bracketed ``[...]nt``) as PER, LOC and ORG (:mod:`.wordtag`); ``jsonl`` - one JSON
  object per line (or one array), each either
  CLUENER's ``{"text", "label": {type: {mention: [[start, end]]}}}`` (end inclusive), doccano's
  ``{"text", "label": [[start, end, type]]}`` or ``{"text", "entities": [{"start_offset",
  "end_offset", "label"}]}`` (end exclusive), CCKS 2019's Yidu-S4K ``{"originalText", "entities":
  [{"label_type", "start_pos", "end_pos"}]}``, or a Label Studio export task
  ``{"data": {"text"}, "annotations": [{"result": [{"value": {"start", "end", "labels"}}]}]}`` or its JSON-MIN
  ``{"text", "label": [{"start", "end", "text", "labels"}]}``, or
  Prodigy's ``{"text", "spans": [{"start", "end", "label"}]}`` (an ``answer`` of reject or ignore left out), or
  run_ner.py's ``{"tokens": [...], "ner_tags": [...]}`` (BIO, BIOES or BMES; a token may be a word);
  ``brat`` - a folder of brat's ``NAME.txt`` and ``NAME.ann`` files, or one of them (:mod:`.brat`);
  ``markup`` - a text a line, its entities marked inside it, BosonNLP's ``{{TYPE:mention}}`` or YEDDA's
  ``[@mention#TYPE*]`` (:mod:`.inline_markup`);
  ``parquet`` - the hub's ``tokens`` and ``ner_tags`` columns, the tags' names read from the file.
* ``cws``: ``words`` - one sentence per line, words separated by spaces; ``wordtag`` - the words of People's
  Daily's ``word/POS`` lines.
* ``pos``: ``wordtag`` - one sentence per line, ``word/TAG`` items separated by spaces (People's Daily's
  form; a compound's brackets, ``[中央/n 电视台/n]nt``, are dropped and its words kept with their own tags).
* ``tagging``: ``tsv`` - ``text<TAB>label``; ``csv`` - a header row naming ``--text-column`` and
  ``--label-column``; ``jsonl`` - one JSON object per line (or one array) with those keys (CLUE's form), or
  Label Studio's export tasks (texts under ``data``, labels in the annotation's ``choices``).
* ``matching``: ``tsv`` - ``text_a<TAB>text_b<TAB>label``; ``csv`` and ``jsonl`` - columns or keys
  ``text_a`` and ``text_b`` (or ``sentence1`` and ``sentence2``, as CLUE names them) and ``--label-column``.
  Labels that are numbers written with a fraction (not only 0.0 and 1.0) are similarity scores: a regression head.
* ``tagging`` and ``matching`` also read ``parquet``, the form the Hugging Face hub serves datasets in:
  the columns as the keys of ``jsonl``, a ClassLabel's numbers read as its names, -1 (no label) left out.
* ``ner``, ``tagging`` and ``matching`` read ``arrow``, a folder ``Dataset.save_to_disk`` wrote, as they
  read ``parquet``.

The label set comes from the training file and is saved with the model. Without a validation file,
a seeded share of the training rows is held out as the dev split, and the notes say so. Every bad
line is an error ``file:line: problem``; a line or record past the readers' bounds is refused.
"""

from __future__ import annotations

import io
import logging
import math
import random
import re
from pathlib import Path

import regex

from ..errors import DataFormatError, clip
from ..tags import check_sequence, labels_for, tags_to_spans
from .conllu import conllu_cells
from .hub_files import is_parquet, is_saved_dataset
from .source import _check_path, head_lines, iter_lines, nonblank_lines, read_text

logger = logging.getLogger(__name__)

__all__ = ["FORMATS", "task_data_from_files", "test_data_from_file", "read_entity_json", "labelled_rows", "text_names"]

FORMATS = {
    "ner": ("conll", "conll-words", "wordtag", "jsonl", "brat", "markup", "parquet", "arrow"),
    "cws": ("words", "wordtag", "conll", "conllu"),
    "pos": ("wordtag", "conllu"),
    "tagging": ("tsv", "csv", "jsonl", "parquet", "arrow"),
    "matching": ("tsv", "csv", "jsonl", "parquet", "arrow"),
}
#: the Hugging Face datasets' own forms: a Parquet file, a folder Dataset.save_to_disk wrote (Arrow)
HUB_FORMATS = ("parquet", "arrow")
#: formats whose records carry their fields by name (JSON keys, Parquet and Arrow columns)
KEYED_FORMATS = ("jsonl", *HUB_FORMATS)
MAX_LINE_CHARS = 200_000  # a text of a tagging or pair file, as a line of segmented text


def _check_given(path: str, option: str) -> None:
    """A file, or a folder ``Dataset.save_to_disk`` wrote; else an error naming ``option``."""
    if not Path(path).exists():
        raise FileNotFoundError(f"{path}: {option} not found")
    if Path(path).is_dir():
        from .brat import is_brat_folder

        if not is_saved_dataset(path) and not is_brat_folder(path):
            raise FileNotFoundError(
                f"{path}: not a file (nor a folder that Dataset.save_to_disk wrote, nor one of brat's .ann and .txt files)"
            )
    else:
        _check_path(Path(path))  # a pipe or a device is refused by name


def _format(task: str, path: str, fmt: str) -> str:
    if task not in FORMATS:
        raise ValueError(f"training from files covers {', '.join(FORMATS)}; not {task!r}")
    if fmt != "auto":
        if fmt not in FORMATS[task]:
            raise ValueError(f"--format {fmt!r} is not a {task} format; choose {', '.join(FORMATS[task])} (or auto)")
        return fmt
    suffix = Path(path).suffix.lower()
    if task in ("ner", "tagging", "matching") and is_saved_dataset(path):
        return "arrow"
    if task in ("ner", "tagging", "matching") and (suffix == ".parquet" or is_parquet(path)):
        return "parquet"
    if task == "ner" and (suffix == ".ann" or (suffix == ".txt" and Path(path).with_suffix(".ann").is_file())):
        return "brat"
    if task == "ner" and Path(path).is_dir():
        return "brat"  # not a saved dataset (above): a folder of brat's files
    if task == "ner":
        from .inline_markup import looks_marked
        from .wordtag import looks_word_tagged

        if suffix in (".json", ".jsonl") or _looks_json(path):
            return "jsonl"
        return "wordtag" if looks_word_tagged(path) else "markup" if looks_marked(path) else "conll"
    if task in ("cws", "pos") and suffix == ".conllu":
        return "conllu"
    if task == "cws":
        from .wordtag import looks_word_tagged

        return "conll" if _looks_char_tagged(path) else "wordtag" if looks_word_tagged(path) else "words"
    if task == "pos":
        return "wordtag"
    return "csv" if suffix == ".csv" else "jsonl" if suffix in (".json", ".jsonl") or _looks_json(path) else "tsv"


def _looks_json(path: str) -> bool:
    """Whether a file of another extension holds JSON records (CLUE's emotion set ships JSON lines as ``.txt``,
    SMP2020-EWECT's virus set a JSON array): its first line an object, or an array's opening."""
    from .jsonio import looks_like_json_object

    first = head_lines(path, 1)
    return bool(first) and (first[0] in ("{", "[") or first[0].startswith("[{") or looks_like_json_object(first[0]))


def _records(path: str, fmt: str):
    """``(line, record)`` of a JSON-lines file (or JSON array), or ``(row, record)`` of a Parquet file
    or a folder ``Dataset.save_to_disk`` wrote, whose ClassLabel numbers are read as their names and
    whose -1 (no label) as :data:`NO_GOLD_LABEL`."""
    if fmt in HUB_FORMATS:
        from .hub_files import iter_hub_records

        return iter_hub_records(path, missing=NO_GOLD_LABEL)
    from .jsonio import iter_json_records

    return iter_json_records(read_text(path), path)


def _left_out(path: str, fmt: str, lines: list[int], what: str, notes: list[str] | None) -> None:
    """Say (log and ``notes``) how many records were left out as ``what``, and where the first was."""
    if lines:
        note = f"{path}: {len(lines):,} {what} left out, the first at {'row' if fmt in HUB_FORMATS else 'line'} {lines[0]}"
        logger.warning(note)
        if notes is not None:
            notes.append(note)


# --- NER ----------------------------------------------------------------------------------------
#: the key of a token list's tags (run_ner.py reads ``ner_tags``, as the hub's NER datasets name them)
TOKEN_TAG_KEYS = ("ner_tags", "tags")


def read_entity_json(path: str, notes: list[str] | None = None, fmt: str = "jsonl") -> list[dict]:
    """Records of a JSON-lines (or JSON array) or Parquet entity file as ``{"text", "spans": [(type,
    start, end)], "line"}`` with end-exclusive offsets, each span checked against its text. A record
    of tokens and their tags (run_ner.py's and the hub's shape) is tagged in the scheme its file's tags
    use. A record nobody labelled (no ``label`` key; a Label Studio task without an annotation, or only
    skipped ones) is left out, counted in ``notes``: read as a text without entities, it would teach
    the model that its names are none. So is a record of no tokens."""
    out, unlabelled, empty, tokenized = [], [], [], []
    for line, record in _records(path, fmt):
        items = record if isinstance(record, list) else [record]
        for rec in items:  # a Label Studio export is one array of tasks
            tokens = _token_tagged(rec, path, line)
            if tokens is not None:
                (tokenized if tokens[0] else empty).append((line, *tokens))
                continue
            found = _entity_record(rec, path, line)
            if found is None:
                unlabelled.append(line)
            else:
                out.append({**found, "line": line})
    out.extend(_token_records(tokenized, path))
    out.sort(key=lambda record: record["line"])
    _left_out(path, fmt, unlabelled, "record(s) nobody labelled (no label, or no annotation)", notes)
    _left_out(path, fmt, [line for line, *_ in empty], "record(s) of no tokens", notes)
    if not out:
        raise DataFormatError(path, None, "no labelled records" if unlabelled else "no records")
    return out


def _token_tagged(rec, path: str, line: int) -> tuple[list[str], list[str]] | None:
    """``(tokens, tags)`` of a record ``{"tokens": [...], "ner_tags": [...]}``; None for another shape (Prodigy's
    records hold ``tokens`` too, as objects, beside the character ``spans`` that label them)."""
    if not isinstance(rec, dict) or "tokens" not in rec or "spans" in rec:
        return None
    key = next((k for k in TOKEN_TAG_KEYS if k in rec), None)
    if key is None:
        raise DataFormatError(path, line, f"'tokens' without their tags: expected {' or '.join(map(repr, TOKEN_TAG_KEYS))} beside them")
    tokens, tags = rec["tokens"], rec[key]
    if not isinstance(tokens, list) or not all(isinstance(t, str) and t for t in tokens):
        raise DataFormatError(path, line, f"'tokens' should be a list of non-empty strings, found {clip(tokens)}")
    if isinstance(tags, list) and any(isinstance(t, int) for t in tags):
        raise DataFormatError(
            path,
            line,
            f"{key!r} holds numbers, not tag names, and JSON keeps no names for them: give the dataset's Parquet file, "
            f"which does, or write the names (names = ds.features['{key}'].feature.names; "
            f"ds.map(lambda r: {{'{key}': [names[i] for i in r['{key}']]}}))",
        )
    if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
        raise DataFormatError(path, line, f"{key!r} should be a list of tags (strings), found {clip(tags)}")
    if len(tokens) != len(tags):
        raise DataFormatError(path, line, f"{len(tokens)} tokens and {len(tags)} {key}: one tag a token")
    from ..tags import bioes_tag

    tags = [bioes_tag(t) for t in tags]
    if sum(map(len, tokens)) > MAX_LINE_CHARS:
        raise DataFormatError(path, line, f"a text of more than {MAX_LINE_CHARS:,} characters")
    return tokens, tags


def _token_records(tokenized: list[tuple[int, list[str], list[str]]], path: str) -> list[dict]:
    """``{"text", "spans", "line"}`` of records of tokens and their tags, in the scheme (BIO, BIOES or
    BMES) their tags use together."""
    from ..tags import detect_scheme

    if not tokenized:
        return []
    scheme = detect_scheme({t for _, _, tags in tokenized for t in tags})
    out = []
    for line, tokens, tags in tokenized:
        text, spans = _words_to_spans(tokens, tags, scheme, path, lambda i, line=line: line, "tokens")
        out.append({"text": text, "spans": spans, "line": line})
    return out


def _words_to_spans(words: list[str], tags: list[str], scheme: str, path: str, line_of, what: str):
    """``(text, spans)`` of words (or tokens) tagged in ``scheme``: an entity covers its words'
    characters. A tag sequence that breaks the scheme is an error at ``line_of(word index)``."""
    from ..tags import check_sequence, tags_to_spans

    bad = check_sequence(tags, scheme)
    if bad is not None:
        raise DataFormatError(path, line_of(bad[0]), f"{bad[1]} ({what} tagged in {scheme})")
    starts = [0]
    for word in words:
        starts.append(starts[-1] + len(word))
    return "".join(words), [(typ, starts[a], starts[b]) for typ, a, b in tags_to_spans(tags, scheme)]


def _entity_record(rec, path: str, line: int) -> dict | None:
    """``{"text", "spans"}`` of one record; None for one nobody labelled."""
    if not isinstance(rec, dict):
        raise DataFormatError(path, line, f"expected a JSON object, found {type(rec).__name__}")
    if "data" in rec and isinstance(rec["data"], dict):  # Label Studio
        text = rec["data"].get("text")
        annotations = [a for a in rec.get("annotations") or [] if isinstance(a, dict) and not a.get("was_cancelled")]
        if not annotations:  # a task not annotated yet, or only skipped ("was_cancelled")
            return None
        results = [r for a in annotations for r in (a.get("result") or [])]
        spans = []
        for r in results:
            value = r.get("value") or {}
            labels = value.get("labels") or []
            if len(labels) != 1:
                raise DataFormatError(path, line, f"a Label Studio result with labels {labels!r}: expected exactly one")
            spans.append((labels[0], value.get("start"), value.get("end"), value.get("text")))
    else:
        text = rec.get("text", rec.get("originalText"))  # CCKS 2019's Yidu-S4K names it originalText
        label = rec.get("label", rec.get("labels"))
        if isinstance(label, dict):  # CLUENER: {type: {mention: [[start, end_inclusive]]}}
            spans = [
                (typ, pos[0], pos[1] + 1 if isinstance(pos, list) and len(pos) == 2 and isinstance(pos[1], int) else None, mention)
                for typ, mentions in label.items()
                for mention, positions in (mentions.items() if isinstance(mentions, dict) else [(None, [None])])
                for pos in (positions if isinstance(positions, list) else [None])
            ]
        elif isinstance(label, list):  # doccano: [[start, end, type]]; Label Studio's JSON-MIN: [{start, end, text, labels}]
            spans = [_min_entity(x, path, line) if isinstance(x, dict) else _doccano_entity(x) for x in label]
        elif "entities" in rec or "spans" in rec:  # doccano's newer export, CBLUE's CMeEE; Prodigy's (and spaCy's)
            key = "entities" if "entities" in rec else "spans"
            if not isinstance(rec[key], list):
                raise DataFormatError(path, line, f"{key!r} should be a list of entities, found {clip(rec[key])}")
            if key == "spans" and rec.get("answer") in ("reject", "ignore"):  # an annotator's "wrong" or "skip"
                return None
            spans = [_listed_entity(e) for e in rec[key]]
        elif label is None and not any(k in rec for k in ("label", "labels")):
            return None  # no label at all (as in CLUENER's test file): not a text without entities
        elif label is None:
            spans = []
        else:
            raise DataFormatError(path, line, f"'label' should be a list [[start, end, type]] or a CLUENER object, found {clip(label)}")
    if not isinstance(text, str) or not text:
        raise DataFormatError(path, line, "no 'text' string")
    checked = []
    for typ, start, end, mention in spans:
        ok = isinstance(typ, str) and typ and all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end))
        if not ok:
            raise DataFormatError(path, line, f"an entity is not (start, end, type): {clip((start, end, typ))}")
        if not 0 <= start < end <= len(text):
            raise DataFormatError(path, line, f"{typ} span [{start}, {end}) outside a text of {len(text)} characters")
        if mention is not None and text[start:end] != mention:
            raise DataFormatError(path, line, f"{typ} span [{start}, {end}) covers {clip(text[start:end])}, not {clip(mention)}")
        checked.append((typ, start, end))
    return {"text": text, "spans": checked}


def _doccano_entity(entity) -> tuple:
    return (entity[2], entity[0], entity[1], None) if isinstance(entity, list) and len(entity) == 3 else (None,) * 4


def _min_entity(entity: dict, path: str, line: int) -> tuple:
    """``(type, start, end, mention)`` of a Label Studio JSON-MIN span ``{"start", "end", "text", "labels": [TYPE]}``."""
    labels = entity.get("labels")
    if not isinstance(labels, list) or len(labels) != 1:
        given = ", ".join(map(str, labels)) if isinstance(labels, list) else labels
        raise DataFormatError(path, line, f"a Label Studio span with labels {clip(given)}: expected exactly one")
    return labels[0], entity.get("start"), entity.get("end"), entity.get("text")


def _listed_entity(entity) -> tuple:
    """``(type, start, end, mention)`` of one item of a record's ``entities`` or ``spans``: doccano's
    ``{"label", "start_offset", "end_offset"}``, CBLUE's CMeEE ``{"type", "start_idx", "end_idx",
    "entity"}``, whose end is inclusive (its mention, checked against the text, shows the span), CCKS 2019's
    Yidu-S4K ``{"label_type", "start_pos", "end_pos"}`` (its text under ``originalText``), or
    Prodigy's ``{"start", "end", "label"}`` (with its ``text``, when given, checked too)."""
    if not isinstance(entity, dict):
        return (None,) * 4
    if "start_idx" in entity:
        end = entity.get("end_idx")
        inclusive_end = isinstance(end, int) and not isinstance(end, bool)
        return entity.get("type"), entity.get("start_idx"), end + 1 if inclusive_end else None, entity.get("entity")
    if "start_offset" in entity:
        return entity.get("label"), entity.get("start_offset"), entity.get("end_offset"), None
    if "start_pos" in entity:  # CCKS 2019's Yidu-S4K (medical): {"label_type", "start_pos", "end_pos"}, end exclusive
        return entity.get("label_type"), entity.get("start_pos"), entity.get("end_pos"), None
    return entity.get("label"), entity.get("start"), entity.get("end"), entity.get("text")


def _spans_to_rows(records: list[dict], path: str, notes: list[str] | None = None) -> list[dict]:
    """Character tags from each record's spans. Tags are flat, so of nested or overlapping mentions
    the outer, earlier one is tagged; the others left out are counted and said (``notes``, the log)."""
    from ..tags import spans_to_tags

    rows, left_out, first = [], 0, None
    for rec in records:
        flat, last_end = [], 0
        for typ, s, e in sorted(rec["spans"], key=lambda x: (x[1], -(x[2] - x[1]))):
            if s >= last_end:
                flat.append((typ, s, e))
                last_end = e
            elif (typ, s, e) not in flat:  # the same mention listed twice loses nothing
                left_out += 1
                if first is None:
                    outer = flat[-1]
                    text = rec["text"]
                    where = rec.get("where") or f"line {rec['line']}"  # brat's records name their text file
                    first = f"{where}: {typ} {text[s:e]!r} within or across {outer[0]} {text[outer[1] : outer[2]]!r}"
        rows.append({"text": rec["text"], "tags": spans_to_tags(len(rec["text"]), flat, "BIO")})
    if left_out:
        mentions = f"{left_out:,} nested or overlapping mention{'s' if left_out > 1 else ''}"
        note = f"{path}: {mentions} left out (tags are flat: the outer, earlier one is tagged); the first at {first}"
        logger.warning(note)
        if notes is not None:
            notes.append(note)
    return rows


def _ner_rows(path: str, fmt: str, notes: list[str] | None = None) -> tuple[list[dict], str]:
    if fmt in KEYED_FORMATS:
        return _spans_to_rows(read_entity_json(path, notes, fmt), path, notes), "BIO"
    if fmt == "conll-words":
        return _word_tagged_rows(path), "BIO"
    if fmt == "wordtag":
        return _named_word_rows(path, notes), "BIO"
    if fmt == "brat":
        from .brat import read_brat

        return _spans_to_rows(read_brat(path, notes), path, notes), "BIO"
    if fmt == "markup":
        from .inline_markup import read_marked_lines

        return _spans_to_rows(read_marked_lines(path), path, notes), "BIO"
    from . import read_char_tagged
    from .tasks import char_tag_rows

    try:
        ds = read_char_tagged(path, scheme="auto")
    except DataFormatError as e:
        if "expected one character per line" not in str(e):
            raise
        if not _has_position_digits(path):  # a word and its tag a line: a format of its own
            raise DataFormatError(path, e.line, f"{e.problem}; a file of words and their tags reads with --format conll-words") from None
        ds = read_char_tagged(path, scheme="auto", position_digits=True)
        note = f"{path}: each character is written with its position in its word (口0 腔1, Weibo NER's form): the digits read as positions"
        logger.info(note)
        if notes is not None:
            notes.append(note)
    return char_tag_rows(ds), _scheme_of(ds)


#: a token of Weibo NER's second release: a character (a grapheme cluster) and its position in its word
_POSITIONED_CHAR = regex.compile(r"\X\d{1,3}")


def _has_position_digits(path: str) -> bool:
    """Whether every token of the file's first lines is a character followed by digits (``口0``)."""
    from .char_tagged import is_document_marker

    lines = [line for line in head_lines(path, 200) if not is_document_marker(line)]
    return bool(lines) and all(_POSITIONED_CHAR.fullmatch(line.split()[0]) for line in lines)


def _named_word_rows(path: str, notes: list[str] | None) -> list[dict]:
    """Sentences of a ``word/TAG`` file (People's Daily's form) tagged with the names their parts of speech mark
    (:func:`.wordtag.name_entities`), in BIO; how many of each type, and the tags read as names, said in ``notes``."""
    from collections import Counter

    from ..tags import spans_to_tags
    from .wordtag import ENTITY_OF_TAG, name_entities

    rows, found = [], Counter()
    for sentence in _word_tag_sentences(path, notes):
        spans = name_entities(sentence)
        found.update(typ for typ, _, _ in spans)
        rows.append({"text": sentence.text, "tags": spans_to_tags(len(sentence.text), spans, "BIO")})
    names = ", ".join(f"{typ} {'/'.join(t for t, ty in ENTITY_OF_TAG.items() if ty == typ)}" for typ in ("PER", "LOC", "ORG"))
    if not found:
        raise DataFormatError(
            path, None, f"no word is tagged as a name: the entities of a word/TAG file are its names' parts of speech ({names})"
        )
    note = f"{path}: entities from the parts of speech ({names}; a bracketed compound of those tags is one entity): " + ", ".join(
        f"{typ} {found[typ]:,}" for typ in ("PER", "LOC", "ORG") if found[typ]
    )
    logger.info(note)
    if notes is not None:
        notes.append(note)
    return rows


def _entity_mapped(rows: list[dict], scheme: str, mapping: dict[str, str] | None, path: str, notes: list[str] | None) -> list[dict]:
    """``rows`` with their entity types renamed by ``--entity-map``; the entities of a type it does
    not name are left out (tagged O) and counted in the notes."""
    if mapping is None:
        return rows
    from .ner_sources import map_entity_types

    rows, left_out = map_entity_types(rows, scheme, mapping)
    note = f"{path}: entity types mapped by --entity-map ({', '.join(f'{a}={b}' for a, b in mapping.items())})"
    if left_out:
        note += f"; {sum(left_out.values()):,} entities of types it does not name left out (tagged O): " + ", ".join(
            f"{typ} ({n:,})" for typ, n in sorted(left_out.items())
        )
    logger.info(note)
    if notes is not None:
        notes.append(note)
    return rows


def _word_tagged_rows(path: str) -> list[dict]:
    """Sentences of a CoNLL file of words (``北京 B-LOC``, a blank line or ``-DOCSTART-`` between sentences): each
    word's characters tagged within its entity, in BIO. Its tags are BIO, BIOES or BMES (detected),
    checked as a sequence of words: an ``I-`` that continues nothing is an error at its line."""
    from ..tags import bioes_tag, detect_scheme, spans_to_tags
    from .char_tagged import is_document_marker

    sentences: list[tuple[list[str], list[str], list[int]]] = []
    words: list[str] = []
    tags: list[str] = []
    lines: list[int] = []
    for lineno, line in iter_lines(path):
        if not line.strip() or is_document_marker(line):
            if words:
                sentences.append((words, tags, lines))
                words, tags, lines = [], [], []
            continue
        parts = line.split()
        if len(parts) != 2:
            raise DataFormatError(path, lineno, f"expected 2 columns (word tag), found {len(parts)}: {clip(line)}")
        if sum(map(len, words)) > MAX_LINE_CHARS:
            raise DataFormatError(
                path, lines[0], f"a sentence of more than {MAX_LINE_CHARS:,} characters: end each sentence with a blank line"
            )
        words.append(parts[0])
        tags.append(bioes_tag(parts[1]))
        lines.append(lineno)
    if words:
        sentences.append((words, tags, lines))
    if not sentences:
        raise DataFormatError(path, None, "no sentences")
    scheme = detect_scheme({t for _, sentence_tags, _ in sentences for t in sentence_tags})
    rows = []
    for words, tags, lines in sentences:
        text, spans = _words_to_spans(words, tags, scheme, path, lines.__getitem__, "words")
        rows.append({"text": text, "tags": spans_to_tags(len(text), spans, "BIO")})
    return rows


def _scheme_of(ds) -> str:
    from ..tags import detect_scheme

    return detect_scheme(set(ds.features["tags"].feature.names))


# --- segmentation ---------------------------------------------------------------------------------
#: a line of a CoNLL segmentation file: a character and its word-position tag
_CHAR_TAG_LINE = re.compile(r"\S{1,4}[ \t]+[BMESI]")
WORD_POSITION_TAGS = "BMESI"


def _looks_char_tagged(path: str) -> bool:
    """Whether a segmentation file's first lines are each a character and its word-position tag
    (``中 B``), a CoNLL file rather than one sentence a line."""
    lines = head_lines(path)
    return bool(lines) and all(_CHAR_TAG_LINE.fullmatch(line) for line in lines)


def _char_tagged_words(path: str) -> tuple[list[str], list[list[str]]]:
    """(texts, words) of a CoNLL segmentation file: a character and its tag a line, a blank line
    between sentences; tags B, M (or I), E, S, or B and I alone (a word runs from one B to the next).
    A tag that breaks its word is an error at its line."""
    from .char_tagged import is_document_marker

    sentences: list[list[tuple[int, str, str]]] = [[]]
    for lineno, line in iter_lines(path):
        if not line.strip() or is_document_marker(line):
            if sentences[-1]:
                sentences.append([])
            continue
        parts = line.split()
        if len(parts) != 2 or parts[1] not in WORD_POSITION_TAGS:
            raise DataFormatError(path, lineno, f"expected a character and its tag ({', '.join(WORD_POSITION_TAGS)}), found {clip(line)}")
        if len(sentences[-1]) >= MAX_LINE_CHARS:
            first = sentences[-1][0][0]
            raise DataFormatError(
                path, first, f"a sentence of more than {MAX_LINE_CHARS:,} characters: end each sentence with a blank line"
            )
        sentences[-1].append((lineno, *parts))
    sentences = [s for s in sentences if s]
    if not sentences:
        raise DataFormatError(path, None, "no sentences")
    two_tags = {tag for s in sentences for _, _, tag in s} <= {"B", "I"}
    texts, words = [], []
    for sentence in sentences:
        text = "".join(char for _, char, _ in sentence)
        tags = _as_bmes([tag for _, _, tag in sentence], two_tags)
        bad = check_sequence(tags, "BMES-untyped")
        if bad:
            raise DataFormatError(path, *_word_break(sentence, tags, bad[0], two_tags))
        texts.append(text)
        words.append([text[start:end] for _, start, end in tags_to_spans(tags, "BMES-untyped")])
    return texts, words


def _as_bmes(tags: list[str], two_tags: bool) -> list[str]:
    """A sentence's word-position tags as B, M, E, S: BIES's I is M; with B and I alone, a word runs
    from one B to the next, so a B alone is S and an I that ends its word is E."""
    if not two_tags:
        return ["M" if tag == "I" else tag for tag in tags]
    ends = [i + 1 == len(tags) or tags[i + 1] == "B" for i in range(len(tags))]
    return [("S" if end else "B") if tag == "B" else ("E" if end else "M") for tag, end in zip(tags, ends)]


def _word_break(sentence: list[tuple[int, str, str]], tags: list[str], at: int, two_tags: bool) -> tuple[int, str]:
    """(line, problem) of the tag at ``at`` that :func:`check_sequence` found breaking its word, in
    the file's own tags."""
    tag = sentence[at][2]
    opened = at > 0 and tags[at - 1] in "BM"
    if tags[at] in "BS" and opened:
        return sentence[at][0], f"{tag} after a word left open (B or M with no E)"
    if tags[at] in "ME" and not opened:
        problem = "I continues no word: a sentence starts with B" if two_tags else f"{tag} continues no word (a word starts with B or S)"
        return sentence[at][0], problem
    return sentence[-1][0], "the sentence ends inside a word (B or M with no E)"


def _conllu_sentences(path: str) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """(texts, words, UPOS tags) of a CoNLL-U file (Universal Dependencies' Chinese treebanks): a
    word a line, tab-separated, a blank line between sentences; ``#`` comments, multiword-token
    ranges (``1-2``) and empty nodes (``1.1``) are not words of the text."""
    texts, words, tags = [], [], []
    forms: list[str] = []
    upos: list[str] = []
    for lineno, line in iter_lines(path):
        if not line.strip():
            if forms:
                texts.append("".join(forms))
                words.append(forms)
                tags.append(upos)
                forms, upos = [], []
            continue
        cells = conllu_cells(line, path, lineno)
        if cells is None:
            continue
        if not cells[1] or any(c.isspace() for c in cells[1]) or not cells[3] or cells[3] == "_":
            raise DataFormatError(
                path, lineno, f"expected a word (FORM) and its part of speech (UPOS), found {clip(cells[1])} {cells[3]!r}"
            )
        if sum(map(len, forms)) > MAX_LINE_CHARS:
            raise DataFormatError(
                path, lineno, f"a sentence of more than {MAX_LINE_CHARS:,} characters: end each sentence with a blank line"
            )
        forms.append(cells[1])
        upos.append(cells[3])
    if forms:
        texts.append("".join(forms))
        words.append(forms)
        tags.append(upos)
    if not texts:
        raise DataFormatError(path, None, "no sentences")
    return texts, words, tags


def _cws_rows(path: str, fmt: str = "words", notes: list[str] | None = None) -> list[dict]:
    from . import read_segmented
    from .tasks import cws_rows

    if fmt == "conll":
        return cws_rows(*_char_tagged_words(path))
    if fmt == "conllu":
        return cws_rows(*_conllu_sentences(path)[:2])
    if fmt == "wordtag":
        sentences = _word_tag_sentences(path, notes)
        return cws_rows([s.text for s in sentences], [s.words for s in sentences])
    ds = read_segmented(path)
    if len(ds) and max(map(len, ds["words"])) < 2:  # read as whole-line words, it teaches that no line has a boundary
        raise DataFormatError(
            path, None, "no line holds two words: a line is a sentence, its words separated by spaces (a word list is --lexicon-words)"
        )
    return cws_rows(ds["text"], ds["words"])


def _pos_rows(path: str, notes: list[str] | None = None, fmt: str = "wordtag") -> list[dict]:
    from .tasks import pos_rows

    if fmt == "conllu":
        return pos_rows(*_conllu_sentences(path))
    sentences = _word_tag_sentences(path, notes)
    return pos_rows([s.text for s in sentences], [s.words for s in sentences], [s.tags for s in sentences])


def _word_tag_sentences(path: str, notes: list[str] | None) -> list:
    """The sentences of a ``word/TAG`` file (:mod:`.wordtag`); People's Daily's line ids, read as ids, said in ``notes``."""
    from .wordtag import read_word_tag_lines

    sentences = list(read_word_tag_lines(path))
    if not sentences:
        raise DataFormatError(path, None, "no sentences")
    ids = sum(s.had_id for s in sentences)
    if ids:
        note = f"{path}: the line ids of People's Daily 1998 (19980101-01-001-001/m) read as ids, not words, on {ids:,} lines"
        logger.info(note)
        if notes is not None:
            notes.append(note)
    return sentences


# --- labelled texts and pairs ----------------------------------------------------------------------
def _tsv(path: str, columns: int, want: str = "") -> list[tuple[int, list[str]]]:
    """``(line, cells)`` of each non-blank line, each of ``columns`` tab-separated cells (``want`` says which)."""
    rows = []
    for lineno, line in nonblank_lines(path, MAX_LINE_CHARS, "a row"):
        cells = line.split("\t")
        if not rows and len(cells) == 1 and line.lstrip().startswith("<") and line.rstrip().endswith(">"):  # <?xml ...?>, <weibo id=...>
            raise DataFormatError(
                path,
                lineno,
                f"XML ({clip(line.strip())}), not tab-separated text: this command reads TSV, CSV and JSON "
                "(NLPCC 2014's Weibo emotion XML trains with zhbert train tagging --dataset nlpcc2014)",
            )
        if len(cells) != columns:
            want = want or ("text<TAB>label" if columns == 2 else "text_a<TAB>text_b<TAB>label")
            raise DataFormatError(path, lineno, f"{len(cells)} tab-separated columns, expected {columns} ({want}): {clip(line)}")
        rows.append((lineno, [c.strip() for c in cells]))
    return rows


#: what files call the text when ``--text-column`` is left at ``text`` (CLUE's classification sets say
#: ``sentence``, ``content``; ChnSentiCorp and the other SophonPlus sentiment sets ``review``; a Chinese
#: header 文本, 内容, 句子, 评论), and the two texts of a pair (CLUE's and OCNLI's ``sentence1``/``sentence2``,
#: CHIP-STS's ``text1``/``text2``, Quora's ``question1``/``question2``): tried in this order
TEXT_NAMES = ("text", "sentence", "content", "review", "文本", "内容", "句子", "评论", "text_a")
PAIR_NAMES = (("text_a", "text_b"), ("sentence1", "sentence2"), ("text1", "text2"), ("query1", "query2"), ("question1", "question2"))
#: CLUE's label for a pair its annotators did not agree on (OCNLI, CMNLI): no class, left out and counted
NO_GOLD_LABEL = "-"


def text_names(pairs: bool, have, text_column: str, path: str, line: int | None, where: str) -> tuple[str, ...]:
    """The column (CSV) or key (JSON) names of the text, or of a pair's two texts, among the names
    ``have``: ``text_column`` (falling back to :data:`TEXT_NAMES` when it is ``text``), or the first
    of :data:`PAIR_NAMES` present; none of them is an error naming ``path:line``."""
    have = list(have)
    if pairs:
        tried = list(PAIR_NAMES)
        also = "; the two texts of a pair are read from " + ", ".join("/".join(names) for names in PAIR_NAMES)
    else:
        tried = [(text_column,)] + ([(n,) for n in TEXT_NAMES[1:]] if text_column == "text" else [])
        also = "; a text is also read from " + ", ".join(map(repr, TEXT_NAMES[1:])) if len(tried) > 1 else ""
    found = next((names for names in tried if all(n in have for n in names)), None)
    if found is None:
        raise DataFormatError(path, line, f"no {where} {tried[0][0]!r} in {clip(', '.join(have))}{also}")
    return found


def _column_names(
    task: str, have, text_column: str, label_column: str, path: str, line: int, where: str, notes: list[str] | None
) -> list[str]:
    """The columns (CSV) or keys (JSON) to read, ``[text, label]`` or ``[text_a, text_b, label]``,
    from the names ``have``; a fallback name used for the text is said in ``notes``."""
    have = list(have)
    found = text_names(task == "matching", have, text_column, path, line, where)
    if label_column not in have:
        raise DataFormatError(
            path,
            line,
            f"no {where} {label_column!r} in {clip(', '.join(have))}: a file without labels (as CLUE's test files) "
            "cannot train or score a model; --label-column names another",
        )
    if found not in (("text_a", "text_b"), (text_column,)):
        note = f"{path}: texts read from {' and '.join(map(repr, found))}"
        logger.info(note)
        if notes is not None:
            notes.append(note)
    if label_column == "label" and "label_desc" in have and notes is not None:  # CLUE's TNEWS and IFLYTEK
        notes.append(f"{path}: labels read from 'label'; --label-column label_desc trains on the names in 'label_desc' instead")
    return [*found, label_column]


def _csv(path: str, task: str, text_column: str, label_column: str, notes: list[str] | None) -> list[tuple[int, list[str]]]:
    from .csv_rows import csv_records

    header, records = csv_records(io.StringIO(read_text(path)), path, MAX_LINE_CHARS)
    if not header:
        raise DataFormatError(path, 1, "no header row")
    known = {text_column, label_column, *TEXT_NAMES, *(n for names in PAIR_NAMES for n in names)}
    try:
        names = _column_names(task, header, text_column, label_column, path, 1, "column", notes)
    except DataFormatError as e:
        if known & set(header):
            raise
        # A first row naming no known column is most often data: a CSV without a header row.
        want = "text_a,text_b,label" if task == "matching" else f"{text_column},{label_column}"
        raise DataFormatError(path, 1, f"{e.problem}; a CSV's first row is its header: add one ({want}) if it has none") from None
    return [(lineno, [record[n].strip() for n in names]) for lineno, record in records]


def _json_label(value, key: str, path: str, line: int, task: str) -> str | list[str]:
    """A record's label as text; a list of them (several labels of one text) for ``tagging``."""
    if isinstance(value, dict) and set(value) == {"choices"} and isinstance(value["choices"], list):  # Label Studio's JSON-MIN
        value = value["choices"][0] if len(value["choices"]) == 1 else value["choices"]
    if isinstance(value, list) and task == "tagging":
        labels = [_json_label(v, key, path, line, "one") for v in value]
        if not all(labels):
            raise DataFormatError(path, line, f"{key!r} lists an empty label")
        return labels
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):  # pandas writes 1.0 for 1
        return str(int(value))
    if value is None:
        raise DataFormatError(path, line, f"{key!r} is null: a record without its label cannot train or score a model")
    what = (
        "a list of labels: a pair takes one label" if isinstance(value, list) and task == "matching" else f"{repr(value)[:80]}, not a class"
    )
    raise DataFormatError(path, line, f"{key!r} is {what}")


def _keyed(path: str, fmt: str, task: str, text_column: str, label_column: str, notes: list[str] | None) -> list[tuple[int, list[str]]]:
    """Rows of a JSON-lines file (or one JSON array) of objects, CLUE's form, or of a Parquet file:
    the names of the first record's keys (columns) pick the fields, and every record must have them."""
    from .jsonio import record_texts

    rows, names, no_gold, unannotated = [], None, [], []
    for line, record in _records(path, fmt):
        if not isinstance(record, dict):
            raise DataFormatError(path, line, f"expected a JSON object, found {type(record).__name__}")
        if isinstance(record.get("data"), dict) and "annotations" in record:  # a Label Studio export task
            record = _studio_choices(record, label_column, path, line)
            if record is None:
                unannotated.append(line)
                continue
        if names is None:
            names = _column_names(task, record, text_column, label_column, path, line, "key", notes)
        cells = []
        for key, value in zip(names[:-1], record_texts(record, names[:-1], path, line)):
            if len(value) > MAX_LINE_CHARS:
                raise DataFormatError(path, line, f"{key!r} has {len(value):,} characters: over the {MAX_LINE_CHARS:,} a text may have")
            cells.append(value.strip())
        if label_column not in record:
            raise DataFormatError(path, line, f"no key {label_column!r}: a record without its label cannot train or score a model")
        label = _json_label(record[label_column], label_column, path, line, task)
        if label == NO_GOLD_LABEL:
            no_gold.append(line)
            continue
        rows.append((line, [*cells, label]))
    what = "records of no label (-1)" if fmt in HUB_FORMATS else f"records labelled {NO_GOLD_LABEL!r} (no gold label)"
    _left_out(path, fmt, no_gold, what, notes)
    _left_out(path, fmt, unannotated, "Label Studio task(s) nobody annotated (no choice made, or skipped)", notes)
    return rows


def _studio_choices(task: dict, label_column: str, path: str, line: int) -> dict | None:
    """A Label Studio export task of text classification as a flat record: its ``data`` (the texts) and, under
    ``label_column``, the choices of its first annotation (a list where several were chosen); None for a task
    nobody annotated. Choices of several questions are told apart by their ``from_name``, which ``--label-column``
    names."""
    annotations = [a for a in task.get("annotations") or [] if isinstance(a, dict) and not a.get("was_cancelled")]
    results = [
        r for r in (annotations[0].get("result") or [] if annotations else []) if isinstance(r, dict) and isinstance(r.get("value"), dict)
    ]
    results = [r for r in results if "choices" in r["value"]]
    for r in results:
        if not isinstance(r["value"]["choices"], list) or not all(isinstance(c, str) and c.strip() for c in r["value"]["choices"]):
            raise DataFormatError(path, line, f"'choices' should be a list of labels, found {clip(r['value']['choices'])}")
    questions = sorted({str(r.get("from_name")) for r in results})
    if len(questions) > 1:
        if label_column not in questions:
            raise DataFormatError(
                path, line, f"choices of {len(questions)} questions ({clip(', '.join(questions))}): --label-column names one"
            )
        results = [r for r in results if r.get("from_name") == label_column]
    choices = [c for r in results for c in r["value"]["choices"]]
    if not choices:
        return None
    return {**task["data"], label_column: choices[0] if len(choices) == 1 else choices}


#: what a header row calls its label column (lower-cased). A TSV file has no header by rule, but pandas'
#: ``to_csv(sep="\t")`` and spreadsheets write one; read as data it became a class of its own.
HEADER_LABEL_NAMES = frozenset(
    {"label", "labels", "tag", "class", "category", "target", "y", "is_duplicate", "similarity", "score", "sentiment", "emotion", "intent"}
    | {"标签", "类别", "类型", "分类", "情感", "意图", "相似度"}
)


def _without_header(path: str, rows: list[tuple[int, list[str]]], notes: list[str] | None) -> list[tuple[int, list[str]]]:
    """``rows`` less a first row whose label cell names a label column and is no other row's label:
    the header, skipped and said (in ``notes`` and the log), never trained on as a class."""
    if len(rows) > 1:
        lineno, cells = rows[0]
        if cells[-1].lower() in HEADER_LABEL_NAMES and all(other[-1] != cells[-1] for _, other in rows[1:]):
            note = f"{path}:{lineno} read as a header row ({clip(' | '.join(cells))}), not as data"
            logger.warning(note)
            if notes is not None:
                notes.append(note)
            return rows[1:]
    return rows


def _named_tsv(path: str, task: str, text_column: str, label_column: str, notes: list[str] | None) -> list[tuple[int, list]] | None:
    """The rows of a TSV whose first line names its columns, read by name as a CSV's are (UER's and
    TencentPretrain's ``label<TAB>text_a``, PAWS-X's ``id<TAB>sentence1<TAB>sentence2<TAB>label``); ``None``
    when the first line names no label column and no text column."""
    first = next(((lineno, line) for lineno, line in iter_lines(path) if line.strip()), None)
    if first is None:
        return None
    header = [cell.strip() for cell in first[1].split("\t")]
    texts = {text_column, *TEXT_NAMES, *(name for names in PAIR_NAMES for name in names)}
    if label_column not in header or not texts & set(header) or len(set(header)) < len(header):
        return None
    names = _column_names(task, header, text_column, label_column, path, first[0], "column", notes)
    if header == names:
        return None  # the columns in their plain order: a header row, dropped as any other file's
    index = [header.index(name) for name in names]
    note = (
        f"{path}:{first[0]} names the columns ({clip(' | '.join(header))}): read by name (texts {', '.join(names[:-1])}; label {names[-1]})"
    )
    logger.info(note)
    if notes is not None:
        notes.append(note)
    rows = _tsv(path, len(header), "<TAB>".join(header))[1:]
    return [(lineno, [cells[i] for i in index]) for lineno, cells in rows]


def _labelled(
    path: str, task: str, fmt: str, text_column: str, label_column: str, notes: list[str] | None = None, label_separator: str = ""
) -> list[tuple[int, list]]:
    """``(line, [text, label])`` or ``(line, [text_a, text_b, label])``; a label is a list of labels
    where the text has several (a JSON list, or a cell cut at ``label_separator``)."""
    columns = 2 if task == "tagging" else 3
    if fmt == "tsv":
        rows = _named_tsv(path, task, text_column, label_column, notes)
        rows = _without_header(path, _tsv(path, columns), notes) if rows is None else rows
    else:
        rows = (
            _csv(path, task, text_column, label_column, notes)
            if fmt == "csv"
            else _keyed(path, fmt, task, text_column, label_column, notes)
        )
    if label_separator and fmt not in KEYED_FORMATS:
        if task != "tagging":
            raise ValueError("--label-separator splits a cell into several labels of one text (tagging); a pair takes one label")
        rows = [
            (lineno, [*cells[:-1], [label.strip() for label in cells[-1].split(label_separator) if label.strip()]])
            for lineno, cells in rows
        ]
    if not rows:
        raise DataFormatError(path, None, "no rows")
    # a row with nothing to learn from (ChnSentiCorp's hotel reviews hold one "0," among 7,766) is left out and
    # counted, as a pair nobody agreed on is; an empty list is a text none of the labels applies to, and kept
    empty_text = [lineno for lineno, cells in rows if not all(cells[:-1])]
    no_label = [lineno for lineno, cells in rows if all(cells[:-1]) and cells[-1] == ""]
    if len(no_label) == len(rows):
        raise DataFormatError(path, rows[0][0], "no row has a label: a file without labels cannot train or score a model")
    if empty_text or no_label:
        rows = [(lineno, cells) for lineno, cells in rows if all(cells[:-1]) and cells[-1] != ""]
        _left_out(path, fmt, empty_text, "rows with an empty text", notes)
        _left_out(path, fmt, no_label, "rows without a label", notes)
    if not rows:
        raise DataFormatError(path, None, "no row holds a text")
    return rows


def _check_labels_are_labels(path: str, rows: list[tuple[int, list[str]]], labels: list[str], fmt: str) -> None:
    """Refuse a label column that holds texts: with the columns the other way round (``label<TAB>text``,
    as SMP2020-EWECT ships), every text became a class of one row."""
    if len(rows) < 10 or len(labels) < 0.9 * len(rows):  # texts nearly all differ; a small file of many classes repeats some
        return
    first = {cells[0] for _, cells in rows}
    swapped = (
        f"; the first column holds {len(first)} values ({clip(', '.join(sorted(first)[:5]))}): the columns look swapped, "
        + ("the text comes first (text<TAB>label)" if len(rows[0][1]) == 2 else "the label comes last (text_a<TAB>text_b<TAB>label)")
        if fmt == "tsv" and len(first) <= len(rows) // 10
        else ""
    )
    raise DataFormatError(path, None, f"{len(labels):,} labels in {len(rows):,} rows: the label column holds texts, not labels{swapped}")


def _indexed(
    rows, labels: list[str], path: str, task: str, whose: str = "the training file's labels", multi_label: bool = False
) -> list[dict]:
    index = {label: i for i, label in enumerate(labels)}
    out = []
    for lineno, cells in rows:
        if multi_label:
            given = cells[-1] if isinstance(cells[-1], list) else [cells[-1]]
            unknown = [label for label in given if label not in index]
            if unknown:
                raise DataFormatError(path, lineno, f"label {unknown[0]!r} is not in {whose} ({', '.join(labels)})")
            out.append({"text": cells[0], "labels": sorted({index[label] for label in given})})
            continue
        if isinstance(cells[-1], list):
            raise DataFormatError(path, lineno, f"labels {cells[-1]!r}: {whose} give each text one label")
        if cells[-1] not in index:
            raise DataFormatError(path, lineno, f"label {cells[-1]!r} is not in {whose} ({', '.join(labels)})")
        if task == "tagging":
            out.append({"text": cells[0], "label": index[cells[-1]]})
        else:
            out.append({"text_a": cells[0], "text_b": cells[1], "label": index[cells[-1]]})
    return out


def labelled_rows(
    task: str,
    path: str,
    labels: list[str],
    whose: str,
    file_format: str = "auto",
    text_column: str = "text",
    label_column: str = "label",
    notes: list[str] | None = None,
    label_separator: str = "",
    multi_label: bool = False,
    scores: bool = False,
) -> list[dict]:
    """The rows of a ``tagging`` or ``matching`` file (formats above), each label an index of
    ``labels`` (``multi_label``: a list of them, ``"labels"``; ``scores``: a pair's similarity, a
    number): a label not among them is an error at its line, naming ``whose`` labels they are. What
    was read otherwise than as a row (a TSV header) is said in ``notes``."""
    fmt = _format(task, path, file_format)
    rows = _labelled(path, task, fmt, text_column, label_column, notes, label_separator)
    return _scored(rows, path, whose) if scores else _indexed(rows, labels, path, task, whose, multi_label)


def _are_scores(rows: list[tuple[int, list[str]]]) -> bool:
    """Whether a pair file's labels are similarity scores: numbers, one at least written with a fraction (4.2, 3.0),
    as Hugging Face's run_glue.py tells regression from classes by a float label column; but two whole values (0 / 1,
    or 0.0 / 1.0 as pandas may write them) stay two classes."""
    fractional, values = False, set()
    for _, cells in rows:
        label = cells[-1]
        if isinstance(label, list) or not _is_number(label):
            return False
        fractional = fractional or not label.lstrip("+-").isdigit()
        values.add(float(label))
    return fractional and (len(values) > 2 or any(not v.is_integer() for v in values))


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _scored(rows: list[tuple[int, list[str]]], path: str, whose: str) -> list[dict]:
    out = []
    for lineno, cells in rows:
        if isinstance(cells[-1], list) or not _is_number(cells[-1]):
            raise DataFormatError(path, lineno, f"label {clip(cells[-1])} is not a number; {whose} are similarity scores")
        out.append({"text_a": cells[0], "text_b": cells[1], "label": float(cells[-1])})
    return out


# --- the splits ------------------------------------------------------------------------------------
def _hold_out(rows: list[dict], share: float, seed: int) -> tuple[list[dict], list[dict]]:
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    n = max(1, int(round(len(rows) * share)))
    held = set(order[:n])
    return [r for i, r in enumerate(rows) if i not in held], [r for i, r in enumerate(rows) if i in held]


def _entity_map(task: str, spec: str) -> dict[str, str] | None:
    if not spec:
        return None
    if task != "ner":
        raise ValueError(f"--entity-map renames the entity types of an NER file; {task} has none")
    from .ner_sources import parse_entity_map

    return parse_entity_map(spec)


def task_data_from_files(
    task: str,
    train_file: str,
    validation_file: str | None = None,
    test_file: str | None = None,
    file_format: str = "auto",
    validation_share: float = 0.1,
    seed: int = 42,
    text_column: str = "text",
    label_column: str = "label",
    label_separator: str = "",
    entity_map: str = "",
):
    """A :class:`~zhbert.data.tasks.TaskData` from the user's files (module docstring). ``entity_map``
    (ner): the files' entity types renamed (``NAME=PER,LOC,ORG``; :func:`~zhbert.data.ner_sources.parse_entity_map`),
    the entities of types it does not name left out."""
    from .tasks import TaskData

    if not 0 < validation_share < 1:
        raise ValueError(f"--validation-share must be between 0 and 1, got {validation_share}")
    files = {"train": train_file, "validation": validation_file, "test": test_file}
    for role, path in files.items():
        if path is not None:
            _check_given(path, f"--{role}-file")
    fmt = _format(task, train_file, file_format)
    notes = [f"train: {train_file} ({fmt})"]
    scheme, multi_label, regression = None, False, False
    mapping = _entity_map(task, entity_map)
    if task == "ner":
        train, scheme = _ner_rows(train_file, fmt, notes)
        train = _entity_mapped(train, scheme, mapping, train_file, notes)
        types = sorted({t.split("-", 1)[1] for r in train for t in r["tags"] if t != "O"})
        if not types:
            raise DataFormatError(train_file, None, "no entity in the training file: nothing to learn")
        labels = labels_for(types, scheme)

        def read(path):
            rows, their_scheme = _ner_rows(path, _format(task, path, file_format), notes)
            rows = _entity_mapped(rows, their_scheme, mapping, path, notes)
            unknown = sorted({t.split("-", 1)[1] for r in rows for t in r["tags"] if t != "O"} - set(types))
            if unknown:
                raise DataFormatError(path, None, f"entity types {unknown} are not in the training file's ({', '.join(types)})")
            if their_scheme != scheme:  # spans are spans: re-tag in the training file's scheme
                from ..tags import spans_to_tags, tags_to_spans

                rows = [
                    {"text": r["text"], "tags": spans_to_tags(len(r["text"]), tags_to_spans(r["tags"], their_scheme), scheme)} for r in rows
                ]
            return rows
    elif task == "cws":
        train, labels, scheme = _cws_rows(train_file, fmt, notes), ["B", "M", "E", "S"], "BMES-untyped"

        def read(path):
            return _cws_rows(path, _format(task, path, file_format), notes)
    elif task == "pos":
        train, scheme = _pos_rows(train_file, notes, fmt), "BMES"
        types = sorted({p for r in train for p in r["pos"]})
        labels = labels_for(types, scheme)

        def read(path):
            rows = _pos_rows(path, notes, _format(task, path, file_format))
            unknown = sorted({p for r in rows for p in r["pos"]} - set(types))
            if unknown:
                raise DataFormatError(path, None, f"tags {unknown} are not in the training file's ({len(types)} tags)")
            return rows
    else:
        raw = _labelled(train_file, task, fmt, text_column, label_column, notes, label_separator)
        multi_label = any(isinstance(cells[-1], list) for _, cells in raw)
        regression = task == "matching" and _are_scores(raw)
        labels = sorted({label for _, cells in raw for label in (cells[-1] if isinstance(cells[-1], list) else [cells[-1]])})
        if regression:
            train = _scored(raw, train_file, "the training file's labels")
            values = [r["label"] for r in train]
            notes.append(
                f"labels read as similarity scores ({min(values):g} to {max(values):g}, written with a fraction): one real-valued "
                "output, scored by Pearson and Spearman correlation"
            )
            labels = ["score"]
        elif len(labels) < 2:
            raise DataFormatError(train_file, None, f"one label only ({labels[0] if labels else ''!r}): a classifier needs at least two")
        if multi_label:
            several = sum(isinstance(cells[-1], list) and len(cells[-1]) > 1 for _, cells in raw)
            notes.append(
                f"multi-label: {len(labels)} labels, {several:,} of {len(raw):,} texts with several; thresholds tuned on the dev split"
            )
        elif not regression:
            _check_labels_are_labels(train_file, raw, labels, fmt)
        if not regression:
            train = _indexed(raw, labels, train_file, task, multi_label=multi_label)
            _say_numbered_classes(task, labels, notes)

        def read(path):
            return labelled_rows(
                task,
                path,
                labels,
                "the training file's labels",
                file_format,
                text_column,
                label_column,
                notes,
                label_separator,
                multi_label,
                regression,
            )

    if validation_file:
        dev = read(validation_file)
        notes.append(f"dev: {validation_file}")
    else:
        if len(train) < 2:  # held out, the one example would leave nothing to train on
            raise DataFormatError(
                train_file,
                None,
                f"{len(train)} example: too few to hold out a dev split and train on the rest; give more, or --validation-file",
            )
        train, dev = _hold_out(train, validation_share, seed)
        notes.append(f"dev: {len(dev):,} rows ({validation_share:.0%}) held out from the training file, seed {seed}")
    if test_file:
        test = read(test_file)
        notes.append(f"test: {test_file}")
        eval_split = "test"
    else:
        test, eval_split = dev, "dev"
        notes.append("no --test-file: scored on the dev split")
        if multi_label:
            notes.append("its thresholds were tuned on that split too: --test-file gives a figure they were not fitted to")
    name = f"{task}-{Path(train_file).stem}"
    words = {w for r in train for w in r["words"]} if task in ("cws", "pos") else None
    return TaskData(
        name,
        labels,
        train,
        dev,
        test,
        scheme=scheme,
        eval_split=eval_split,
        notes=notes,
        train_words=words,
        multi_label=multi_label,
        regression=regression,
    )


def _say_numbered_classes(task: str, labels: list[str], notes: list[str]) -> None:
    """Whole numbers of a pair file, more than two of them, read as classes: said, for they may be scores (STS-B zh
    writes its 0 to 5 so)."""
    if task == "matching" and len(labels) > 2 and all(label.isdigit() for label in labels):
        notes.append(
            f"labels {', '.join(sorted(labels, key=int))} read as {len(labels)} classes; similarity scores are read as "
            "scores (one output, correlations) when written with a fraction (3.0)"
        )


def test_data_from_file(
    task: str,
    test_file: str,
    head,
    model: str,
    file_format: str = "auto",
    text_column: str = "text",
    label_column: str = "label",
    label_separator: str = "",
    entity_map: str = "",
):
    """A :class:`~zhbert.data.tasks.TaskData` holding the whole of ``test_file`` to score the saved
    ``model`` (its :class:`~zhbert.heads.HeadConfig` ``head``) on, read against the model's labels
    and in their order: a type, tag or label the model does not have is an error at its line.
    ``entity_map`` (ner): the file's types renamed to the model's, as :func:`task_data_from_files` reads it."""
    from ..tags import entity_types, spans_to_tags, tags_to_spans
    from .tasks import TaskData

    _check_given(test_file, "--test-file")
    fmt = _format(task, test_file, file_format)
    whose = f"{model}'s labels"
    notes = [f"test: {test_file} ({fmt}), the whole file, read against {model}'s labels"]
    scheme = head.scheme
    mapping = _entity_map(task, entity_map)
    if task == "ner":
        rows, their_scheme = _ner_rows(test_file, fmt, notes)
        rows = _entity_mapped(rows, their_scheme, mapping, test_file, notes)
        known = entity_types(head.labels)
        unknown = sorted({t.split("-", 1)[1] for r in rows for t in r["tags"] if t != "O"} - set(known))
        if unknown:
            hint = (
                ": --entity-map renames a file's types (OLD=NEW, comma-separated; a bare type keeps its name) and leaves out "
                "the types it does not name"
                if mapping is None
                else " (after --entity-map)"
            )
            raise DataFormatError(test_file, None, f"entity types {unknown} are not among {model}'s ({', '.join(known)}){hint}")
        if their_scheme != scheme:  # spans are spans: re-tag in the model's scheme
            rows = [
                {"text": r["text"], "tags": spans_to_tags(len(r["text"]), tags_to_spans(r["tags"], their_scheme), scheme)} for r in rows
            ]
    elif task == "cws":
        rows = _cws_rows(test_file, fmt, notes)
    elif task == "pos":
        rows = _pos_rows(test_file, notes, fmt)
        known = {label.split("-", 1)[1] for label in head.labels if "-" in label}
        unknown = sorted({p for r in rows for p in r["pos"]} - known)
        if unknown:
            raise DataFormatError(test_file, None, f"tags {unknown} are not among {model}'s ({len(known)} tags)")
    else:
        rows = labelled_rows(
            task, test_file, head.labels, whose, file_format, text_column, label_column, notes, label_separator, head.multi_label,
            head.regression,
        )  # fmt: skip
    return TaskData(
        f"{task}-{Path(test_file).stem}",
        list(head.labels),
        [],
        [],
        rows,
        scheme=scheme,
        multi_label=head.multi_label,
        regression=head.regression,
        notes=notes,
    )
