"""The word-information study: where should a small Chinese BERT get its words from?

Four ways, on the same token tasks, seeds and budget:

* ``neither``: the encoder alone (char-masked ``base``, or any encoder given);
* ``pretraining``: an encoder pretrained with word information (whole-word or ERNIE masking),
  fine-tuned alone;
* ``fine-tuning``: the first encoder with SoftLexicon word sets and character bigrams in the head
  (``--lexicon jieba --bigram-dim N``);
* ``both``: the word-masked encoder with those head features;

plus ``lexicon`` and ``bigrams`` alone, to tell the two head features apart, and, given a folder
of static vectors (``zhbert static-embeddings``), the fine-tuning features started from word2vec
instead of random vectors. Without a word-masked encoder the ``pretraining`` and ``both`` rows are
left out and the report says so. Every run is a
recipe call (``zhbert train <task> ...``); a rerun skips finished runs.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from . import run_recipe, summary

__all__ = ["WordRow", "conditions", "parse_tasks", "pick_conditions", "run_words_study", "write_words_report"]


@dataclass
class WordRow:
    task: str  # recipe=dataset
    dataset: str
    metric: str
    condition: str
    scores: dict  # summary over seeds: scores, mean, std


def conditions(bigram_dim: int, wwm_encoder: str | None, static_embeddings: str | None = None) -> dict[str, tuple[str, dict]]:
    """``{name: (which encoder, head options)}``; ``"wwm"`` names the word-masked encoder."""
    head = {"lexicon": "jieba", "bigram_dim": bigram_dim}
    out = {
        "neither": ("base", {}),
        "lexicon": ("base", {"lexicon": "jieba"}),
        "bigrams": ("base", {"bigram_dim": bigram_dim}),
        "fine-tuning (lexicon + bigrams)": ("base", head),
    }
    if static_embeddings:
        out["word2vec start (lexicon + bigrams)"] = ("base", {**head, "static_embeddings": str(static_embeddings)})
    if wwm_encoder:
        out["pretraining (word masking)"] = ("wwm", {})
        out["both"] = ("wwm", head)
    return out


def pick_conditions(available: dict, spec: str | None) -> dict:
    """Keep the conditions named in ``spec`` ("neither,fine-tuning,pretraining,both": the folder
    names, i.e. each name before its parenthesis), in the study's own order. A long study on two
    cores runs the issue's four conditions first and the single-feature rows later, if at all."""
    if not spec:
        return available
    wanted = [p.strip() for p in spec.split(",") if p.strip()]
    by_slug = {_slug(name): name for name in available}
    unknown = [w for w in wanted if w not in by_slug]
    if unknown or not wanted:
        raise ValueError(f"--conditions: {', '.join(unknown) or 'nothing'} is not one of {', '.join(by_slug)} (with these options)")
    return {name: v for name, v in available.items() if _slug(name) in wanted}


def parse_tasks(spec: str) -> list[tuple[str, str]]:
    """``"ner=msra,ner=weibo,cws=pku"`` -> ``[("ner", "msra"), ...]``: token recipes only."""
    from ..recipes import RECIPES

    out = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, _, dataset = part.partition("=")
        if name not in RECIPES or RECIPES[name].head != "token" or not dataset:
            token = [n for n, r in RECIPES.items() if r.head == "token"]
            raise ValueError(f"--tasks takes recipe=dataset pairs over the token recipes ({', '.join(token)}); got {part!r}")
        out.append((name, dataset))
    if not out:
        raise ValueError("--tasks names no task")
    return out


def run_words_study(
    encoder: str,
    output: str | Path,
    tasks: str = "ner=msra,ner=weibo,ner=resume,cws=pku",
    seeds=(1, 2, 3),
    wwm_encoder: str | None = None,
    bigram_dim: int = 50,
    recipe_args: dict | None = None,
    static_embeddings: str | None = None,
    only: str | None = None,
) -> list[WordRow]:
    out = Path(output)
    options = {k: v for k, v in (recipe_args or {}).items() if v is not None}
    encoders = {"base": encoder, "wwm": wwm_encoder}
    picked = pick_conditions(conditions(bigram_dim, wwm_encoder, static_embeddings), only)
    rows = []
    for task, dataset in parse_tasks(tasks):
        for name, (which, head) in picked.items():
            records = [
                run_recipe(
                    task,
                    out / f"{task}-{dataset}" / _slug(name) / f"seed{seed}",
                    encoder=encoders[which],
                    dataset=dataset,
                    seed=seed,
                    save_model=False,
                    **head,
                    **options,
                )
                for seed in seeds
            ]
            first = records[0]
            scores = summary([float(r["score"]) for r in records])
            rows.append(WordRow(f"{task}={dataset}", first["dataset"], first["headline"], name, scores))
    return rows


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name.split(" (")[0]).strip("-")


def write_words_report(rows: list[WordRow], output: str | Path, meta: dict | None = None) -> dict[str, Path]:
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    (out / "words.json").write_text(json.dumps({"meta": meta or {}, "rows": [asdict(r) for r in rows]}, ensure_ascii=False, indent=1))
    names = list(dict.fromkeys(r.condition for r in rows))
    tasks = list(dict.fromkeys(r.task for r in rows))
    lines = ["| task (metric) | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for t in tasks:
        cells = {r.condition: r for r in rows if r.task == t}
        base = cells["neither"].scores["mean"] if "neither" in cells else None
        parts = []
        for n in names:
            s = cells[n].scores
            cell = f"{100 * s['mean']:.2f}" + (f" ± {100 * s['std']:.2f}" if len(s["scores"]) > 1 else "")
            if base is not None and n != "neither":
                cell += f" ({100 * (s['mean'] - base):+.2f})"
            parts.append(cell)
        first = next(iter(cells.values()))
        lines.append(f"| {first.dataset} ({first.metric}) | " + " | ".join(parts) + " |")
    if not any(n.startswith("pretraining") for n in names):
        lines.append("\nNo word-masked encoder given (--wwm-encoder): the pretraining and both rows are not measured.")
    (out / "words.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _plot(rows, names, tasks, out / "words.png")
    return {"json": out / "words.json", "table": out / "words.md", "plot": out / "words.png"}


def _plot(rows: list[WordRow], names: list[str], tasks: list[str], path: Path) -> None:
    """One panel per task: a bar per condition (mean, seed spread) with every seed as a dot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(tasks), figsize=(2.2 + 0.55 * len(names) * len(tasks), 3.6), squeeze=False)
    colours = ["#b3b3b3", "#8da0cb", "#66c2a5", "#fc8d62", "#e78ac3", "#a6d854"]
    for ax, t in zip(axes[0], tasks):
        cells = {r.condition: r for r in rows if r.task == t}
        every = []
        for x, n in enumerate(names):
            s = cells[n].scores
            scores = [100 * v for v in s["scores"]]
            every += scores
            ax.bar(x, 100 * s["mean"], yerr=100 * s["std"] if len(scores) > 1 else 0, capsize=3, color=colours[x % len(colours)])
            ax.plot([x] * len(scores), scores, "k.", markersize=4)
        margin = max(1.0, max(every) - min(every))
        ax.set_ylim(min(every) - margin, max(every) + 0.3 * margin)
        ax.set_xticks(range(len(names)), [n.split(" (")[0] for n in names], rotation=35, ha="right", fontsize=7)
        first = next(iter(cells.values()))
        ax.set_title(first.dataset, fontsize=9)
        ax.set_ylabel(first.metric, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
