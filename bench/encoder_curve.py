"""The dev-probe curve of a long pretraining run: the newest complete checkpoint of RUN, turned into
an encoder folder and scored by ``bench/encoder_probes.py`` at its fixed budget, one row per step in
RUN/curve/curve.jsonl, and the curve drawn to RUN/curve/curve.png. Run it every few hours while the
run trains (the run keeps only its last two checkpoints); a step already on the curve is skipped.

    python bench/encoder_curve.py --run runs/long
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def newest_checkpoint(run: Path) -> Path | None:
    from zhbert.training.checkpoints import latest_complete_checkpoint

    found = latest_complete_checkpoint(run, clean=False)
    return Path(found) if found else None


def plot(rows: list[dict], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = [c for c in rows[-1]["scores"] if isinstance(rows[-1]["scores"][c], list)]
    fig, ax = plt.subplots(figsize=(7, 4))
    for column in columns:
        ax.plot([r["step"] for r in rows], [sum(r["scores"][column]) / len(r["scores"][column]) for r in rows], marker="o", label=column)
    ax.set_xlabel("pretraining step")
    ax.set_ylabel("dev score (%)")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", required=True, help="a zhbert pretrain output folder")
    ap.add_argument("--seeds", default="1", help="fine-tuning seeds of each probe")
    ap.add_argument("--train-samples", type=int, default=6000)
    ap.add_argument(
        "--checkpoint",
        help="score this checkpoint instead of RUN's newest complete one (weights alone will do: one copied back from another machine)",
    )
    ap.add_argument("--step", type=int, help="its place on RUN's curve, in RUN's steps of RUN's batch (default: its own step)")
    args, probe_args = ap.parse_known_args(argv)

    import encoder_probes

    from zhbert.training.checkpoints import checkpoint_step
    from zhbert.training.pretrain import encoder_from_checkpoint

    run = Path(args.run)
    folder = run / "curve"
    folder.mkdir(exist_ok=True)
    curve = folder / "curve.jsonl"
    rows = [json.loads(line) for line in curve.read_text(encoding="utf-8").splitlines()] if curve.is_file() else []
    ckpt = Path(args.checkpoint) if args.checkpoint else newest_checkpoint(run)
    if ckpt is None:
        raise SystemExit(f"{run}: no complete checkpoint yet")
    step = args.step if args.step is not None else checkpoint_step(ckpt)
    if any(r["step"] == step for r in rows):
        print(f"step {step} is on the curve already")
        return
    encoder = encoder_from_checkpoint(ckpt, folder / f"step-{step}")
    fill = ["--fill-mask-model", f"{encoder}={encoder / 'generator'}"] if (encoder / "generator").is_dir() else []
    encoder_probes.main(
        ["--encoder", str(encoder), "--output", str(folder / "probes"), "--seeds", args.seeds,
         "--train-samples", str(args.train_samples), *fill, *probe_args]
    )  # fmt: skip
    records = json.loads((folder / "probes" / "probes.json").read_text(encoding="utf-8"))
    rows.append({"step": step, "checkpoint": str(ckpt), "scores": records[str(encoder)]})
    with open(curve, "a", encoding="utf-8") as f:
        f.write(json.dumps(rows[-1], ensure_ascii=False) + "\n")
    plot(rows, folder / "curve.png")
    print(f"step {step}: added to {curve}")


if __name__ == "__main__":
    main()
