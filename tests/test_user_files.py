"""Training on the user's own files (``zhbert train TASK --train-file F``): real rows cut from
../shared into the formats users bring (CoNLL, doccano and CLUENER JSON lines, Label Studio's export,
TSV and CSV), trained, scored and reloaded from the command line; bad lines named ``file:line``."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys

import pytest

import zhbert
from zhbert.data.user_files import read_entity_json, task_data_from_files
from zhbert.errors import DataFormatError


def _lines(path, n):
    with open(path, encoding="utf-8") as f:
        return [next(f) for _ in range(n)]


@pytest.fixture(scope="module")
def doccano_jsonl(datasets_dir, tmp_path_factory):
    """The first 80 CLUENER records rewritten as doccano's ``{"text", "label": [[start, end, type]]}``."""
    out = tmp_path_factory.mktemp("doccano") / "news.jsonl"
    from zhbert.data import read_cluener

    cluener = read_cluener(str(datasets_dir / "cluener2020" / "train.json")).select(range(80))
    rows = [
        json.dumps({"text": text, "label": [[e["start"], e["end"], e["type"]] for e in entities]}, ensure_ascii=False)
        for text, entities in zip(cluener["text"], cluener["entities"])
    ]
    out.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def pairs_tsv(datasets_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("pairs") / "pairs.tsv"
    out.write_text("".join(_lines(datasets_dir / "lcqmc" / "dev.txt", 120)), encoding="utf-8")
    return out


def _train(task, train_file, encoder, out, *extra):
    cmd = [sys.executable, "-m", "zhbert", "train", task, "--train-file", str(train_file), "--encoder", str(encoder)]
    cmd += ["--preset", "tiny", "--max-steps", "4", "--output-dir", str(out), *map(str, extra)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def test_a_conll_file_trains_scores_and_reloads(resume_conll, tiny_encoder, tmp_path):
    r = _train("ner", resume_conll, tiny_encoder, tmp_path / "run")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "| 4/4 [" in r.stderr  # the training progress bar
    tags = [line.split()[-1] for line in resume_conll.read_text(encoding="utf-8").splitlines() if line.strip()]
    named = sum(tag.endswith("-NAME") for tag in tags)  # the count said is of characters, and says so
    assert "entity types read from the file (tagged characters): " in r.stderr and f" NAME {named:,}," in r.stderr
    assert f"saved {tmp_path / 'run' / 'model'} " in r.stdout and str(tmp_path / "run" / "metrics.json") in r.stdout
    record = json.loads((tmp_path / "run" / "metrics.json").read_text(encoding="utf-8"))
    assert record["scored_on"] == "dev" and 0 <= record["score"] <= 1
    labels = json.loads((tmp_path / "run" / "model" / "config.json").read_text(encoding="utf-8"))["zhbert_head"]["labels"]
    assert "M-NAME" in labels and "S-NAME" in labels  # BMES and Resume's own types, from the file
    tagger = zhbert.load(str(tmp_path / "run" / "model"))
    text = "高勇：男，中国国籍，无境外居留权。"
    assert all(text[s.start : s.end] == s.text for s in tagger(text))


def test_a_doccano_file_trains_and_reloads(doccano_jsonl, tiny_encoder, tmp_path):
    r = _train("ner", doccano_jsonl, tiny_encoder, tmp_path / "run")
    assert r.returncode == 0, r.stderr[-3000:]
    labels = json.loads((tmp_path / "run" / "model" / "config.json").read_text(encoding="utf-8"))["zhbert_head"]["labels"]
    assert {"B-company", "I-name", "B-address"} <= set(labels)
    assert zhbert.load(str(tmp_path / "run" / "model"))("字节跳动的张一鸣在北京发布新品。") is not None


def test_a_pair_tsv_trains_and_reloads(pairs_tsv, tiny_encoder, tmp_path):
    r = _train("matching", pairs_tsv, tiny_encoder, tmp_path / "run", "--validation-share", "0.25")
    assert r.returncode == 0, r.stderr[-3000:]
    record = json.loads((tmp_path / "run" / "metrics.json").read_text(encoding="utf-8"))
    assert any("held out from the training file, seed 42" in n for n in record["notes"])
    assert record["dataset"] == "matching-pairs" and record["arguments"]["dataset"] == ""  # not the recipe's default, unread
    match = zhbert.load(str(tmp_path / "run" / "model"))(("花呗怎么还款", "蚂蚁花呗如何还钱"))
    assert match.label in ("0", "1")


def test_label_studio_and_cluener_records_read(tmp_path):
    studio = tmp_path / "export.json"
    task = {
        "data": {"text": "字节跳动在北京。"},
        "annotations": [{"result": [{"value": {"start": 0, "end": 4, "text": "字节跳动", "labels": ["ORG"]}}]}],
    }
    studio.write_text(json.dumps([task, task], ensure_ascii=False), encoding="utf-8")
    assert [r["spans"] for r in read_entity_json(str(studio))] == [[("ORG", 0, 4)]] * 2
    cluener = tmp_path / "c.json"
    cluener.write_text(json.dumps({"text": "张一鸣在北京", "label": {"name": {"张一鸣": [[0, 2]]}}}, ensure_ascii=False), encoding="utf-8")
    assert read_entity_json(str(cluener))[0]["spans"] == [("name", 0, 3)]
    # Label Studio's JSON-MIN export: the spans under the labelling config's name, "label" by default
    minimal = tmp_path / "min.json"
    record = {
        "id": 7,
        "text": "字节跳动在北京。",
        "label": [{"start": 0, "end": 4, "text": "字节跳动", "labels": ["ORG"]}],
        "lead_time": 3.1,
    }
    minimal.write_text(json.dumps([record, {**record, "label": []}], ensure_ascii=False), encoding="utf-8")
    assert [r["spans"] for r in read_entity_json(str(minimal))] == [[("ORG", 0, 4)], []]
    record["label"][0]["labels"] = ["ORG", "LOC"]
    minimal.write_text(json.dumps([record], ensure_ascii=False), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"min.json:1: a Label Studio span with labels 'ORG, LOC': expected exactly one"):
        read_entity_json(str(minimal))


def test_prodigy_records_read_and_rejected_ones_left_out(tmp_path):
    """Prodigy's (and spaCy's) JSONL: ``{"text", "spans": [{"start", "end", "label"}], "tokens": [{...}], "answer"}``.
    Before, its records had no 'label' and were all left out as unlabelled (or, with its token objects, refused as
    run_ner.py's tokens without tags); an answer of reject or ignore is an annotator's no or skip."""
    rows = [
        {"text": "字节跳动在北京设立了研究院。", "spans": [{"start": 0, "end": 4, "label": "ORG"}, {"start": 5, "end": 7, "label": "LOC"}],
         "answer": "accept"},
        {"text": "张一鸣在北京。", "spans": [{"start": 0, "end": 3, "label": "PER", "text": "张一鸣", "token_start": 0, "token_end": 2}],
         "tokens": [{"text": c, "start": i, "end": i + 1, "id": i, "ws": False} for i, c in enumerate("张一鸣在北京。")]},
        {"text": "他今天很高兴。", "spans": [], "answer": "accept"},  # accepted with no entities: a text without any
        {"text": "北京欢迎你。", "spans": [{"start": 0, "end": 1, "label": "LOC"}], "answer": "reject"},
        {"text": "上海很大。", "spans": [{"start": 0, "end": 2, "label": "LOC"}], "answer": "ignore"},
    ]  # fmt: skip
    path = tmp_path / "prodigy.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    notes: list[str] = []
    records = read_entity_json(str(path), notes)
    assert [(r["line"], r["spans"]) for r in records] == [(1, [("ORG", 0, 4), ("LOC", 5, 7)]), (2, [("PER", 0, 3)]), (3, [])]
    assert any("2 record(s) nobody labelled" in n and "line 4" in n for n in notes), notes
    rows[1]["spans"][0]["text"] = "张一"  # a span's own text, when given, is checked against the record's
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(DataFormatError, match=rf"{path}:2: PER span \[0, 3\) covers '张一鸣', not '张一'"):
        read_entity_json(str(path))
    for key in ("spans", "entities"):  # not a list: once read as no entities (entities) or nobody's labels (spans)
        path.write_text(json.dumps({"text": "北京", key: {"LOC": [[0, 2]]}}, ensure_ascii=False) + "\n", encoding="utf-8")
        with pytest.raises(DataFormatError, match=rf"{path}:1: '{key}' should be a list of entities, found"):
            read_entity_json(str(path))


def test_a_tag_in_another_form_is_named_with_the_form_to_write(tmp_path, datasets_dir):
    """People's Daily NER tags rewritten as other tools write them: B_LOC, LOC-B, b-loc."""
    lines = _lines(datasets_dir / "peoples_daily_ner" / "example.dev", 400)
    tagged = next(i for i, line in enumerate(lines) if line.split()[1:] and line.split()[1] != "O")
    tag = lines[tagged].split()[1]
    prefix, typ = tag.split("-")
    for written, hint in (
        (f"{prefix}_{typ}", f"write tags as PREFIX-TYPE ({tag})"),
        (f"{typ}-{prefix}", f"write tags as PREFIX-TYPE, the prefix first ({tag})"),
        (tag.lower(), f"prefixes are capitals ({prefix}-{typ.lower()})"),
    ):
        path = tmp_path / "ner.conll"
        path.write_text("".join(lines[:tagged]) + lines[tagged].replace(tag, written) + "".join(lines[tagged + 1 :]), encoding="utf-8")
        with pytest.raises(DataFormatError, match=rf"{path}:{tagged + 1}: unknown tag {written!r} .*: {re.escape(hint)}$"):
            task_data_from_files("ner", str(path))
    lower = tmp_path / "lower.conll"  # every tag in lower case: the first line's o is the first unknown tag
    lower.write_text(
        "".join(f"{line.split()[0]} {line.split()[1].lower()}\n" if line.strip() else line for line in lines), encoding="utf-8"
    )
    with pytest.raises(DataFormatError, match=rf"{lower}:1: unknown tag 'o' .*: the tag outside every entity is a capital O$"):
        task_data_from_files("ner", str(lower))


def test_a_conll_file_with_more_columns_is_given_a_command_that_works(tmp_path, datasets_dir):
    """People's Daily NER with a part-of-speech column between, as multi-column CoNLL files have it:
    the error's command, run as given, writes the two-column file that trains."""
    lines = [line.rstrip("\n") for line in _lines(datasets_dir / "peoples_daily_ner" / "example.dev", 300)]
    wide = tmp_path / "wide.conll"
    wide.write_text("".join((f"{line.split()[0]} x {line.split()[1]}" if line.strip() else "") + "\n" for line in lines), encoding="utf-8")
    want = rf"{wide}:1: expected 2 columns \(char tag\), found 3: .*: keep the character and its tag"
    with pytest.raises(DataFormatError, match=want) as e:
        task_data_from_files("ner", str(wide))
    command = re.search(r"\((awk .*) FILE > NEW_FILE\)$", str(e.value))[1]
    narrow = tmp_path / "narrow.conll"
    subprocess.run(["bash", "-c", f"{command} {wide} > {narrow}"], check=True)
    assert narrow.read_text(encoding="utf-8").splitlines() == lines
    assert task_data_from_files("ner", str(narrow)).labels


def test_nested_mentions_left_out_are_counted_and_said(tmp_path, doccano_jsonl):
    """Flat tags keep the outer, earlier of nested mentions; the ones left out were once dropped unsaid."""
    records = [json.loads(line) for line in doccano_jsonl.read_text(encoding="utf-8").splitlines()]
    nested = [dict(r) for r in records]
    nested[3] = {"text": "北京大学在北京", "label": [[0, 4, "organization"], [0, 2, "address"], [5, 7, "address"], [5, 7, "address"]]}
    path = tmp_path / "nested.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in nested), encoding="utf-8")
    data = task_data_from_files("ner", str(path))
    note = f"{path}: 1 nested or overlapping mention left out (tags are flat: the outer, earlier one is tagged); "
    assert note + "the first at line 4: address '北京' within or across organization '北京大学'" in data.notes
    row = next(r for r in data.train + data.dev if r["text"] == "北京大学在北京")
    assert row["tags"] == ["B-organization", "I-organization", "I-organization", "I-organization", "O", "B-address", "I-address"]
    assert not any("left out" in n for n in task_data_from_files("ner", str(doccano_jsonl)).notes)  # CLUENER's own spans are flat


def test_bad_lines_are_named(tmp_path, pairs_tsv):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "北京", "label": [[0, 2, "LOC"]]}\n{"text": "上海", "label": [[0, 5, "LOC"]]}\n', encoding="utf-8")
    with pytest.raises(DataFormatError, match=f"{bad}:2: LOC span \\[0, 5\\) outside a text of 2 characters"):
        task_data_from_files("ner", str(bad))
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("花呗怎么还款\t花呗如何还钱\t1\n今天天气怎么样\t0\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=f"{tsv}:2: 2 tab-separated columns, expected 3"):
        task_data_from_files("matching", str(tsv))
    dev = tmp_path / "dev.tsv"
    dev.write_text("花呗怎么还款\t花呗如何还钱\tyes\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=f"{dev}:1: label 'yes' is not in the training file's labels"):
        task_data_from_files("matching", str(pairs_tsv), validation_file=str(dev))


def test_a_tsv_header_row_is_said_and_skipped_not_trained_as_a_class(tmp_path, pairs_tsv, datasets_dir):
    """pandas' ``to_csv(sep="\\t")`` writes a header; read as a row it became a third class, 'label'."""
    rows = _lines(pairs_tsv, 120)
    train = tmp_path / "pairs.tsv"
    train.write_text("sentence1\tsentence2\tlabel\n" + "".join(rows[:100]), encoding="utf-8")
    dev = tmp_path / "dev.tsv"
    dev.write_text("句子1\t句子2\t标签\n" + "".join(rows[100:]), encoding="utf-8")
    data = task_data_from_files("matching", str(train), validation_file=str(dev))
    assert data.labels == ["0", "1"] and (len(data.train), len(data.dev)) == (100, 20)
    assert f"{train}:1 read as a header row ('sentence1 | sentence2 | label'), not as data" in data.notes
    assert f"{dev}:1 read as a header row ('句子1 | 句子2 | 标签'), not as data" in data.notes
    posts = [line.rstrip("\n").split("\t", 1) for line in _lines(datasets_dir / "smp2020_ewect_usual" / "train.tsv", 41)[1:]]
    tagged = tmp_path / "posts.tsv"
    tagged.write_text("text\temotion\n" + "".join(f"{post}\t{label}\n" for label, post in posts), encoding="utf-8")
    data = task_data_from_files("tagging", str(tagged))
    assert "emotion" not in data.labels and len(data.train) + len(data.dev) == 40
    # a first row whose label is a real label of the file is data, whatever it is called
    named = tmp_path / "named.tsv"
    named.write_text("".join(f"{post}\t{'label' if i % 2 == 0 else 'other'}\n" for i, (_, post) in enumerate(posts)), encoding="utf-8")
    data = task_data_from_files("tagging", str(named))
    assert data.labels == ["label", "other"] and len(data.train) + len(data.dev) == 40
    assert not any("read as a header" in n for n in data.notes)


def test_a_label_column_of_texts_is_refused_with_the_columns_named(tmp_path, datasets_dir, pairs_tsv):
    """SMP2020-EWECT ships label<TAB>text: read as text<TAB>label, each of its posts became a class."""
    posts = tmp_path / "posts.tsv"
    posts.write_text("".join(_lines(datasets_dir / "smp2020_ewect_usual" / "train.tsv", 101)[1:]), encoding="utf-8")
    want = "100 labels in 100 rows: the label column holds texts, not labels; the first column holds 6 values"
    with pytest.raises(DataFormatError, match=rf"{posts}: {want} .*the columns look swapped, the text comes first \(text<TAB>label\)"):
        task_data_from_files("tagging", str(posts))
    pairs = tmp_path / "label_first.tsv"
    rows = [line.rstrip("\n").split("\t") for line in _lines(pairs_tsv, 60)]
    pairs.write_text("".join(f"{label}\t{a}\t{b}\n" for a, b, label in rows), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"the columns look swapped, the label comes last \(text_a<TAB>text_b<TAB>label\)"):
        task_data_from_files("matching", str(pairs))
    # a small file of many intents, some repeated, is labels all the same
    intents = tmp_path / "intents.tsv"
    texts = [line.rstrip("\n").split("\t", 1)[1] for line in _lines(datasets_dir / "smp2020_ewect_usual" / "train.tsv", 21)[1:]]
    intents.write_text("".join(f"{t}\t意图{i % 15}\n" for i, t in enumerate(texts)), encoding="utf-8")
    assert len(task_data_from_files("tagging", str(intents)).labels) == 15


def test_words_joined_otherwise_than_by_spaces_are_refused_not_read_as_one_word(tmp_path, datasets_dir):
    """PKU's gold sentences as other tools write segmentation: each line once became one long "word"."""
    gold = [line.split() for line in _lines(datasets_dir / "sighan2005_icwb2" / "pku_test_gold.utf8", 30) if line.strip()]
    joined = (("/", "looks like words separated by '/'"), ("|", "looks like words separated by '|'"), (" / ", "every other word is '/'"))
    for joiner, problem in joined:
        path = tmp_path / "seg.txt"
        path.write_text("".join(joiner.join(words) + "\n" for words in gold), encoding="utf-8")
        with pytest.raises(DataFormatError, match=rf"{path}:1: .*{re.escape(problem)}"):
            task_data_from_files("cws", str(path))
    words = tmp_path / "words.txt"  # a word list is not segmented text
    words.write_text("".join(w + "\n" for sentence in gold for w in sentence), encoding="utf-8")
    with pytest.raises(DataFormatError, match=f"{words}: no line holds two words"):
        task_data_from_files("cws", str(words))
    spaced = tmp_path / "spaced.txt"  # the same sentences as the format wants them, one 和/或 kept as a word
    spaced.write_text("".join(" ".join(words) + "\n" for words in gold) + "他 说 和/或 都 可以\n", encoding="utf-8")
    data = task_data_from_files("cws", str(spaced))
    assert len(data.train) + len(data.dev) == len(gold) + 1


def test_a_dataset_and_a_train_file_together_are_refused(pairs_tsv):
    from zhbert.recipes import recipe

    with pytest.raises(ValueError, match="--dataset lcqmc and --train-file .* both name the training data: give one"):
        recipe("matching").arguments(dataset="lcqmc", train_file=str(pairs_tsv))
    assert recipe("matching").arguments(train_file=str(pairs_tsv)).dataset == ""
    with pytest.raises(ValueError, match="your own file trains one task: zhbert train TASK --train-file FILE"):
        zhbert.train("multitask", train_file=str(pairs_tsv))


def test_a_csv_with_named_columns(tmp_path, datasets_dir):
    path = tmp_path / "posts.csv"
    rows = [line.rstrip("\n").split("\t", 1) for line in _lines(datasets_dir / "smp2020_ewect_usual" / "train.tsv", 61)[1:]]
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["emotion", "post"])
        writer.writerows(rows)
    data = task_data_from_files("tagging", str(path), text_column="post", label_column="emotion")
    assert len(data.train) + len(data.dev) == 60 and data.eval_split == "dev"
    assert data.labels == sorted({label for label, _ in rows})
    with pytest.raises(DataFormatError, match=f"{path}:1: no column 'text'"):
        task_data_from_files("tagging", str(path))
    typed = tmp_path / "typed.csv"  # a header typed by hand, a space after each comma
    typed.write_text("emotion, post\n" + path.read_text(encoding="utf-8").split("\n", 1)[1], encoding="utf-8")
    assert task_data_from_files("tagging", str(typed), text_column="post", label_column="emotion").labels == data.labels


def test_a_csv_header_naming_a_column_twice_is_refused_in_training_prediction_and_pretraining(tmp_path, datasets_dir):
    """A spreadsheet export with two columns named 'text' (a title and a body, both renamed): before,
    training read the first and prediction and pretraining the last, silently. Now refused at line 1."""
    from zhbert.cli.predict_inputs import csv_inputs
    from zhbert.data.corpus import read_corpus

    rows = [line.rstrip("\n").split("\t", 1) for line in _lines(datasets_dir / "smp2020_ewect_usual" / "train.tsv", 11)[1:]]
    path = tmp_path / "posts.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([["label", "text", "text"], *([label, post[:5], post] for label, post in rows)])
    message = f"{path}:1: the header names 'text' twice"
    with pytest.raises(DataFormatError, match=message):
        task_data_from_files("tagging", str(path))
    with pytest.raises(DataFormatError, match=message):
        list(csv_inputs(str(path), False, "auto"))
    with pytest.raises(DataFormatError, match=message):
        read_corpus(str(path))


def test_a_dataset_name_that_is_a_file_points_to_train_file(tmp_path):
    from zhbert.data.tasks import load_task_data

    with pytest.raises(ValueError, match="a file\\? train on it with --train-file my.conll"):
        load_task_data("ner", "my.conll")


@pytest.fixture(scope="module")
def pos_file(peoples_daily, tmp_path_factory):
    """60 People's Daily sentences written as users bring POS data: word/TAG items, one sentence a line,
    the first with a compound in People's Daily's brackets."""
    out = tmp_path_factory.mktemp("pos") / "pd.txt"
    rows = peoples_daily.select(range(60))
    lines = [" ".join(f"{w}/{p}" for w, p in zip(ws, ps)) for ws, ps in zip(rows["words"], rows["pos"])]
    first = lines[0].split()
    lines[0] = " ".join(["[" + first[0], first[1] + "]nt", *first[2:]])
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out, rows


def test_a_word_tag_file_trains_pos_and_reloads(pos_file, tiny_encoder, tmp_path):
    path, rows = pos_file
    data = task_data_from_files("pos", str(path))
    every = data.train + data.dev
    assert {r["text"] for r in every} == set(rows["text"]) and all("[" not in w for r in every for w in r["words"])
    assert set(data.labels) >= {"B-n", "E-n", "S-w"}
    r = _train("pos", path, tiny_encoder, tmp_path / "run")
    assert r.returncode == 0, r.stderr[-3000:]
    text = "中国与周边国家的友好合作进一步加强。"
    tagged = zhbert.load(str(tmp_path / "run" / "model"))(text)  # words with their tags (a tiny random model: some)
    assert all(text[w.start : w.end] == w.text and f"S-{w.label}" in data.labels for w in tagged)


def _entities_triples_bio(rows):
    """(text, type, start, end) of each BIO-tagged row's entities, sorted."""
    return sorted(_entity_triples(rows))


def _entity_triples(rows):
    from zhbert.tags import tags_to_spans

    return [(r["text"], *span) for r in rows for span in tags_to_spans(r["tags"], "BIO")]


def test_a_word_tag_file_trains_ner_from_its_names_parts_of_speech(pos_file, peoples_daily, tiny_encoder, tmp_path):
    """People's Daily's word/POS lines, the corpus the People's Daily NER release was made from, had no NER
    format (read as CoNLL: "expected 2 columns"): now its nr, ns and nt words are PER, LOC and ORG (a surname
    and given name, 江/nr 泽民/nr, one person), a compound [...]nt one organisation, found by the file's form."""
    path, rows = pos_file
    data = task_data_from_files("ner", str(path))
    assert data.labels == ["O", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-PER", "I-PER"]
    assert any("(wordtag)" in n for n in data.notes) and any("entities from the parts of speech" in n for n in data.notes)
    got = sorted(_entity_triples(data.train + data.dev))
    first = rows[0]
    compound = ("ORG", 0, len(first["words"][0]) + len(first["words"][1]))
    expected = [
        (r["text"], e["type"], e["start"], e["end"]) for k, r in enumerate(rows) for e in r["entities"] if k or e["start"] >= compound[2]
    ]
    assert got == sorted(expected + [(first["text"], *compound)])
    assert any(e["type"] == "PER" and len(e["text"]) == 3 for r in rows for e in r["entities"])  # surname + given name joined
    r = _train("ner", path, tiny_encoder, tmp_path / "run", "--format", "wordtag")
    assert r.returncode == 0, r.stderr[-3000:]
    text = "江泽民主席在北京会见了克林顿。"
    assert all(
        text[s.start : s.end] == s.text and s.label in ("PER", "LOC", "ORG") for s in zhbert.load(str(tmp_path / "run" / "model"))(text)
    )


def test_a_word_tag_file_trains_segmentation_on_its_words(pos_file):
    """People's Daily's word/POS lines, the PKU segmentation standard's own corpus, were refused for cws
    ("strip the tags first", naming a function no command has); now its words are read, found by the form."""
    path, rows = pos_file
    data = task_data_from_files("cws", str(path))
    assert any("(wordtag)" in n for n in data.notes)
    assert sorted(r["words"] for r in data.train + data.dev) == sorted(rows["words"])
    with pytest.raises(
        DataFormatError, match=r"pd\.txt:1: .* look like word/POS pairs .*: a file of word/POS items trains with --format wordtag"
    ):
        task_data_from_files("cws", str(path), file_format="words")


def test_people_s_daily_2014_compounds_keep_their_words_clean(pos_file):
    """People's Daily 2014 closes a compound with a slash, [纽约/nsf 时报/n]/nz: its last word was read as
    '时报/n]', a word with the markup in it that POS trained on; now both forms read alike."""
    path, _ = pos_file
    lines = path.read_text(encoding="utf-8").splitlines()
    assert "]nt " in lines[0]
    written_2014 = path.with_name("pd2014.txt")
    written_2014.write_text("\n".join([lines[0].replace("]nt ", "]/nt "), *lines[1:]]) + "\n", encoding="utf-8")
    for task in ("pos", "ner"):
        a, b = task_data_from_files(task, str(path)), task_data_from_files(task, str(written_2014))
        assert a.labels == b.labels and a.train + a.dev == b.train + b.dev
    assert not any("/" in w or "]" in w for r in task_data_from_files("pos", str(written_2014)).train for w in r["words"])


@pytest.mark.parametrize(
    "line, problem",
    [
        ("[中央/n 电视台/n 报道/v", "the compound that '中央' opens is never closed"),
        ("中央/n 电视台/n]nt 报道/v", "'电视台/n]nt' closes a compound that no '\\[' opened"),
        ("[中央/n [电视台/n]nt 报道/v", "'\\[电视台/n\\]nt' opens a compound inside the one"),
    ],
)
def test_a_bracket_that_opens_or_closes_nothing_is_named(tmp_path, line, problem):
    bad = tmp_path / "bad.txt"
    bad.write_text(f"中国/ns 与/p 周边/n 国家/n\n{line}\n", encoding="utf-8")
    for task in ("pos", "ner"):
        with pytest.raises(DataFormatError, match=rf"bad\.txt:2: {problem}"):
            task_data_from_files(task, str(bad), file_format="wordtag")


def test_a_word_tag_file_with_no_name_is_refused_for_ner(tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_text("友好/a 合作/vn 进一步/d 加强/v 。/w\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"plain\.txt: no word is tagged as a name: .*PER nr/"):
        task_data_from_files("ner", str(plain))


def test_a_bad_word_tag_item_is_named(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("中国/ns 与/p\n周边 国家/n\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"bad\.txt:2: '周边' is not word/TAG"):
        task_data_from_files("pos", str(bad))


def test_clue_json_lines_train_tagging_and_matching(tmp_path, datasets_dir):
    """CLUE ships its classification and pair sets as JSON lines (``sentence``/``content``, ``sentence1``/
    ``sentence2``, ``label``): once refused as one tab-separated column; now read by key, with OCNLI's
    no-gold ``-`` pairs left out and counted, and a file without labels refused by name."""
    nli = tmp_path / "ocnli.json"
    nli.write_text("".join(_lines(datasets_dir / "ocnli" / "dev.json", 120)), encoding="utf-8")
    records = [json.loads(line) for line in _lines(nli, 120)]
    no_gold = [i + 1 for i, r in enumerate(records) if r["label"] == "-"]
    data = task_data_from_files("matching", str(nli))
    assert data.labels == ["contradiction", "entailment", "neutral"]
    assert len(data.train) + len(data.dev) == 120 - len(no_gold) and no_gold
    assert f"{nli}: texts read from 'sentence1' and 'sentence2'" in data.notes
    assert f"{nli}: {len(no_gold)} records labelled '-' (no gold label) left out, the first at line {no_gold[0]}" in data.notes
    first = next(r for r in records if r["label"] != "-")
    assert any(row["text_a"] == first["sentence1"] and row["text_b"] == first["sentence2"] for row in data.train + data.dev)
    unlabelled = tmp_path / "test.json"  # CLUE's test files carry no labels
    unlabelled.write_text("".join(_lines(datasets_dir / "ocnli" / "test.json", 5)), encoding="utf-8")
    with pytest.raises(DataFormatError, match=rf"{unlabelled}:1: no key 'label' in 'sentence1, sentence2, id': a file without labels"):
        task_data_from_files("matching", str(nli), validation_file=str(unlabelled))

    # TNEWS's shape: a numeric label beside its name, the text under "sentence", as one JSON array
    posts = [json.loads(line) for line in _lines(datasets_dir / "clue_emotion2020" / "valid.txt", 60)]
    names = sorted({p["label"] for p in posts})
    tnews = tmp_path / "tnews.json"
    array = [{"label": 100 + names.index(p["label"]), "label_desc": p["label"], "sentence": p["content"]} for p in posts]
    tnews.write_text(json.dumps(array, ensure_ascii=False, indent=1), encoding="utf-8")
    data = task_data_from_files("tagging", str(tnews))
    assert data.labels == sorted(str(100 + i) for i in {names.index(p["label"]) for p in posts})
    assert any("--label-column label_desc trains on the names" in n for n in data.notes)
    assert task_data_from_files("tagging", str(tnews), label_column="label_desc").labels == names
    emotion = tmp_path / "emotion.jsonl"
    emotion.write_text("".join(_lines(datasets_dir / "clue_emotion2020" / "valid.txt", 60)), encoding="utf-8")
    data = task_data_from_files("tagging", str(emotion))
    assert data.labels == names and f"{emotion}: texts read from 'content'" in data.notes
    assert sorted(r["text"] for r in data.train + data.dev) == sorted(p["content"] for p in posts)

    bad = (
        ('{"text": "今天真开心", "label": ["happiness", ""]}', "2: 'label' lists an empty label"),
        ('{"text": "今天真开心", "label": {"happiness": 1}}', "2: 'label' is {'happiness': 1}, not a class"),
        ('{"text": "今天真开心", "label": null}', "2: 'label' is null: a record without its label"),
        ('{"text": ["今天", "真开心"], "label": "like"}', "2: 'text' is list, expected a text"),
        ('{"content": "今天真开心", "label": "like"}', "2: no key 'text' \\(the first record's text\\)"),
        ('["今天真开心", "like"]', "2: expected a JSON object, found list"),
    )
    for line, problem in bad:
        path = tmp_path / "bad.jsonl"
        path.write_text('{"text": "气死了", "label": "anger"}\n' + line + "\n", encoding="utf-8")
        with pytest.raises(DataFormatError, match=rf"{path}:{problem}"):
            task_data_from_files("tagging", str(path))
    keys = tmp_path / "keys.jsonl"
    keys.write_text('{"id": 0, "words": "气死了", "label": "anger"}\n', encoding="utf-8")
    also = "a text is also read from 'sentence', 'content', 'review', '文本', '内容', '句子', '评论'"
    with pytest.raises(DataFormatError, match=rf"{keys}:1: no key 'text' in 'id, words, label'; {also}"):
        task_data_from_files("tagging", str(keys))


def test_a_pair_csv_named_as_clue_names_its_columns(tmp_path, pairs_tsv):
    rows = [line.rstrip("\n").split("\t") for line in _lines(pairs_tsv, 60)]
    path = tmp_path / "pairs.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "sentence1", "sentence2", "label"])
        writer.writerows([i, a, b, label] for i, (a, b, label) in enumerate(rows))
    data = task_data_from_files("matching", str(path))
    assert len(data.train) + len(data.dev) == 60 and data.labels == ["0", "1"]
    assert sorted((r["text_a"], r["text_b"]) for r in data.train + data.dev) == sorted((a, b) for a, b, _ in rows)
    path.write_text("a,b,label\n花呗怎么还款,花呗如何还钱,1\n", encoding="utf-8")
    pairs = "the two texts of a pair are read from text_a/text_b, sentence1/sentence2"
    with pytest.raises(DataFormatError, match=rf"{path}:1: no column 'text_a' in 'a, b, label'; {pairs}") as refused:
        task_data_from_files("matching", str(path))
    assert "header" not in str(refused.value)  # 'label' is a column zhbert reads: the row is a header
    # the usual mistake: a CSV of pairs without a header row, its first pair read as one
    path.write_text("花呗怎么还款,蚂蚁花呗如何还钱,1\n如何学好英语,怎么学好英语,1\n", encoding="utf-8")
    headerless = rf"{path}:1: no column 'text_a' in '花呗怎么还款, 蚂蚁花呗如何还钱, 1'; {pairs}.*"
    headerless += r"; a CSV's first row is its header: add one \(text_a,text_b,label\)"
    with pytest.raises(DataFormatError, match=headerless):
        task_data_from_files("matching", str(path))
    path.write_text("这家店太好吃了,正面\n服务很差,负面\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"no column 'text' in '这家店太好吃了, 正面'.*add one \(text,label\) if it has none"):
        task_data_from_files("tagging", str(path))


def test_a_multi_label_file_trains_a_multi_label_tagger(tmp_path, datasets_dir, tiny_encoder):
    """NLPCC-2014's Weibo posts with a primary and a secondary emotion, as users write several labels of
    a text: a JSON list, or one cell cut at --label-separator. Once refused as "a list of labels" (JSON)
    or trained as one class per combination ("like,disgust"); now a sigmoid head with tuned thresholds."""
    from zhbert.data import read_nlpcc2014_emotion

    posts = read_nlpcc2014_emotion(str(datasets_dir / "nlpcc2014_weibo_emotion" / "ExpressionTest.xml")).select(range(160))
    names = posts.features["labels"].feature.int2str
    rows = [(text, [names(i) for i in labels]) for text, labels in zip(posts["text"], posts["labels"])]
    assert any(len(labels) == 2 for _, labels in rows) and any(len(labels) == 1 for _, labels in rows)
    jsonl = tmp_path / "emotions.jsonl"
    jsonl.write_text("".join(json.dumps({"text": t, "label": labels}, ensure_ascii=False) + "\n" for t, labels in rows), encoding="utf-8")
    data = task_data_from_files("tagging", str(jsonl))
    assert data.multi_label and data.labels == sorted({label for _, labels in rows for label in labels})
    got = {r["text"]: sorted(data.labels[i] for i in r["labels"]) for r in data.train + data.dev}
    assert got == {t: sorted(labels) for t, labels in rows}
    several = sum(len(labels) > 1 for _, labels in rows)
    assert f"multi-label: {len(data.labels)} labels, {several} of 160 texts with several; thresholds tuned on the dev split" in data.notes
    tsv = tmp_path / "emotions.tsv"
    tsv.write_text("".join(f"{t}\t{','.join(labels)}\n" for t, labels in rows), encoding="utf-8")
    assert task_data_from_files("tagging", str(tsv), label_separator=",").train == data.train
    assert not task_data_from_files("tagging", str(tsv)).multi_label  # without the separator a cell is one label, as before
    r = _train("tagging", jsonl, tiny_encoder, tmp_path / "run")
    assert r.returncode == 0, r.stderr[-3000:]
    record = json.loads((tmp_path / "run" / "metrics.json").read_text(encoding="utf-8"))
    assert len(record["metrics"]["thresholds"]) == len(data.labels) and 0 <= record["metrics"]["test"]["micro_f1"] <= 1
    tagger = zhbert.load(str(tmp_path / "run" / "model"))
    assert tagger.head.multi_label and all(x.label in data.labels for x in tagger(rows[0][0]).scores)
    pair_tsv = tmp_path / "pairs.tsv"
    pair_tsv.write_text("花呗怎么还款\t花呗如何还钱\t1\n今天天气怎么样\t北京在哪里\t0\n", encoding="utf-8")
    with pytest.raises(ValueError, match="--label-separator splits a cell into several labels of one text"):
        task_data_from_files("matching", str(pair_tsv), label_separator=",")
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"sentence1": "花呗怎么还款", "sentence2": "花呗如何还钱", "label": ["1", "0"]}\n', encoding="utf-8")
    with pytest.raises(DataFormatError, match=f"{pairs}:1: 'label' is a list of labels: a pair takes one label"):
        task_data_from_files("matching", str(pairs))


def test_a_saved_model_is_scored_on_a_whole_test_file_in_its_own_label_order(tmp_path, datasets_dir):
    """``--evaluate-only MODEL --test-file F``: the bundled tagger on SMP2020 posts labelled by name. Once it
    needed a --train-file, scored only the 10% held out of it, and compared label indices in the file's
    sorted order with the model's own (macro-F1 24.11 for 70.61 on 300 posts): now the whole file, read
    in the model's order, scores as the model's own predictions do."""
    from zhbert.data.weibo import EWECT_LABELS

    lines = _lines(datasets_dir / "smp2020_ewect_usual" / "dev.tsv", 61)[1:]
    posts = [(text, EWECT_LABELS[int(label)]) for label, text in (line.rstrip("\n").split("\t", 1) for line in lines)]
    path = tmp_path / "posts.tsv"
    path.write_text("".join(f"{t}\t{label}\n" for t, label in posts), encoding="utf-8")
    r = subprocess.run(
        [sys.executable, "-m", "zhbert", "train", "tagging", "--evaluate-only", "tagging", "--test-file", str(path),
         "--output-dir", str(tmp_path / "ev")],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    record = json.loads((tmp_path / "ev" / "metrics.json").read_text(encoding="utf-8"))
    predicted = [result.labels[0].label for result in zhbert.load("tagging")([t for t, _ in posts])]
    accuracy = sum(p == label for p, (_, label) in zip(predicted, posts)) / len(posts)
    assert record["scored_on"] == "test" and record["metrics"]["accuracy"] == pytest.approx(accuracy)
    assert sorted({label for _, label in posts}) != [x for x in EWECT_LABELS if x in {label for _, label in posts}]  # orders differ
    with pytest.raises(DataFormatError, match=rf"{path}:1: label '{posts[0][1]}' is not in tagging's labels \(正面, 负面\)"):
        from zhbert.data.user_files import test_data_from_file
        from zhbert.heads.config import HeadConfig

        test_data_from_file("tagging", str(path), HeadConfig(kind="sequence", labels=["正面", "负面"]), "tagging")
    from zhbert.recipes import recipe

    with pytest.raises(
        ValueError, match="--train-file is read to train; --evaluate-only tagging trains nothing: give the file to score as --test-file"
    ):
        recipe("tagging").run(recipe("tagging").arguments(train_file=str(path), evaluate_only="tagging", output_dir=str(tmp_path / "x")))


def test_a_dataset_scored_by_a_model_whose_labels_come_in_another_order(tmp_path, tiny_encoder, tokenizer):
    """A saved classifier scores by label index: a dataset whose labels come in another order is mapped
    into the model's, and one with a label the model lacks is refused by name."""
    from zhbert.data.tasks import TaskData
    from zhbert.heads import HeadConfig, new_head, save_head
    from zhbert.recipes.common import _in_model_order

    folder = tmp_path / "m"
    save_head(new_head(tiny_encoder, HeadConfig(kind="sequence", labels=["happy", "angry", "neutral"])), tokenizer, folder)
    rows = [{"text": "今天真开心", "label": 2}, {"text": "气死了", "label": 0}, {"text": "下午开会", "label": 1}]
    data = TaskData("mine", ["angry", "neutral", "happy"], rows, rows, rows)
    mapped = _in_model_order(data, str(folder))
    assert mapped.labels == ["happy", "angry", "neutral"]
    assert [mapped.labels[r["label"]] for r in mapped.test] == [data.labels[r["label"]] for r in rows]
    with pytest.raises(ValueError, match=r"mine's labels \['sad'\] are not among .*'s \(happy, angry, neutral\)"):
        _in_model_order(TaskData("mine", ["angry", "sad"], rows, rows, rows), str(folder))
    # no name in common and as many labels (a model of a file's 0 / 1 on a set's different / paraphrase): by position, said
    by_position = _in_model_order(TaskData("mine", ["neg", "mid", "pos"], rows, rows, rows), str(folder))
    assert by_position.test == rows and "labels compared by position" in by_position.notes[-1]


def test_a_conll_file_of_words_tags_each_character_within_its_entity(tmp_path, peoples_daily):
    """People's Daily words with their nr/ns/nt names written as word-level CoNLL (``江泽民 B-PER``), the
    form NER files converted from segmented text take: once refused line by line as "expected one
    character per line", now read with --format conll-words, in BIO or BIOES, with the hint in the error."""
    types = {"nr": "PER", "ns": "LOC", "nt": "ORG"}
    sentences = peoples_daily.select(range(40))
    bio, bioes, expected = [], [], []
    for words, pos in zip(sentences["words"], sentences["pos"]):
        tags = [types.get(p) for p in pos]
        bio += [f"{w} {'B-' + t if t else 'O'}\n" for w, t in zip(words, tags)] + ["\n"]
        bioes += [f"{w} {'S-' + t if t else 'O'}\n" for w, t in zip(words, tags)] + ["\n"]
        expected.append(
            (
                "".join(words),
                [tag for w, t in zip(words, tags) for tag in ([f"B-{t}"] + [f"I-{t}"] * (len(w) - 1) if t else ["O"] * len(w))],
            )
        )
    assert sum(t != "O" for _, tags in expected for t in tags) > 20
    for name, lines in (("bio.conll", bio), ("bioes.conll", bioes)):
        path = tmp_path / name
        path.write_text("".join(lines), encoding="utf-8")
        with pytest.raises(DataFormatError, match=f"{path}:1: expected one character per line, found .*--format conll-words"):
            task_data_from_files("ner", str(path))
        data = task_data_from_files("ner", str(path), file_format="conll-words", validation_share=0.1)
        assert sorted((r["text"], r["tags"]) for r in data.train + data.dev) == sorted(expected)
    broken = tmp_path / "broken.conll"
    broken.write_text("江泽民 B-PER\n主席 O\n\n北京 I-LOC\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=f"{broken}:4: I-LOC follows O; I-X must continue B-X or I-X \\(words tagged in BIO\\)"):
        task_data_from_files("ner", str(broken), file_format="conll-words")


def test_records_nobody_labelled_are_left_out_and_counted_not_trained_as_texts_without_names(tmp_path, doccano_jsonl, datasets_dir):
    """A Label Studio export taken mid-project holds tasks not annotated yet (or skipped), and CLUENER's
    test file has no labels: each such record was read as a text without entities, teaching the model
    that its names are none. Now left out and counted; an annotated task with no entity stays."""
    records = [json.loads(line) for line in doccano_jsonl.read_text(encoding="utf-8").splitlines()[:30]]

    def task(rec, annotations):
        return {"id": 1, "data": {"text": rec["text"]}, "annotations": annotations}

    def result(rec):
        return [{"value": {"start": s, "end": e, "text": rec["text"][s:e], "labels": [t]}} for s, e, t in rec["label"]]

    tasks = [task(r, [{"result": result(r), "was_cancelled": False}]) for r in records[:20]]
    tasks += [task(r, []) for r in records[20:26]]  # not annotated yet
    tasks += [task(r, [{"result": [], "was_cancelled": True}]) for r in records[26:28]]  # skipped
    tasks += [task(r, [{"result": [], "was_cancelled": False}]) for r in records[28:30]]  # annotated: no entity in it
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    data = task_data_from_files("ner", str(export))
    assert len(data.train) + len(data.dev) == 22
    assert f"{export}: 8 record(s) nobody labelled (no label, or no annotation) left out, the first at line 1" in data.notes
    kept = {r["text"]: r["tags"] for r in data.train + data.dev}
    assert all(set(kept[r["text"]]) == {"O"} for r in records[28:30]) and not any(r["text"] in kept for r in records[20:28])
    unlabelled = tmp_path / "test.json"
    unlabelled.write_text("".join(_lines(datasets_dir / "cluener2020" / "test.json", 40)), encoding="utf-8")
    with pytest.raises(DataFormatError, match=f"{unlabelled}: no labelled records"):
        task_data_from_files("ner", str(unlabelled))


PD_NER_NAMES = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"]  # the hub's peoples_daily_ner ClassLabel


def _pd_ner_sentences(datasets_dir, n):
    """The first ``n`` sentences of People's Daily NER dev as (characters, tags)."""
    sentences, chars, tags = [], [], []
    with open(datasets_dir / "peoples_daily_ner" / "example.dev", encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if parts:
                chars.append(parts[0])
                tags.append(parts[1])
            elif chars:
                sentences.append((chars, tags))
                chars, tags = [], []
                if len(sentences) == n:
                    break
    return sentences


def test_hub_parquet_files_train_with_their_class_names(datasets_dir, tiny_encoder, tmp_path):
    """Datasets as the Hugging Face hub (and its mirrors) serve them: Parquet, each ClassLabel a
    number whose name is in the file's metadata, -1 for no label. Before, "binary data (NUL byte)"
    at line 1; now People's Daily NER (``tokens``/``ner_tags``) and OCNLI (``sentence1``/``sentence2``,
    its no-gold pairs -1) train with the names as labels, and no-gold rows are counted, not classes."""
    from datasets import ClassLabel, Dataset, Features, List, Value

    sentences = _pd_ner_sentences(datasets_dir, 120)
    ner = tmp_path / "train-00000-of-00001.parquet"
    features = Features(id=Value("string"), tokens=List(Value("string")), ner_tags=List(ClassLabel(names=PD_NER_NAMES)))
    rows = {"id": [str(i) for i in range(len(sentences))], "tokens": [c for c, _ in sentences]}
    Dataset.from_dict({**rows, "ner_tags": [[PD_NER_NAMES.index(t) for t in tags] for _, tags in sentences]}, features=features).to_parquet(
        ner
    )
    data = task_data_from_files("ner", str(ner), validation_share=0.25)
    assert data.notes[0] == f"train: {ner} (parquet)" and data.labels == ["O", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-PER", "I-PER"]
    by_text = {r["text"]: r["tags"] for r in data.train + data.dev}
    assert all(by_text["".join(chars)] == tags for chars, tags in sentences)  # BIO characters, read back unchanged
    r = _train("ner", ner, tiny_encoder, tmp_path / "run")
    assert r.returncode == 0, r.stderr[-3000:]
    saved = json.loads((tmp_path / "run" / "model" / "config.json").read_text(encoding="utf-8"))["zhbert_head"]["labels"]
    assert saved == data.labels  # names, not the numbers the file holds

    records = [json.loads(line) for line in _lines(datasets_dir / "ocnli" / "dev.json", 200)]
    names = ["entailment", "neutral", "contradiction"]  # CLUE's ocnli ClassLabel on the hub
    no_gold = [i + 1 for i, rec in enumerate(records) if rec["label"] not in names]
    assert no_gold
    nli = tmp_path / "ocnli.parquet"
    features = Features(sentence1=Value("string"), sentence2=Value("string"), label=ClassLabel(names=names), idx=Value("int32"))
    columns = {k: [rec[k] for rec in records] for k in ("sentence1", "sentence2")}
    labels = [names.index(rec["label"]) if rec["label"] in names else -1 for rec in records]
    Dataset.from_dict({**columns, "label": labels, "idx": list(range(len(records)))}, features=features).to_parquet(nli)
    data = task_data_from_files("matching", str(nli))
    assert data.labels == sorted(names) and len(data.train) + len(data.dev) == len(records) - len(no_gold)
    assert f"{nli}: {len(no_gold)} records of no label (-1) left out, the first at row {no_gold[0]}" in data.notes
    pairs = {(row["text_a"], row["text_b"]): data.labels[row["label"]] for row in data.train + data.dev}
    assert all(pairs[rec["sentence1"], rec["sentence2"]] == rec["label"] for rec in records if rec["label"] in names)

    broken = tmp_path / "cut.parquet"  # a download cut short
    broken.write_bytes(nli.read_bytes()[: nli.stat().st_size // 2])
    with pytest.raises(DataFormatError, match=rf"{broken}: not a readable Parquet file"):
        task_data_from_files("matching", str(broken))
    with pytest.raises(DataFormatError, match=rf"{nli}: a Parquet file \(as the Hugging Face hub serves datasets\), not text"):
        task_data_from_files("cws", str(nli))


def test_run_ner_json_records_of_tokens_and_tags_train(datasets_dir, tmp_path, caplog):
    """run_ner.py's JSON (``{"tokens": [...], "ner_tags": [...]}``), which ``Dataset.to_json`` writes:
    before, every record was taken as one nobody labelled and the file refused as "no labelled records"."""
    import logging

    sentences = _pd_ner_sentences(datasets_dir, 60)
    chars = tmp_path / "train.json"
    records = [{"id": str(i), "tokens": c, "ner_tags": t} for i, (c, t) in enumerate(sentences)] + [
        {"id": "60", "tokens": [], "ner_tags": []}
    ]
    chars.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        read = read_entity_json(str(chars))
    assert [r["text"] for r in read] == ["".join(c) for c, _ in sentences]
    assert f"{chars}: 1 record(s) of no tokens left out, the first at line 61" in caplog.text
    first = next(i for i, (_, tags) in enumerate(sentences) if any(t != "O" for t in tags))
    from zhbert.tags import tags_to_spans

    assert read[first]["spans"] == tags_to_spans(sentences[first][1], "BIO")

    words = tmp_path / "words.jsonl"  # tokens that are words, tagged in BIOES: each entity covers its words' characters
    words.write_text(
        json.dumps({"tokens": ["新华社", "北京", "电"], "tags": ["S-ORG", "S-LOC", "O"]}, ensure_ascii=False), encoding="utf-8"
    )
    assert read_entity_json(str(words))[0]["spans"] == [("ORG", 0, 3), ("LOC", 3, 5)]
    bad = (
        ({"tokens": list("北京"), "ner_tags": [5, 6]}, "'ner_tags' holds numbers, not tag names"),
        ({"tokens": list("北京欢迎"), "ner_tags": ["B-LOC", "I-LOC", "O"]}, "4 tokens and 3 ner_tags: one tag a token"),
        ({"tokens": list("北京")}, "'tokens' without their tags: expected 'ner_tags' or 'tags' beside them"),
        ({"tokens": ["北", ""], "ner_tags": ["B-LOC", "I-LOC"]}, "'tokens' should be a list of non-empty strings"),
        ({"tokens": list("在北京"), "ner_tags": ["O", "I-LOC", "I-LOC"]}, "I-LOC follows O"),
    )
    for record, problem in bad:
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(records[0], ensure_ascii=False) + "\n" + json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
        with pytest.raises(DataFormatError, match=rf"{path}:2: {re.escape(problem)}"):
            task_data_from_files("ner", str(path))


def test_folders_that_save_to_disk_wrote_train_and_score(datasets_dir, tmp_path):
    """A ``DatasetDict`` prepared with ``datasets`` and saved with ``save_to_disk``: each split's folder
    is a --train-file, --validation-file or --test-file, its ClassLabel names read as Parquet's are.
    Before, "not a file"; the DatasetDict's own folder is named with its splits."""
    from datasets import ClassLabel, Dataset, DatasetDict, Features, List, Value

    sentences = _pd_ner_sentences(datasets_dir, 90)
    features = Features(tokens=List(Value("string")), ner_tags=List(ClassLabel(names=PD_NER_NAMES)))
    rows = {"tokens": [c for c, _ in sentences], "ner_tags": [[PD_NER_NAMES.index(t) for t in tags] for _, tags in sentences]}
    whole = Dataset.from_dict(rows, features=features).with_format("torch")  # a format saved with it is not read as tensors
    saved = tmp_path / "pd_ner"
    DatasetDict(train=whole.select(range(60)), validation=whole.select(range(60, 90))).save_to_disk(str(saved))
    before = sorted((p, p.stat().st_mtime_ns) for p in saved.rglob("*"))
    data = task_data_from_files("ner", str(saved / "train"), validation_file=str(saved / "validation"))
    assert data.notes[0] == f"train: {saved / 'train'} (arrow)" and (len(data.train), len(data.dev)) == (60, 30)
    assert [r["text"] for r in data.dev] == ["".join(c) for c, _ in sentences[60:]]
    assert [r["tags"] for r in data.train] == [tags for _, tags in sentences[:60]]
    assert sorted((p, p.stat().st_mtime_ns) for p in saved.rglob("*")) == before  # read, nothing written there
    with pytest.raises(
        DataFormatError, match=rf"{saved}: a DatasetDict of splits train, validation: give one split's folder, such as {saved / 'train'}"
    ):
        task_data_from_files("ner", str(saved))
    with pytest.raises(
        FileNotFoundError,
        match=rf"{tmp_path}: not a file \(nor a folder that Dataset.save_to_disk wrote, nor one of brat's .ann and .txt files\)",
    ):
        task_data_from_files("ner", str(tmp_path))


def test_a_parquet_row_group_past_the_bound_is_refused_before_it_is_read(tmp_path, monkeypatch):
    """A row group's column chunks are read into memory whole: one past the bound (1 GiB; here lowered to 64
    bytes) is refused from the file's footer, with the line that writes it in smaller row groups."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from zhbert.data import hub_files

    path = tmp_path / "posts.parquet"
    pq.write_table(pa.table({"text": ["今天真开心"] * 200, "label": ["happiness"] * 100 + ["anger"] * 100}), path)
    assert len(task_data_from_files("tagging", str(path)).labels) == 2
    monkeypatch.setattr(hub_files, "MAX_ROW_GROUP_BYTES", 64)
    with pytest.raises(DataFormatError, match=rf"{path}: row group 0 holds .* GiB uncompressed: over the .* row_group_size=100_000"):
        task_data_from_files("tagging", str(path))


def test_conll_2003_document_markers_end_a_sentence_and_are_not_read_as_tokens(tmp_path, datasets_dir):
    """A CoNLL file with CoNLL-2003's document markers (``-DOCSTART- O``, or ``-DOCSTART- -X- -X- O``)
    between documents: before, refused at line 1 ("expected one character per line", then 2 columns),
    and --format conll-words, which that error suggests, would have trained on "-DOCSTART-" as a
    word; predict --format conll made it part of a sentence. Now a marker ends a sentence, as a blank
    line does, in every reader of CoNLL."""
    from zhbert.cli.predict_inputs import conll_inputs

    sentences = _pd_ner_sentences(datasets_dir, 12)
    blocks = ["".join(f"{c} {t}\n" for c, t in zip(chars, tags)) for chars, tags in sentences]
    plain, marked = tmp_path / "plain.txt", tmp_path / "marked.txt"
    plain.write_text("\n".join(blocks), encoding="utf-8")
    marked.write_text(
        "-DOCSTART- -X- -X- O\n\n" + "\n".join(blocks[:5]) + "-DOCSTART- O\n" + "\n".join(blocks[5:]) + "\n-DOCSTART- O\n", encoding="utf-8"
    )  # the second marker with no blank line before it: it ends the sentence itself

    def rows(path, **kw):
        data = task_data_from_files("ner", str(path), **kw)
        return sorted((r["text"], r["tags"]) for r in data.train + data.dev)

    expected = rows(plain)
    assert len(expected) == 12 and sum(t != "O" for _, tags in expected for t in tags) > 10
    assert rows(marked) == expected
    words = tmp_path / "words.conll"  # the same sentences as words of one character
    words.write_text(marked.read_text(encoding="utf-8"), encoding="utf-8")
    assert rows(words, file_format="conll-words") == expected
    assert [text for _, text, _ in conll_inputs(str(marked))] == ["".join(chars) for chars, _ in sentences]


def test_entity_map_renames_a_files_types_and_counts_the_ones_left_out(tmp_path, datasets_dir):
    """A file typed another way (Resume NER: NAME, ORG, TITLE, EDU, ... in BMES) trains, or scores a
    model with other types, once ``--entity-map`` renames its types: before, the bundled ner could
    not be scored on it at all ("entity types [...] are not among ner's"), and nothing could train
    PER/LOC/ORG from it without rewriting the file. Entities of types the map does not name are left
    out and counted, never silently kept under their old name."""
    from zhbert.data.ner_sources import parse_entity_map
    from zhbert.data.user_files import test_data_from_file
    from zhbert.heads.io import saved_head_settings
    from zhbert.models_registry import resolve_model_path
    from zhbert.tags import tags_to_spans

    blocks = (datasets_dir / "resume_ner" / "dev.char.bmes").read_text(encoding="utf-8").split("\n\n")[:80]
    resume = tmp_path / "resume.char.bmes"
    resume.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")

    def entities(data):
        rows = data.train + data.dev if data.train else data.test  # a test file scored alone has no training rows
        return sorted((r["text"], typ, a, b) for r in rows for typ, a, b in tags_to_spans(r["tags"], data.scheme))

    original = task_data_from_files("ner", str(resume))
    mapped = task_data_from_files("ner", str(resume), entity_map="NAME=PER,ORG,LOC")
    assert original.scheme == mapped.scheme == "BMES" and len(original.labels) > len(mapped.labels)
    assert {label.split("-", 1)[1] for label in mapped.labels if "-" in label} == {"PER", "ORG", "LOC"}
    rename = {"NAME": "PER", "ORG": "ORG", "LOC": "LOC"}
    assert entities(mapped) == sorted((text, rename[t], a, b) for text, t, a, b in entities(original) if t in rename)
    left = [t for _, t, _, _ in entities(original) if t not in rename]
    assert len(left) > 20 and any(
        f"{len(left):,} entities of types it does not name left out (tagged O)" in note and "TITLE (" in note for note in mapped.notes
    )
    assert parse_entity_map("resume") == rename
    for bad, message in (("NAME=PER,NAME=ORG", "maps NAME twice"), ("NAME=P ER", "no spaces"), (" , ", "is empty"), ("A=B-C", "no '-'")):
        with pytest.raises(ValueError, match=message):
            parse_entity_map(bad)
    with pytest.raises(ValueError, match="--entity-map renames the entity types of an NER file; matching has none"):
        task_data_from_files("matching", str(resume), entity_map="NAME=PER")
    ner = resolve_model_path("ner")
    head = saved_head_settings(ner)
    with pytest.raises(DataFormatError, match=r"are not among ner's \(LOC, ORG, PER\): --entity-map renames a file's types"):
        test_data_from_file("ner", str(resume), head, "ner")
    scored = test_data_from_file("ner", str(resume), head, "ner", entity_map="resume")
    assert entities(scored) == sorted((text, rename[t], a, b) for text, t, a, b in entities(original) if t in rename)


def test_peoples_daily_line_ids_are_not_trained_as_words(tmp_path):
    """The PKU release of People's Daily 1998 starts each line with its id (``19980101-01-001-001/m``).
    Before, ``--format wordtag`` read the id as the first word of every sentence, a numeral, so a
    POS model learned that sentences start with a 19-character number; now it is read as the id."""
    from zhbert.data.peoples_daily import peoples_daily_path

    lines = [line for line in peoples_daily_path().read_text(encoding="utf-8").splitlines() if line.strip()][:60]
    plain, with_ids = tmp_path / "plain.txt", tmp_path / "199801.txt"
    plain.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with_ids.write_text(
        "".join(f"19980101-01-{k // 20 + 1:03d}-{k % 20 + 1:03d}/m  {line}\n\n" for k, line in enumerate(lines)), encoding="utf-8"
    )
    expected = task_data_from_files("pos", str(plain))
    got = task_data_from_files("pos", str(with_ids))
    assert got.labels == expected.labels and got.train + got.dev == expected.train + expected.dev
    assert not any(w.startswith("1998") for r in got.train for w in r["words"])
    assert any("line ids of People's Daily 1998 (19980101-01-001-001/m) read as ids, not words, on 60 lines" in n for n in got.notes)


def test_the_chinese_sentiment_sets_review_column_and_chinese_headers_are_read_as_the_text(tmp_path, datasets_dir):
    """ChnSentiCorp and waimai_10k (SophonPlus) ship ``label,review``: before, "no column 'text' in
    'label, review'" unless --text-column review; a header written in Chinese (文本, 标签) likewise."""
    source = datasets_dir / "sophonplus_sentiment" / "waimai_10k.csv"
    with open(source, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    sample = rows[1:41] + rows[-40:]  # the file holds its positive reviews first
    waimai = tmp_path / "waimai.csv"
    with open(waimai, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([rows[0], *sample])
    data = task_data_from_files("tagging", str(waimai))
    assert rows[0] == ["label", "review"] and data.labels == ["0", "1"]
    assert any(note.endswith("texts read from 'review'") for note in data.notes)
    read = {(r["text"], data.labels[r["label"]]) for r in data.train + data.dev}
    assert read == {(text.strip(), label) for label, text in sample}
    chinese = tmp_path / "评论.csv"
    with open(chinese, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([["标签", "文本"], *sample])
    data = task_data_from_files("tagging", str(chinese), label_column="标签")
    assert {(r["text"], data.labels[r["label"]]) for r in data.train + data.dev} == read


def test_cblue_cmeee_records_with_inclusive_ends_train_ner(tmp_path, datasets_dir):
    """CBLUE's CMeEE writes a JSON array of ``{"text", "entities": [{"start_idx", "end_idx", "type",
    "entity"}]}``, ``end_idx`` inclusive. Before: "an entity is not (start, end, type)" at its first
    record. Now read as the same sentences tagged in CoNLL are; a span off by one is named by
    its mention, and a record with no entities key (CMeEE's test file) is left out and counted."""
    from zhbert.tags import tags_to_spans

    sentences = _pd_ner_sentences(datasets_dir, 30)
    records = []
    for chars, tags in sentences:
        text = "".join(chars)
        entities = [{"start_idx": a, "end_idx": b - 1, "type": t, "entity": text[a:b]} for t, a, b in tags_to_spans(tags, "BIO")]
        records.append({"text": text, "entities": entities})
    assert sum(len(r["entities"]) for r in records) > 10
    cmeee = tmp_path / "CMeEE_train.json"
    cmeee.write_text(json.dumps(records + [{"text": "无标注的测试句子。"}], ensure_ascii=False, indent=4), encoding="utf-8")
    conll = tmp_path / "same.conll"
    conll.write_text("\n".join("".join(f"{c} {t}\n" for c, t in zip(chars, tags)) for chars, tags in sentences), encoding="utf-8")
    data, expected = task_data_from_files("ner", str(cmeee)), task_data_from_files("ner", str(conll))
    assert sorted(r["tags"] for r in data.train + data.dev) == sorted(r["tags"] for r in expected.train + expected.dev)
    assert any("1 record(s) nobody labelled" in note for note in data.notes)
    shifted = next(r for r in records if r["entities"])
    bad = {"text": shifted["text"], "entities": [{**shifted["entities"][0], "end_idx": shifted["entities"][0]["end_idx"] + 1}]}
    cmeee.write_text(json.dumps([bad], ensure_ascii=False), encoding="utf-8")
    with pytest.raises(DataFormatError, match=rf"{cmeee}:1: \w+ span \[\d+, \d+\) covers .*, not '{shifted['entities'][0]['entity']}'"):
        task_data_from_files("ner", str(cmeee))


def test_a_quote_never_closed_in_a_csv_file_is_named_not_read_as_one_long_text(tmp_path, datasets_dir):
    """A review whose opening quote was never closed: before, Python's lenient CSV reading made it
    one cell running to the end of the file, so every row after it became part of one text (and
    their labels were lost), silently. Now an error at the line where the quote opened."""
    with open(datasets_dir / "sophonplus_sentiment" / "waimai_10k.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    unquoted = [r for r in rows[1:] if '"' not in r[1] and "," not in r[1]]  # nothing after the broken row is quoted
    plain = unquoted[:15] + unquoted[-15:]  # positive reviews, then negative ones
    broken = tmp_path / "waimai.csv"
    with open(broken, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([rows[0], *plain[:15]])
        f.write('1,"好吃，就是有点咸\n')
        csv.writer(f).writerows(plain[15:])
    with pytest.raises(DataFormatError, match=rf"{broken}:17: not CSV \(unexpected end of data\): a quote opened here and never closed"):
        task_data_from_files("tagging", str(broken))


def test_a_segmentation_file_of_characters_and_their_tags_trains_cws(tmp_path, datasets_dir):
    """PKU's gold segmentation written a character a line with its word-position tag (BMES, BIES or
    BI), as many segmentation corpora are converted: before, read as sentences of words, so each
    line became a sentence of two words, the character and its tag ("同 E" -> 同 / E), 3,029
    sentences of garbage from 40, silently. Now found by its form and read as the words it tags."""
    sentences = [line.split() for line in _lines(datasets_dir / "sighan2005_icwb2" / "pku_test_gold.utf8", 40) if line.strip()]

    def tagged(words, middle, single, end):
        for w in words:
            if len(w) == 1:
                yield f"{w} {single}"
            else:
                yield from [f"{w[0]} B", *(f"{c} {middle}" for c in w[1:-1]), f"{w[-1]} {end}"]

    plain = tmp_path / "pku.utf8"
    plain.write_text("\n".join("  ".join(words) for words in sentences) + "\n", encoding="utf-8")
    expected = sorted((r["text"], r["words"]) for r in (lambda d: d.train + d.dev)(task_data_from_files("cws", str(plain))))
    for name, (middle, single, end) in {"bmes": ("M", "S", "E"), "bies": ("I", "S", "E"), "bi": ("I", "B", "I")}.items():
        path = tmp_path / f"pku.{name}"
        path.write_text("\n\n".join("\n".join(tagged(words, middle, single, end)) for words in sentences) + "\n", encoding="utf-8")
        data = task_data_from_files("cws", str(path))
        assert data.notes[0] == f"train: {path} (conll)"
        assert sorted((r["text"], r["words"]) for r in data.train + data.dev) == expected, name
    bmes = tmp_path / "pku.bmes"
    lines = bmes.read_text(encoding="utf-8").splitlines()
    broken = next(k for k, line in enumerate(lines) if line.endswith(" E"))
    for tag, problem in (("B", "B after a word left open"), ("S", "S after a word left open")):
        bad = tmp_path / "bad.bmes"
        bad.write_text("\n".join([*lines[:broken], lines[broken][:-1] + tag, "中 E", *lines[broken + 1 :]]) + "\n", encoding="utf-8")
        with pytest.raises(DataFormatError, match=rf"{bad}:{broken + 2}: E continues no word|{bad}:{broken + 1}: {problem}"):
            task_data_from_files("cws", str(bad))
    cut = tmp_path / "cut.bmes"
    cut.write_text("\n".join([*lines[:broken], "", *lines[broken + 1 :]]) + "\n", encoding="utf-8")  # a word's E lost
    with pytest.raises(DataFormatError, match=rf"{cut}:{broken}: the sentence ends inside a word"):
        task_data_from_files("cws", str(cut))


def test_conllu_files_train_pos_and_cws(tmp_path):
    """Universal Dependencies' treebanks (UD_Chinese-GSD and the rest) ship CoNLL-U: before, no
    reader took them (a POS file was "not word/TAG", a segmentation file read each line of ten
    columns as a sentence of words). Now its FORM and UPOS columns train pos, its FORMs cws, the
    same as the same sentences written in the project's own formats; comments, multiword-token
    ranges and empty nodes are not words."""
    from zhbert.data.peoples_daily import peoples_daily_path

    lines = [line.split() for line in peoples_daily_path().read_text(encoding="utf-8").splitlines() if line.strip()][:40]
    sentences = [[item.rsplit("/", 1) for item in line if not item.startswith("[")] for line in lines]
    wordtag, conllu = tmp_path / "pd.txt", tmp_path / "zh_pd-ud-train.conllu"
    wordtag.write_text("\n".join("  ".join(f"{w}/{t}" for w, t in s) for s in sentences) + "\n", encoding="utf-8")
    blocks = []
    for k, s in enumerate(sentences):
        rows = [f"# sent_id = train-s{k + 1}", f"# text = {''.join(w for w, _ in s)}"]
        rows += [f"{i}\t{w}\t{w}\t{t}\t_\t_\t0\tdep\t_\tSpaceAfter=No" for i, (w, t) in enumerate(s, 1)]
        if k == 0:
            rows.insert(3, "1-2\t" + s[0][0] + s[1][0] + "\t_\t_\t_\t_\t_\t_\t_\t_")  # a multiword token's range
            rows.append(f"{len(s)}.1\t了\t了\t_\t_\t_\t_\t_\t_\t_")  # an empty node
        blocks.append("\n".join(rows))
    conllu.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    (tmp_path / "w.txt").write_text("\n".join("  ".join(w for w, _ in s) for s in sentences) + "\n", encoding="utf-8")
    for task in ("pos", "cws"):
        got, expected = (
            task_data_from_files(task, str(conllu)),
            task_data_from_files(task, str(wordtag if task == "pos" else tmp_path / "w.txt")),
        )
        assert got.notes[0] == f"train: {conllu} (conllu)" and got.labels == expected.labels
        assert sorted((r["text"], r["words"]) for r in got.train + got.dev) == sorted(
            (r["text"], r["words"]) for r in expected.train + expected.dev
        )
    bad = tmp_path / "bad.conllu"
    bad.write_text(blocks[1].replace("\t_\t0\tdep", " _ 0 dep", 1) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=rf"{bad}:3: 7 tab-separated columns; a CoNLL-U line has 10"):
        task_data_from_files("pos", str(bad))


def test_bilou_tags_read_as_the_bioes_they_are(tmp_path, datasets_dir):
    """BILOU (spaCy's L-ast and U-nit prefixes) is BIOES under two other letters: before, "unknown
    tag 'L-ORG' for BIO" at its first L-; now the same entities as the BIO file they came from, in
    CoNLL, word-level CoNLL and run_ner.py's token lists."""
    from zhbert.tags import tags_to_spans

    sentences = _pd_ner_sentences(datasets_dir, 30)

    def bilou(tags):
        out = ["O"] * len(tags)
        for typ, a, b in tags_to_spans(tags, "BIO"):
            out[a:b] = [f"U-{typ}"] if b - a == 1 else [f"B-{typ}", *[f"I-{typ}"] * (b - a - 2), f"L-{typ}"]
        return out

    bio, conll, tokens = tmp_path / "bio.txt", tmp_path / "bilou.txt", tmp_path / "bilou.jsonl"
    bio.write_text("\n".join("".join(f"{c} {t}\n" for c, t in zip(chars, tags)) for chars, tags in sentences), encoding="utf-8")
    conll.write_text("\n".join("".join(f"{c} {t}\n" for c, t in zip(chars, bilou(tags))) for chars, tags in sentences), encoding="utf-8")
    tokens.write_text(
        "".join(json.dumps({"tokens": chars, "ner_tags": bilou(tags)}, ensure_ascii=False) + "\n" for chars, tags in sentences),
        encoding="utf-8",
    )
    assert any(t.startswith("L-") for chars, tags in sentences for t in bilou(tags))

    def entities(path, **kw):
        data = task_data_from_files("ner", str(path), **kw)
        return sorted((r["text"], *span) for r in data.train + data.dev for span in tags_to_spans(r["tags"], data.scheme))

    expected = entities(bio)
    assert entities(conll) == entities(conll, file_format="conll-words") == entities(tokens) == expected


def test_similarity_scores_train_a_regression_head(datasets_dir, tiny_encoder, tmp_path):
    """STS-B zh's pairs with their 0-5 scores written with a fraction (3.0, as a float column saves): a similarity
    score, one output scored by correlation, as run_glue.py reads a float label column. Before, every distinct score
    was a class (4.2 and 4.4 two unrelated labels). Whole numbers stay classes, said; a later file's label that is
    no number is refused at its line; a saved regression head scores a test file of scores."""
    lines = [line.rstrip("\n").split("\t") for line in _lines(datasets_dir / "sts_b_zh" / "sts-b-train.txt", 80)]
    whole = tmp_path / "whole.tsv"
    whole.write_text("".join(f"{a}\t{b}\t{s}\n" for a, b, s in lines), encoding="utf-8")
    data = task_data_from_files("matching", str(whole))
    assert not data.regression and data.labels == sorted({s for *_, s in lines}) and len(data.labels) > 2
    assert any(f"read as {len(data.labels)} classes; similarity scores are read as scores" in n for n in data.notes)

    scored = tmp_path / "scored.tsv"
    scored.write_text("".join(f"{a}\t{b}\t{int(s):.1f}\n" for a, b, s in lines), encoding="utf-8")
    data = task_data_from_files("matching", str(scored))
    assert data.regression and data.labels == ["score"]
    assert sorted(r["label"] for r in data.train + data.dev) == sorted(float(s) for *_, s in lines)
    assert any("labels read as similarity scores (0 to 5" in n for n in data.notes), data.notes
    bad = tmp_path / "bad.tsv"
    bad.write_text(f"{lines[0][0]}\t{lines[0][1]}\t3.5\n{lines[1][0]}\t{lines[1][1]}\t高\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=rf"{bad}:2: label '高' is not a number; the training file's labels are similarity"):
        task_data_from_files("matching", str(scored), validation_file=str(bad))
    binary = tmp_path / "binary.tsv"  # two values, written as floats: still two classes
    binary.write_text("".join(f"{a}\t{b}\t{float(int(s) > 2)}\n" for a, b, s in lines), encoding="utf-8")
    assert task_data_from_files("matching", str(binary)).labels == ["0.0", "1.0"]

    r = _train("matching", scored, tiny_encoder, tmp_path / "run")
    assert r.returncode == 0, r.stderr[-3000:]
    record = json.loads((tmp_path / "run" / "metrics.json").read_text(encoding="utf-8"))
    assert record["headline"] == "pearson" and set(record["metrics"]) >= {"pearson", "spearman"}
    match = zhbert.load(str(tmp_path / "run" / "model"))((lines[0][0], lines[0][1]))
    assert match.label == "score" and isinstance(match.score, float) and match.scores == ()
    ev = subprocess.run(
        [sys.executable, "-m", "zhbert", "train", "matching", "--evaluate-only", str(tmp_path / "run" / "model"),
         "--test-file", str(scored), "--output-dir", str(tmp_path / "ev")],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert ev.returncode == 0, ev.stderr[-3000:]
    assert json.loads((tmp_path / "ev" / "metrics.json").read_text(encoding="utf-8"))["headline"] == "pearson"
    # its predictions as text are scores training reads back as scores (once: the word 'score' on every line)
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"{a}\t{b}\n" for a, b, _ in lines[:20]), encoding="utf-8")
    predicted = subprocess.run(
        [sys.executable, "-m", "zhbert", "predict", "--model", str(tmp_path / "run" / "model"), "--output-format", "text", str(pairs)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert predicted.returncode == 0, predicted.stderr[-3000:]
    rows = [line.split("\t") for line in predicted.stdout.splitlines()]
    assert [r[:2] for r in rows] == [[a, b] for a, b, _ in lines[:20]] and all(re.fullmatch(r"-?\d+\.\d{4}", r[2]) for r in rows)
    (tmp_path / "again.tsv").write_text(predicted.stdout, encoding="utf-8")
    assert task_data_from_files("matching", str(tmp_path / "again.tsv")).regression


def test_label_studio_classification_exports_train_tagging(tmp_path, datasets_dir):
    """Label Studio's JSON export of a text-classification project (the texts under ``data``, the chosen labels in the
    annotations' ``choices``) and its JSON-MIN export of several choices. Before: "no key 'text' in 'id, data,
    annotations'", and a JSON-MIN multi-choice label "is {'choices': [...]}, not a class"."""
    lines = _lines(datasets_dir / "smp2020_ewect_usual" / "train.tsv", 41)[1:]
    posts = [(text.strip(), label) for label, text in (line.split("\t", 1) for line in lines)]

    def task(i, text, choices, **extra):
        result = [{"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": choices}}]
        return {"id": i, "data": {"text": text}, "annotations": [{"id": i, "result": result, **extra}], "predictions": []}

    tasks = [task(i, text, [label]) for i, (text, label) in enumerate(posts)]
    tasks.append({"id": 98, "data": {"text": "还没有人标注的微博"}, "annotations": [], "predictions": []})
    tasks.append(task(99, "跳过的微博", ["0"], was_cancelled=True))
    path = tmp_path / "export.json"
    path.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    data = task_data_from_files("tagging", str(path))
    assert sorted((r["text"], data.labels[r["label"]]) for r in data.train + data.dev) == sorted(posts)
    assert any("2 Label Studio task(s) nobody annotated" in n for n in data.notes), data.notes

    tasks[0]["annotations"][0]["result"].append({"from_name": "topic", "type": "choices", "value": {"choices": ["体育"]}})
    path.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"choices of 2 questions \('sentiment, topic'\): --label-column names one"):
        task_data_from_files("tagging", str(path))
    topics = task_data_from_files("tagging", str(path), label_column="topic")
    first = next(r for r in topics.train + topics.dev if r["text"] == posts[0][0])
    assert topics.labels[first["label"]] == "体育"  # the question --label-column names
    tasks[1]["annotations"][0]["result"][0]["value"]["choices"] = "开心"  # by hand, not as Label Studio writes it
    path.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"export.json:1: 'choices' should be a list of labels, found '开心'"):
        task_data_from_files("tagging", str(path), label_column="sentiment")

    minimal = tmp_path / "min.json"  # JSON-MIN: several choices of one text as {"choices": [...]}
    rows = [{"id": i, "text": t, "sentiment": {"choices": [label, "extra"]} if i % 3 == 0 else label} for i, (t, label) in enumerate(posts)]
    minimal.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    data = task_data_from_files("tagging", str(minimal), label_column="sentiment")
    assert data.multi_label and "extra" in data.labels


def test_a_space_of_the_text_as_its_own_token_line(tmp_path, datasets_dir):
    """People's Daily NER sentences written back a character a line by ``for ch in text: print(ch, tag)``, with
    spaces in their text (a full-width one inside, an ASCII one before the end) as tokens: before, "expected 2
    columns, found 1" at the space's line; now each space is part of the text, every tag in its place."""
    blocks = (datasets_dir / "peoples_daily_ner" / "example.dev").read_text(encoding="utf-8").split("\n\n")[:3]
    sentences = []
    for block in blocks:
        chars, tags = zip(*(line.split() for line in block.strip().splitlines()))
        cut = len(chars) // 2
        sentences.append(([*chars[:cut], "\u3000", *chars[cut:-1], " ", chars[-1]], [*tags[:cut], "O", *tags[cut:-1], "O", tags[-1]]))
    path = tmp_path / "written.conll"
    path.write_text("\n".join("".join(f"{c} {t}\n" for c, t in zip(*s)) for s in sentences), encoding="utf-8")
    data = task_data_from_files("ner", str(path), validation_share=0.34)
    read = {r["text"]: r["tags"] for r in data.train + data.dev}
    assert read == {"".join(chars): list(tags) for chars, tags in sentences}
    assert any(t != "O" for tags in read.values() for t in tags)  # entities there, in their places


def _write_brat(folder, docs, newline="\n", crlf_counts_two=False):
    """CLUENER records written as brat's standoff files: per document, the texts one a line in NAME.txt and
    their entities as ``T`` lines (offsets into the document) in NAME.ann."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, records in docs.items():
        ann, offset = [], 0
        for text, entities in records:
            for e in entities:
                ann.append(f"T{len(ann) + 1}\t{e['type']} {offset + e['start']} {offset + e['end']}\t{e['text']}")
            offset += len(text) + (2 if crlf_counts_two and newline == "\r\n" else 1)
        (folder / f"{name}.txt").write_bytes(newline.join(text for text, _ in records).encode("utf-8") + newline.encode())
        (folder / f"{name}.ann").write_text("\n".join(ann) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def brat_records(datasets_dir):
    from zhbert.data import read_cluener

    cluener = read_cluener(str(datasets_dir / "cluener2020" / "dev.json")).select(range(40))
    return list(zip(cluener["text"], cluener["entities"]))


def _entities_of(records):
    return sorted((text, e["type"], e["start"], e["end"]) for text, entities in records for e in entities)


def test_a_folder_of_brat_files_trains_ner_and_reloads(brat_records, tiny_encoder, tmp_path):
    """brat's standoff files (name.txt and name.ann beside it), the form of brat, INCEpTION's export and the
    CCKS medical sets: before, a folder was "not a file" and an .ann file was read as CoNLL."""
    folder = tmp_path / "brat"
    _write_brat(folder, {"news-1": brat_records[:20], "news-2": brat_records[20:]})
    with open(folder / "news-1.ann", "a", encoding="utf-8") as f:  # what brat writes beside entities, and an entity in two pieces
        f.write("R1\tWorks_for Arg1:T1 Arg2:T2\nA1\tNegated T1\n#1\tAnnotatorNotes T1\tchecked\n")
        text = brat_records[0][0]
        f.write(f"T99\tname 0 1;2 3\t{text[0]} {text[2]}\n")
    data = task_data_from_files("ner", str(folder))
    assert _entities_triples_bio(data.train + data.dev) == _entities_of(brat_records)
    notes = " ".join(data.notes)
    assert "(brat)" in notes and "1 entities flat tags cannot hold left out (discontinuous 1), the first at news-1.ann:" in notes
    assert "annotations that are not entities not read: attributes 1, notes 1, relations 1" in notes
    for one in (folder / "news-2.ann", folder / "news-2.txt"):  # one document, named by either of its files
        assert _entities_triples_bio(
            sum(map(list, (lambda d: (d.train, d.dev))(task_data_from_files("ner", str(one)))), [])
        ) == _entities_of(brat_records[20:])
    r = _train("ner", folder, tiny_encoder, tmp_path / "run")
    assert r.returncode == 0, r.stderr[-3000:]
    text = brat_records[0][0]
    assert all(text[s.start : s.end] == s.text for s in zhbert.load(str(tmp_path / "run" / "model"))(text))


@pytest.mark.parametrize("crlf_counts_two", [False, True])
def test_brat_text_with_windows_line_ends_reads_with_either_offset_count(brat_records, tmp_path, crlf_counts_two):
    """brat's server counts a CRLF as one character, its older releases as two: both read the same entities."""
    folder = tmp_path / "brat"
    _write_brat(folder, {"doc": brat_records[:10]}, newline="\r\n", crlf_counts_two=crlf_counts_two)
    data = task_data_from_files("ner", str(folder))
    assert _entities_triples_bio(data.train + data.dev) == _entities_of(brat_records[:10])
    assert not any("\r" in r["text"] for r in data.train + data.dev)


def test_bad_brat_files_are_named_at_their_line(brat_records, tmp_path):
    folder = tmp_path / "brat"
    _write_brat(folder, {"doc": brat_records[:5]})
    ann = (folder / "doc.ann").read_text(encoding="utf-8").splitlines()
    first = ann[0].split("\t")
    for line, problem in (
        (f"{first[0]}\t{first[1]}\t{first[2]}X", "doc.txt holds .* not the mention"),
        (f"{first[0]}\t{first[1].split()[0]} 100000 100002\t{first[2]}", "ends at 100002, past the end of doc.txt"),
        (f"{first[0]} {first[1]} {first[2]}", "is not a brat annotation"),
        (f"{first[0]}\t{first[1].split()[0]} 5 5\t", "an end at or before its start"),
    ):
        (folder / "doc.ann").write_text("\n".join([line, *ann[1:]]) + "\n", encoding="utf-8")
        with pytest.raises(DataFormatError, match=rf"doc\.ann:1: .*{problem}"):
            task_data_from_files("ner", str(folder))
    (folder / "doc.txt").unlink()
    with pytest.raises(DataFormatError, match=r"doc\.txt: not found: brat keeps doc\.ann's text in doc\.txt"):
        task_data_from_files("ner", str(folder / "doc.ann"))


def test_a_training_file_of_one_example_says_why_it_cannot_train(tmp_path, datasets_dir):
    """One sentence, held out as the dev split, left "error: no training examples" with no word of why."""
    lines = _lines(datasets_dir / "peoples_daily_ner" / "example.dev", 200)
    one = tmp_path / "one.conll"
    blocks = "".join(lines).split("\n\n")
    one.write_text(next(b for b in blocks if "B-" in b) + "\n\n", encoding="utf-8")  # the first sentence with an entity
    with pytest.raises(DataFormatError, match=rf"{one}: 1 example: too few to hold out a dev split .*--validation-file"):
        task_data_from_files("ner", str(one))
    data = task_data_from_files("ner", str(one), validation_file=str(one))
    assert len(data.train) == 1


def test_weibo_ner_s_own_release_reads_its_position_digits_as_positions(datasets_dir, tmp_path):
    """Weibo NER as its authors release it writes each character with its position in its word (口0 腔1):
    as a --train-file it was refused with "expected one character per line ... reads with --format
    conll-words", and that format would have put the digits into every text."""
    from zhbert.data import read_char_tagged

    path = datasets_dir / "weibo_ner" / "weiboNER_2nd_conll.dev"
    data = task_data_from_files("ner", str(path), validation_file=str(path))
    assert any("written with its position in its word" in n for n in data.notes)
    expected = read_char_tagged(str(path), position_digits=True)
    assert [r["text"] for r in data.train] == expected["text"]
    assert data.train[0]["text"].startswith("口腔溃疡")  # not 口0腔1溃0疡1
    assert data.labels == ["O"] + [f"{p}-{t}" for t in sorted({e["type"] for es in expected["entities"] for e in es}) for p in "BI"]
    words = tmp_path / "words.conll"  # a word a line is still told its own format, not read as positions
    words.write_text("口腔 O\n溃疡 O\n\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"words\.conll:1: expected one character per line.*reads with --format conll-words"):
        task_data_from_files("ner", str(words))


def test_labelled_files_as_their_sets_ship_them_are_read_by_their_form(datasets_dir):
    """CLUE's emotion set is JSON lines named .txt, SMP2020-EWECT's virus set one JSON array in a .txt, and
    PAWS-X's and UER's TSVs name their columns on the first line (id, sentence1, sentence2, label; label,
    text_a). As --train-file each was refused as a TSV of the wrong column count or of swapped columns."""
    from zhbert import data as readers

    def read(task, name):
        path = str(datasets_dir / name)
        return task_data_from_files(task, path, validation_file=path)  # no hold-out: rows in the file's order

    emotion = read("tagging", "clue_emotion2020/valid.txt")
    expected = readers.read_clue_emotion(str(datasets_dir / "clue_emotion2020/valid.txt"))
    assert [r["text"] for r in emotion.train] == expected["text"]
    assert [emotion.labels[r["label"]] for r in emotion.train] == [expected.features["label"].int2str(i) for i in expected["label"]]
    virus = read("tagging", "smp2020_ewect_virus/virus_eval_labeled.txt")
    assert "(jsonl)" in virus.notes[0] and len(virus.train) == 2000 and set(virus.labels) >= {"angry", "happy", "sad"}
    paws = read("matching", "pawsx_zh/dev_2k.tsv")
    expected = readers.read_pawsx(str(datasets_dir / "pawsx_zh/dev_2k.tsv"))
    assert [(r["text_a"], r["text_b"]) for r in paws.train] == list(zip(expected["sentence1"], expected["sentence2"]))
    assert any("names the columns ('id | sentence1 | sentence2 | label'): read by name" in n for n in paws.notes)
    usual = read("tagging", "smp2020_ewect_usual/dev.tsv")
    expected = readers.read_smp2020_ewect(str(datasets_dir / "smp2020_ewect_usual/dev.tsv"))
    assert [r["text"] for r in usual.train] == [t.strip() for t in expected["text"]] and usual.labels == ["0", "1", "2", "3", "4", "5"]


def test_rows_with_nothing_to_learn_from_are_left_out_and_counted(datasets_dir, tmp_path):
    """ChnSentiCorp's hotel reviews, as SophonPlus ships them, hold one row with no review ("0,", line 6,376):
    the whole file was refused there. Now that row is left out and said; a row without a label likewise; a
    file in which no row has a label is refused (it cannot train)."""
    path = datasets_dir / "sophonplus_sentiment" / "ChnSentiCorp_htl_all.csv"
    data = task_data_from_files("tagging", str(path), validation_file=str(path))
    assert len(data.train) == 7765 and f"{path}: 1 rows with an empty text left out, the first at line 6376" in data.notes
    every = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines = every[:21] + every[-19:]  # the header, 20 positive and 19 negative reviews
    unlabelled = tmp_path / "some.csv"
    unlabelled.write_text(lines[0] + "," + lines[5].split(",", 1)[1] + "".join(lines[1:5] + lines[6:]), encoding="utf-8")
    data = task_data_from_files("tagging", str(unlabelled))
    assert f"{unlabelled}: 1 rows without a label left out, the first at line 2" in data.notes
    assert len(data.train) + len(data.dev) == 38
    none = tmp_path / "none.tsv"
    none.write_text("".join(line.split(",", 1)[1].rstrip("\n") + "\t\n" for line in lines[1:]), encoding="utf-8")
    with pytest.raises(DataFormatError, match=rf"{none}:1: no row has a label"):
        task_data_from_files("tagging", str(none))


def test_ccks_yidu_records_with_chinese_entity_types_train_and_reload(brat_records, tiny_encoder, tmp_path):
    """CCKS 2019's Yidu-S4K (the common Chinese medical NER set) writes {"originalText", "entities": [{"label_type",
    "start_pos", "end_pos"}]}, its types in Chinese: it was refused ("no 'text' string"). CLUENER's news written in
    that shape, with Chinese type names, trains, saves and reloads with those names."""
    chinese = {"name": "人名", "address": "地址", "organization": "组织", "company": "公司", "government": "政府"}
    path = tmp_path / "subtask1_training_part1.txt"  # the release's name: JSON lines in a .txt, a BOM first
    records = [
        {
            "originalText": text,
            "entities": [{"label_type": chinese.get(e["type"], "其他"), "start_pos": e["start"], "end_pos": e["end"]} for e in es],
        }
        for text, es in brat_records
    ]
    path.write_text("\ufeff" + "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    data = task_data_from_files("ner", str(path), validation_file=str(path))
    assert "B-人名" in data.labels and "I-地址" in data.labels
    expected = sorted((text, chinese.get(e["type"], "其他"), e["start"], e["end"]) for text, es in brat_records for e in es)
    assert _entities_triples_bio(data.dev) == expected
    r = _train("ner", path, tiny_encoder, tmp_path / "run")
    assert r.returncode == 0, r.stderr[-3000:]
    model = zhbert.load(str(tmp_path / "run" / "model"))
    assert "B-人名" in model.head.labels
    assert all(s.label in set(chinese.values()) | {"其他"} for s in model(brat_records[0][0]))


def test_an_xml_file_is_named_as_xml(datasets_dir):
    """NLPCC 2014's Weibo emotion XML as a --train-file was "1 tab-separated columns, expected 2"."""
    path = datasets_dir / "nlpcc2014_weibo_emotion" / "EmotionClassificationTest.xml"
    with pytest.raises(DataFormatError, match=rf"{re.escape(str(path))}:1: XML \('<\?xml .*--dataset nlpcc2014\)"):
        task_data_from_files("tagging", str(path))


def _marked_up(text, entities, form):
    """``text`` with its entities marked inside it, BosonNLP's way or YEDDA's."""
    out, pos = [], 0
    for e in sorted(entities, key=lambda e: e["start"]):
        out.append(text[pos : e["start"]])
        out.append(f"{{{{{e['type']}:{e['text']}}}}}" if form == "boson" else f"[@{e['text']}#{e['type']}*]")
        pos = e["end"]
    return "".join(out) + text[pos:]


@pytest.mark.parametrize("form", ["boson", "yedda"])
def test_entities_marked_inside_the_text_train_ner(brat_records, tiny_encoder, tmp_path, form):
    """BosonNLP's NER set ({{person_name:施宇翔}}) and YEDDA's export ([@施宇翔#PER*]) mark entities inside
    each line: read as CoNLL, the first line was "expected 2 columns". Now the marks are found by the form."""
    records = [(text, es) for text, es in brat_records if all(a["end"] <= b["start"] for a, b in zip(es, es[1:]))]
    records = [(text, sorted(es, key=lambda e: e["start"])) for text, es in records]
    path = tmp_path / "BosonNLP_NER_6C.txt"
    path.write_text("".join(_marked_up(text, es, form) + "\n" for text, es in records), encoding="utf-8")
    data = task_data_from_files("ner", str(path), validation_file=str(path))
    assert data.notes[0].endswith("(markup)") and [r["text"] for r in data.dev] == [text for text, _ in records]
    assert _entities_triples_bio(data.dev) == _entities_of(records)
    if form == "boson":
        r = _train("ner", path, tiny_encoder, tmp_path / "run")
        assert r.returncode == 0, r.stderr[-3000:]
    bad = tmp_path / "bad.txt"
    bad.write_text(
        _marked_up(*records[0], form) + "\n" + records[1][0][:5] + ("{{name:张三" if form == "boson" else "[@张三#name") + "\n",
        encoding="utf-8",
    )
    with pytest.raises(DataFormatError, match=r"bad\.txt:2: a mark opened and never closed"):
        task_data_from_files("ner", str(bad))
