"""Question paraphrase pairs from a question-and-answer corpus, for training `matching` on everyday
wordings: the format ``zhbert train matching --extra-train`` (and ``--train-file``) reads,
``text_a<TAB>text_b<TAB>label`` with the labels ``paraphrase`` and ``different``.

The medical consultation corpus (``../shared/corpora/medical_qa_toyhom``) holds one consultation a
line, ``title question answer`` separated by spaces. The title is a question, and the asker's own
text usually asks it again in other words (轻度脂肪肝怎样医治更好呢 / 轻度脂肪肝怎么治疗). So:

- a **paraphrase** pair is a title and the clause of its question text that asks most nearly the same
  (character-bigram Dice): a clause with a question word or mark, not the title itself, either holding
  the title (or held by it), or of Dice at least ``--min-dice``, or ending in a question mark with Dice
  at least ``--min-dice-asked`` and a length near the title's;
- a **different** pair is a title and that clause of a consultation near it in the file (the corpus
  runs disease by disease, so it is about the same illness), whose own title shares little with the
  first (Dice below ``--max-title-dice``): the same topic, another question.

Each paraphrase pair comes with one different pair built on the same title, so the two labels are
equal in number and neither is told apart by its title. A pair with a text that occurs in any dataset
split here (LCQMC's and BQ's dev sets included, which judge the matching heads) is skipped and counted.

    python corpora/paraphrase_pairs.py --output runs/pairs/medical.tsv
    zhbert train matching --dataset transfer-lcqmc --extra-train runs/pairs/medical.tsv --output-dir runs/m
"""

from __future__ import annotations

import argparse
import random
import re
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from pathlib import Path

QUESTION = re.compile(
    r"什么|怎么|怎样|如何|吗|呢|哪|多少|多久|几|能否|是否|咋|为什么|为啥|有没有|会不会|是不是|能不能|可不可以|要不要|[？?]"
)
CLAUSE = re.compile(r"[^。！？?!；;，,\s]+[。！？?!；;，,]*")
MARKS = re.compile(r"[\W_]+")  # punctuation and spaces: left out when texts are compared


def core(text: str) -> str:
    """The text without punctuation or spaces: what two wordings are compared on."""
    return MARKS.sub("", text)


def bigram_dice(a: str, b: str) -> float:
    """Dice coefficient of the two texts' character bigrams (a single character counts as one)."""

    def grams(s: str) -> Counter:
        s = core(s)
        return Counter(s[i : i + 2] for i in range(len(s) - 1)) if len(s) > 1 else Counter(s)

    x, y = grams(a), grams(b)
    total = sum(x.values()) + sum(y.values())
    return 2 * sum((x & y).values()) / total if total else 0.0


def question_clauses(text: str) -> list[str]:
    """The clauses of ``text`` (cut at sentence and clause marks) and each two consecutive ones,
    keeping those that ask something: a question word or a question mark."""
    clauses = [c for c in CLAUSE.findall(text) if core(c)]
    spans = clauses + [a + b for a, b in zip(clauses, clauses[1:])]
    return [s for s in spans if QUESTION.search(s)]


def asked_again(title: str, question: str) -> str | None:
    """The clause of ``question`` that asks most nearly what ``title`` asks (ties: the shorter)."""
    return max(question_clauses(question), key=lambda c: (bigram_dice(title, c), -len(c)), default=None)


def is_paraphrase(title: str, clause: str, min_dice: float, min_dice_asked: float) -> bool:
    t, c = core(title), core(clause)
    if not t or not c or t == c:  # the same words are no paraphrase to learn from
        return False
    dice = bigram_dice(title, clause)
    if t in c or c in t or dice >= min_dice:
        return True
    asked = clause.rstrip("。！!；;，, ").endswith(("？", "?"))
    return asked and dice >= min_dice_asked and 0.6 <= len(c) / len(t) <= 1.6


def consultations(path: Path):
    """``(line number, title, question)`` of each line of ``title question answer``; a line with fewer
    than three fields is not a consultation and is counted by the caller."""
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            fields = line.strip().split(" ")
            yield lineno, (fields[0], fields[1]) if len(fields) >= 3 else None


def build_pairs(
    docs: Iterable[tuple[str, str]],
    seen,
    counts: Counter,
    min_dice: float = 0.4,
    min_dice_asked: float = 0.25,
    max_title_dice: float = 0.3,
    window: int = 10,
    seed: int = 13,
) -> Iterator[tuple[str, str, str]]:
    """Paraphrase and different pairs (module docstring) from ``(title, question)`` in file order,
    ``(text_a, text_b, label)``; ``seen(text)`` is true for a text that must not be trained on, and
    ``counts`` gathers what was kept and skipped. The consultations stream through: only those
    within ``window`` of the one being paired are held."""
    rng = random.Random(seed)
    held: deque[tuple[int, str, str | None]] = deque()  # (index, title, the clause asking it again)

    def pairs_of(i: int) -> Iterator[tuple[str, str, str]]:
        _, title, clause = held[i - held[0][0]]
        if "\t" in title:  # a TSV cell cannot hold it
            counts["a title with a tab"] += 1
            return
        if clause is None or not is_paraphrase(title, clause, min_dice, min_dice_asked):
            counts["no paraphrase in the question"] += 1
            return
        if seen(title) or seen(clause):
            counts["a text in a dataset split"] += 1
            return
        near = [
            other
            for j, other_title, other in held
            if j != i
            and abs(j - i) <= window
            and other is not None
            and not seen(other)
            and bigram_dice(title, other_title) < max_title_dice
        ]
        if not near:
            counts["no other question near it"] += 1
            return
        counts["paraphrase"] += 1
        counts["different"] += 1
        yield title, clause, "paraphrase"
        yield title, rng.choice(near), "different"

    paired = 0  # the next consultation to pair: once all its later neighbours are held
    for i, (title, question) in enumerate(docs):
        held.append((i, title, asked_again(title, question)))
        while paired <= i - window:
            yield from pairs_of(paired)
            paired += 1
            while held[0][0] < paired - window:
                held.popleft()
    while held and paired <= held[-1][0]:
        yield from pairs_of(paired)
        paired += 1


def dataset_text_keys() -> set[str]:
    """Every text of every dataset split here, train and eval (pair sets: each side), as overlap keys."""
    from zhbert.data.peoples_daily import overlap_key
    from zhbert.data.splits import iter_split_texts

    return {overlap_key(text) for kind in ("train", "eval") for _, text in iter_split_texts(kind)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", required=True, help="the TSV file to write (refused if it exists)")
    ap.add_argument("--source", default="medical_qa_toyhom", help="a corpus folder of title-question-answer lines")
    ap.add_argument("--min-dice", type=float, default=0.4, help="a clause this near the title is a paraphrase")
    ap.add_argument("--min-dice-asked", type=float, default=0.25, help="so is a question this near, of about the title's length")
    ap.add_argument("--max-title-dice", type=float, default=0.3, help="a different pair's two titles share less than this")
    ap.add_argument("--window", type=int, default=10, help="a different pair's consultation is this near in the file")
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args(argv)

    from zhbert.data.paths import corpora_dir
    from zhbert.data.peoples_daily import overlap_key

    out = Path(args.output)
    if out.exists():
        raise SystemExit(f"{out}: exists; zhbert writes a new file only")
    folder = corpora_dir() / args.source
    files = sorted(folder.glob("*.txt"))
    if not files:
        raise SystemExit(f"{folder}: no .txt files")
    keys = dataset_text_keys()
    counts, malformed, written = Counter(), Counter(), 0

    def docs():
        for path in files:
            for _, fields in consultations(path):
                if fields is None:
                    malformed["lines"] += 1
                else:
                    malformed["read"] += 1
                    yield fields

    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")  # renamed to --output once every pair is written
    with open(partial, "x", encoding="utf-8") as f:
        try:
            for a, b, label in build_pairs(
                docs(), lambda t: overlap_key(t) in keys, counts, args.min_dice, args.min_dice_asked, args.max_title_dice,
                args.window, args.seed,
            ):  # fmt: skip
                f.write(f"{a}\t{b}\t{label}\n")
                written += 1
        except BaseException:
            try:  # this run's own file, half written; the error that stopped it goes on either way
                partial.unlink()
            except OSError:
                pass
            raise
    partial.rename(out)
    skipped = f"{malformed['lines']:,} lines without title, question and answer, not read"
    print(f"{malformed['read']:,} consultations in {args.source} ({skipped})")
    print(f"{written:,} pairs written to {out}: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
