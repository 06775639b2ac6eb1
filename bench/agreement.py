"""Plain transformers vs zhbert.load on the bundled models: the agreement table for bench/RESULTS.md.

    python bench/agreement.py --n 1000

For each bundled model, N real test inputs (MSRA + People's Daily NER test sentences; PKU test
lines; SMP2020-EWECT usual test posts; OCNLI dev + LCQMC test pairs; held-out People's Daily
sentences with one Han character masked) go through ``transformers.pipeline`` on the model
folder and through ``zhbert.load`` (web units off: the model alone). Two tables: inputs that fit
one window of the encoder's pretraining length (128 tokens), and up to N that do not.
See zhbert/agreement.py for what counts as agreeing.
"""

from __future__ import annotations

import argparse
import time

from zhbert.agreement import agreement_inputs, compare
from zhbert.data.paths import shared_dir
from zhbert.models_registry import BUNDLED_DIR
from zhbert.tokenizer import load_tokenizer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000, help="inputs per model")
    args = ap.parse_args()
    tokenizer = load_tokenizer(BUNDLED_DIR / "base")
    for long in (False, True):
        inputs = agreement_inputs(shared_dir(), args.n, tokenizer, long=long)
        print(f"\n## {'longer than' if long else 'within'} one window of the encoder's trained length (128 tokens)\n")
        table(inputs, long)


def table(inputs, long: bool) -> None:
    rows, zhbert_only = [], []
    for name in ["ner", "cws", "cws-fast", "tagging", "matching", "base"]:
        if not inputs[name]:
            print(f"{name}: no test input of this length", flush=True)
            continue
        t0 = time.time()
        try:
            r = compare(name, BUNDLED_DIR / name, inputs[name])
        except ValueError as e:  # a head with word features: plain transformers opens its encoder only
            if "zhbert-only" not in str(e):
                raise
            zhbert_only.append(name)
            print(f"{name}: zhbert-only ({e})", flush=True)
            continue
        rows.append(r)
        print(f"{name}: {r.agree}/{r.n} agree, max prob diff {r.max_prob_diff:.1e}, {time.time() - t0:.0f} s", flush=True)
        for m in r.mismatches:
            print("   mismatch:", m)
    print("\n| bundled model | compared as | inputs | agree | max probability difference | note |")
    print("|---|---|---:|---:|---:|---|")
    for r in rows:
        note = (
            f"{r.shared_character_inputs} inputs with a character NFKD splits into several tokens (tags compared)"
            if r.shared_character_inputs
            else ""
        )
        if r.pipeline_errors:
            note += f"{r.pipeline_errors} inputs the pipeline failed on (past its 512 positions)"
        diff = f"{r.max_prob_diff:.1e}" if r.kind in ("sequence", "pair", "fill-mask") else "-"
        print(f"| {r.model} | {r.kind} | {r.n:,} | {r.agree:,} ({100 * r.rate:.1f}%) | {diff} | {note} |")
    for name in zhbert_only:
        print(f"| {name} | zhbert-only (word features in the head) | - | - | - | plain transformers opens the encoder, not the head |")
    if long:
        print(
            "\nPast 128 tokens a plain pipeline truncates at the folder's model_max_length (or reads positions the encoder "
            "never trained), while zhbert reads the whole text through windows: these rows say how often they still agree."
        )


if __name__ == "__main__":
    main()
