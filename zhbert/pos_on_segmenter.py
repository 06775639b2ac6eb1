"""Part-of-speech tags for a segmenter's words: a small head on the segmenter's own features.

The segmenter (the bundled ``cws``) cuts the text as it always does, with user dictionaries,
web units and ``person_names``. A linear layer reads the features its classifier reads (the
encoder's layers, mixed by learned scalar weights, and its SoftLexicon word features), gives
each character a BMES x POS tag (the PKU tagset of People's Daily 1998-01), and each word
takes the part of speech its characters vote for (ties: the first character's). The encoder
and the word features stay the segmenter's, frozen and shared: the head adds about 68,000
weights (0.14 MB in fp16), where a POS model of ``cws``'s size would add 18.6 MB to a bundle
that has 0.5 MB left of its 100 MB.

A folder holds ``zhbert_pos.json`` (the segmenter, the SHA-256 of its weights, the head's
settings) and ``pos_head.safetensors``; ``zhbert.load(folder)`` reads it (bundled:
``zhbert.load("pos")``). A segmenter whose weights changed since is refused, since the head
reads features of those weights. It is zhbert-only: no plain-transformers class computes it.
Over a segmenter trained on several standards (``--criteria pku,weibo``) the head reads the
features of its first criterion, the one People's Daily's tags were learnt under.

    python -m zhbert.pos_on_segmenter --segmenter cws --output-dir runs/pos-on-cws
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import torch

from .heads.pos import check_pos_destination, head_state, pos_model, save_pos_folder


def evaluate(tagger, max_eval_samples: int | None = None) -> tuple[dict, int]:
    """Word F1 and word+POS F1 of a :class:`~zhbert.api.POSTagger` on the ``pos`` recipe's held-out
    People's Daily test (read as the model reads text: web units off, like the recipe)."""
    from .data.tasks import load_task_data
    from .recipes.pos import score

    data = load_task_data("pos", "peoples_daily")
    test = data.test[:max_eval_samples] if max_eval_samples else data.test
    units = tagger.units
    tagger.use_web_units(False)
    try:
        words = tagger([r["text"] for r in test], batch_size=64)
    finally:
        tagger.units = units
        tagger._refresh_forced()
    tags = [[w.label for w in ws] for ws in words]
    return score(test, [[w.text for w in ws] for ws in words], tags, data.train_words), len(test)


def train(
    segmenter: str = "cws",
    output_dir: str = "runs/pos-on-cws",
    epochs: float = 2.0,
    learning_rate: float = 3e-3,
    representation: str = "scalar-mix",
    max_train_samples: int | None = None,
    max_steps: int = -1,
    max_eval_samples: int | None = None,
    seed: int = 42,
) -> dict:
    """Train a POS head on People's Daily 1998-01 (the ``pos`` recipe's splits) over ``segmenter``'s
    frozen features; score words and tags on its held-out test; write the folder. Returns the metrics."""
    import time

    from .api import POSTagger, Segmenter
    from .data.tasks import load_task_data
    from .heads import load_head
    from .models_registry import resolve_model_path
    from .recipes.common import char_tag_examples
    from .tokenizer import load_tokenizer
    from .training.finetune import FinetuneConfig, fine_tune
    from .training.lock import output_lock

    out = Path(output_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out}: exists and is not a folder; --output-dir names the folder the head is saved in")
    check_pos_destination(out / "model")  # before hours of training, not after
    torch.manual_seed(seed)
    seg_path = resolve_model_path(segmenter)
    seg = load_head(seg_path)
    tokenizer = load_tokenizer(seg_path)
    data = load_task_data("pos", "peoples_daily")
    # A segmenter trained on several standards (--criteria) reads each through a segment-embedding row. The
    # head is frozen and learns no row of its own: it reads the features of row 0, the segmenter's first and
    # default criterion, in training and at prediction alike, whichever criterion cuts the words.
    head = replace(
        seg.head,
        labels=data.labels,
        scheme=data.scheme,
        crf=False,
        bilstm_layers=0,
        mode="frozen",
        representation=representation,
        criteria=[],
        default_criterion=None,
    )
    model = pos_model(seg, head)
    train_rows = data.train[:max_train_samples] if max_train_samples else data.train
    start = time.time()
    with output_lock(out):
        fine_tune(
            model,
            tokenizer,
            char_tag_examples(tokenizer, train_rows, data.labels, data.scheme),
            FinetuneConfig(output=str(out / "checkpoints"), epochs=epochs, max_steps=max_steps, learning_rate=learning_rate, seed=seed),
        )
    minutes = (time.time() - start) / 60
    model.eval()
    with torch.no_grad():  # the weights as the folder stores them (fp16), so the score is the folder's
        for p in head_state(model).values():
            p.copy_(p.half().float())
    tagger = POSTagger(Segmenter(seg, tokenizer, seg_path), model, out)
    metrics, n_test = evaluate(tagger, max_eval_samples)
    record = {
        "task": "pos-on-segmenter",
        "dataset": data.name,
        "segmenter": segmenter,
        "features_criterion": seg.head.criteria[0] if seg.head.criteria else None,
        "scored_on": "test",
        "test_sentences": n_test,
        "train_examples": len(train_rows),
        "metrics": metrics,
        "headline": "tagged.overall.f1",
        "score": metrics["tagged"]["overall"]["f1"],
        "arguments": {"epochs": epochs, "learning_rate": learning_rate, "representation": representation, "seed": seed},
        "training_minutes": round(minutes, 1),
        "date": time.strftime("%Y-%m-%d"),
    }
    from .models_registry import BUNDLED

    named = segmenter if segmenter in BUNDLED and not Path(segmenter).exists() else str(seg_path.resolve())
    save_pos_folder(model, named, seg_path, out / "model", record)
    return record


def main(argv: list[str] | None = None) -> None:
    import argparse

    from .recipes.arguments import run_cli

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--segmenter", default="cws", help="a bundled segmenter's name or a saved segmentation folder")
    ap.add_argument("--output-dir", default="runs/pos-on-cws", help="writes OUTPUT/model and its metrics.json")
    ap.add_argument("--epochs", type=float, default=2.0)
    ap.add_argument("--learning-rate", type=float, default=3e-3)
    ap.add_argument("--representation", default="scalar-mix", help="how the head reads the encoder's layers")
    ap.add_argument("--max-train-samples", type=int, default=None)
    ap.add_argument("--max-steps", type=int, default=-1)
    ap.add_argument("--max-eval-samples", type=int, default=None)
    args = ap.parse_args(argv)
    run_cli(lambda: _report(args))


def _report(args) -> None:
    r = train(args.segmenter, args.output_dir, args.epochs, args.learning_rate, args.representation, args.max_train_samples,
              args.max_steps, args.max_eval_samples)  # fmt: skip
    m = r["metrics"]
    print(f"| {r['dataset']} test ({r['test_sentences']:,} sentences) | {args.segmenter} + POS head | "
          f"word F1 {100 * m['words']['f1']:.2f} | word+POS F1 {100 * m['tagged']['overall']['f1']:.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
