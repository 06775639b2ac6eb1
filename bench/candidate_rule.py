"""Should a candidate replace a bundled model? Both scored as a user gets them (`zhbert.load` with its
defaults), on the sets the model was tuned on and on sets from other sources, and the replacement rule
applied: the candidate must gain on every "tuned on" set and lose no more than --tolerance on any other.

    python bench/candidate_rule.py ner --bundled ner --candidate runs/ner-cpu-soup/soup-trim
    python bench/candidate_rule.py cws --bundled cws --candidate runs/cws-candidates/cws-trim

ner: tuned on MSRA test and msra_test_bio.txt; other sources Weibo NER test, Resume test and CLUENER2020
dev, in PER/LOC/ORG (entity F1, exact spans). People's Daily NER is not among them: 87% of its test
sentences are MSRA training sentences. cws: tuned on PKU test; other sources the NLPCC-2016 Weibo dev
file and the traditional CityU and AS tests (word F1).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# task -> [(set, recipe dataset or SIGHAN split, tuned on)]
SETS = {
    "ner": [
        ("MSRA test", "msra", True),
        ("msra_test_bio.txt", "msra-bio", True),
        ("Weibo NER test", "weibo-per-loc-org", False),
        ("Resume test", "resume-per-loc-org", False),
        ("CLUENER dev", "cluener-per-loc-org", False),
    ],
    "cws": [
        ("PKU test", "pku", True),
        ("NLPCC-2016 Weibo dev", "weibo", False),
        ("CityU test", "sighan2005_icwb2/cityu_test", False),
        ("AS test", "sighan2005_icwb2/as_test", False),
    ],
}


def _rows(task: str, source: str, limit: int | None):
    """(texts, gold): entity spans {(start, end, type)} for ner, word lists for cws."""
    from zhbert.data.tasks import load_task_data, read_split
    from zhbert.tags import tags_to_spans

    if source.startswith("sighan2005_icwb2/"):
        words = [list(w) for w in read_split(source, "eval")["words"]][:limit]
        return ["".join(w) for w in words], words
    data = load_task_data(task, source)
    rows = (data.dev if data.eval_split == "dev" else data.test)[:limit]
    if task == "cws":
        return [r["text"] for r in rows], [r["words"] for r in rows]
    return [r["text"] for r in rows], [{(s, e, t) for t, s, e in tags_to_spans(r["tags"], data.scheme)} for r in rows]


def score(task: str, model: str, texts: list[str], gold: list) -> float:
    """Entity F1 (exact typed spans) or word F1, in percent, of ``zhbert.load(model)`` with its defaults."""
    import zhbert
    from zhbert.metrics import word_prf

    found = zhbert.load(model)(texts, batch_size=64)
    if task == "cws":
        return 100 * word_prf(gold, [[w.text for w in ws] for ws in found])["f1"]
    tp = fp = fn = 0
    for want, spans in zip(gold, found):
        got = {(s.start, s.end, s.label) for s in spans}
        tp, fp, fn = tp + len(want & got), fp + len(got - want), fn + len(want - got)
    return 100 * 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("task", choices=sorted(SETS))
    ap.add_argument("--bundled", required=True, help="the bundled model's name (or folder)")
    ap.add_argument("--candidate", required=True, help="the candidate's folder")
    ap.add_argument("--tolerance", type=float, default=0.3, help="the largest loss allowed on a set from another source")
    ap.add_argument("--limit", type=int, default=None, help="score the first N sentences of each set (a quick look)")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    lines = ["| set | tuned on it | bundled | candidate | change |", "|---|---|---:|---:|---:|"]
    passed = True
    for name, source, tuned in SETS[args.task]:
        texts, gold = _rows(args.task, source, args.limit)
        old, new = score(args.task, args.bundled, texts, gold), score(args.task, args.candidate, texts, gold)
        ok = new > old if tuned else new - old >= -args.tolerance
        passed &= ok
        lines.append(
            f"| {name} ({len(texts):,}) | {'yes' if tuned else 'no'} | {old:.2f} | {new:.2f} | {new - old:+.2f}{'' if ok else ' ✗'} |"
        )
        print(lines[-1], file=sys.stderr, flush=True)
    verdict = "replaces" if passed else "does not replace"
    print("\n".join(lines))
    print(
        f"\nThe candidate {verdict} the bundled `{args.bundled}` (rule: a gain on every set it was tuned on, "
        f"no loss above {args.tolerance} on any other)."
    )


if __name__ == "__main__":
    main()
