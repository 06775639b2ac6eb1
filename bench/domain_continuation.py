"""Continued pretraining on one domain, judged on that domain's held-out text: which masking, and does
`--extend-vocab` help? Each arm continues the same model on the same corpus with `zhbert pretrain --eval-split`
(every Nth document held out, the same for every arm) and logs fill-mask on the held-out documents at the start
and every --eval-steps; the table compares the start with the end.

    python bench/domain_continuation.py --output runs/domain            # three arms of 300 steps: ~40 min, one thread

An arm whose output folder already holds a finished run is read, not rerun. Blanks are the same for arms with
the same vocabulary; an arm that adds characters blanks them too where the others read [UNK].

Does the continued model make a better head on the domain's tasks? ``--probes`` fine-tunes the init model and
every arm's final model on those tasks' dev splits at one fixed budget (``bench/encoder_probes.py``, several seeds)
and adds fill-mask on held-out People's Daily sentences (what the continuation cost the general domain):

    python bench/domain_continuation.py --corpus ../shared/corpora/weibo_senti_sample/weibo_00.txt --arms mixed \
        --output runs/domain-weibo --probes ner/weibo,cws/weibo,tagging/usual
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ARMS = {
    "wwm": ["--masking", "wwm"],
    "wwm+extend": ["--masking", "wwm", "--extend-vocab", "20"],
    "mixed": ["--masking", "mixed"],
    "mixed+extend": ["--masking", "mixed", "--extend-vocab", "20"],
    "char": ["--masking", "char"],
    # the bundled heads' encoder is an ELECTRA discriminator: continue it as it was trained (--init electra);
    # its generator starts new, so the held-out fill-mask at step 0 is a fresh generator's
    "electra": ["--objective", "electra"],
    # the same, the encoder held for the first half of --steps while the new generator and replaced-token head learn
    "electra+held": ["--objective", "electra", "--freeze-encoder-steps", "{half}"],
    # a masked LM whose head starts new (an encoder continued without its masked-LM head), held likewise
    "wwm+held": ["--masking", "wwm", "--freeze-encoder-steps", "{half}"],
}


def run_arm(name: str, out: Path, args) -> list[dict]:
    log = out / "eval_log.jsonl"
    if not (out / "final").is_dir():
        command = [
            sys.executable, "-m", "zhbert", "pretrain", "--corpus", str(args.corpus), "--init", args.init,
            "--eval-split", str(args.eval_split), "--eval-steps", str(args.eval_steps), "--eval-chars", str(args.eval_chars),
            "--learning-rate", str(args.learning_rate), "--warmup", str(args.warmup), "--max-steps", str(args.steps),
            "--batch-size", str(args.batch_size), "--max-length", str(args.max_length), "--save-steps", str(args.eval_steps),
            "--num-proc", "1", "--seed", str(args.seed), "--output-dir", str(out),
            *(arg.format(half=args.steps // 2) for arg in ARMS[name]),
        ]  # fmt: skip
        print(f"{name}: {' '.join(command[1:])}", file=sys.stderr, flush=True)
        subprocess.run(command, check=True)
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", type=Path, help="the domain's text (default: the classical novels of ../shared/corpora)")
    p.add_argument("--init", default="base", help="the model every arm continues")
    p.add_argument("--arms", default="wwm,wwm+extend,mixed", help=f"comma-separated, of {', '.join(ARMS)}")
    p.add_argument("--output", type=Path, required=True, help="a folder; each arm writes OUTPUT/ARM")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--eval-steps", type=int, default=100)
    p.add_argument("--eval-split", type=float, default=0.05)
    p.add_argument("--eval-chars", type=int, default=100_000)
    p.add_argument("--learning-rate", type=float, default=1e-4)
    p.add_argument("--warmup", type=float, default=30)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--probes", help="RECIPE/DATASET,...: the domain's tasks, each fine-tuned on the init and every arm, scored on dev")
    p.add_argument("--probe-seeds", default="1,2,3", help="fine-tuning seeds of each probe")
    p.add_argument("--probe-epochs", type=float, default=3.0)
    p.add_argument("--probe-train-samples", type=int, default=3000)
    p.add_argument("--probe-eval-samples", type=int, default=2000)
    p.add_argument("--fill-mask-sentences", type=int, default=1000, help="with --probes: held-out People's Daily sentences")
    args = p.parse_args(argv)
    if args.corpus is None:
        from zhbert.data.paths import shared_dir

        args.corpus = shared_dir() / "corpora/classical_novels_sample/novels_00.txt"
    arms = args.arms.split(",")
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        p.error(f"--arms: unknown {', '.join(unknown)} (known: {', '.join(ARMS)})")
    folders = {name: args.output / name.replace("+", "-") for name in arms}
    rows = {name: run_arm(name, folder, args) for name, folder in folders.items()}
    print(f"\n`{args.init}` continued {args.steps} steps of {args.batch_size} x {args.max_length} on {args.corpus.name}, "
          f"every {round(1 / args.eval_split)}th document held out\n")  # fmt: skip
    print("| arm | start: char / word top-1, perplexity | end: char / word top-1, perplexity | character blanks |")
    print("|---|---:|---:|---:|")
    for name, log in rows.items():
        start, end = log[0], log[-1]
        cell = lambda r: f"{100 * r['eval_char_accuracy']:.2f}% / {100 * r['eval_word_accuracy']:.2f}%, {r['eval_char_perplexity']:.2f}"  # noqa: E731
        print(f"| {name} | {cell(start)} | {cell(end)} (step {end['step']}) | {end['eval_char_blanks']:,} |")
    if args.probes:
        print(f"\nthe domain's tasks (dev), `{args.init}` against each arm's final model:\n", flush=True)
        import encoder_probes

        encoders = [args.init] + [str(folder / "final") for folder in folders.values()]
        encoder_probes.main(
            [arg for e in encoders for arg in ("--encoder", e)]
            + ["--only", args.probes, "--output", str(args.output / "probes"), "--seeds", args.probe_seeds,
               "--epochs", str(args.probe_epochs), "--train-samples", str(args.probe_train_samples),
               "--eval-samples", str(args.probe_eval_samples), "--fill-mask-sentences", str(args.fill_mask_sentences)]
        )  # fmt: skip


if __name__ == "__main__":
    main()
