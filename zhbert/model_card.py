"""Whether a task folder opens in plain transformers, and the model card that says so.

A head that transformers has a class for (a linear layer over the last layer's tokens, or over
[CLS]) saves as that class and opens in a plain ``pipeline``. Any other head (a CRF, a BiLSTM,
word features, layer fusion, pooled windows, bi-encoder pairs) is computed by zhbert: transformers
would open the encoder and put a random or wrong head on it, with no error (a size mismatch, or,
with ``ignore_mismatched_sizes=True``, garbage). Such a folder carries ``zhbert_only`` in its
``config.json`` and a ``README.md`` model card saying so, as Hugging Face model cards do.
"""

from __future__ import annotations

from pathlib import Path

from .heads.config import HeadConfig

__all__ = ["zhbert_only_reasons", "write_model_card", "ZHBERT_ONLY_KEY", "CARD"]

ZHBERT_ONLY_KEY = "zhbert_only"
CARD = "README.md"


def zhbert_only_reasons(head: HeadConfig, model_type: str = "bert") -> list[str]:
    """What in ``head`` has no plain-transformers class (empty: it opens in a plain pipeline)."""
    from .encoders import plain_head_class

    reasons = []
    if head.crf:
        reasons.append("a CRF over the tags")
    if head.bilstm_layers:
        reasons.append("a BiLSTM over the encoder")
    if head.lexicon:
        reasons.append(f"word features from the {head.lexicon} lexicon")
    if head.bigram_dim:
        reasons.append("character-bigram features")
    default = "last" if head.kind == "token" else "cls"
    if head.representation != default:
        reasons.append(f"the {head.representation} layer representation")
    if head.kind in ("sequence", "pair") and head.window_pool != "mean":
        reasons.append(f"{head.window_pool} pooling over windows")
    if head.kind == "pair" and head.pair_encoding != "cross":
        reasons.append("separately encoded pairs")
    if not reasons and head.kind != "token" and plain_head_class(model_type, head.kind) is None:
        reasons.append(f"one linear layer on the [CLS] state ({model_type}'s own sequence classifier has other layers)")
    return reasons


def zhbert_only_note(reasons: list[str]) -> str:
    return (
        "needs zhbert (zhbert.load(FOLDER)): its head has "
        + ", ".join(reasons)
        + ", which plain transformers cannot compute (a plain pipeline fails, or with ignore_mismatched_sizes gives wrong answers)"
    )


def write_model_card(folder: str | Path, head: HeadConfig, reasons: list[str]) -> Path:
    """A ``README.md`` for the folder: what it is, how to load it, its labels, and whether it needs zhbert."""
    folder = Path(folder)
    kind = {"token": "token tagging", "sequence": "text classification", "pair": "sentence-pair classification"}[head.kind]
    if head.regression:
        kind = {"sequence": "text scoring", "pair": "sentence-pair similarity"}[head.kind]
    labels = ", ".join(f"`{label}`" for label in head.labels)
    lines = [
        "---",
        "library_name: zhbert",
        "language: zh",
        "tags: [zhbert, bert, chinese]",
        "---",
        "",
        f"# A zhbert {kind} model",
        "",
    ]
    if reasons:
        lines += [
            "**This folder needs zhbert.** Its head has " + ", ".join(reasons) + ". Plain transformers opens the encoder",
            "but not the head: `pipeline(...)` fails with a size mismatch, and `ignore_mismatched_sizes=True` silently",
            "gives wrong answers.",
            "",
        ]
    else:
        lines += ["This folder opens in plain transformers as well (a stock head).", ""]
    lines += [
        "```python",
        "import zhbert",
        "",
        'model = zhbert.load("PATH/TO/THIS/FOLDER")',
        "```",
        "",
        (
            "Output: one score a text or pair (regression), on the scale of the scores it was trained on."
            if head.regression
            else f"Labels ({head.scheme or head.kind}): {labels}"
        ),
        "",
    ]
    path = folder / CARD
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
