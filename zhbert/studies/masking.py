"""The masking study: the same pretraining budget under each masking strategy (and NSP),
then held-out fill-mask and the same recipes on every result."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import STUDY_TASKS, run_recipe, summary

__all__ = [
    "MaskingRow",
    "load_masked_lm",
    "held_out_fill_mask",
    "study_pretrain_config",
    "score_encoder",
    "task_headers",
    "task_cells",
    "write_rows_json",
    "run_masking",
    "write_masking_report",
]


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
    from ..data.splits import peoples_daily_heldout_words
    from ..tokenizer import load_tokenizer
    from ..training.mlm_eval import evaluate_mlm

    rows = peoples_daily_heldout_words()[:sentences]
    texts, words = [t for t, _ in rows], [w for _, w in rows]
    model = load_masked_lm(model_dir)
    tok = load_tokenizer(model_dir)
    return {"char": evaluate_mlm(model, tok, texts).to_dict(), "word": evaluate_mlm(model, tok, texts, words=words).to_dict()}


def study_pretrain_config(corpus, folder: str | Path, steps: int, **settings):
    """A study's pretraining run: ``steps`` steps into ``folder``, a checkpoint every quarter (at least
    50 steps apart), about 20 loss-log points, seed 42; ``settings``: the other ``PretrainConfig`` fields."""
    from ..training.pretrain import PretrainConfig

    return PretrainConfig(
        corpus=list(corpus), output=str(folder), max_steps=steps, save_steps=max(50, steps // 4), logging_steps=max(1, steps // 20),
        seed=42, **settings,
    )  # fmt: skip


def score_encoder(
    model_dir: str | Path,
    finetune_dir: Path,
    cache_dir: Path,
    tasks,
    seeds,
    recipe_args: dict | None = None,
    fill_mask_sentences: int = 2000,
    fill_mask_model: str | Path | None = None,
) -> tuple[dict, dict]:
    """A study's scores of one encoder: (task -> {"dataset", "metric", "mean", "std", "scores"} over
    ``seeds``, each run in ``finetune_dir/<task>-seed<seed>``; held-out fill-mask "char" / "word",
    cached in ``cache_dir``). ``fill_mask_model``: the masked LM that answers fill-mask for an encoder
    without one (an ELECTRA discriminator's generator); default the encoder itself."""
    fill_mask = {}
    if fill_mask_sentences:
        cached = Path(cache_dir) / "study_fill_mask.json"
        if not cached.is_file() or json.loads(cached.read_text()).get("sentences") != fill_mask_sentences:
            cached.parent.mkdir(parents=True, exist_ok=True)
            found = held_out_fill_mask(fill_mask_model or model_dir, fill_mask_sentences)
            cached.write_text(json.dumps({"sentences": fill_mask_sentences, **found}))
        fill_mask = {k: v for k, v in json.loads(cached.read_text()).items() if k != "sentences"}
    scores = {}
    for task in tasks:
        values, record = [], None
        for seed in seeds:
            folder = Path(finetune_dir) / f"{task}-seed{seed}"
            record = run_recipe(task, folder, encoder=str(model_dir), seed=seed, save_model=False, **(recipe_args or {}))
            values.append(float(record["score"]))
        scores[task] = {"dataset": record["dataset"], "metric": record["headline"], **summary(values)}
    return scores, fill_mask


def run_masking(
    corpus: list[str],
    output: str | Path,
    maskings: tuple[str, ...] | None = None,
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
    untrained: bool = True,
) -> list[MaskingRow]:
    """Same size, steps, batch, data and seed for every strategy; then held-out fill-mask
    (``fill_mask_sentences`` People's Daily sentences, 0 to skip) and the same recipes on each.

    With ``init`` (a checkpoint folder or a bundled model's name) every strategy continues
    pretraining from that one model instead of starting from scratch (``size`` is then
    unused): the question a practitioner with an existing encoder asks, and the only way to
    compare maskings past the bag-of-characters plateau on a budget that stays on it from
    scratch. The row ``init`` (steps 0) is that model itself, scored the same way.

    From scratch, ``untrained`` adds the row ``none``: the runs' common starting weights
    (same seed, size and position code), fine-tuned the same way without any pretraining.
    Below it, a masking's encoder has not yet paid for its pretraining (measured on this CPU
    at 7,000 ``tiny`` steps: no masking was above it on PKU CWS)."""
    from ..masking import MASKERS
    from ..training.pretrain import pretrain, read_loss_log, save_untrained

    maskings = tuple(maskings or MASKERS)  # default: every registered strategy

    out = Path(output)
    rows = []

    def score(row: MaskingRow, model_dir: str | Path, cache_dir: Path, name: str) -> MaskingRow:
        row.scores, row.fill_mask = score_encoder(
            model_dir, out / "finetune" / name, cache_dir, tasks, seeds, recipe_args, fill_mask_sentences
        )
        return row

    if init is not None:
        from ..models_registry import BUNDLED, bundled_path

        init = str(bundled_path(init)) if init in BUNDLED and not Path(init).exists() else str(init)
        if not (Path(init) / "config.json").is_file():  # fail before any run, not after the first
            from ..model_folder import no_config_problem

            raise FileNotFoundError(no_config_problem(init))
        rows.append(score(MaskingRow("init", False, 0, 0, 0.0, None), init, out / "pretrain" / "init", "init"))

    def config(masking: str, nsp: bool, folder: Path):
        return study_pretrain_config(
            corpus, folder, steps, masking=masking, nsp=nsp, size=size, init=init, batch_size=batch_size, max_length=max_length,
            max_docs=max_docs, learning_rate=learning_rate, num_proc=num_proc,
        )  # fmt: skip

    if init is None and untrained:
        folder = out / "pretrain" / "none"
        final = folder / "final"
        if not (final / "config.json").is_file():
            save_untrained(config(maskings[0], False, folder))
        rows.append(score(MaskingRow("none", False, 0, 0, 0.0, None), final, folder, "none"))
    for nsp in nsp_variants:
        for masking in maskings:
            name = masking + ("+nsp" if nsp else "")
            folder = out / "pretrain" / name
            timing = folder / "study_timing.json"
            start = time.perf_counter()
            final = pretrain(config(masking, nsp, folder))
            if not timing.is_file():  # the first completion's wall time (a resumed run adds its earlier part)
                timing.write_text(json.dumps({"seconds": time.perf_counter() - start}))
            log = read_loss_log(folder / "loss_log.jsonl") if (folder / "loss_log.jsonl").is_file() else []
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


def write_rows_json(rows, path: Path, meta: dict | None) -> None:
    """A study's rows (dataclasses) and its settings, as JSON."""
    path.write_text(json.dumps({"meta": meta or {}, "rows": [asdict(r) for r in rows]}, ensure_ascii=False, indent=1), encoding="utf-8")


def task_headers(rows) -> str:
    """The table columns of the recipes a study scored: ``dataset (metric)``, in the rows' order."""
    return " | ".join(f"{rows[0].scores[t]['dataset']} ({rows[0].scores[t]['metric']})" for t in rows[0].scores) if rows else ""


def task_cells(row) -> str:
    """A row's recipe scores in percent, ``mean ± sd`` where several seeds ran."""
    return " | ".join(f"{100 * v['mean']:.2f}" + (f" ± {100 * v['std']:.2f}" if len(v["scores"]) > 1 else "") for v in row.scores.values())


def write_masking_report(rows: list[MaskingRow], output: str | Path, meta: dict | None = None) -> dict[str, Path]:
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    write_rows_json(rows, out / "masking.json", meta)
    tasks = list(rows[0].scores) if rows else []
    fill = bool(rows and rows[0].fill_mask)
    head = (
        "| masking | NSP | steps | tokens | pretrain wall time | final MLM loss | "
        + ("fill-mask char acc | whole-word acc | " if fill else "")
        + task_headers(rows)
        + " |"
    )
    lines = [head, "|---|---|---|---|---|---|" + "---|" * (len(tasks) + 2 * fill)]
    for r in rows:
        cells = task_cells(r)
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

    from ..training.pretrain import read_loss_log

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
