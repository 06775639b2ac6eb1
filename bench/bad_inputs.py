"""Hostile input files through every reader, and hostile inputs through every command: how many
end in one clean line naming the file (or input), the position and the problem?

    python bench/bad_inputs.py                    # this checkout: both tables (about 5 minutes)
    python bench/bad_inputs.py --readers-only     # the first table only (seconds)
    PYTHONPATH=/path/to/old/checkout python bench/bad_inputs.py    # the same probe on older code

Each reader gets a small valid file (checked to read) and then mutated copies that must be
rejected: a column removed or added, an invalid UTF-8 byte, a NUL, the file saved as GB18030 or
UTF-16, an empty file, an empty text, ids that are not whole numbers or overflow int32, unknown
labels and tags, positions of the wrong type, deep JSON nesting, two characters on a character
line, a stray tag of another scheme, an unknown part of speech. Each outcome is one of:

* clean: ``DataFormatError`` whose message starts with ``file:line:`` at the expected line (or
  ``file:`` for a problem of the whole file), naming the encoding for the two encoding cases;
* wrong line: a ``DataFormatError`` that names another line, or the right line without the encoding;
* silent: the file was accepted;
* crash: any other exception (a traceback, or ``An error occurred while generating the dataset``).
"""

from __future__ import annotations

import argparse
import collections
import tempfile
from pathlib import Path

PD_NER = "中 B-LOC\n国 I-LOC\n人 O\n\n北 B-LOC\n京 I-LOC\n"
RESUME = "张 B-NAME\n三 E-NAME\n， O\n\n中 B-ORG\n国 M-ORG\n银 M-ORG\n行 E-ORG\n"
CLUENER = (
    '{"text": "彭小军认为", "label": {"name": {"彭小军": [[0, 2]]}}}\n{"text": "北京很大", "label": {"address": {"北京": [[0, 1]]}}}\n'
)
PAIRS = "蚂蚁借呗等额还款\t借呗有先息到期还本吗\t0\n蚂蚁花呗说我违约一次\t蚂蚁花呗违约行为是什么\t1\n"
STS = "一个男人在弹吉他。\t一个人在弹吉他。\t4.2\n一只狗在跑。\t猫在睡觉。\t0.5\n"
PAWSX = "id\tsentence1\tsentence2\tlabel\n1\t我爱北京\t北京我爱\t0\n2\t他来了\t他走了\t1\n"
OCNLI = (
    '{"sentence1": "他在家", "sentence2": "他出门了", "label": "contradiction", "id": 0}\n'
    '{"sentence1": "天晴了", "sentence2": "天气好", "label": "entailment", "id": 1}\n'
)
EWECT = "label\ttext_a\n1\t气死姐姐了，快二是阵亡了吗\n2\t妞妞啊，今天又承办了一个发文登记文号\n"
CLUE = '{"id": 0, "content": "今天真开心", "label": "happiness"}\n{"id": 1, "content": "气死了", "label": "anger"}\n'
PD = "迈向/v  充满/v  希望/n  的/u  新/a  世纪/n\n中共中央/nt  总书记/n  江/nr  泽民/nr\n"
SEG = "迈向  充满  希望  的  新  世纪\n中共中央  总书记  江泽民\n"
# users' own files (zhbert train TASK --train-file) in the forms read beside the datasets' own
WORD_POS = "[中共/j  中央/n]nt  总书记/n  江/nr  泽民/nr\n迈向/v  充满/v  希望/n  的/u  新/a  世纪/n\n北京/ns  很/d  大/a\n"
WORDS_CONLL = "江泽民 B-PER\n主席 O\n在 O\n北京 B-LOC\n\n中国 B-ORG\n银行 I-ORG\n发布 O\n\n上海 B-LOC\n很 O\n大 O\n"
TAG_JSONL = (
    '{"id": 0, "sentence": "今天真开心", "label": "happiness"}\n{"id": 1, "sentence": "气死了", "label": "anger"}\n'
    '{"id": 2, "sentence": "好开心啊", "label": "happiness"}\n'
)
PAIR_JSONL = (
    '{"sentence1": "花呗怎么还款", "sentence2": "花呗如何还钱", "label": "1"}\n'
    '{"sentence1": "今天天气怎么样", "sentence2": "北京在哪里", "label": "0"}\n'
    '{"sentence1": "如何学好英语", "sentence2": "怎么学好英语", "label": "1"}\n'
)
TAG_CSV = 'label,review\n1,很快，好吃，味道足，量大\n0,"送餐太慢了，等了一个多小时"\n1,服务很好，下次还点\n'  # waimai_10k's form
CORPUS_JSONL = '{"id": "1", "title": "北京", "text": "北京是中国的首都。"}\n{"id": "2", "title": "上海", "text": "上海是一座城市。"}\n'
TOKENS_JSONL = (  # run_ner.py's form, as Dataset.to_json writes the hub's NER datasets with names
    '{"tokens": ["中", "国", "人"], "ner_tags": ["B-LOC", "I-LOC", "O"]}\n{"tokens": ["北", "京"], "ner_tags": ["B-LOC", "I-LOC"]}\n'
)
PRODIGY_JSONL = (  # Prodigy's (and spaCy's) form: character spans, an annotator's answer
    '{"text": "字节跳动在北京", "spans": [{"start": 0, "end": 4, "label": "ORG"}, {"start": 5, "end": 7, "label": "LOC"}], '
    '"answer": "accept"}\n{"text": "张一鸣来了", "spans": [{"start": 0, "end": 3, "label": "PER"}], "answer": "accept", '
    '"tokens": [{"text": "张一鸣", "start": 0, "end": 3, "id": 0, "ws": false}, {"text": "来了", "start": 3, "end": 5, "id": 1, '
    '"ws": false}]}\n'
)
STUDIO_JSON = (  # Label Studio's JSON export of a classification project: one array, a task a line as its editor writes it
    '[{"id": 1, "data": {"text": "今天真开心"}, "annotations": [{"result": [{"from_name": "s", "value": {"choices": ["开心"]}}]}]},\n'
    '{"id": 2, "data": {"text": "气死了"}, "annotations": [{"result": [{"from_name": "s", "value": {"choices": ["生气"]}}]}]}]\n'
)
#: the hub's pair files: (sentence1, sentence2, label as a ClassLabel number)
PARQUET_PAIRS = [("花呗怎么还款", "花呗如何还钱", 1), ("今天天气怎么样", "北京在哪里", 0), ("如何学好英语", "怎么学好英语", 1)]


def parquet_pairs(rows=PARQUET_PAIRS, names=("0", "1"), columns=("sentence1", "sentence2", "label")) -> bytes:
    """A Parquet file of pairs as the hub writes one: the label a ClassLabel, its names in the metadata."""
    import io
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({c: [r[i] for r in rows] for i, c in enumerate(columns)})
    features = {c: {"dtype": "string", "_type": "Value"} for c in columns[:2]}
    features[columns[2]] = {"names": list(names), "_type": "ClassLabel"}
    table = table.replace_schema_metadata({"huggingface": json.dumps({"info": {"features": features}})})
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def readers():
    from zhbert import data
    from zhbert.data.user_files import task_data_from_files

    return {
        # name: (reader, file name (a folder names a declared dataset), valid content, line-based)
        "char_tagged (BIO)": (lambda p: data.read_char_tagged(p), "peoples_daily_ner/example.dev", PD_NER, True),
        "char_tagged (BMES)": (lambda p: data.read_char_tagged(p), "resume_ner/dev.char.bmes", RESUME, True),
        "cluener": (data.read_cluener, "dev.json", CLUENER, True),
        "pair_tsv": (data.read_pair_tsv, "dev.txt", PAIRS, True),
        "sts": (data.read_sts, "sts.txt", STS, True),
        "pawsx": (data.read_pawsx, "dev.tsv", PAWSX, True),
        "ocnli": (data.read_ocnli, "dev.json", OCNLI, True),
        "smp2020_ewect": (data.read_smp2020_ewect, "usual.tsv", EWECT, True),
        "clue_emotion": (data.read_clue_emotion, "valid.txt", CLUE, True),
        "peoples_daily": (data.read_peoples_daily, "199801.txt", PD, True),
        "segmented": (data.read_segmented, "gold.utf8", SEG, True),
        "own ner (conll-words)": (lambda p: task_data_from_files("ner", p, file_format="conll-words"), "words.conll", WORDS_CONLL, True),
        "own ner (word/POS)": (lambda p: task_data_from_files("ner", p), "199801.txt", WORD_POS, True),
        "own tagging (jsonl)": (lambda p: task_data_from_files("tagging", p), "posts.jsonl", TAG_JSONL, True),
        "own matching (jsonl)": (lambda p: task_data_from_files("matching", p), "pairs.jsonl", PAIR_JSONL, True),
        "own tagging (csv)": (lambda p: task_data_from_files("tagging", p), "waimai.csv", TAG_CSV, True),
        "corpus (jsonl)": (data.read_corpus, "wiki.jsonl", CORPUS_JSONL, True),
        "own ner (tokens jsonl)": (lambda p: task_data_from_files("ner", p), "train.json", TOKENS_JSONL, True),
        "own ner (prodigy jsonl)": (lambda p: task_data_from_files("ner", p), "annotations.jsonl", PRODIGY_JSONL, True),
        "own tagging (label studio json)": (lambda p: task_data_from_files("tagging", p), "export.json", STUDIO_JSON, True),
        "own matching (parquet)": (lambda p: task_data_from_files("matching", p), "train.parquet", parquet_pairs(), False),
    }


def mutations(name: str, good: str):
    """(description, content or bytes, expected bad line[, words the message must hold]) for one
    reader's valid file; a line of None is a problem of the whole file (for Parquet, the line is the row)."""
    if isinstance(good, bytes):
        yield from parquet_mutations(good)
        return
    lines = good.splitlines()
    first = 2 if lines[0].startswith(("label\t", "id\t", "label,")) else 1  # the first data line
    row = lines[first - 1]
    sep = "," if name.endswith("(csv)") else "\t" if "\t" in row else ("  " if "  " in row else " ")

    def with_line(new):
        out = list(lines)
        out[first - 1] = new
        return "\n".join(out) + "\n"

    yield "invalid UTF-8 byte", good.encode()[: len(lines[0].encode()) + 1] + b"\xff\xfe" + good.encode()[len(lines[0].encode()) + 1 :], 2
    yield "NUL byte", with_line(row + "\x00").encode(), first
    first_chinese = next(i for i, line in enumerate(lines, 1) if not line.isascii())
    yield "saved as GB18030 (GBK)", good.encode("gb18030"), first_chinese, "reads as GB18030"
    yield "saved as UTF-16 (Notepad's Unicode)", good.encode("utf-16"), None, "UTF-16"
    yield "empty file", b"", 1
    if not row.startswith(("{", "[")) and name not in (
        "segmented",
        "peoples_daily",
        "own ner (word/POS)",
    ):  # JSON has no columns  # there a line has any number of words
        yield "a column removed", with_line(row.split(sep)[0]), first
        yield "a column added", with_line(row + sep + "extra"), first
    if name.startswith("char_tagged"):
        yield "two characters, one tag", with_line("中国 " + row.split()[1]), first
        yield "undeclared entity type", with_line(row.split()[0] + " B-LCO"), first
        if "BIO" in name:
            yield "stray tag of another scheme", good.rstrip("\n") + "\n\n中 O\n国 S-LOC\n", len(lines) + 3
    if name == "peoples_daily":
        yield "unknown part of speech", with_line(row.replace("/v", "/zzz", 1)), first
        yield "token without a POS", with_line(row + "  北京"), first
    if name in ("pair_tsv", "sts", "pawsx"):
        cols = row.split("\t")
        empty = list(cols)
        empty[1 if name == "pawsx" else 0] = ""
        yield "empty sentence", with_line("\t".join(empty)), first
        bad = list(cols)
        bad[-1] = "²" if name != "sts" else "7.5"
        yield "label out of range", with_line("\t".join(bad)), first
    if name == "pawsx":
        for rid in ("²", "1.7", "abc", str(2**40)):
            yield f"id {rid}", with_line(rid + row[row.index("\t") :]), first
    if name in ("ocnli", "clue_emotion"):
        for rid in ("1.7", "null", '"²"', str(2**40), "true"):
            yield f"id {rid}", with_line(row.replace('"id": 0', f'"id": {rid}')), first
        key = "sentence1" if name == "ocnli" else "content"
        yield "empty text", with_line(row.replace(f'"{key}": "', f'"{key}": " ", "x": "', 1)), first
        yield "unknown label", with_line(row.replace('"label": "', '"label": "zz', 1)), first
        yield "deep nesting", "[" * 100_000, 1
    if name == "smp2020_ewect":
        yield "label ²", with_line("²" + row[row.index("\t") :]), first
        yield "empty post", with_line(row[: row.index("\t")] + "\t "), first
        yield "id 2.5 (JSON)", '[{"id": 2.5, "content": "好", "label": "happy"}]', 1
    if name == "own ner (word/POS)":
        yield "a compound never closed", with_line(row.replace("]nt", "")), first
        yield "a compound closed that no [ opened", with_line(row.replace("[", "")), first
        yield "a compound inside a compound", with_line(row.replace("中央/n", "[中央/n")), first
        yield "an item without its tag", with_line(row + "  北京"), first
        yield "no name in the file", "迈向/v  充满/v  希望/n\n", None
    elif name.startswith("own ner"):
        yield "I- continuing nothing", with_line(row.split()[0] + " I-LOC"), first
    if name in ("own tagging (jsonl)", "own matching (jsonl)"):
        yield "label is an object", with_line(row.replace('"label": "', '"label": {"x": "', 1).replace('"}', '"}}', 1)), first
        yield "label is null", with_line(row.rsplit('"label": ', 1)[0] + '"label": null}'), first
        yield "text is a number", with_line(row.replace('": "', '": 5, "x": "', 1)), first
        yield "a record that is an array", with_line("[1, 2]"), first
    if name == "own tagging (csv)":
        yield "a quote opened and never closed", with_line(row.replace(",", ',"', 1)), first, "a quote opened here"
        yield "a stray quote after a quoted cell", with_line(row.replace(",", ',"好"', 1)), first
    if name == "own matching (jsonl)":
        yield "label is a list", with_line(row.rsplit('"label": ', 1)[0] + '"label": ["1", "0"]}'), first
    if name == "corpus (jsonl)":
        yield "text is a number", with_line(row.replace('"text": "', '"text": 5, "x": "', 1)), first
        yield "one JSON array", '[{"text": "北京是中国的首都。"}]', 1
        yield "a record cut over two lines", with_line(row[:20]), first
    if name == "own ner (tokens jsonl)":
        yield "tags as numbers", with_line(row.replace('["B-LOC", "I-LOC", "O"]', "[5, 6, 0]")), first
        yield "a tag short", with_line(row.replace(', "O"]', "]")), first
        yield "tokens without tags", with_line(row.split(', "ner_tags"')[0] + "}"), first
        yield "I- continuing nothing", with_line(row.replace('"B-LOC"', '"I-PER"')), first
    if name == "own ner (prodigy jsonl)":
        yield "a span past the text's end", with_line(row.replace('"end": 7', '"end": 9')), first
        yield "a span without a label", with_line(row.replace(', "label": "ORG"', "")), first
        yield "a start written as text", with_line(row.replace('"start": 0', '"start": "0"')), first
        yield "spans that are not a list", with_line(row.replace('"spans": [', '"spans": {"x": [', 1).replace("}], ", "}]}, ", 1)), first
    if name == "own tagging (label studio json)":
        yield "choices a string", with_line(row.replace('["开心"]', '"开心"')), first
        yield "a choice that is a number", with_line(row.replace('["开心"]', "[5]")), first
        yield "data without a text", with_line(row.replace('"text"', '"body"')), first
    if name == "cluener":
        yield "position is a number", with_line(row.replace("[[0, 2]]", "5")), first
        yield "position is null", with_line(row.replace("[[0, 2]]", "null")), first
        yield "position is a bool pair", with_line(row.replace("[[0, 2]]", "[[true, 2]]")), first
        yield "deep nesting", "[" * 100_000, 1


def parquet_mutations(good: bytes):
    pairs = PARQUET_PAIRS
    yield "empty file", b"", 1
    yield "cut short (a download stopped)", good[: len(good) // 2], None
    yield "PAR1 and then not Parquet", b"PAR1" + "北京欢迎你\n".encode() * 20, None
    yield "class number out of range", parquet_pairs([pairs[0], (*pairs[1][:2], 7), pairs[2]]), 2
    yield "a text that is null", parquet_pairs([pairs[0], (None, *pairs[1][1:]), pairs[2]]), 2, "'sentence1' is null (empty)"
    # an empty text is not a bad file: that row is left out and counted in the notes (tests/test_user_files.py)
    yield "no label column", parquet_pairs(columns=("sentence1", "sentence2", "score")), 1
    yield "one text column", parquet_pairs(columns=("sentence1", "question", "label")), 1


def classify(reader, path: Path, line: int | None, says: str | None = None) -> str:
    """``line`` None: a problem of the whole file (``file: problem``); ``says``: words the message
    must hold (the encoding a file was saved in) to count as clean."""
    from zhbert.errors import DataFormatError

    try:
        reader(str(path))
    except DataFormatError as e:
        msg = str(e)
        if msg.startswith(f"{path}:{line}:" if line is not None else f"{path}: ") and (says is None or says in msg):
            return "clean"
        return "wrong line" if msg.startswith(f"{path}:") else "crash"
    except Exception:  # noqa: BLE001 - every other exception is what this probe counts
        return "crash"
    return "silent"


def reader_table(verbose: bool) -> None:
    """The first table: every reader against its mutated files."""
    totals = collections.Counter()
    rows, refused = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, (reader, fname, good, _)) in enumerate(readers().items()):
            base = Path(tmp) / f"r{k}"
            ok = base / "good" / fname
            ok.parent.mkdir(parents=True)
            ok.write_bytes(good if isinstance(good, bytes) else good.encode("utf-8"))
            try:
                reader(str(ok))  # the valid file reads
            except Exception as e:  # noqa: BLE001 - older code refuses a form it does not read: said, not a crash of the probe
                refused.append(f"| {name} | valid file refused: {str(e).splitlines()[0][:120]} | | | | |")
                continue
            counts = collections.Counter()
            for j, (what, content, line, *says) in enumerate(mutations(name, good)):
                path = base / f"m{j}" / fname
                path.parent.mkdir(parents=True)
                path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
                outcome = classify(reader, path, line, *says)
                counts[outcome] += 1
                if verbose and outcome != "clean":
                    print(f"  {name}: {what}: {outcome}")
            totals.update(counts)
            rows.append((name, counts))
    print("| reader | bad files | clean file:line | wrong line | silent | crash |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, c in rows + [("**all**", totals)]:
        print(f"| {name} | {sum(c.values())} | {c['clean']} | {c['wrong line']} | {c['silent']} | {c['crash']} |")
    print("\n".join(refused), end="\n" if refused else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verbose", action="store_true", help="list every case that is not clean")
    ap.add_argument("--readers-only", action="store_true", help="only the readers' table")
    args = ap.parse_args()
    reader_table(args.verbose)
    if not args.readers_only:
        from hostile_inputs import hostile_table  # bench/hostile_inputs.py: the commands' table

        print()
        hostile_table(args.verbose)


if __name__ == "__main__":
    main()
