"""The application-mode study: fine-tune vs feature-based x every representation, several
seeds each, and the BERT paper's feature-based NER table (Table 7) on Chinese."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from ..fusion import REPRESENTATIONS
from ..heads.config import MODES
from ..recipes import RECIPES
from . import STUDY_TASKS, run_recipe, summary

__all__ = ["BERT_TABLE", "ModeRow", "mode_grid", "run_modes", "literature_claims", "write_modes_report", "merge_mode_reports"]

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


# --- application modes ----------------------------------------------------------------------
def mode_grid(task: str, modes=MODES, representations=REPRESENTATIONS) -> list[tuple[str, str]]:
    head = RECIPES[task].head
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
    frozen_learning_rate: float | None = None,
) -> list[ModeRow]:
    """Every mode x representation per task, ``len(seeds)`` runs each; plus the extra
    feature-based NER rows of the BERT paper's table when ``bert_table`` and NER is studied.
    ``finetune_learning_rate`` sets the encoder LR of fine-tuned runs only: one shared
    ``learning_rate`` would also become the head LR of the feature-based runs, whose
    recipe default (1e-3) suits a head trained alone; ``frozen_learning_rate`` sets theirs
    (a head over frozen features may need a hotter one to converge in the same steps)."""
    out = Path(output)
    plan: list[tuple[str, str, str]] = [(t, m, r) for t in tasks for m, r in mode_grid(t, modes, representations)]
    if bert_table and "ner" in tasks:
        plan += [("ner", m, r) for _, m, r in BERT_TABLE if m in modes and ("ner", m, r) not in plan]
    rows = []
    for task, mode, rep in plan:
        scores, record = [], None
        lr = finetune_learning_rate if mode == "finetune" else frozen_learning_rate
        for seed in seeds:
            record = run_recipe(
                task,
                out / task / f"{mode}-{rep}-seed{seed}",
                encoder=encoder,
                mode=mode,
                representation=rep,
                seed=seed,
                save_model=False,
                learning_rate=lr,
                **(recipe_args or {}),
            )
            scores.append(float(record["score"]))
        s = summary(scores)
        rows.append(ModeRow(task, record["dataset"], mode, rep, record["headline"], s["scores"], s["mean"], s["std"], record["scored_on"]))
    return rows


FUSIONS = ("mean-last-4", "concat-last-4", "scalar-mix", "layer-attention")  # the literature's ways of using several layers


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

    # one practitioner's report (Weibo post tagging): several layers gained "just under 2 F1" over [CLS]
    text = "for single-text classification, fusing several layers beats [CLS] (by just under 2 F1 in one report)"
    found = []
    for m in MODES:
        cls = _find(rows, "tagging", m, "cls")
        fusion = [r for r in rows if r.task == "tagging" and r.mode == m and r.representation in FUSIONS]
        if cls and fusion:
            found.append((m, cls, max(fusion, key=lambda r: r.mean)))
    if found:
        # a gain counts when it exceeds the seeds' spread (at least half a point)
        wins = [best.mean - cls.mean > max(cls.std, best.std, 0.005) for _, cls, best in found]
        claims.append(
            {
                "claim": text,
                "holds": all(wins) if all(wins) or not any(wins) else "partly",
                "evidence": "; ".join(
                    f"{m}: best fusion {best.representation} {100 * best.mean:.2f} ± {100 * best.std:.2f} vs cls "
                    f"{100 * cls.mean:.2f} ± {100 * cls.std:.2f} ({100 * (best.mean - cls.mean):+.2f})"
                    for m, cls, best in found
                ),
            }
        )
    else:
        claims.append({"claim": text, "holds": None, "evidence": "needs tagging with cls and a fusion of several layers"})
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


def merge_mode_reports(paths: list[str | Path]) -> tuple[list[ModeRow], dict]:
    """Rows of several ``modes.json`` files of one encoder as one report's rows and meta.

    Studies are often run in parts (fine-tuned and feature-based cells apart, each with its own
    learning rate; one task at a time); the claims that compare tasks or modes need them together.
    A cell found in several files is taken from the last one given (a rerun at a better learning
    rate replaces the first); files of different encoders are refused, since their cells do not
    compare."""
    rows: dict[tuple[str, str, str], ModeRow] = {}
    encoders: dict[str, str] = {}
    sources = []
    for path in paths:
        path = Path(path)
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
            found = [ModeRow(**r) for r in report["rows"]]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}: not a modes.json written by zhbert study modes ({e})") from e
        encoder = str(report.get("meta", {}).get("encoder"))
        encoders.setdefault(encoder, str(path))
        if len(encoders) > 1:
            first, where = next(iter(encoders.items()))
            raise ValueError(f"{path}: encoder {encoder!r}, but {where} is encoder {first!r}; cells of different encoders do not compare")
        for r in found:
            rows[(r.task, r.mode, r.representation)] = r
        sources.append({"file": str(path), "argv": report.get("meta", {}).get("argv"), "cells": len(found)})
    meta = {"encoder": next(iter(encoders), None), "merged_from": sources}
    return list(rows.values()), meta
