"""What every recipe shares: arguments, model set-up, examples, results files.

Each recipe module (``zhbert/recipes/<name>.py``) reads top to bottom (arguments,
data, model, train, evaluate, save); the pieces they have in common live here so
each stays short.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, fields, replace
from pathlib import Path

import torch

from ..heads import HeadConfig, ZhBertForTask, load_head, new_head, save_head, window_size
from ..heads.inputs import token_tags_from_chars
from ..heads.io import load_saved_head
from ..options import flag as option_flag
from ..tags import entity_types
from ..tokenizer import encode, load_tokenizer
from ..training.finetune import FinetuneConfig
from .arguments import RecipeArguments

logger = logging.getLogger("zhbert")

__all__ = [
    "load_splits",
    "fit",
    "dev_scorer",
    "headline_value",
    "head_config",
    "finetune_config",
    "prepare_model",
    "char_tag_examples",
    "train_char_tagger",
    "predict_test_spans",
    "check_unk_share",
    "classification_examples",
    "pair_examples",
    "write_results",
    "result_record",
    "subsample",
    "consecutive_groups",
    "document_examples",
]


def subsample(rows: list[dict], n: int | None) -> list[dict]:
    return rows[:n] if n else rows


def load_splits(args: RecipeArguments, task: str):
    """The dataset's splits, cut to ``--max-train-samples`` / ``--max-eval-samples``."""
    from ..data.tasks import load_task_data

    if args.evaluate_only and (args.train_file or args.validation_file):
        given = "--train-file" if args.train_file else "--validation-file"
        raise ValueError(
            f"{given} is read to train; --evaluate-only {args.evaluate_only} trains nothing: "
            "give the file to score as --test-file (the whole file is scored)"
        )
    if args.evaluate_only and args.test_file:
        from ..data.user_files import test_data_from_file
        from ..heads.io import saved_head_settings

        head = saved_head_settings(_encoder_path(args.evaluate_only), pairs=task == "matching")
        data = test_data_from_file(
            task, args.test_file, head, args.evaluate_only, args.format, args.text_column, args.label_column, args.label_separator,
            args.entity_map,
        )  # fmt: skip
    elif args.train_file:
        from ..data.user_files import task_data_from_files

        data = task_data_from_files(
            task, args.train_file, args.validation_file, args.test_file, args.format, args.validation_share, args.seed,
            args.text_column, args.label_column, args.label_separator, args.entity_map,
        )  # fmt: skip
    elif args.validation_file or args.test_file:
        raise ValueError(
            "--validation-file and --test-file come with --train-file (your own data), or --test-file with --evaluate-only MODEL "
            "(a saved model scored on your file); a --dataset has its own splits"
        )
    else:
        if args.entity_map:
            raise ValueError("--entity-map renames the types of your own files (--train-file, or --test-file with --evaluate-only)")
        data = load_task_data(task, args.dataset)
    if args.score_on not in ("test", "dev"):
        raise ValueError(f"--score-on must be test or dev, got {args.score_on!r}")
    if args.add_dev_to_train:
        data = _with_dev_in_train(args, data)
    if args.score_on == "dev":  # the dev split takes the test split's place; a second test set is not scored
        note = f"scored on the dev split (--score-on dev), not on {data.eval_split}"
        data = replace(data, test=data.dev, extra_test=[], eval_split="dev", notes=[*data.notes, note])
    train = original = subsample(data.train, args.max_train_samples)
    if args.mention_replacement:
        train, data = _with_mention_replacement(args, task, train, data)
    elif args.mention_names:
        raise ValueError("--mention-names gives the names --mention-replacement brings in: add --mention-replacement 1")
    if args.mention_runs:
        train, data = _with_mention_runs(args, task, original, train, data)
    if args.extra_train:
        train, data = _with_extra_train(args.extra_train, task, train, data, args.extra_train_weight, args.extra_train_criterion)
    elif args.extra_train_weight != 1.0 or args.extra_train_criterion:
        flag = "--extra-train-weight weighs" if args.extra_train_weight != 1.0 else "--extra-train-criterion names the standard of"
        raise ValueError(f"{flag} the sentences of --extra-train: give the file")
    if args.evaluate_only and not args.test_file and task in ("tagging", "matching"):  # after every refusal of a training option
        data = _in_model_order(data, args.evaluate_only)
    n = args.max_eval_samples
    return replace(
        data,
        train=train,
        dev=subsample(data.dev, n),
        test=subsample(data.test, n),
        extra_test=subsample(data.extra_test, n),
    )


def _in_model_order(data, model: str):
    """``data`` with its labels in the order of the saved ``model``'s, each row's label index mapped: a
    classifier's scores compare indices, and a dataset's order need not be the model's. A label the
    model lacks is an error naming both lists. Token tasks compare tags by name and keep theirs."""
    from ..heads.io import saved_head_settings

    head = saved_head_settings(_encoder_path(model))
    if head.kind == "token" or list(data.labels) == list(head.labels):
        return data
    missing = [label for label in data.labels if label not in head.labels]
    if missing and len(missing) == len(data.labels) == len(head.labels):
        # no name in common (a model trained on a file's 0 / 1 scoring a set's different / paraphrase):
        # read by position, as the two were written, and said
        note = f"labels compared by position: {model}'s ({', '.join(head.labels)}) as {data.name}'s ({', '.join(data.labels)})"
        return replace(data, notes=[*data.notes, note])
    if missing:
        raise ValueError(f"{data.name}'s labels {missing} are not among {model}'s ({', '.join(head.labels)})")
    to_model = [head.labels.index(label) for label in data.labels]

    def mapped(rows):
        if data.multi_label:
            return [{**r, "labels": sorted(to_model[i] for i in r["labels"])} for r in rows]
        return [{**r, "label": to_model[r["label"]]} for r in rows]

    note = f"labels read in {model}'s order ({', '.join(head.labels)})"
    return replace(
        data, labels=list(head.labels), train=mapped(data.train), dev=mapped(data.dev), test=mapped(data.test),
        extra_test=mapped(data.extra_test), notes=[*data.notes, note],
    )  # fmt: skip


def _with_dev_in_train(args: RecipeArguments, data):
    """The dev split's rows appended to the training split's, and no dev split left: the final fit
    after the settings were chosen on dev (as Flair's CoNLL figures were trained)."""
    if args.score_on == "dev" or args.best_epoch_on_dev:
        flag = "--score-on dev" if args.score_on == "dev" else "--best-epoch-on-dev"
        raise ValueError(f"--add-dev-to-train trains on the dev split: {flag} cannot score on it as well")
    if data.eval_split == "dev":
        raise ValueError(f"--add-dev-to-train: {data.name} is scored on its dev split (its test split has no labels)")
    if not data.dev:
        raise ValueError(f"--add-dev-to-train: {data.name} has no dev split")
    if data.multi_label:
        raise ValueError(f"--add-dev-to-train: {data.name}'s label thresholds are tuned on its dev split, which must stay unseen")
    if args.evaluate_only:
        raise ValueError(f"--add-dev-to-train is a training option: --evaluate-only {args.evaluate_only} trains nothing")
    note = f"trained on train + dev (--add-dev-to-train): {len(data.train):,} + {len(data.dev):,} examples"
    words = data.train_words | {w for r in data.dev for w in r["words"]} if data.train_words is not None else None
    return replace(data, train=data.train + data.dev, dev=[], train_words=words, notes=[*data.notes, note])


def _check_mention_option(args: RecipeArguments, task: str, flag: str, does: str):
    """Both mention options rewrite training entities: ``flag`` is the option, ``does`` what it does."""
    if task != "ner":
        raise ValueError(f"{flag} {does}: ner only, not {task}")
    if args.evaluate_only:
        raise ValueError(f"{flag} is a training option: --evaluate-only {args.evaluate_only} trains nothing")


def _with_mention_replacement(args: RecipeArguments, task: str, train: list[dict], data):
    """The training rows plus ``--mention-replacement`` copies of them with entities swapped (ner only)."""
    from ..data.mention_replacement import mention_replacement

    _check_mention_option(args, task, "--mention-replacement", "swaps entities of the same type")
    pool = _mention_names(args.mention_names, data) if args.mention_names else None
    copies = mention_replacement(train, data.scheme, args.mention_replacement, args.seed, pool)
    passes = f"{args.mention_replacement} pass{'es' if args.mention_replacement > 1 else ''}"
    if pool is None:
        drawn = "each entity swapped with probability 0.5 for a training entity of its type"
    else:
        listed = ", ".join(f"{len(names):,} {typ}" for typ, names in sorted(pool.items()))
        drawn = f"each {'/'.join(sorted(pool))} entity swapped with probability 0.5 for a name of {args.mention_names} ({listed})"
    note = f"mention replacement: {len(copies):,} copies of training sentences, {drawn} ({passes}, seed {args.seed})"
    return train + copies, replace(data, notes=[*data.notes, note])


def _mention_names(path: str, data) -> dict[str, list[str]]:
    """``--mention-names``: the file's names by type; a line without a type, with a type the dataset
    lacks, or with whitespace in its name is an error at its line."""
    from ..dictionary import read_dictionary
    from ..errors import DataFormatError

    names = read_dictionary(path)
    types = entity_types(data.labels)
    pool: dict[str, list[str]] = {}
    for entry in names:
        if entry.tag not in types:
            problem = "has no entity type" if entry.tag is None else f"has the type {entry.tag!r}"
            what = f"{entry.word!r} {problem}: write name<TAB>TYPE, TYPE one of {', '.join(types)} ({data.name}'s types)"
            raise DataFormatError(path, entry.line, what)
        if any(ch.isspace() for ch in entry.word):  # the training readers keep no whitespace: a tag would fall on nothing
            raise DataFormatError(
                path, entry.line, f"{entry.word!r} holds whitespace, which no training sentence does: write the name without it"
            )
        pool.setdefault(entry.tag, []).append(entry.word)
    if not pool:
        raise DataFormatError(path, None, "no names: write one name<TAB>TYPE a line")
    return {typ: sorted(words) for typ, words in pool.items()}


def _with_mention_runs(args: RecipeArguments, task: str, original: list[dict], train: list[dict], data):
    """``train`` plus ``--mention-runs`` copies of the ``original`` training rows (ner only)."""
    from ..data.mention_replacement import RUN_LENGTHS, mention_runs

    _check_mention_option(args, task, "--mention-runs", "writes entities of one type back to back")
    kinds = [k.strip() for k in args.mention_runs.split(",") if k.strip()]
    try:
        copies = mention_runs(original, data.scheme, kinds, args.seed)
    except ValueError as e:
        raise ValueError(f"--mention-runs {args.mention_runs}: {e}") from None
    note = (
        f"mention runs: {len(copies):,} copies of training sentences, one {'/'.join(kinds)} entity in each replaced by "
        f"{RUN_LENGTHS[0]}-{RUN_LENGTHS[1]} training entities of its type back to back (seed {args.seed})"
    )
    return train + copies, replace(data, notes=[*data.notes, note])


def _with_extra_train(path: str, task: str, train: list[dict], data, weight: float = 1.0, criterion: str | None = None):
    """The training rows plus an extra file's, and the data's notes saying so: for ``cws`` a segmented
    file (words separated by spaces), for ``ner`` a character-tagged one in the dataset's scheme and
    types (``corpora/silver_ner.py`` writes one), for ``matching`` and ``tagging`` a TSV or CSV file
    as ``--train-file`` reads it, with the dataset's labels (``corpora/paraphrase_pairs.py`` writes
    one); ``weight`` below 1: each extra row's loss counts that much, a training row's 1;
    ``criterion``: the annotation standard the file follows."""
    from ..data import read_char_tagged, read_segmented
    from ..data.tasks import char_tag_rows, cws_rows

    if task == "cws":
        extra = read_segmented(path)
        rows = cws_rows(extra["text"], extra["words"])
    elif task == "ner":  # the file's tags must be the dataset's own: another type or scheme is an error at its line
        types = entity_types(data.labels)
        rows = char_tag_rows(read_char_tagged(path, scheme=data.scheme, types=types))
    elif task in ("matching", "tagging"):
        if data.regression or data.multi_label:
            kind = "a similarity score" if data.regression else "several labels"
            raise ValueError(f"--extra-train adds labelled rows: {data.name} gives each row {kind}, which a TSV row of one label cannot")
        if weight != 1.0:
            raise ValueError(f"--extra-train-weight weighs the sentences of token heads (cws, ner); {task} rows weigh 1")
        if criterion:  # a segment id per standard exists only in token heads: it would be ignored here
            raise ValueError(f"--extra-train-criterion names a token head's annotation standard (cws, ner), not {task}'s")
        from ..data.user_files import labelled_rows

        rows = labelled_rows(task, path, data.labels, f"{data.name}'s labels")
    else:
        reads = "segmented text (cws), character-tagged text (ner) or labelled rows (matching, tagging)"
        raise ValueError(f"--extra-train reads {reads}, not {task}")
    if task == "matching":
        note = f"extra train: {len(rows):,} pairs from {path}"
    else:
        note = f"extra train: {len(rows):,} sentences ({sum(len(r['text']) for r in rows):,} characters) from {path}"
    if criterion:
        rows = [{**r, "criterion": criterion} for r in rows]
        note += f", standard {criterion}"
    if weight != 1.0:
        if not 0.0 < weight <= 1.0:
            raise ValueError(f"--extra-train-weight must be above 0 and at most 1 (a gold sentence's weight), got {weight}")
        train, rows = [{**r, "weight": 1.0} for r in train], [{**r, "weight": weight} for r in rows]
        note += f", each weighing {weight:g} in the loss"
    words = data.train_words | {w for r in rows for w in r.get("words", ())} if data.train_words is not None else None
    return train + rows, replace(data, notes=[*data.notes, note], train_words=words)


def fit(args: RecipeArguments, data, model: ZhBertForTask, tokenizer, examples, evaluate=None):
    """Fine-tune on ``examples()`` unless the recipe only evaluates a saved model; returns ``data``,
    with a note of the weights kept when ``--best-epoch-on-dev`` scored each epoch on dev with the
    recipe's ``evaluate`` or ``--average-last-epochs`` averaged the last epochs."""
    if args.evaluate_only:
        return data
    from ..training.finetune import AverageLastEpochs, KeepBestEpoch, fine_tune
    from ..training.lock import output_lock

    cfg = finetune_config(args)  # its errors before the examples are built
    if args.best_epoch_on_dev and args.average_last_epochs:
        raise ValueError("--best-epoch-on-dev and --average-last-epochs each choose the final weights: give one")
    at_epoch_end = None
    if args.best_epoch_on_dev:
        at_epoch_end = KeepBestEpoch(model, dev_scorer(args, data, model, tokenizer, evaluate))
    elif args.average_last_epochs:
        at_epoch_end = AverageLastEpochs(model, args.average_last_epochs)
    if args.carried_at_encoder_lr and not getattr(model, "carried_head_parameters", ()):
        raise ValueError(f"--carried-at-encoder-lr: --encoder {args.encoder} is not a zhbert task folder whose head layers carry over")
    with output_lock(args.output_dir):  # one training run per output folder
        train = examples()
        check_unk_share(train, tokenizer, args.max_unk_rate)
        if args.distill_from:
            train = _with_teacher(args, model, tokenizer, train)
        fine_tune(model, tokenizer, train, cfg, at_epoch_end, run_key=_run_key(args, model))
    if args.distill_from:
        mix = f"--distill-alpha {args.distill_alpha}, --distill-temperature {args.distill_temperature}"
        note = f"soft targets from {args.distill_from} ({mix})"
        data = replace(data, notes=[*data.notes, note])
    if isinstance(at_epoch_end, KeepBestEpoch) and at_epoch_end.scores:
        scores = at_epoch_end.scores
        per_epoch = ", ".join(f"{100 * v:.2f}" for v in scores)
        note = f"epoch chosen on dev (--best-epoch-on-dev): {at_epoch_end.best_epoch} of {len(scores)}; dev score per epoch: {per_epoch}"
    elif isinstance(at_epoch_end, AverageLastEpochs) and at_epoch_end.states:
        n, epochs = len(at_epoch_end.states), at_epoch_end.epochs
        note = f"weights: the mean of epochs {epochs - n + 1}-{epochs} of {epochs} (--average-last-epochs)"
    else:
        return data
    logger.info(note)
    return replace(data, notes=[*data.notes, note])


def _run_key(args: RecipeArguments, model: ZhBertForTask) -> dict:
    """What defines a training run beyond its schedule and examples (``--save-steps``' resume checks it):
    where the weights start, the head, and the settings read during training."""
    start = "random init" if args.random_init else args.encoder
    during = {k: getattr(args, k) for k in ("init_seed", "best_epoch_on_dev", "average_last_epochs", "distill_from")}
    return {"start": start, "head": asdict(model.head), **during}


def _with_teacher(args: RecipeArguments, model: ZhBertForTask, tokenizer, train: list[dict]) -> list[dict]:
    """``--distill-from``: the training examples with the teacher's tag logits (zhbert.training.distillation)."""
    from ..training.distillation import check_teacher, with_teacher_logits

    path = _encoder_path(args.distill_from)
    teacher = load_head(path)
    check_teacher(teacher, load_tokenizer(path), model, tokenizer, path)
    if torch.cuda.is_available():  # one pass of a large teacher over the training set: minutes on a CPU, seconds here
        teacher.to("cuda")
    logger.info("--distill-from %s: the teacher reads %d training examples on %s", path, len(train), teacher.device)
    try:
        return with_teacher_logits(teacher, model, tokenizer, train, temperature=args.distill_temperature)
    finally:
        del teacher
        if torch.cuda.is_available():
            torch.cuda.empty_cache()  # the student trains in the memory the teacher held


def dev_scorer(args: RecipeArguments, data, model: ZhBertForTask, tokenizer, evaluate):
    """The recipe's headline score of ``model`` on the dev split, as a function of no arguments.
    Refuses when the split scored at the end is that dev split: the chosen epoch would be scored
    on the very sentences that chose it."""
    if evaluate is None:
        raise ValueError("--best-epoch-on-dev: this recipe cannot score an epoch")
    if data.eval_split == "dev":
        why = "--score-on dev" if args.score_on == "dev" else f"{data.name} has no labelled test split"
        raise ValueError(
            f"--best-epoch-on-dev chooses the epoch on the dev split, and the final score is on dev too ({why}): it would be optimistic"
        )
    if not data.dev:
        raise ValueError(f"--best-epoch-on-dev: {data.name} has no dev split to choose an epoch on")
    dev = replace(data, test=data.dev, extra_test=[], eval_split="dev")

    def score() -> float:
        metrics, headline = evaluate(args, dev, model, tokenizer)
        return headline_value(metrics, headline)

    return score


def headline_value(metrics: dict, headline: str) -> float:
    """``metrics["a"]["b"]`` for the headline ``"a.b"``."""
    value = metrics
    for key in headline.split("."):
        value = value[key]
    return value


def check_unk_share(examples: list[dict], tokenizer, limit: float) -> float:
    """Refuse to fine-tune on text the encoder's vocabulary turns into ``[UNK]``."""
    unk = tokenizer.unk_token_id
    ids = [i for e in examples for key in ("input_ids", "input_ids_b") for i in e.get(key, ())]
    rate = sum(i == unk for i in ids) / len(ids) if ids else 0.0
    if rate > limit:
        raise ValueError(
            f"{rate:.1%} of the {len(ids):,} training tokens are [UNK] under this encoder's vocabulary (limit {limit:.0%}): "
            "the vocabulary cannot read this text; use an encoder with a Chinese vocabulary, or pass --max-unk-rate 1 to train anyway"
        )
    return rate


def _encoder_path(name: str) -> str:
    from ..models_registry import resolve_model_path

    return str(resolve_model_path(name))


def init_seed(args: RecipeArguments) -> int:
    """The seed of a run's first weights: its own (``--init-seed``), so that runs differing only in ``--seed``
    can share them (the setting of a model soup), or ``--seed``."""
    if args.init_seed is None:
        return args.seed
    if args.evaluate_only:
        raise ValueError(f"--init-seed draws the first weights of a model to train; {args.evaluate_only} is only scored")
    return args.init_seed


def prepare_model(args: RecipeArguments, head: HeadConfig) -> tuple[ZhBertForTask, object]:
    """The model to train (or the saved one to evaluate) and its tokenizer."""
    torch.manual_seed(init_seed(args))
    if args.evaluate_only:
        if args.static_embeddings:
            raise ValueError("--static-embeddings starts the word-feature tables of a head to train; --evaluate-only trains nothing")
        for flag in ("classifier_dropout", "hidden_dropout"):
            if getattr(args, flag) is not None:
                raise ValueError(f"{option_flag(flag)} is a training option: dropout is off when {args.evaluate_only} is scored")
        if args.distill_from:
            raise ValueError(f"--distill-from is a training option: {args.evaluate_only} is only scored")
        if args.carry_output_layer:
            raise ValueError(f"--carry-output-layer starts training from --encoder's head; {args.evaluate_only} is only scored")
        if args.lexicon_words:
            raise ValueError(
                f"--lexicon-words is a training option: {args.evaluate_only} reads the word list it was trained with from its folder"
            )
        if args.criteria:
            raise ValueError(f"--criteria is a training option: {args.evaluate_only} reads the criteria it was trained with from its head")
        folder = _encoder_path(args.evaluate_only)  # a folder, or a bundled model's name ("ner")
        model = load_saved_head(folder, pairs=head.kind == "pair")  # zhbert's, or a plain transformers classifier's
        model.head = evaluated_head(args, model.head, args.evaluate_only)
        return model, load_tokenizer(folder)
    if args.carry_output_layer and args.random_init:
        raise ValueError("--carry-output-layer keeps --encoder's trained head; --random-init draws every weight anew: give one")
    path = _encoder_path(args.encoder)
    model = new_head(path, head, args.lexicon_words, args.classifier_dropout, args.hidden_dropout, args.carry_output_layer)
    if args.random_init:
        fresh = type(model)(model.config, model.head)  # post_init draws every weight anew
        if model.word_features is not None:
            fresh.word_features.lexicon = model.word_features.lexicon
            fresh.lexicon_words = getattr(model, "lexicon_words", None)
        model = fresh
        if head.mode == "frozen":
            model.freeze_encoder()
    tokenizer = load_tokenizer(path)
    if args.static_embeddings:
        from ..static_embeddings import seed_word_features

        print(f"word features seeded from {args.static_embeddings}: {seed_word_features(model, tokenizer, args.static_embeddings)}")
    return model, tokenizer


# How a saved head reads a text: may change when a saved model is scored (e.g. a head trained
# through windows, read truncated), as bench/LOG.md's long-text cross-reads do.
READING_OPTIONS = ("window", "stride", "window_align", "truncate")
# What a head was trained as: fixed in its weights, so a different value at evaluation is an error.
TRAINED_OPTIONS = (
    "mode", "representation", "crf", "bilstm_layers", "bilstm_hidden", "bilstm_skip", "window_pool",
    "pair_encoding", "lexicon", "lexicon_dim", "bigram_dim", "bigram_buckets",
)  # fmt: skip


def evaluated_head(args: RecipeArguments, saved: HeadConfig, folder: str) -> HeadConfig:
    """``saved`` (the head of ``--evaluate-only folder``), reading text as the command line asks.

    Options left at their defaults keep the saved head's values. A reading option given
    (``--truncate``, ``--window``, ``--stride``, ``--window-align``) replaces the saved one; a
    training option that contradicts the saved head is refused rather than silently ignored,
    so the scores in ``metrics.json`` are those of the flags it records."""
    defaults = {f.name: f.default for f in fields(RecipeArguments)}
    for name in TRAINED_OPTIONS:
        given = getattr(args, name)
        if given != defaults[name] and given != getattr(saved, name):
            raise ValueError(
                f"{option_flag(name)} {given}: {folder} was trained with {name}={getattr(saved, name)!r}, which its weights fix; "
                f"evaluating a saved model can change how it reads text (--{', --'.join(READING_OPTIONS)}), not how it was trained"
            )
    asked = {name: getattr(args, name) for name in READING_OPTIONS if getattr(args, name) != defaults[name]}
    return replace(saved, **asked)


def char_tag_examples(tokenizer, rows: list[dict], labels: list[str], scheme: str, criteria: list[str] = ()) -> list[dict]:
    """Token examples of character-tagged rows: each token tagged by the span its first character lies in;
    with ``criteria`` (a head trained on several standards) each also carries its row's standard as a
    segment id, and a row that names none is an error: it would silently train the default standard."""
    index = {l: i for i, l in enumerate(labels)}
    if criteria:
        from ..heads.criteria import criterion_ids

        missing = next((k for k, r in enumerate(rows) if not r.get("criterion")), None)
        if missing is not None:
            raise ValueError(
                f"training sentence {missing} ({rows[missing]['text'][:20]!r}) names no annotation standard: --criteria needs a "
                "dataset that gives each sentence one (cws news+weibo, ner msra+pd), and --extra-train needs --extra-train-criterion"
            )
        types = criterion_ids(list(criteria), [r["criterion"] for r in rows], where="training sentence")
    out = []
    for k, (r, enc) in enumerate(zip(rows, encode(tokenizer, [r["text"] for r in rows]))):
        out.append({"input_ids": list(enc.ids), "tags": token_tags_from_chars(enc.offsets, [index[t] for t in r["tags"]], labels, scheme)})
        if "weight" in r:  # --extra-train-weight: the row's share of the loss
            out[-1]["weight"] = r["weight"]
        if criteria:
            out[-1]["criterion"] = types[k]
    return out


def classification_examples(tokenizer, rows: list[dict], num_labels: int, multi_label: bool = False) -> list[dict]:
    out = []
    for r, enc in zip(rows, encode(tokenizer, [r["text"] for r in rows])):
        label = [float(i in r["labels"]) for i in range(num_labels)] if multi_label else r["label"]
        out.append({"input_ids": list(enc.ids), "label": label})
    return out


def pair_examples(tokenizer, rows: list[dict]) -> list[dict]:
    a = encode(tokenizer, [r["text_a"] for r in rows])
    b = encode(tokenizer, [r["text_b"] for r in rows])
    return [{"input_ids": list(x.ids), "input_ids_b": list(y.ids), "label": r["label"]} for r, x, y in zip(rows, a, b)]


def check_pair_lengths(model: ZhBertForTask, tokenizer, splits: dict[str, list[dict]]) -> None:
    """Refuse, before any training, pairs that do not fit a cross-encoder's window.

    ``[CLS] a [SEP] b [SEP]`` cannot be windowed, and cutting it is the caller's choice: so
    every split that will be read is checked up front and counted, rather than the first
    long pair stopping a run minutes into training or after it, during evaluation."""
    head = model.head
    if head.kind != "pair" or head.pair_encoding != "cross" or head.truncate:
        return
    limit = window_size(head, model.config)
    found, seen = [], []
    for name, rows in splits.items():
        if not rows or rows in seen:  # a set scored on its dev split has it as dev and test: count it once
            continue
        seen.append(rows)
        lengths = [
            (len(x) + len(y) + 3, row)
            for row, x, y in zip(rows, encode(tokenizer, [r["text_a"] for r in rows]), encode(tokenizer, [r["text_b"] for r in rows]))
        ]
        long = [(n, row) for n, row in lengths if n > limit]
        if long:
            n, row = max(long, key=lambda item: item[0])
            where = f", id {row['id']}" if "id" in row else ""
            found.append(f"{len(long):,} of {len(rows):,} {name} pairs (the longest {n} tokens{where})")
    if found:
        raise ValueError(
            f"{'; '.join(found)} do not fit the {limit}-token window ([CLS] a [SEP] b [SEP]) of this head: "
            "rerun with --truncate (cuts the longer side first, as BERT's run_classifier does, in training and "
            "prediction alike) or --pair-encoding bi (each side encoded and windowed alone)"
        )


def head_config(args: RecipeArguments, kind: str, data, **extra) -> HeadConfig:
    """The head (``kind``: token, sequence or pair) a recipe trains, from its arguments and its dataset."""
    if args.document_context:
        if kind != "token":
            raise ValueError(f"--document-context reads sentences with their neighbours to tag them: token heads only, not a {kind} head")
        if args.window_align not in (None, "packed"):
            raise ValueError(
                f"--document-context trains on windows packed with whole sentences and reads long texts the same way: "
                f"--window-align {args.window_align} contradicts it"
            )
        if args.criteria:
            raise ValueError("--document-context packs consecutive sentences into one window; --criteria reads each under its own standard")
        args = replace(args, window_align="packed")
    return HeadConfig(
        kind=kind,
        labels=data.labels,
        scheme=data.scheme,
        multi_label=data.multi_label,
        regression=data.regression,
        crf=args.crf,
        bilstm_layers=args.bilstm_layers,
        bilstm_hidden=args.bilstm_hidden,
        bilstm_skip=args.bilstm_skip,
        lexicon=args.lexicon,
        lexicon_dim=args.lexicon_dim,
        bigram_dim=args.bigram_dim,
        bigram_buckets=args.bigram_buckets,
        mode=args.mode,
        representation=args.representation,
        window=args.window,
        stride=args.stride,
        window_align=args.window_align,
        window_pool=args.window_pool,
        truncate=args.truncate,
        pair_encoding=args.pair_encoding,
        criteria=[c.strip() for c in args.criteria.split(",")] if args.criteria else [],
        **extra,
    )


def train_char_tagger(args: RecipeArguments, task: str, evaluate=None):
    """Phases 2-4 of a character-tagging recipe (cws, ner, pos): data (one tag per character),
    a token head on the chosen encoder, training (``evaluate``: the recipe's scorer, for
    ``--best-epoch-on-dev``). Returns ``data, model, tokenizer``."""
    data = load_splits(args, task)
    model, tokenizer = prepare_model(args, head_config(args, "token", data))
    body = window_size(model.head, model.config) - 2 if args.document_context else None
    if body:
        note = f"document context: consecutive sentences of each split packed into windows of up to {body} tokens"
        data = replace(data, notes=[*data.notes, note])

    def examples():
        sentences = char_tag_examples(tokenizer, data.train, data.labels, data.scheme, model.head.criteria)
        return document_examples(sentences, body) if body else sentences

    data = fit(args, data, model, tokenizer, examples, evaluate)
    return data, model, tokenizer


def consecutive_groups(lengths: list[int], budget: int) -> list[range]:
    """Consecutive items packed greedily into groups of at most ``budget`` in total: a new group
    starts where the next item would overflow; an item over the budget on its own is a group alone."""
    groups, start, used = [], 0, 0
    for i, n in enumerate(lengths):
        if i > start and used + n > budget:
            groups.append(range(start, i))
            start, used = i, 0
        used += n
    if lengths:
        groups.append(range(start, len(lengths)))
    return groups


def document_examples(examples: list[dict], body: int) -> list[dict]:
    """Tagged sentence examples (in file order) joined into documents of consecutive whole
    sentences that fill a window of ``body`` tokens: every tag is still trained on, each in view
    of its neighbours (a sentence longer than a window stays alone, windowed by the collator)."""
    if any("weight" in e for e in examples):
        raise ValueError("--document-context packs consecutive sentences into one window: weighted extra sentences cannot share it")
    out = []
    for group in consecutive_groups([len(e["input_ids"]) for e in examples], body):
        out.append({key: [x for i in group for x in examples[i][key]] for key in ("input_ids", "tags")})
    return out


def predict_test_spans(
    model: ZhBertForTask, tokenizer, data, rows: list[dict] | None = None, documents: bool = False
) -> tuple[list[str], list[list[tuple[str, int, int]]]]:
    """The test texts (or ``rows``') and the predicted ``(type, start, end)`` character spans of each;
    ``documents``: read as training with ``--document-context`` saw them, consecutive sentences
    packed into one window (joined by line breaks), each sentence's spans cut back out."""
    from ..heads import char_spans, predict_tags

    rows = data.test if rows is None else rows
    texts = [r["text"] for r in rows]
    # each row under its own standard, on a head trained with several (the model's default where a row names none)
    criterion = [r.get("criterion") for r in rows] if model.head.criteria else None
    if not documents:
        preds = predict_tags(model, tokenizer, texts, batch_size=64, criterion=criterion)
        return texts, [char_spans(p, data.scheme) for p in preds]
    if criterion is not None:
        raise ValueError("--document-context packs consecutive sentences into one window: a head with criteria reads each under its own")
    body = window_size(model.head, model.config) - 2
    groups = consecutive_groups([len(e) for e in encode(tokenizer, texts)], body)
    joined = predict_tags(model, tokenizer, ["\n".join(texts[i] for i in g) for g in groups], batch_size=64)
    spans: list[list[tuple[str, int, int]]] = []
    for group, pred in zip(groups, joined):
        found, start = char_spans(pred, data.scheme), 0
        for i in group:
            end = start + len(texts[i])
            # a span reaching across a line break is cut at it: an entity or word never spans two sentences
            spans.append([(t, max(s, start) - start, min(e, end) - start) for t, s, e in found if s < end and e > start])
            start = end + 1
    return texts, spans


def finetune_config(args: RecipeArguments) -> FinetuneConfig:
    if args.save_steps < 0:
        raise ValueError(f"--save-steps must be 0 (no checkpoints) or more, got {args.save_steps}")
    if not args.distill_from:
        defaults = {f.name: f.default for f in fields(RecipeArguments)}
        given = [option_flag(k) for k in ("distill_alpha", "distill_temperature") if getattr(args, k) != defaults[k]]
        if given:
            raise ValueError(f"{', '.join(given)}: settings of --distill-from: give the teacher")
    return FinetuneConfig(
        output=str(Path(args.output_dir) / "checkpoints"),
        epochs=args.epochs,
        max_steps=args.max_steps,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        head_learning_rate=args.head_learning_rate,
        warmup=args.warmup,
        weight_decay=args.weight_decay,
        carried_at_encoder_lr=args.carried_at_encoder_lr,
        layer_lr_decay=args.layer_lr_decay,
        fgm_epsilon=args.fgm_epsilon,
        rdrop_alpha=args.rdrop_alpha,
        distill_alpha=args.distill_alpha if args.distill_from else 0.0,
        distill_temperature=args.distill_temperature,
        seed=args.seed,
        save_steps=args.save_steps,
    )


def result_record(args: RecipeArguments, task: str, data, metrics: dict, headline: str) -> dict:
    """The ``metrics.json`` record of one scored task, and its RESULTS.md row printed."""
    record = {
        "task": task,
        "dataset": data.name,
        "scored_on": data.eval_split,
        "metrics": metrics,
        "notes": data.notes,
        "arguments": asdict(args),
        "date": time.strftime("%Y-%m-%d"),
        "train_examples": len(data.train),
    }
    value = headline_value(metrics, headline)
    record.update(headline=headline, score=value)  # the one number studies and tables compare
    encoder = "random init" if args.random_init else (args.evaluate_only or args.encoder)
    print(
        f"| {data.name} | {encoder} | {args.mode} / {args.representation or 'default'}"
        f"{f' + {args.bilstm_layers}-layer BiLSTM' if args.bilstm_layers else ''}"
        f"{f' ({args.bilstm_hidden} each way)' if args.bilstm_hidden else ''}{' with skip' if args.bilstm_skip else ''}"
        f"{' + CRF' if args.crf else ''}"
        f"{f' + lexicon {args.lexicon}' if args.lexicon else ''}{f' + {Path(args.lexicon_words).name}' if args.lexicon_words else ''}"
        f"{f' + bigrams {args.bigram_dim}' if args.bigram_dim else ''}"
        f"{' (word2vec start)' if args.static_embeddings else ''}{f' + criteria {args.criteria}' if args.criteria else ''} "
        f"| {data.eval_split} | {headline} = {100 * value:.2f} |"
    )
    return record


def write_results(args: RecipeArguments, task: str, data, metrics: dict, model: ZhBertForTask | None, tokenizer, headline: str) -> dict:
    """Save the model (unless evaluating), ``metrics.json`` and print a RESULTS.md row;
    returns the record written to ``metrics.json``."""
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    if model is not None and not args.evaluate_only and args.save_model:
        save_head(model, tokenizer, out / "model")
    record = result_record(args, task, data, metrics, headline)
    if model is not None:  # the head as scored: a saved model's own settings, not the flags' defaults
        record["head"] = asdict(model.head)
    (out / "metrics.json").write_text(json.dumps(record, indent=2, ensure_ascii=False))
    if model is not None and not args.evaluate_only and args.save_model:
        print(f"saved {out / 'model'} (zhbert.load or --encoder read it); scores in {out / 'metrics.json'}")
    else:
        print(f"scores in {out / 'metrics.json'}")
    return record
