"""Traditional Chinese: the SIGHAN-2005 CityU and AS test sets, zhbert beside pkuseg, THULAC and jieba.

    python bench/traditional.py            # prints the table for RESULTS.md (about 10 minutes on 2 cores)
    python bench/traditional.py --zhbert runs/cws-mc/model --criterion weibo   # a folder, by one of its standards

Every system segments the raw traditional text of each test file (the gold words joined)
and is scored by the same SIGHAN-style word P/R/F1 (``zhbert.metrics.word_prf``). Rows:

* zhbert's bundled segmenters as shipped (normaliser ``zhbert-2``: traditional characters
  read as simplified, :mod:`zhbert.traditional`), and ``cws`` with the previous normaliser
  (``zhbert-1``), which read the traditional characters as they are: the map's effect;
* each peer on the traditional text, and on the same text mapped to simplified with
  zhbert's character table (one character to one, so the words map back): what the
  conversion alone gives a peer; the peers include the same-data CRFs of ``bench/peers.py``
  once ``bench/crf_segmenter.py`` has trained them;
* ``cws`` with the test set's own training word list forced (``user_dict=``, ``force``):
  CityU and AS follow their own segmentation standards, which differ from the PKU standard
  every system here was trained for. The forced list shows how much of the remaining gap is
  the standard (word lists are what the bakeoff released beside each training set).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

TEST_FILES = {
    "CityU": ("cityu_test_gold.utf8", "cityu_training_words.utf8"),
    "AS": ("as_testing_gold.utf8", "as_training_words.utf8"),
}
PEERS = [
    "pkuseg 0.0.25 (default model)",
    "THULAC 0.2.2 (seg_only)",
    "jieba 0.42.1 (HMM)",
    # the same-data floor of bench/peers.py (People's Daily only; run bench/crf_segmenter.py first)
    "crfsuite CRF, same data",
    "crfsuite CRF, same data + jieba dictionary features",
]


def _read(name: str) -> tuple[list[str], list[list[str]]]:
    from zhbert.data import read_segmented
    from zhbert.data.paths import shared_dir

    rows = read_segmented(str(shared_dir() / "datasets" / "sighan2005_icwb2" / TEST_FILES[name][0]))
    return ["".join(w) for w in rows["words"]], [list(w) for w in rows["words"]]


def _zhbert_1_copy(name: str, tmp: Path) -> Path:
    """The bundled folder with the previous normaliser, which left traditional characters as they were."""
    from zhbert.models_registry import BUNDLED_DIR
    from zhbert.tokenizer import _our_pipeline_json

    folder = tmp / f"{name}-zhbert-1"
    shutil.copytree(BUNDLED_DIR / name, folder)
    doc = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    doc["normalizer"] = _our_pipeline_json("zhbert-1")[0]
    (folder / "tokenizer.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return folder


def _word_list(path: Path) -> list[str]:
    """The bakeoff's word list, minus the lines a user dictionary refuses (AS has a few with control characters)."""
    from zhbert.dictionary import parse_line

    words, refused = [], 0
    with open(path, encoding="utf-8-sig") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if line.strip():
                parsed = parse_line(line)
                if isinstance(parsed, tuple):
                    words.append(parsed[0])
                else:
                    refused += 1
    print(f"{path.name}: {len(words):,} words, {refused} lines refused", file=sys.stderr)
    return words


def _zhbert(model: str, **kw):
    import zhbert

    predictor = zhbert.load(model, **kw)
    return lambda texts: [[w.text for w in ws] for ws in predictor(texts, batch_size=64)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zhbert", nargs="*", default=["cws", "cws-fast"], help="bundled segmenters or model folders to include")
    ap.add_argument("--criterion", help="the standard to segment by, for segmenters trained on several (--criteria)")
    args = ap.parse_args()

    from peers import _segmenter, _spell, peer_ready  # bench/, beside this file

    from zhbert.metrics import word_prf
    from zhbert.traditional import read_table

    table = read_table()
    to_simplified = str.maketrans(table)
    data = {t: _read(t) for t in TEST_FILES}
    rows: list[tuple[str, dict[str, float]]] = []

    def score(label: str, segment, convert: bool = False, per_test=None) -> None:
        row = {}
        for test, (texts, gold) in data.items():
            seg = per_test(test) if per_test else segment
            inputs = [t.translate(to_simplified) for t in texts] if convert else texts
            words = seg(inputs)
            row[test] = 100 * word_prf(gold, [_spell(t, w) for t, w in zip(texts, words)])["f1"]
        rows.append((label, row))
        print(f"{label}: " + ", ".join(f"{t} {f:.2f}" for t, f in row.items()), file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        for name in args.zhbert:
            by = {"criterion": args.criterion} if args.criterion else {}
            score(f"zhbert `{name}`" + (f", criterion `{args.criterion}`" if by else ""), _zhbert(name, **by))
        if "cws" in args.zhbert:
            score("zhbert `cws`, previous normaliser (traditional read as is)", _zhbert(str(_zhbert_1_copy("cws", Path(tmp)))))
            from zhbert.data.paths import shared_dir

            def forced(test: str):
                words = _word_list(shared_dir() / "datasets" / "sighan2005_icwb2" / TEST_FILES[test][1])
                return _zhbert("cws", user_dict=words, dict_mode="force")

            score("zhbert `cws` + the standard's training word list forced", None, per_test=forced)
    for peer in PEERS:
        if not peer_ready(peer):
            print(f"{peer}: not installed (a CRF: not trained), skipped", file=sys.stderr)
            continue
        seg = _segmenter(peer)
        score(f"{peer}, traditional text", seg)
        score(f"{peer}, text mapped to simplified by zhbert's table", seg, convert=True)

    print("| system | CityU test word F1 | AS test word F1 |")
    print("|---|---:|---:|")
    for label, row in rows:
        print(f"| {label} | {row['CityU']:.2f} | {row['AS']:.2f} |")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
