"""The long-text study (issue 20, question 4): texts longer than the encoder's window,
read by truncation or by overlapping windows of several strides.

Long documents are built from real text: consecutive sentences of a NER dataset's scored
split (MSRA's test by default) joined into documents of at least ``min_chars`` characters,
their gold entities carried along. One saved NER model then tags

* every sentence alone (the reference: nothing is longer than a window there),
* the documents truncated to their first window (``truncate=True``),
* the documents in overlapping windows with strides of 1/4, 1/2, 3/4 and all of the window
  body (no overlap), each token's tag from the window where it sits farthest from an edge,
* the documents in windows aligned to sentences: one sentence per window (the default,
  ``window_align="sentence"``) or whole sentences packed into each (``"packed"``), overlap
  only inside a sentence longer than a window,

scored with seqeval on the same characters.

Classification (:func:`run_long_classification`) trains sequence heads on the ``sources``
dataset by default (:mod:`zhbert.data.source_excerpts`: which corpus source a 1,000-1,200 character
excerpt comes from), several seeds per setting, each run one call of the tagging recipe:

* truncated: the head reads the first window only, in training and in scoring;
* overlapping windows (half-window stride), the window vectors' mean;
* the same windows, mean and max concatenated (``window_pool="mean-max"``).

Each trained model is then also read the other way (truncated <-> all windows) without
retraining, which separates what the training setting learned from what the reading sees.
On ``post-in-news`` (:mod:`zhbert.data.post_in_news`: the evidence is one Weibo post hidden in
a news transcript) every reading is also scored apart on the documents whose post lies inside
the first window and on the rest, where only the windows can see it, and each model also reads
the posts alone: the most a long reading could keep.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

__all__ = [
    "LongRow",
    "long_documents",
    "run_long",
    "write_long_report",
    "CLASSIFICATION_SETTINGS",
    "PoolRow",
    "run_long_classification",
    "write_long_classification_report",
]


@dataclass
class LongRow:
    setting: str
    window: int  # tokens incl. [CLS]/[SEP]
    stride: int | None  # tokens between window starts; None: one window, truncated, or aligned
    align: str  # window_align: token (overlap anywhere), sentence (one per window), packed
    texts: int
    characters: int
    precision: float
    recall: float
    f1: float
    seconds: float


def long_documents(rows: list[dict], min_chars: int) -> tuple[list[dict], int]:
    """Consecutive ``{"text", "tags"}`` rows joined until each document has ``min_chars``
    characters, and how many rows they used (a last, shorter remainder is left out: it
    would not be long)."""
    docs, text, tags, used = [], "", [], 0
    for k, r in enumerate(rows):
        text += r["text"]
        tags += list(r["tags"])
        if len(text) >= min_chars:
            docs.append({"text": text, "tags": tags})
            text, tags, used = "", [], k + 1
    return docs, used


def _score(model, tokenizer, rows: list[dict], batch_size: int) -> tuple[dict, float]:
    from ..heads import char_spans, predict_tags
    from ..metrics import entity_prf
    from ..tags import spans_to_tags

    scheme = model.head.scheme
    start = time.perf_counter()
    preds = predict_tags(model, tokenizer, [r["text"] for r in rows], batch_size=batch_size)
    seconds = time.perf_counter() - start
    predicted = [spans_to_tags(len(r["text"]), char_spans(p, scheme), scheme) for r, p in zip(rows, preds)]
    return entity_prf([r["tags"] for r in rows], predicted, scheme)["overall"], seconds


def run_long(
    model_dir: str,
    task: str = "ner",
    dataset: str = "msra",
    min_chars: int = 1500,
    max_sentences: int | None = None,
    batch_size: int = 32,
) -> list[LongRow]:
    """Every setting on the same sentences; ``max_sentences`` cuts the split (tests)."""
    from ..data.tasks import load_task_data
    from ..heads import load_head
    from ..heads.inputs import window_size
    from ..models_registry import resolve_model_path
    from ..tokenizer import load_tokenizer

    path = resolve_model_path(model_dir)
    model, tokenizer = load_head(path).eval(), load_tokenizer(path)
    if model.head.kind != "token":
        raise ValueError(f"{path}: the long-text study needs a token (NER) head, this is a {model.head.kind} head")
    sentences = load_task_data(task, dataset).test[:max_sentences]
    docs, n_used = long_documents(sentences, min_chars)
    if not docs:
        raise ValueError(f"{len(sentences)} sentences hold fewer than {min_chars:,} characters: no long document")
    used = sentences[:n_used]  # the same characters as the documents
    head = model.head
    window = window_size(head, model.config)
    body = window - 2
    rows = []

    def measure(setting, texts, stride, truncate, align="token"):
        model.head = replace(head, window=window, stride=stride, truncate=truncate, window_align=align)
        scores, seconds = _score(model, tokenizer, texts, batch_size)
        chars = sum(len(r["text"]) for r in texts)
        prf = scores["precision"], scores["recall"], scores["f1"]
        rows.append(LongRow(setting, window, stride, align, len(texts), chars, *prf, seconds))

    measure("sentences, each alone", used, None, False)
    measure("documents, truncated to one window", docs, None, True)
    for share, name in ((4, "1/4"), (2, "1/2"), (4 / 3, "3/4"), (1, "1 (no overlap)")):
        measure(f"documents, windows, stride {name} of the window", docs, max(1, round(body / share)), False)
    measure("documents, one window per sentence (the default)", docs, None, False, "sentence")
    measure("documents, whole sentences packed into windows", docs, None, False, "packed")
    model.head = head
    return rows


def write_long_report(rows: list[LongRow], output: str | Path, meta: dict | None = None) -> dict[str, Path]:
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    (out / "long.json").write_text(json.dumps({"meta": meta or {}, "rows": [asdict(r) for r in rows]}, ensure_ascii=False, indent=1))
    lines = [
        "| setting | window | stride | align | texts | characters | precision | recall | F1 | chars/s |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.setting} | {r.window} | {r.stride if r.stride is not None else '–'} | {r.align} | {r.texts:,} | {r.characters:,} | "
            f"{100 * r.precision:.2f} | {100 * r.recall:.2f} | {100 * r.f1:.2f} | {r.characters / max(r.seconds, 1e-9):,.0f} |"
        )
    (out / "long.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"json": out / "long.json", "table": out / "long.md"}


# --- classification: truncation vs windows, mean vs mean-max -----------------------------------
CLASSIFICATION_SETTINGS = {  # name -> recipe arguments
    "truncated": dict(truncate=True),
    "windows-mean": dict(window_pool="mean"),
    "windows-mean-max": dict(window_pool="mean-max"),
}


@dataclass
class PoolRow:
    setting: str  # how the head was trained (and read): CLASSIFICATION_SETTINGS
    read: str  # "as trained", or the other reading of the same models
    dataset: str
    accuracy: list[float]
    macro_f1: list[float]
    seeds: list[int]
    # datasets whose rows say where the evidence is (``position`` and ``post``: post-in-news):
    # accuracy per seed on the documents whose evidence ends inside the first window, and on the rest
    evidence_first_window: list[float] | None = None
    evidence_later: list[float] | None = None
    documents_evidence_first_window: int | None = None  # of the scored documents


def _predictions(run_dir: Path, reading: str, texts: list[str], truncate: bool, batch_size: int) -> list[int]:
    """A saved run's predicted labels for ``texts`` (truncated to the first window, or through
    every window), cached in the run's folder under ``reading`` (a rerun reads the cache)."""
    from ..heads import load_head, predict_scores
    from ..tokenizer import load_tokenizer

    cache = run_dir / f"test-predictions-{reading}.json"
    if cache.is_file():
        found = json.loads(cache.read_text(encoding="utf-8"))
        if len(found) == len(texts):
            return found
    model, tokenizer = load_head(run_dir / "model").eval(), load_tokenizer(run_dir / "model")
    model.head = replace(model.head, truncate=truncate)
    predicted = predict_scores(model, tokenizer, texts, batch_size=batch_size).argmax(-1).tolist()
    cache.write_text(json.dumps(predicted), encoding="utf-8")
    return predicted


def evidence_in_first_window(run_dir: Path, rows: list[dict]) -> list[bool] | None:
    """Per row, whether its evidence (``post`` at ``position``) ends inside the first window
    the saved model reads; None when the rows do not say where their evidence is."""
    if not rows or "position" not in rows[0]:
        return None
    from transformers import AutoConfig

    from ..heads import load_head
    from ..heads.inputs import window_size
    from ..tokenizer import encode, load_tokenizer

    head = load_head(run_dir / "model").head
    body = window_size(head, AutoConfig.from_pretrained(run_dir / "model")) - 2  # [CLS] and [SEP]
    encodings = encode(load_tokenizer(run_dir / "model"), [r["text"] for r in rows])
    first_window_end = [e.offsets[min(body, len(e.offsets)) - 1][1] for e in encodings]  # characters the first window covers
    return [r["position"] + len(r["post"]) <= end for r, end in zip(rows, first_window_end)]


def _accuracy(gold: list[int], predicted: list[int], keep: list[bool]) -> float:
    pairs = [(g, p) for g, p, k in zip(gold, predicted, keep) if k]
    return sum(g == p for g, p in pairs) / len(pairs) if pairs else float("nan")


def run_long_classification(
    encoder: str,
    output: str | Path,
    dataset: str = "sources",
    seeds=(1, 2, 3),
    settings=tuple(CLASSIFICATION_SETTINGS),
    cross_read: bool = True,
    recipe_args: dict | None = None,
) -> list[PoolRow]:
    """Every setting x seed through the tagging recipe (finished runs are skipped on a rerun),
    then, with ``cross_read``, each saved model read the other way on the same test texts.
    When the dataset's rows say where their evidence is, every row also gets the accuracy on
    the documents whose evidence is inside the first window and on the rest."""
    from ..data.tasks import load_task_data
    from ..metrics import classification_scores
    from . import run_recipe

    out = Path(output)
    records: dict[tuple[str, int], dict] = {}
    for seed in seeds:  # seed by seed: a study stopped early still has every setting once
        for name in settings:
            options = {**(recipe_args or {}), **CLASSIFICATION_SETTINGS[name]}
            records[name, seed] = run_recipe("tagging", out / f"{name}-seed{seed}", dataset=dataset, encoder=encoder, seed=seed, **options)
    data = load_task_data("tagging", dataset)
    test = data.test[: records[settings[0], seeds[0]]["arguments"]["max_eval_samples"]]  # what the runs scored
    gold = [r["label"] for r in test]
    in_first = evidence_in_first_window(out / f"{settings[0]}-seed{seeds[0]}", test)
    texts = [r["text"] for r in test]
    rows = []
    for name in settings:
        trained_truncated = CLASSIFICATION_SETTINGS[name].get("truncate", False)
        readings = [("as trained", trained_truncated, texts)]  # (read as, truncate, texts)
        if cross_read:
            other = "truncated (first window)" if not trained_truncated else "every window (half-window stride)"
            readings.append((other, not trained_truncated, texts))
        if "post" in test[0]:  # the evidence alone: how much of it each long reading keeps
            readings.append(("the post alone", False, [r["post"] for r in test]))
        for read, truncate, inputs in readings:
            recs = [records[name, s] for s in seeds]
            if read == "as trained":  # the recipe's own scores
                accuracy, macro_f1 = [r["metrics"]["accuracy"] for r in recs], [r["metrics"]["macro_f1"] for r in recs]
            if read != "as trained" or in_first is not None:
                cache = "post" if read == "the post alone" else "truncated" if truncate else "windows"
                predicted = [_predictions(out / f"{name}-seed{s}", cache, inputs, truncate, 64) for s in seeds]
            if read != "as trained":
                scores = [classification_scores(gold, p, len(data.labels)) for p in predicted]
                accuracy, macro_f1 = [x["accuracy"] for x in scores], [x["macro_f1"] for x in scores]
            row = PoolRow(name, read, recs[0]["dataset"], accuracy, macro_f1, list(seeds))
            if in_first is not None and read != "the post alone":
                row.evidence_first_window = [_accuracy(gold, p, in_first) for p in predicted]
                row.evidence_later = [_accuracy(gold, p, [not k for k in in_first]) for p in predicted]
                row.documents_evidence_first_window = sum(in_first)
            rows.append(row)
    # as trained first, then the cross-reads, then the post alone
    return sorted(rows, key=lambda r: 0 if r.read == "as trained" else 2 if r.read == "the post alone" else 1)


def _mean_sd(values: list[float]) -> str:
    import statistics

    m = 100 * statistics.fmean(values)
    return f"{m:.2f} ± {100 * statistics.stdev(values):.2f}" if len(values) > 1 else f"{m:.2f}"


def write_long_classification_report(rows: list[PoolRow], output: str | Path, meta: dict | None = None) -> dict[str, Path]:
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    (out / "long_classification.json").write_text(
        json.dumps({"meta": meta or {}, "rows": [asdict(r) for r in rows]}, ensure_ascii=False, indent=1), encoding="utf-8"
    )
    located = [r for r in rows if r.evidence_first_window is not None]
    lines = ["| trained as | read as | seeds | test accuracy | test macro-F1 | per seed (accuracy) |", "|---|---|---:|---:|---:|---|"]
    if located:  # where the evidence sits: inside the first window, or past it
        n = located[0].documents_evidence_first_window
        lines[0] += f" evidence in the first window ({n} documents) | evidence later |"
        lines[1] += "---:|---:|"
    for r in rows:
        line = (
            f"| {r.setting} | {r.read} | {len(r.seeds)} | {_mean_sd(r.accuracy)} | {_mean_sd(r.macro_f1)} | "
            + ", ".join(f"{100 * a:.2f}" for a in r.accuracy)
            + " |"
        )
        if located:
            line += f" {_mean_sd(r.evidence_first_window)} | {_mean_sd(r.evidence_later)} |" if r.evidence_first_window else " – | – |"
        lines.append(line)
    (out / "long_classification.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _plot_pooling(rows, out / "long_classification.png")
    return {"json": out / "long_classification.json", "table": out / "long_classification.md", "plot": out / "long_classification.png"}


def _reads_first_window(row: PoolRow) -> bool:
    trained_truncated = CLASSIFICATION_SETTINGS.get(row.setting, {}).get("truncate", False)
    return row.read.startswith("truncated") or (row.read == "as trained" and trained_truncated)


def _plot_pooling(rows: list[PoolRow], path: Path) -> None:
    """Test accuracy per training setting, read through the first window only beside every
    window (one of the two is how it was trained), seed spread as error bars."""
    import statistics

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    settings = list(dict.fromkeys(r.setting for r in rows))
    readings = [("read: first window only", lambda r: r.read != "the post alone" and _reads_first_window(r))]
    readings.append(("read: every window", lambda r: r.read != "the post alone" and not _reads_first_window(r)))
    if any(r.read == "the post alone" for r in rows):
        readings.append(("read: the post alone", lambda r: r.read == "the post alone"))
    width = 0.76 / len(readings)
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for k, (label, wanted) in enumerate(readings):
        found = [next((r for r in rows if r.setting == s and wanted(r)), None) for s in settings]
        xs = [i + (k - (len(readings) - 1) / 2) * width for i in range(len(settings))]
        means = [100 * statistics.fmean(r.accuracy) if r else 0 for r in found]
        spread = [100 * statistics.stdev(r.accuracy) if r and len(r.accuracy) > 1 else 0 for r in found]
        ax.bar(xs, means, width=width, yerr=spread, capsize=3, label=label)
    ax.set_xticks(range(len(settings)), [f"trained: {s}" for s in settings], fontsize=8)
    ax.set_ylabel(f"test accuracy (%), {rows[0].dataset}")
    ax.set_ylim(bottom=max(0, min(100 * min(r.accuracy) for r in rows) - 10))
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
