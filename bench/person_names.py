"""Person names whole or split: the bundled `cws` under both `person_names` settings.

The PKU standard (People's Daily) splits a person name into surname and given name
(`江 / 泽民`); most users expect `江泽民`. `zhbert.load("cws")(text, person_names="whole")`
joins the words inside each PER entity of the bundled `ner` model. Scored on:

* the SIGHAN-2005 PKU test gold (names split: the PKU standard);
* the People's Daily 1998-01 sentences held out of the `cws` training (its 5% dev part,
  never trained on), against their gold with names split (as annotated) and with
  names whole (consecutive `nr` words joined: the surname and given name).

    python bench/person_names.py --sentences 3000
"""

from __future__ import annotations

import argparse
import time

import zhbert
from zhbert.data import read_peoples_daily
from zhbert.data.tasks import load_task_data, read_split
from zhbert.metrics import word_prf


def whole_names(words: list[str], pos: list[str]) -> list[str]:
    out: list[str] = []
    for i, (w, p) in enumerate(zip(words, pos)):
        if p == "nr" and i and pos[i - 1] == "nr":
            out[-1] += w
        else:
            out.append(w)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=3000, help="held-out People's Daily sentences to score")
    args = ap.parse_args()
    seg = zhbert.load("cws")
    pku = read_split("sighan2005_icwb2/pku_test", "eval")
    held = {r["text"] for r in load_task_data("cws", "pku").dev}  # the same 5% the bundled news+weibo model never saw
    pd = read_peoples_daily()
    rows = [(t, w, p) for t, w, p in zip(pd["text"], pd["words"], pd["pos"]) if t in held][: args.sentences]
    texts = [t for t, _, _ in rows]
    gold_split, gold_whole = [w for _, w, _ in rows], [whole_names(w, p) for _, w, p in rows]
    print(f"{len(rows)} held-out People's Daily sentences; {sum(len(a) != len(b) for a, b in zip(gold_split, gold_whole))} hold a name")
    print("| person_names | PKU test F1 (names split) | PD held-out F1, names split | PD held-out F1, names whole | chars/s |")
    print("|---|---:|---:|---:|---:|")
    for mode in ("split", "whole"):
        start = time.perf_counter()
        pku_words = [[w.text for w in ws] for ws in seg(list(pku["text"]), batch_size=64, person_names=mode)]
        pd_words = [[w.text for w in ws] for ws in seg(texts, batch_size=64, person_names=mode)]
        seconds = time.perf_counter() - start
        chars = sum(map(len, pku["text"])) + sum(map(len, texts))
        f_pku = word_prf(list(pku["words"]), pku_words)["f1"]
        f_split, f_whole = word_prf(gold_split, pd_words)["f1"], word_prf(gold_whole, pd_words)["f1"]
        print(f"| {mode} | {100 * f_pku:.2f} | {100 * f_split:.2f} | {100 * f_whole:.2f} | {chars / seconds:,.0f} |")


if __name__ == "__main__":
    main()
