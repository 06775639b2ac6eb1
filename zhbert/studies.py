"""Studies anyone can rerun on their own model: which application mode, which masking.

* :func:`run_modes` trains the same encoder on one dataset per task type with every
  {fine-tune, feature-based} x representation combination (``cls`` only for
  sequence and pair heads), several seeds each, and reproduces the BERT paper's
  feature-based NER table (Devlin et al. 2019, Table 7) on Chinese.
* :func:`run_masking` pretrains the same configuration for the same number of steps
  under each masking strategy (with and without NSP), then fine-tunes each result
  on the four tasks.

Every training run is one call of the task's recipe (``recipes/*.py``) with the
same flags a user would type, so a table cell can be reproduced by hand. Runs
write ``metrics.json`` into their own folder; a rerun skips finished runs, so a
study killed halfway resumes where it stopped.
"""

from __future__ import annotations

import json
import logging
import runpy
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .fusion import REPRESENTATIONS
from .heads.config import MODES

logger = logging.getLogger("zhbert")

__all__ = ["STUDY_TASKS", "StudyTask", "run_recipe", "mode_grid", "run_modes", "literature_claims", "run_masking"]

RECIPES = Path(__file__).resolve().parents[1] / "recipes"


@dataclass(frozen=True)
class StudyTask:
    recipe: str  # file in recipes/
    dataset: str
    head: str  # token | sequence | pair


STUDY_TASKS = {
    "ner": StudyTask("ner.py", "msra", "token"),
    "cws": StudyTask("cws.py", "pku", "token"),
    "tagging": StudyTask("weibo_tagging.py", "usual", "sequence"),
    "matching": StudyTask("matching.py", "lcqmc", "pair"),
}

# the BERT paper's feature-based NER rows (Table 7) and the representation behind each
BERT_TABLE = [
    ("Embeddings", "frozen", "embeddings"),
    ("Second-to-Last Hidden", "frozen", "second-to-last"),
    ("Last Hidden", "frozen", "last"),
    ("Weighted Sum Last Four Hidden", "frozen", "scalar-mix-last-4"),
    ("Concat Last Four Hidden", "frozen", "concat-last-4"),
    ("Weighted Sum All Layers", "frozen", "scalar-mix"),
    ("Fine-tuning", "finetune", "last"),
]


def _flags(options: dict) -> list[str]:
    argv = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        argv += [f"--{key}"] if value is True else [f"--{key}", str(value)]
    return argv


def run_recipe(task: str, output_dir: str | Path, **options) -> dict:
    """Run ``recipes/<task>.py`` in this process with ``--key value`` flags; returns its
    ``metrics.json``. A folder that already holds one is not run again."""
    out = Path(output_dir)
    done = out / "metrics.json"
    if done.is_file():
        return json.loads(done.read_text(encoding="utf-8"))
    spec = STUDY_TASKS[task]
    options = {"dataset": spec.dataset, **options, "output_dir": str(out)}
    argv = [str(RECIPES / spec.recipe), *_flags(options)]
    logger.warning("study run: python %s", " ".join(argv))
    saved = sys.argv
    sys.argv = argv
    try:
        runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:  # the recipe already printed the one-line reason
        if e.code:
            raise RuntimeError(f"recipe failed: python {' '.join(argv)}") from None
    finally:
        sys.argv = saved
    return json.loads(done.read_text(encoding="utf-8"))


def _summary(scores: list[float]) -> dict:
    return {"scores": scores, "mean": statistics.fmean(scores), "std": statistics.stdev(scores) if len(scores) > 1 else 0.0}


# --- application modes ----------------------------------------------------------------------
def mode_grid(task: str, modes=MODES, representations=REPRESENTATIONS) -> list[tuple[str, str]]:
    head = STUDY_TASKS[task].head
    return [(m, r) for m in modes for r in representations if not (r == "cls" and head == "token")]


@dataclass
class ModeRow:
    task: str
    dataset: str
    mode: str
    representation: str
    metric: str
    scores: list[float]
    mean: float
    std: float
    scored_on: str = "test"


def run_modes(
    encoder: str,
    output: str | Path,
    tasks=tuple(STUDY_TASKS),
    seeds=(1, 2, 3),
    modes=MODES,
    representations=REPRESENTATIONS,
    bert_table: bool = True,
    recipe_args: dict | None = None,
    finetune_learning_rate: float | None = None,
) -> list[ModeRow]:
    """Every mode x representation per task, ``len(seeds)`` runs each; plus the extra
    feature-based NER rows of the BERT paper's table when ``bert_table`` and NER is studied.
    ``finetune_learning_rate`` sets the encoder LR of fine-tuned runs only: one shared
    ``learning_rate`` would also become the head LR of the feature-based runs, whose
    recipe default (1e-3) suits a head trained alone."""
    out = Path(output)
    plan: list[tuple[str, str, str]] = [(t, m, r) for t in tasks for m, r in mode_grid(t, modes, representations)]
    if bert_table and "ner" in tasks:
        plan += [("ner", m, r) for _, m, r in BERT_TABLE if ("ner", m, r) not in plan]
    rows = []
    for task, mode, rep in plan:
        scores, record = [], None
        lr = finetune_learning_rate if mode == "finetune" else None
        for seed in seeds:
            record = run_recipe(
                task,
                out / task / f"{mode}-{rep}-seed{seed}",
                encoder=encoder,
                mode=mode,
                representation=rep,
                seed=seed,
                no_save_model=True,
                learning_rate=lr,
                **(recipe_args or {}),
            )
            scores.append(float(record["score"]))
        s = _summary(scores)
        rows.append(ModeRow(task, record["dataset"], mode, rep, record["headline"], s["scores"], s["mean"], s["std"], record["scored_on"]))
    return rows


def _find(rows, task, mode, rep):
    return next((r for r in rows if (r.task, r.mode, r.representation) == (task, mode, rep)), None)


def literature_claims(rows: list[ModeRow]) -> list[dict]:
    """The three claims of the issue, each marked holds / does not hold / not measured, with the numbers."""
    claims = []
    tasks = list(dict.fromkeys(r.task for r in rows))

    gaps = {}
    for t in tasks:
        ft = [r.mean for r in rows if r.task == t and r.mode == "finetune"]
        fz = [r.mean for r in rows if r.task == t and r.mode == "frozen"]
        if ft and fz:
            gaps[t] = max(ft) - max(fz)
    text = "fine-tuning beats feature-based most clearly on sentence pairs"
    if "matching" in gaps and len(gaps) > 1:
        holds = gaps["matching"] == max(gaps.values()) and gaps["matching"] > 0
        claims.append(
            {
                "claim": text,
                "holds": holds,
                "evidence": "best fine-tuned minus best feature-based: " + ", ".join(f"{t} {100 * g:+.2f}" for t, g in gaps.items()),
            }
        )
    else:
        claims.append({"claim": text, "holds": None, "evidence": "needs matching and another task in both modes"})

    text = "for pairs, [CLS] of the last layer is as good as fusion"
    cls = _find(rows, "matching", "finetune", "cls")
    fusion = [r for r in rows if r.task == "matching" and r.mode == "finetune" and r.representation not in ("cls", "last")]
    if cls and fusion:
        best = max(fusion, key=lambda r: r.mean)
        tolerance = max(cls.std, best.std, 0.005)  # within the seeds' spread (at least half a point)
        claims.append(
            {
                "claim": text,
                "holds": cls.mean >= best.mean - tolerance,
                "evidence": f"cls {100 * cls.mean:.2f} ± {100 * cls.std:.2f} vs best fusion {best.representation} "
                f"{100 * best.mean:.2f} ± {100 * best.std:.2f} (fine-tuned)",
            }
        )
    else:
        claims.append({"claim": text, "holds": None, "evidence": "needs fine-tuned matching with cls and a fusion"})

    text = "for tagging, learned layer weighting beats the last layer alone"
    pairs = [(t, m, _find(rows, t, m, "scalar-mix"), _find(rows, t, m, "last")) for t in ("ner", "cws") for m in MODES]
    pairs = [p for p in pairs if p[2] and p[3]]
    if pairs:
        wins = [mix.mean > last.mean for _, _, mix, last in pairs]
        claims.append(
            {
                "claim": text,
                "holds": all(wins) if all(wins) or not any(wins) else "partly",
                "evidence": "; ".join(
                    f"{t}/{m}: scalar-mix {100 * mix.mean:.2f} vs last {100 * last.mean:.2f}" for t, m, mix, last in pairs
                ),
            }
        )
    else:
        claims.append({"claim": text, "holds": None, "evidence": "needs ner or cws with scalar-mix and last"})
    return claims


def _fmt(row: ModeRow | None) -> str:
    if row is None:
        return "–"
    return f"{100 * row.mean:.2f} ± {100 * row.std:.2f}" if len(row.scores) > 1 else f"{100 * row.mean:.2f}"


def write_modes_report(rows: list[ModeRow], output: str | Path, meta: dict | None = None) -> dict[str, Path]:
    """``modes.json``, ``modes.md`` (grid per task, BERT-paper table, claims), ``modes.png``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    claims = literature_claims(rows)
    (out / "modes.json").write_text(
        json.dumps({"meta": meta or {}, "rows": [asdict(r) for r in rows], "claims": claims}, ensure_ascii=False, indent=1),
        encoding="utf-8",
    )
    reps = [r for r in REPRESENTATIONS if any(x.representation == r for x in rows)]
    lines = ["| task (metric, split) | mode | " + " | ".join(reps) + " |", "|---|---|" + "---|" * len(reps)]
    for t in dict.fromkeys(r.task for r in rows):
        first = next(r for r in rows if r.task == t)
        for m in MODES:
            if any(r.task == t and r.mode == m for r in rows):
                lines.append(
                    f"| {first.dataset} ({first.metric}, {first.scored_on}) | {m} | "
                    + " | ".join(_fmt(_find(rows, t, m, r)) for r in reps)
                    + " |"
                )
    if any(r.task == "ner" for r in rows):
        lines += [
            "",
            "BERT paper, Table 7 (feature-based NER), on Chinese:",
            "",
            "| system | " + next(r.dataset for r in rows if r.task == "ner") + " |",
            "|---|---|",
        ]
        lines += [f"| {name} | {_fmt(_find(rows, 'ner', m, r))} |" for name, m, r in BERT_TABLE]
    lines += ["", "| claim from the literature | holds? | evidence |", "|---|---|---|"]
    lines += [f"| {c['claim']} | {'not measured' if c['holds'] is None else c['holds']} | {c['evidence']} |" for c in claims]
    (out / "modes.md").write_text("\n".join(lines) + "\n", encoding="utf-8")

    tasks = list(dict.fromkeys(r.task for r in rows))
    fig, axes = plt.subplots(1, len(tasks), figsize=(4.5 * len(tasks), 4), squeeze=False)
    for ax, t in zip(axes[0], tasks):
        task_reps = [r for r in reps if any(x.task == t and x.representation == r for x in rows)]
        for k, m in enumerate(MODES):
            found = [_find(rows, t, m, r) for r in task_reps]
            xs = [i + (k - 0.5) * 0.38 for i in range(len(task_reps))]
            ax.bar(
                xs,
                [100 * f.mean if f else 0 for f in found],
                width=0.38,
                yerr=[100 * f.std if f else 0 for f in found],
                label="fine-tune" if m == "finetune" else "feature-based",
                capsize=2,
            )
        ax.set_xticks(range(len(task_reps)), task_reps, rotation=35, ha="right", fontsize=8)
        first = next(r for r in rows if r.task == t)
        ax.set_title(first.dataset, fontsize=10)
        ax.set_ylabel(f"{first.metric} on {first.scored_on} (%)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "modes.png", dpi=110)
    plt.close(fig)
    return {"json": out / "modes.json", "table": out / "modes.md", "plot": out / "modes.png"}


# --- masking ----------------------------------------------------------------------------------
@dataclass
class MaskingRow:
    masking: str
    nsp: bool
    steps: int
    tokens: int  # tokens seen in pretraining (steps x batch x block length)
    pretrain_seconds: float
    final_loss: float | None
    scores: dict = field(default_factory=dict)  # task -> {"metric", "mean", "std", "scores"}
    fill_mask: dict = field(default_factory=dict)  # "char" / "word" -> MaskedLMScore.to_dict()


def load_masked_lm(model_dir: str | Path):
    """The folder's masked LM in fp32 whatever it stores: an fp16 export (as bundled) would
    otherwise stay fp16 under transformers 5 and run about 100x slower on a CPU."""
    import torch
    from transformers import AutoModelForMaskedLM

    return AutoModelForMaskedLM.from_pretrained(str(model_dir), dtype=torch.float32, local_files_only=True, trust_remote_code=False)


def held_out_fill_mask(model_dir: str | Path, sentences: int) -> dict:
    """Char-level and whole-word fill-mask on the first held-out People's Daily sentences.

    Char blanks reward guessing a character from the rest of its word, which
    char masking trains; whole-word blanks (gold words) reward what wwm/ernie
    train; a masking comparison needs both.
    """
    from .data.splits import peoples_daily_heldout_words
    from .tokenizer import load_tokenizer
    from .training.mlm_eval import evaluate_mlm

    rows = peoples_daily_heldout_words()[:sentences]
    texts, words = [t for t, _ in rows], [w for _, w in rows]
    model = load_masked_lm(model_dir)
    tok = load_tokenizer(model_dir)
    return {"char": evaluate_mlm(model, tok, texts).to_dict(), "word": evaluate_mlm(model, tok, texts, words=words).to_dict()}


def run_masking(
    corpus: list[str],
    output: str | Path,
    maskings=("char", "wwm", "ernie", "ngram"),
    nsp_variants=(False, True),
    size: str = "tiny",
    steps: int = 2000,
    batch_size: int = 32,
    max_length: int = 128,
    max_docs: int | None = None,
    tasks=tuple(STUDY_TASKS),
    seeds=(1,),
    recipe_args: dict | None = None,
    num_proc: int = 2,
    fill_mask_sentences: int = 2000,
    learning_rate: float = 5e-4,
    init: str | None = None,
) -> list[MaskingRow]:
    """Same size, steps, batch, data and seed for every strategy; then held-out fill-mask
    (``fill_mask_sentences`` People's Daily sentences, 0 to skip) and the same recipes on each.

    With ``init`` (a checkpoint folder or a bundled model's name) every strategy continues
    pretraining from that one model instead of starting from scratch (``size`` is then
    unused): the question a practitioner with an existing encoder asks, and the only way to
    compare maskings past the bag-of-characters plateau on a budget that stays on it from
    scratch. The row ``init`` (steps 0) is that model itself, scored the same way."""
    from .training.pretrain import PretrainConfig, pretrain

    out = Path(output)
    rows = []

    def score(row: MaskingRow, model_dir: str | Path, cache_dir: Path, name: str) -> MaskingRow:
        if fill_mask_sentences:
            cached = cache_dir / "study_fill_mask.json"
            if not cached.is_file() or json.loads(cached.read_text()).get("sentences") != fill_mask_sentences:
                cache_dir.mkdir(parents=True, exist_ok=True)
                cached.write_text(json.dumps({"sentences": fill_mask_sentences, **held_out_fill_mask(model_dir, fill_mask_sentences)}))
            row.fill_mask = {k: v for k, v in json.loads(cached.read_text()).items() if k != "sentences"}
        for task in tasks:
            scores, record = [], None
            for seed in seeds:
                record = run_recipe(
                    task,
                    out / "finetune" / name / f"{task}-seed{seed}",
                    encoder=str(model_dir),
                    seed=seed,
                    no_save_model=True,
                    **(recipe_args or {}),
                )
                scores.append(float(record["score"]))
            row.scores[task] = {"dataset": record["dataset"], "metric": record["headline"], **_summary(scores)}
        return row

    if init is not None:
        from .models_registry import BUNDLED, bundled_path

        init = str(bundled_path(init)) if init in BUNDLED and not Path(init).exists() else str(init)
        if not (Path(init) / "config.json").is_file():  # fail before any run, not after the first
            raise FileNotFoundError(f"{init}: not a model folder (config.json is missing)")
        rows.append(score(MaskingRow("init", False, 0, 0, 0.0, None), init, out / "pretrain" / "init", "init"))
    for nsp in nsp_variants:
        for masking in maskings:
            name = masking + ("+nsp" if nsp else "")
            folder = out / "pretrain" / name
            timing = folder / "study_timing.json"
            start = time.perf_counter()
            final = pretrain(
                PretrainConfig(
                    corpus=list(corpus),
                    output=str(folder),
                    masking=masking,
                    nsp=nsp,
                    size=size,
                    init=init,
                    max_steps=steps,
                    batch_size=batch_size,
                    max_length=max_length,
                    max_docs=max_docs,
                    learning_rate=learning_rate,
                    save_steps=max(50, steps // 4),
                    logging_steps=max(1, steps // 20),
                    num_proc=num_proc,
                    seed=42,
                )
            )
            if not timing.is_file():  # the first completion's wall time (a resumed run adds its earlier part)
                timing.write_text(json.dumps({"seconds": time.perf_counter() - start}))
            log = (
                [json.loads(l) for l in (folder / "loss_log.jsonl").read_text().splitlines() if l.strip()]
                if (folder / "loss_log.jsonl").is_file()
                else []
            )
            losses = [e["loss"] for e in log if "loss" in e]
            row = MaskingRow(
                masking,
                nsp,
                steps,
                steps * batch_size * max_length,
                json.loads(timing.read_text())["seconds"],
                losses[-1] if losses else None,
            )
            rows.append(score(row, final, folder, name))
    return rows


def write_masking_report(rows: list[MaskingRow], output: str | Path, meta: dict | None = None) -> dict[str, Path]:
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    (out / "masking.json").write_text(
        json.dumps({"meta": meta or {}, "rows": [asdict(r) for r in rows]}, ensure_ascii=False, indent=1), encoding="utf-8"
    )
    tasks = list(rows[0].scores) if rows else []
    fill = bool(rows and rows[0].fill_mask)
    head = (
        "| masking | NSP | steps | tokens | pretrain wall time | final MLM loss | "
        + ("fill-mask char acc | whole-word acc | " if fill else "")
        + " | ".join(f"{rows[0].scores[t]['dataset']} ({rows[0].scores[t]['metric']})" for t in tasks)
        + " |"
    )
    lines = [head, "|---|---|---|---|---|---|" + "---|" * (len(tasks) + 2 * fill)]
    for r in rows:
        cells = " | ".join(
            f"{100 * r.scores[t]['mean']:.2f}" + (f" ± {100 * r.scores[t]['std']:.2f}" if len(r.scores[t]["scores"]) > 1 else "")
            for t in tasks
        )
        loss = f"{r.final_loss:.3f}" if r.final_loss is not None else "–"
        fm = f"{100 * r.fill_mask['char']['accuracy']:.2f} | {100 * r.fill_mask['word']['accuracy']:.2f} | " if fill else ""
        nsp = "yes" if r.nsp else "no"
        lines.append(f"| {r.masking} | {nsp} | {r.steps} | {r.tokens:,} | {r.pretrain_seconds / 60:.1f} min | {loss} | {fm}{cells} |")
    (out / "masking.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    files = {"json": out / "masking.json", "table": out / "masking.md"}
    logs = [(r, out / "pretrain" / (r.masking + ("+nsp" if r.nsp else "")) / "loss_log.jsonl") for r in rows]
    if any(log.is_file() for _, log in logs):
        files["plot"] = _plot_masking_losses(logs, out / "masking.png")
    return files


def _plot_masking_losses(logs, png: Path) -> Path:
    """Training-loss curves of the pretraining runs, overlaid. The losses are not a
    ranking: wwm/ernie/ngram targets are whole words (harder than single characters)
    and NSP runs add the next-sentence loss; fill-mask and the recipes are the ranking."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .training.pretrain import read_loss_log

    fig, ax = plt.subplots(figsize=(7, 4))
    for r, log in logs:
        points = [(e["step"], e["loss"]) for e in read_loss_log(log) if "loss" in e] if log.is_file() else []
        if points:
            ax.plot(*zip(*points), label=r.masking + (" + NSP" if r.nsp else ""), linestyle="--" if r.nsp else "-")
    ax.set_xlabel("pretraining step")
    ax.set_ylabel("training loss (MLM, + NSP where on)")
    ax.set_title("masking study: pretraining loss (not comparable across maskings)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png
