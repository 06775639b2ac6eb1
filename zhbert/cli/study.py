"""Probing and the studies: probe, study modes / masking / objectives / long / long-classification / multitask / words."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import List, Optional

import typer

from .app import OUTPUT_DIR, _fail, app


@app.command()
def probe(
    model: str = typer.Argument(..., help="bundled model name or a local model folder (its encoder is probed)"),
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder for probe.json, probe.md and the plots"),
    tasks: List[str] = typer.Option(["pos", "entity", "boundary", "pair"], "--task", help="pos, entity, boundary, pair"),
    sentences: int = typer.Option(1200, help="held-out People's Daily sentences (70% train the probes)"),
    pairs: int = typer.Option(2000, help="LCQMC pairs (half from dev to train, half from test to score)"),
    compare_random: bool = typer.Option(True, help="also probe a randomly initialised twin of the same size"),
    pca_layer: Optional[int] = typer.Option(None, help="also plot a 2-D PCA of this layer's vectors by POS"),
    pca_remove_position: bool = typer.Option(
        True, help="subtract each token position's mean vector before the PCA (else the position code dominates the plot)"
    ),
    steps: int = typer.Option(200, help="L-BFGS iterations per probe"),
) -> None:
    """Layer-wise linear probes (POS, entities, word boundaries, pairs) with a plot per layer."""
    import torch
    from transformers import AutoModel

    from ..encoders import read_encoder_config
    from ..models_registry import resolve_model_path
    from ..probing import PROBE_TASKS, pca_plot, probe_model, random_twin, write_report
    from ..tokenizer import load_tokenizer

    unknown = [t for t in tasks if t not in PROBE_TASKS]
    if unknown:
        _fail(f"unknown probe task(s) {', '.join(unknown)}; choose from {', '.join(PROBE_TASKS)}", code=2)
    _report_folder(output, "probe")
    try:
        path = resolve_model_path(model)
        encoder = AutoModel.from_pretrained(
            path, config=read_encoder_config(path), dtype=torch.float32, local_files_only=True, trust_remote_code=False
        ).eval()
        tokenizer = load_tokenizer(path)
    except (OSError, ValueError) as e:
        _fail(str(e))
    name = Path(model).name
    results = probe_model(encoder, tokenizer, name, tasks, sentences, pairs, steps=steps)
    if compare_random:
        results += probe_model(random_twin(encoder), tokenizer, "random init", tasks, sentences, pairs, steps=steps)
    files = write_report(results, output, title=f"Linear probes per layer: {name}")
    if pca_layer is not None:
        files["pca"] = pca_plot(encoder, tokenizer, output, pca_layer, remove_position=pca_remove_position)
    typer.echo((output / "probe.md").read_text(encoding="utf-8"))
    typer.echo(json.dumps({k: str(v) for k, v in files.items()}))


study_app = typer.Typer(
    help="Studies of application modes, masking, pretraining objectives, long texts, multi-task and word information "
    "(tables and plots; docs/studies.md).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(study_app, name="study")


def _recipe_options(max_train_samples, max_eval_samples, epochs, max_steps, preset) -> dict:
    return {
        "max_train_samples": max_train_samples,
        "max_eval_samples": max_eval_samples,
        "epochs": epochs,
        "max_steps": max_steps,
        "preset": preset,
    }


def _report_folder(output: Path, stem: str) -> None:
    """Before any work: ``output`` may take the report ``stem`` (:func:`zhbert.destination.check_report_folder`)."""
    from ..destination import check_report_folder

    try:
        check_report_folder(output, stem)
    except ValueError as e:
        _fail(str(e))


def _run_study(run, write_report, output: Path, meta: dict) -> None:
    """Run a study (``run()`` gives its rows), write its report with ``meta``, the wall time and the command
    line, and print its table; a bad input, model or dataset ends in one line. The folder is checked first."""
    from ..errors import ZhbertError

    _report_folder(output, write_report.__name__.removeprefix("write_").removesuffix("_report"))  # write_X_report writes X.json, X.md
    start = time.perf_counter()
    try:
        rows = run()
    except (ZhbertError, RuntimeError, FileNotFoundError, ValueError) as e:
        _fail(str(e))
    files = write_report(rows, output, {**meta, "wall_seconds": time.perf_counter() - start, "argv": sys.argv[1:]})
    typer.echo(files["table"].read_text(encoding="utf-8"))


@study_app.command("modes")
def study_modes(
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder for the runs, modes.md, modes.json and modes.png"),
    encoder: str = typer.Option("base", help="bundled model name or a local BERT folder"),
    tasks: List[str] = typer.Option(None, "--task", help="a recipe (repeat the flag); default: every recipe (zhbert train --help)"),
    seeds: List[int] = typer.Option([1, 2, 3], "--seed"),
    representations: List[str] = typer.Option(
        None, "--representation", help="default: every representation of zhbert.fusion's study grid (zhbert train ner --help)"
    ),
    bert_table: bool = typer.Option(True, help="add the BERT paper's feature-based NER rows"),
    max_train_samples: Optional[int] = typer.Option(None),
    max_eval_samples: Optional[int] = typer.Option(None),
    epochs: Optional[float] = typer.Option(None),
    max_steps: Optional[int] = typer.Option(None),
    preset: str = typer.Option("full", help="recipe preset: tiny (tests) or full"),
    finetune_learning_rate: Optional[float] = typer.Option(
        None, help="encoder LR of fine-tuned runs (recipe default 5e-5); feature-based runs keep their 1e-3 head LR"
    ),
    frozen_learning_rate: Optional[float] = typer.Option(None, help="head LR of feature-based runs (recipe default 1e-3)"),
    modes: Optional[List[str]] = typer.Option(None, "--mode", help="finetune and/or frozen (repeat the flag); default: both"),
) -> None:
    """Fine-tune vs feature-based x every representation, several seeds; BERT Table 7 on Chinese."""
    from ..fusion import REPRESENTATIONS
    from ..heads.config import MODES
    from ..studies import STUDY_TASKS
    from ..studies.modes import run_modes, write_modes_report

    tasks = tasks or list(STUDY_TASKS)
    bad = [t for t in tasks if t not in STUDY_TASKS] + [r for r in representations or [] if r not in REPRESENTATIONS]
    bad += [m for m in modes or [] if m not in MODES]
    if bad:
        _fail(
            f"unknown task, representation or mode: {', '.join(bad)}; tasks: {', '.join(STUDY_TASKS)}; "
            f"representations: {', '.join(REPRESENTATIONS)}; modes: {', '.join(MODES)}",
            code=2,
        )
    recipe_args = _recipe_options(max_train_samples, max_eval_samples, epochs, max_steps, preset)
    _run_study(
        lambda: run_modes(
            encoder,
            output,
            tasks,
            seeds,
            representations=representations or REPRESENTATIONS,
            bert_table=bert_table,
            recipe_args=recipe_args,
            finetune_learning_rate=finetune_learning_rate,
            frozen_learning_rate=frozen_learning_rate,
            modes=tuple(modes or MODES),
        ),  # fmt: skip
        write_modes_report,
        output,
        {"encoder": encoder, "seeds": seeds},
    )


@study_app.command("modes-report")
def study_modes_report(
    sources: List[Path] = typer.Option(..., "--from", help="a modes.json of zhbert study modes (repeat); a cell in several: the last wins"),
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder for the merged modes.md, modes.json and modes.png"),
) -> None:
    """One report (table, claims, plot) from mode studies of one encoder run in parts."""
    from ..studies.modes import merge_mode_reports, write_modes_report

    _report_folder(output, "modes")
    try:
        rows, meta = merge_mode_reports(sources)
    except ValueError as e:
        _fail(str(e))
    files = write_modes_report(rows, output, meta)
    typer.echo(files["table"].read_text(encoding="utf-8"))


@study_app.command("masking")
def study_masking(
    corpus: List[Path] = typer.Option(..., "--corpus", help="pretraining text (files or folders)"),
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder for pretraining runs, fine-tuning runs and masking.md"),
    maskings: List[str] = typer.Option(None, "--masking", help="a masking strategy (repeat the flag); default: every one"),
    nsp: List[str] = typer.Option(["no", "yes"], "--nsp", help="no, yes or both (repeat the flag)"),
    size: str = typer.Option("tiny"),
    steps: int = typer.Option(2000),
    batch_size: int = typer.Option(32),
    max_length: int = typer.Option(128),
    max_docs: Optional[int] = typer.Option(None),
    tasks: List[str] = typer.Option(None, "--task", help="a recipe (repeat the flag); default: every recipe"),
    seeds: List[int] = typer.Option([1], "--seed"),
    max_train_samples: Optional[int] = typer.Option(None),
    max_eval_samples: Optional[int] = typer.Option(None),
    epochs: Optional[float] = typer.Option(None),
    max_steps: Optional[int] = typer.Option(None),
    preset: str = typer.Option("full"),
    fill_mask_sentences: int = typer.Option(2000, help="held-out People's Daily sentences for char and whole-word fill-mask (0: skip)"),
    pretrain_learning_rate: float = typer.Option(5e-4, help="peak learning rate of every pretraining run"),
    learning_rate: Optional[float] = typer.Option(None, help="encoder learning rate of every fine-tuning run (recipe default if unset)"),
    init: Optional[str] = typer.Option(
        None,
        help="continue every run from this checkpoint folder or bundled model (e.g. base) "
        "instead of pretraining from scratch; adds its own row, 'init'",
    ),
    untrained: bool = typer.Option(
        True,
        help="from scratch: add the row 'none', the runs' common starting weights fine-tuned without pretraining "
        "(the control that shows whether pretraining helped at all)",
    ),
) -> None:
    """Pretrain one configuration per masking (and NSP) with the same budget; fine-tune each on the tasks."""
    from ..masking import MASKERS
    from ..studies import STUDY_TASKS
    from ..studies.masking import run_masking, write_masking_report

    maskings, tasks = maskings or list(MASKERS), tasks or list(STUDY_TASKS)
    bad = [m for m in maskings if m not in MASKERS] + [t for t in tasks if t not in STUDY_TASKS]
    if bad:
        _fail(f"unknown masking or task: {', '.join(bad)}; maskings: {', '.join(MASKERS)}; tasks: {', '.join(STUDY_TASKS)}", code=2)

    if not set(nsp) <= {"no", "yes"}:
        _fail("--nsp takes no or yes", code=2)
    recipe_args = {**_recipe_options(max_train_samples, max_eval_samples, epochs, max_steps, preset), "learning_rate": learning_rate}
    _run_study(
        lambda: run_masking(
            [str(c) for c in corpus],
            output,
            maskings,
            tuple(v == "yes" for v in nsp),
            size,
            steps,
            batch_size,
            max_length,
            max_docs,
            tasks,
            seeds,
            recipe_args=recipe_args,
            fill_mask_sentences=fill_mask_sentences,
            learning_rate=pretrain_learning_rate,
            init=init,
            untrained=untrained,
        ),  # fmt: skip
        write_masking_report,
        output,
        {
            "size": size if init is None else None,
            "init": init,
            "steps": steps,
            "batch_size": batch_size,
            "max_length": max_length,
            "pretrain_learning_rate": pretrain_learning_rate,
        },  # fmt: skip
    )


@study_app.command("objectives")
def study_objectives(
    corpus: List[Path] = typer.Option(..., "--corpus", help="pretraining text (files or folders, or one *.zhcorpus file)"),
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder for pretraining runs, fine-tuning runs and objectives.md"),
    init: str = typer.Option("base", help="the BERT checkpoint folder or bundled model every objective continues from"),
    cpu_seconds: float = typer.Option(..., help="CPU seconds (all threads) of pretraining each objective gets"),
    objectives: List[str] = typer.Option(["mlm", "electra"], "--objective", help="mlm or electra (repeat the flag)"),
    masking: str = typer.Option("wwm", help="masking strategy (for electra: the generator's)"),
    batch_size: int = typer.Option(32),
    max_length: int = typer.Option(128),
    max_docs: Optional[int] = typer.Option(None),
    pretrain_learning_rate: float = typer.Option(3e-4, help="peak learning rate of every pretraining run"),
    calibration_steps: int = typer.Option(40, help="steps of the short run that measures each objective's CPU seconds per step"),
    mlm_head_steps: int = typer.Option(300, help="steps of the masked-LM head continued on the ELECTRA encoder, for fill-mask (0: none)"),
    tasks: List[str] = typer.Option(None, "--task", help="a recipe (repeat the flag); default: every recipe"),
    seeds: List[int] = typer.Option([1], "--seed"),
    max_train_samples: Optional[int] = typer.Option(None),
    max_eval_samples: Optional[int] = typer.Option(None),
    epochs: Optional[float] = typer.Option(None),
    max_steps: Optional[int] = typer.Option(None),
    preset: str = typer.Option("full"),
    fill_mask_sentences: int = typer.Option(2000, help="held-out People's Daily sentences for char and whole-word fill-mask (0: skip)"),
) -> None:
    """Pretrain further under each objective (masked LM, ELECTRA) for the same CPU time; fine-tune and score each."""
    from ..studies import STUDY_TASKS
    from ..studies.objectives import run_objectives, write_objectives_report
    from ..training.pretrain import OBJECTIVES

    tasks = tasks or list(STUDY_TASKS)
    bad = [o for o in objectives if o not in OBJECTIVES] + [t for t in tasks if t not in STUDY_TASKS]
    if bad:
        _fail(f"unknown objective or task: {', '.join(bad)}; objectives: {', '.join(OBJECTIVES)}; tasks: {', '.join(STUDY_TASKS)}", code=2)
    if cpu_seconds <= 0:
        _fail("--cpu-seconds must be above 0", code=2)
    recipe_args = _recipe_options(max_train_samples, max_eval_samples, epochs, max_steps, preset)
    _run_study(
        lambda: run_objectives(
            [str(c) for c in corpus],
            output,
            init,
            cpu_seconds,
            tuple(objectives),
            masking,
            batch_size,
            max_length,
            pretrain_learning_rate,
            max_docs,
            tasks,
            seeds,
            recipe_args,
            fill_mask_sentences,
            calibration_steps,
            mlm_head_steps,
        ),  # fmt: skip
        write_objectives_report,
        output,
        {"init": init, "cpu_seconds": cpu_seconds, "masking": masking, "batch_size": batch_size, "max_length": max_length},
    )


@study_app.command("long")
def study_long(
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder for long.md and long.json"),
    model: str = typer.Option("ner", "--model", help="a NER model: bundled name or folder"),
    dataset: str = typer.Option("msra", help="the NER dataset whose scored split makes the documents"),
    min_chars: int = typer.Option(1500, help="characters per long document (consecutive sentences joined)"),
    max_sentences: Optional[int] = typer.Option(None, help="use only the first N sentences (tests)"),
) -> None:
    """Long texts: truncation vs overlapping windows of several strides, against each sentence alone."""
    from ..studies.long_text import run_long, write_long_report

    meta = {"model": model, "dataset": dataset, "min_chars": min_chars}
    _run_study(lambda: run_long(model, "ner", dataset, min_chars, max_sentences), write_long_report, output, meta)


@study_app.command("long-classification")
def study_long_classification(
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder for the runs, long_classification.md and .json"),
    encoder: str = typer.Option("base", help="bundled model name or a local BERT folder"),
    dataset: str = typer.Option("sources", help="a tagging dataset of long texts (sources: 1,000-1,200 character corpus excerpts)"),
    seeds: List[int] = typer.Option([1, 2, 3], "--seed"),
    batch_size: Optional[int] = typer.Option(None, help="documents per step (each is several windows)"),
    max_train_samples: Optional[int] = typer.Option(None),
    max_eval_samples: Optional[int] = typer.Option(None),
    epochs: Optional[float] = typer.Option(None),
    max_steps: Optional[int] = typer.Option(None),
    preset: str = typer.Option("full", help="recipe preset: tiny (tests) or full"),
    learning_rate: Optional[float] = typer.Option(None, help="encoder learning rate of every run (recipe default 5e-5)"),
) -> None:
    """Long-text classification: truncation vs overlapping windows pooled by mean or mean-max, several seeds."""
    from ..studies.long_text import run_long_classification, write_long_classification_report

    options = _recipe_options(max_train_samples, max_eval_samples, epochs, max_steps, preset)
    if batch_size is not None:
        options["batch_size"] = batch_size
    if learning_rate is not None:
        options["learning_rate"] = learning_rate
    meta = {"encoder": encoder, "dataset": dataset, "seeds": seeds}
    run = lambda: run_long_classification(encoder, output, dataset, tuple(seeds), recipe_args=options)  # noqa: E731
    _run_study(run, write_long_classification_report, output, meta)


@study_app.command("multitask")
def study_multitask(
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder for the runs, multitask.md and multitask.json"),
    encoder: str = typer.Option("base", help="bundled model name or a local BERT folder"),
    tasks: str = typer.Option("ner=msra,cws=pku,tagging=usual", "--tasks", help="recipe=dataset pairs, comma-separated"),
    seeds: List[int] = typer.Option([1], "--seed"),
    max_train_samples: Optional[int] = typer.Option(None),
    max_eval_samples: Optional[int] = typer.Option(None),
    epochs: Optional[float] = typer.Option(None),
    max_steps: Optional[int] = typer.Option(None, help="steps of each single-task run; the multi-task run gets as many per task"),
    preset: str = typer.Option("full", help="recipe preset: tiny (tests) or full"),
    learning_rate: Optional[float] = typer.Option(None, help="encoder learning rate of every run, single- and multi-task"),
) -> None:
    """One shared encoder on several tasks against a single-task model per task, same budget."""
    from ..studies.multitask import run_multitask_study, write_multitask_report

    recipe_args = {**_recipe_options(max_train_samples, max_eval_samples, epochs, max_steps, preset), "learning_rate": learning_rate}
    run = lambda: run_multitask_study(encoder, output, tasks, seeds, recipe_args=recipe_args)  # noqa: E731
    _run_study(run, write_multitask_report, output, {"encoder": encoder, "tasks": tasks, "seeds": seeds})


@study_app.command("words")
def study_words(
    output: Path = typer.Option(..., *OUTPUT_DIR, help="folder for the runs, words.md, words.json and words.png"),
    encoder: str = typer.Option("base", help="the encoder without word information (bundled name or a local BERT folder)"),
    wwm_encoder: Optional[str] = typer.Option(
        None, "--wwm-encoder", help="an encoder pretrained with word information (zhbert pretrain --masking wwm or ernie)"
    ),
    tasks: str = typer.Option("ner=msra,ner=weibo,ner=resume,cws=pku", "--tasks", help="recipe=dataset pairs of token recipes"),
    seeds: List[int] = typer.Option([1, 2, 3], "--seed"),
    bigram_dim: int = typer.Option(50, help="size of the bigram embeddings in the bigram conditions"),
    static_embeddings: Optional[str] = typer.Option(
        None, "--static-embeddings", help="a `zhbert static-embeddings` folder: adds the fine-tuning features started from word2vec"
    ),
    only: Optional[str] = typer.Option(
        None,
        "--conditions",
        help="run only these, comma-separated: neither, lexicon, bigrams, fine-tuning, word2vec-start, pretraining, both "
        "(default: every one the options allow)",
    ),
    max_train_samples: Optional[int] = typer.Option(None),
    max_eval_samples: Optional[int] = typer.Option(None),
    epochs: Optional[float] = typer.Option(None),
    max_steps: Optional[int] = typer.Option(None),
    preset: str = typer.Option("full", help="recipe preset: tiny (tests) or full"),
    learning_rate: Optional[float] = typer.Option(None, help="encoder learning rate of every run"),
) -> None:
    """Word information in pretraining, at fine-tuning (lexicon, bigrams), both or neither: same tasks, seeds, budget."""
    from ..studies.words import run_words_study, write_words_report

    recipe_args = {**_recipe_options(max_train_samples, max_eval_samples, epochs, max_steps, preset), "learning_rate": learning_rate}
    meta = {"encoder": encoder, "wwm_encoder": wwm_encoder, "static_embeddings": static_embeddings, "tasks": tasks, "seeds": seeds}
    meta["conditions"] = only
    run = lambda: run_words_study(encoder, output, tasks, seeds, wwm_encoder, bigram_dim, recipe_args, static_embeddings, only)  # noqa: E731
    _run_study(run, write_words_report, output, meta)
