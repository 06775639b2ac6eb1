"""The objective study: which pretraining objective makes a small Chinese BERT better at equal CPU time.

Each objective (masked LM; ELECTRA's replaced-token detection, Clark et al. 2020) pretrains from the
same start, on the same corpus, shape, batch, learning rate and seed, for the same CPU seconds: a
short calibration run of each measures its CPU seconds per step on this machine, and each gets
``cpu_seconds / that`` steps (an ELECTRA step costs more: a generator runs beside the discriminator).
Every result is then fine-tuned by the same recipes and scored on dev splits, and held-out fill-mask
is measured: for MLM from the encoder itself, for ELECTRA from its generator and from a masked-LM head
continued briefly on the discriminator (``mlm_head_steps``), the two ways a user gets fill-mask from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import STUDY_TASKS
from .masking import score_encoder, study_pretrain_config, task_cells, task_headers, write_rows_json

__all__ = ["ObjectiveRow", "cpu_seconds_per_step", "calibrated_steps", "run_objectives", "write_objectives_report"]


@dataclass
class ObjectiveRow:
    objective: str  # "init" for the starting model, scored the same way
    steps: int
    tokens: int  # token slots seen in pretraining (steps x batch x block length)
    cpu_seconds: float  # CPU seconds (all threads) of its steps, at the rate its loss log shows
    final_loss: float | None
    scores: dict = field(default_factory=dict)  # task -> {"dataset", "metric", "mean", "std", "scores"}
    fill_mask: dict = field(default_factory=dict)  # "char" / "word" -> MaskedLMScore.to_dict() (ELECTRA: its generator's)
    fill_mask_head: dict = field(default_factory=dict)  # ELECTRA: a masked-LM head continued on the discriminator


def _log(folder: Path) -> list[dict]:
    from ..training.pretrain import read_loss_log

    log = folder / "loss_log.jsonl"
    return [e for e in read_loss_log(log) if "loss" in e] if log.is_file() else []


def cpu_seconds_per_step(log: list[dict]) -> float:
    """CPU seconds a step took in a run's loss log: the CPU seconds between consecutive logged steps
    of one process over the steps between them (a resumed run's process restarts the count; the
    first steps, which load data and warm up, fall before the first logged step)."""
    pairs = [(a, b) for a, b in zip(log, log[1:]) if b["step"] > a["step"] and b["cpu_s"] >= a["cpu_s"]]
    if not pairs:
        raise ValueError("the run logged fewer than two steps: give the calibration run more --calibration-steps")
    return sum(b["cpu_s"] - a["cpu_s"] for a, b in pairs) / sum(b["step"] - a["step"] for a, b in pairs)


def calibrated_steps(log: list[dict], cpu_seconds: float) -> int:
    """Steps that fit ``cpu_seconds`` at a calibration run's rate (:func:`cpu_seconds_per_step`)."""
    return max(1, int(cpu_seconds / max(cpu_seconds_per_step(log), 1e-9)))


def run_objectives(
    corpus: list[str],
    output: str | Path,
    init: str,
    cpu_seconds: float,
    objectives: tuple[str, ...] = ("mlm", "electra"),
    masking: str = "wwm",
    batch_size: int = 32,
    max_length: int = 128,
    learning_rate: float = 3e-4,
    max_docs: int | None = None,
    tasks=tuple(STUDY_TASKS),
    seeds=(1,),
    recipe_args: dict | None = None,
    fill_mask_sentences: int = 2000,
    calibration_steps: int = 40,
    mlm_head_steps: int = 300,
    num_proc: int = 2,
) -> list[ObjectiveRow]:
    """Pretrain ``init`` further under each objective for ``cpu_seconds`` CPU seconds, then score each
    result (and ``init`` itself, the row "init") with the same recipes and fill-mask. Every run is
    skipped or resumed once started, so a stopped study continues where it was."""
    from ..models_registry import resolve_model_path
    from ..training.pretrain import pretrain

    out = Path(output)
    init = str(resolve_model_path(init))

    def config(objective: str, folder: Path, steps: int, start: str = init):
        return study_pretrain_config(
            corpus, folder, steps, objective=objective, masking=masking, init=start, batch_size=batch_size, max_length=max_length,
            max_docs=max_docs, learning_rate=learning_rate, num_proc=num_proc,
        )  # fmt: skip

    def scored(row: ObjectiveRow, model_dir, name: str, fill_mask_model=None) -> ObjectiveRow:
        row.scores, row.fill_mask = score_encoder(
            model_dir, out / "finetune" / name, out / "pretrain" / name, tasks, seeds, recipe_args, fill_mask_sentences, fill_mask_model
        )
        return row

    rows = [scored(ObjectiveRow("init", 0, 0, 0.0, None), init, "init")]
    for objective in objectives:
        calibration = out / "calibrate" / objective
        pretrain(config(objective, calibration, calibration_steps))
        steps = calibrated_steps(_log(calibration), cpu_seconds)
        folder = out / "pretrain" / objective
        final = pretrain(config(objective, folder, steps))
        log = _log(folder)
        cpu = steps * cpu_seconds_per_step(log) if len(log) > 1 else float("nan")  # what the run's steps cost, at its own rate
        row = ObjectiveRow(objective, steps, steps * batch_size * max_length, cpu, log[-1]["loss"] if log else None)
        if objective == "electra":
            scored(row, final, objective, fill_mask_model=final / "generator")
            if mlm_head_steps and fill_mask_sentences:
                head = pretrain(config("mlm", out / "pretrain" / "electra-mlm-head", mlm_head_steps, start=str(final)))
                _, row.fill_mask_head = score_encoder(
                    head, out / "finetune" / "electra-mlm-head", out / "pretrain" / "electra-mlm-head", (), seeds,
                    fill_mask_sentences=fill_mask_sentences,
                )  # fmt: skip
        else:
            scored(row, final, objective)
        rows.append(row)
    return rows


def write_objectives_report(rows: list[ObjectiveRow], output: str | Path, meta: dict | None = None) -> dict[str, Path]:
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    write_rows_json(rows, out / "objectives.json", meta)
    tasks = list(rows[0].scores) if rows else []
    fill = bool(rows and rows[0].fill_mask)
    head = "| objective | steps | token slots | CPU s | final loss | " + ("fill-mask char / word | " if fill else "")
    head += task_headers(rows) + " |"
    lines = [head, "|---|---:|---:|---:|---:|" + "---:|" * (len(tasks) + fill)]

    def pct(scores: dict) -> str:
        return f"{100 * scores['char']['accuracy']:.1f}% / {100 * scores['word']['accuracy']:.1f}%"

    for r in rows:
        cells = task_cells(r)
        fm = ""
        if fill:
            fm = pct(r.fill_mask) + (f" (generator); {pct(r.fill_mask_head)} (MLM head)" if r.fill_mask_head else "") + " | "
        loss = f"{r.final_loss:.3f}" if r.final_loss is not None else "–"
        lines.append(f"| {r.objective} | {r.steps:,} | {r.tokens:,} | {r.cpu_seconds:,.0f} | {loss} | {fm}{cells} |")
    (out / "objectives.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"json": out / "objectives.json", "table": out / "objectives.md"}
