"""Web text units (``zhbert/web_units.py``): their effect on word F1, kind by kind.

    python bench/web_units.py            # about 8 minutes on 2 cores; prints the tables for RESULTS.md

The bundled ``cws`` segments NLPCC-2016 Weibo dev and the PKU test (the gold words joined
as input) with ``web_units`` off, with the default kinds, with each kind alone and with all
kinds; every run is scored by the same word F1 (``zhbert.metrics.word_prf``). The table also
counts the units each kind finds, and how many of them the gold segmentation has as one word
(a unit the gold standard splits, such as NLPCC's ``@ / CCTV / 天下``, costs F1 when forced).
"""

from __future__ import annotations

import sys
from pathlib import Path

TEST_FILES = {
    "NLPCC-2016 Weibo dev": ("nlpcc2016_weibo_cws", "nlpcc2016-wordseg-dev.dat"),
    "PKU test": ("sighan2005_icwb2", "pku_test_gold.utf8"),
}


def _read(folder: str, file: str) -> tuple[list[str], list[list[str]]]:
    from zhbert.data import read_segmented
    from zhbert.data.paths import shared_dir

    rows = read_segmented(str(shared_dir() / "datasets" / folder / file))
    return ["".join(w) for w in rows["words"]], [list(w) for w in rows["words"]]


def main(argv=None) -> None:
    import argparse

    import zhbert
    from zhbert.metrics import _word_spans, word_prf
    from zhbert.web_units import DEFAULT_KINDS, KINDS, WebUnits

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=None, help="score only the first N sentences of each test file")
    args = parser.parse_args(argv)
    data = {name: tuple(part[: args.sentences] for part in _read(*where)) for name, where in TEST_FILES.items()}
    print("| kind | " + " | ".join(f"{name}: units found (whole in gold)" for name in data) + " |")
    print("|---|" + "---:|" * len(data))
    for kind in KINDS:
        finder = WebUnits([kind])
        cells = []
        for texts, gold in data.values():
            found = whole = 0
            for text, words in zip(texts, gold):
                spans = finder.spans(text)
                found += len(spans)
                whole += len({(s, e) for s, e, _ in spans} & _word_spans(words))
            cells.append(f"{found:,} ({whole:,})")
        print(f"| {kind} | " + " | ".join(cells) + " |", flush=True)

    runs = {"off": False, "default (" + ", ".join(DEFAULT_KINDS) + ")": True}
    runs.update({f"{k} alone": [k] for k in KINDS})
    runs["all kinds"] = list(KINDS)
    print("\n| web_units | " + " | ".join(f"{name} word F1" for name in data) + " |")
    print("|---|" + "---:|" * len(data))
    base = {}
    for label, kinds in runs.items():
        seg = zhbert.load("cws", web_units=kinds)
        cells = []
        for name, (texts, gold) in data.items():
            pred = [[w.text for w in ws] for ws in seg(texts, batch_size=64)]
            f1 = 100 * word_prf(gold, pred)["f1"]
            base.setdefault(name, f1)
            cells.append(f"{f1:.2f} ({f1 - base[name]:+.2f})")
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()
