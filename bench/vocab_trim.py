"""How much of the bundle `zhbert export --trim-vocab` frees, and whether every bundled model
answers the same once trimmed (People's Daily sentences; sentence pairs for `matching`; fill-mask
for `base`); and whether real text ever yields a cut token (the first 400 documents of each corpus).
Prints a table; nothing in the repository changes.

    python bench/vocab_trim.py            # about 1 minute on 2 cores
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

MODELS = ("base", "cws", "cws-fast", "ner", "tagging", "matching")
FILL = ["中国的首都是[MASK]京。", "今天天气很[MASK]，我们去公园散步。", "他在[MASK]学读书。"]


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.iterdir() if f.is_file())


def cut_tokens_in_corpora(tokenizer, size: int, documents: int = 400) -> tuple[int, int]:
    """Characters read and tokens at or past ``size`` found, over the first ``documents`` lines of
    every corpus file (the corpora's genres: news, web, Q&A, reviews, Weibo, classical, law...)."""
    import itertools

    from zhbert.data import corpora_dir

    chars = found = 0
    for path in sorted(corpora_dir().glob("*/*.txt")):
        with open(path, encoding="utf-8") as fh:
            lines = list(itertools.islice(fh, documents))
        chars += sum(map(len, lines))
        found += sum(sum(i >= size for i in e.ids) for e in tokenizer.backend_tokenizer.encode_batch_fast(lines, add_special_tokens=False))
    return chars, found


def same_outputs(name: str, a, b, texts: list[str]) -> str:
    if name == "base":
        x, y = a.fill_mask(FILL), b.fill_mask(FILL)
        same = all([c.token for c in p.candidates] == [c.token for c in q.candidates] for (p,), (q,) in zip(x, y))
        gap = max(abs(c.score - d.score) for (p,), (q,) in zip(x, y) for c, d in zip(p.candidates, q.candidates))
        return f"fill-mask top-5 {'the same' if same else 'DIFFERENT'} on {len(FILL)} sentences, scores within {gap:.1e}"
    if name == "matching":
        pairs = list(zip(texts[:100], texts[1:101]))
        return f"{'identical' if a(pairs) == b(pairs) else 'DIFFERENT'} answers on {len(pairs)} sentence pairs"
    return f"{'identical' if a(texts) == b(texts) else 'DIFFERENT'} outputs on {len(texts)} sentences"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=400, help="People's Daily sentences compared per model")
    args = ap.parse_args()

    import zhbert
    from zhbert.data import read_peoples_daily
    from zhbert.export import export_model
    from zhbert.models_registry import POS_MARKER, resolve_model_path

    pd = read_peoples_daily()
    texts = list(pd.select(range(0, len(pd), 50))["text"])[: args.sentences]
    rows, before, after = [], 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in MODELS:
            trimmed = export_model(name, Path(tmp) / name, trim_vocab=True)
            size_a, size_b = folder_bytes(resolve_model_path(name)), folder_bytes(trimmed)
            before, after = before + size_a, after + size_b
            rows.append((name, size_a, size_b, same_outputs(name, zhbert.load(name), zhbert.load(str(trimmed)), texts)))
    pos = resolve_model_path("pos")
    if (pos / POS_MARKER).is_file():  # a small head over cws's features: shipped as it is
        rows.append(("pos (kept)", folder_bytes(pos), folder_bytes(pos), "-"))
        before, after = before + folder_bytes(pos), after + folder_bytes(pos)
    print("| model | bundled (bytes) | trimmed (bytes) | outputs |")
    print("|---|---:|---:|---|")
    for name, a, b, check in rows:
        print(f"| {name} | {a:,} | {b:,} | {check} |")
    print(f"| all | {before:,} | {after:,} | {before - after:,} bytes freed |")
    from zhbert.tokenizer import load_tokenizer
    from zhbert.vocab_trim import emitted_vocab_size

    tokenizer = load_tokenizer(resolve_model_path("ner"))
    size = emitted_vocab_size(tokenizer)
    chars, found = cut_tokens_in_corpora(tokenizer, size)
    print(f"\nvocabulary {len(tokenizer):,} -> {size:,} rows; ids {size:,} or more in {chars:,} characters of the corpora: {found}")


if __name__ == "__main__":
    main()
