"""Plot a pretraining run made of several stages (each continued with --init) as one curve.

    python bench/plot_pretraining_loss.py --output bench/figures/default_pretraining_loss.png \
        --stage runs/default-mini-wwm/loss_log.jsonl "wwm, N(0,0.02) positions" 3000 \
        --stage runs/default-mini-char2/loss_log.jsonl "char, sinusoidal positions" 400 ...

The third value of a stage is its last step that the next stage continued from
("-" = all of it).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from zhbert.training.pretrain import plot_loss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stage", nargs=3, action="append", required=True, metavar=("LOSS_LOG", "LABEL", "UPTO"))
    ap.add_argument("--output", type=Path, required=True)
    ap.add_argument("--title", default="zhbert default encoder (mini 4x256): pretraining stages")
    args = ap.parse_args()
    stages = [(Path(log), label, None if upto == "-" else int(upto)) for log, label, upto in args.stage]
    plot_loss(stages, args.output, title=args.title)
    print(args.output)


if __name__ == "__main__":
    main()
