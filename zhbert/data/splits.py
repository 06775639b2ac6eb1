"""Which texts are training text and which are evaluation text, for every dataset.

Pretraining may read the unlabelled text of *training* splits but never dev/test
text; recipes must not train on a sentence they are scored on. Both needs go
through this one registry, so a split is classified in exactly one place.

Also defines the People's Daily 1998-01 held-out sentences used to score
fill-mask (every ``PD_HELDOUT_EVERY``-th sentence): kept out of the pretraining
corpus by :func:`peoples_daily_documents`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .paths import dataset_path

__all__ = [
    "Split",
    "TRAIN_SPLITS",
    "EVAL_SPLITS",
    "iter_split_texts",
    "PD_HELDOUT_EVERY",
    "peoples_daily_heldout",
    "peoples_daily_documents",
]

PD_HELDOUT_EVERY = 25


@dataclass(frozen=True)
class Split:
    name: str  # dataset/split, e.g. "msra_ner/test"
    texts: Callable[[], Iterator[str]]


def _col(reader: Callable, *args, columns=("text",), **kwargs) -> Callable[[], Iterator[str]]:
    def it() -> Iterator[str]:
        ds = reader(*args, **kwargs)
        for c in columns:
            yield from ds[c]

    return it


def _path(*parts: str) -> str:
    return str(dataset_path(*parts))


def _registry() -> tuple[list[Split], list[Split]]:
    from . import (
        read_char_tagged,
        read_clue_emotion,
        read_cluener,
        read_lines,
        read_msra_ner,
        read_nlpcc2014_emotion,
        read_ocnli,
        read_pair_tsv,
        read_pawsx,
        read_segmented,
        read_smp2020_ewect,
        read_sts,
    )

    pair = ("sentence1", "sentence2")
    train = [
        Split("afqmc/train", lambda: _col(read_pair_tsv, _path("afqmc", "train.txt"), columns=pair)()),
        Split("cluener2020/train", lambda: _col(read_cluener, _path("cluener2020", "train.json"))()),
        Split("msra_ner/train", lambda: _col(read_msra_ner, _path("msra_ner", "dh_msra.zip"), "train")()),
        Split(
            "nlpcc2014_weibo_emotion/train",
            lambda: _col(
                read_nlpcc2014_emotion, _path("nlpcc2014_weibo_emotion", "Training data for Emotion Expression Identification.xml")
            )(),
        ),
        Split("nlpcc2016_weibo_cws/train", lambda: _col(read_segmented, _path("nlpcc2016_weibo_cws", "nlpcc2016-word-seg-train.dat"))()),
        Split("ocnli/train.50k", lambda: _col(read_ocnli, _path("ocnli", "train.50k.json"), columns=pair)()),
        Split("resume_ner/train", lambda: _col(read_char_tagged, _path("resume_ner", "train.char.bmes"), merge_split_spans=True)()),
        Split("smp2020_ewect_usual/train", lambda: _col(read_smp2020_ewect, _path("smp2020_ewect_usual", "train.tsv"))()),
        Split("smp2020_ewect_virus/train", lambda: _col(read_smp2020_ewect, _path("smp2020_ewect_virus", "virus_train.txt"))()),
        Split("sts_b_zh/train", lambda: _col(read_sts, _path("sts_b_zh", "sts-b-train.txt"), columns=pair)()),
        Split(
            "weibo_ner/train",
            lambda: _col(read_char_tagged, _path("weibo_ner", "weiboNER_2nd_conll.train"), position_digits=True, repair_bio=True)(),
        ),
    ]
    sighan = [
        Split(f"sighan2005_icwb2/{c}_test", lambda c=c, g=g: _col(read_segmented, _path("sighan2005_icwb2", f"{c}_{g}.utf8"))())
        for c, g in (("pku", "test_gold"), ("msr", "test_gold"), ("as", "testing_gold"), ("cityu", "test_gold"))
    ]
    evals = sighan + [
        Split("afqmc/dev", lambda: _col(read_pair_tsv, _path("afqmc", "dev.txt"), columns=pair)()),
        Split("afqmc/test", lambda: _col(read_pair_tsv, _path("afqmc", "test.txt"), has_label=False, columns=pair)()),
        Split("bq_corpus/dev", lambda: _col(read_pair_tsv, _path("bq_corpus", "dev.tsv"), columns=pair)()),
        Split("bq_corpus/test", lambda: _col(read_pair_tsv, _path("bq_corpus", "test.tsv"), has_label=False, columns=pair)()),
        Split("clue_emotion2020/valid", lambda: _col(read_clue_emotion, _path("clue_emotion2020", "valid.txt"))()),
        Split("clue_emotion2020/test", lambda: _col(read_clue_emotion, _path("clue_emotion2020", "test.txt"))()),
        Split("cluener2020/dev", lambda: _col(read_cluener, _path("cluener2020", "dev.json"))()),
        Split("cluener2020/test", lambda: _col(read_cluener, _path("cluener2020", "test.json"))()),
        Split("lcqmc/dev", lambda: _col(read_pair_tsv, _path("lcqmc", "dev.txt"), columns=pair)()),
        Split("lcqmc/test", lambda: _col(read_pair_tsv, _path("lcqmc", "test.txt"), columns=pair)()),
        Split("msra_ner/test", lambda: _col(read_msra_ner, _path("msra_ner", "dh_msra.zip"), "test")()),
        Split("msra_ner/test_bio", lambda: _col(read_char_tagged, _path("msra_ner", "msra_test_bio.txt"), sep="\t")()),
        Split(
            "nlpcc2014_weibo_emotion/expression_test",
            lambda: _col(read_nlpcc2014_emotion, _path("nlpcc2014_weibo_emotion", "ExpressionTest.xml"))(),
        ),
        Split(
            "nlpcc2014_weibo_emotion/classification_test",
            lambda: _col(read_nlpcc2014_emotion, _path("nlpcc2014_weibo_emotion", "EmotionClassificationTest.xml"))(),
        ),
        Split("nlpcc2016_weibo_cws/dev", lambda: _col(read_segmented, _path("nlpcc2016_weibo_cws", "nlpcc2016-wordseg-dev.dat"))()),
        Split(
            "nlpcc2016_weibo_cws/test",
            lambda: _col(read_lines, _path("nlpcc2016_weibo_cws", "nlpcc2016-wordseg-test.dat"), keep_empty=False)(),
        ),
        Split("ocnli/dev", lambda: _col(read_ocnli, _path("ocnli", "dev.json"), columns=pair)()),
        Split("ocnli/test", lambda: _col(read_ocnli, _path("ocnli", "test.json"), columns=pair)()),
        Split("pawsx_zh/dev", lambda: _col(read_pawsx, _path("pawsx_zh", "dev_2k.tsv"), columns=pair)()),
        Split("pawsx_zh/test", lambda: _col(read_pawsx, _path("pawsx_zh", "test_2k.tsv"), columns=pair)()),
        Split("peoples_daily_ner/dev", lambda: _col(read_char_tagged, _path("peoples_daily_ner", "example.dev"))()),
        Split("peoples_daily_ner/test", lambda: _col(read_char_tagged, _path("peoples_daily_ner", "example.test"))()),
        Split("resume_ner/dev", lambda: _col(read_char_tagged, _path("resume_ner", "dev.char.bmes"))()),
        Split("resume_ner/test", lambda: _col(read_char_tagged, _path("resume_ner", "test.char.bmes"))()),
        Split("smp2020_ewect_usual/dev", lambda: _col(read_smp2020_ewect, _path("smp2020_ewect_usual", "dev.tsv"))()),
        Split("smp2020_ewect_usual/test", lambda: _col(read_smp2020_ewect, _path("smp2020_ewect_usual", "test.tsv"))()),
        Split("smp2020_ewect_virus/eval", lambda: _col(read_smp2020_ewect, _path("smp2020_ewect_virus", "virus_eval_labeled.txt"))()),
        Split("smp2020_ewect_virus/test", lambda: _col(read_smp2020_ewect, _path("smp2020_ewect_virus", "virus_test_labeled_uer.tsv"))()),
        Split("sts_b_zh/dev", lambda: _col(read_sts, _path("sts_b_zh", "sts-b-dev.txt"), columns=pair)()),
        Split("sts_b_zh/test", lambda: _col(read_sts, _path("sts_b_zh", "sts-b-test.txt"), columns=pair)()),
        Split(
            "weibo_ner/dev",
            lambda: _col(read_char_tagged, _path("weibo_ner", "weiboNER_2nd_conll.dev"), position_digits=True, repair_bio=True)(),
        ),
        Split(
            "weibo_ner/test",
            lambda: _col(read_char_tagged, _path("weibo_ner", "weiboNER_2nd_conll.test"), position_digits=True, repair_bio=True)(),
        ),
        Split("peoples_daily_1998/heldout", lambda: iter(peoples_daily_heldout())),
    ]
    return train, evals


def _split_list(kind: str) -> list[Split]:
    train, evals = _registry()
    return train if kind == "train" else evals


TRAIN_SPLITS = "train"
EVAL_SPLITS = "eval"


def iter_split_texts(kind: str) -> Iterator[tuple[str, str]]:
    """``(split name, text)`` for every train (``"train"``) or dev/test (``"eval"``) split."""
    if kind not in (TRAIN_SPLITS, EVAL_SPLITS):
        raise ValueError(f"kind must be 'train' or 'eval', got {kind!r}")
    for split in _split_list(kind):
        for text in split.texts():
            if text and text.strip():
                yield split.name, text


def peoples_daily_heldout() -> list[str]:
    """People's Daily 1998-01 sentences kept out of pretraining (fill-mask evaluation)."""
    return [text for text, _ in peoples_daily_heldout_words()]


def peoples_daily_heldout_words() -> list[tuple[str, list[str]]]:
    """The held-out sentences with their gold segmentation: ``(text, words)``."""
    from .peoples_daily import read_peoples_daily

    pd = read_peoples_daily()
    return [(t, w) for i, (t, w) in enumerate(zip(pd["text"], pd["words"])) if i % PD_HELDOUT_EVERY == 0 and len(t) >= 8]


def peoples_daily_documents(exclude: Callable[[str], bool] | None = None) -> Iterator[tuple[str, str, int]]:
    """People's Daily paragraphs for pretraining, held-out sentences removed.

    Yields ``(paragraph text, sentence ids, number of sentences dropped)``;
    ``exclude(sentence)`` may drop more (e.g. sentences found in an eval set).
    """
    from .peoples_daily import read_peoples_daily

    pd = read_peoples_daily()
    current, kept, dropped = None, [], 0
    for i, (sid, text) in enumerate(zip(pd["id"], pd["text"])):
        para = sid.split("-")[0]
        if para != current:
            if kept or dropped:
                yield "".join(kept), current, dropped
            current, kept, dropped = para, [], 0
        if (i % PD_HELDOUT_EVERY == 0 and len(text) >= 8) or (exclude is not None and exclude(text)):
            dropped += 1
        else:
            kept.append(text)
    if kept or dropped:
        yield "".join(kept), current, dropped
