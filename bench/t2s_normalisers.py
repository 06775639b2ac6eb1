"""Four ways to read traditional characters as simplified, measured side by side (issue 37).

    python bench/t2s_normalisers.py      # about 1 minute, one thread

Each keeps the same one-character-to-one table (``zhbert/resources/t2s_chars.tsv``, from OpenCC):

* ``Precompiled`` (what zhbert ships, normaliser ``zhbert-2``): a SentencePiece character map in
  ``tokenizer.json``'s normaliser; one trie lookup per character;
* ``Replace`` x 4,540: one string ``Replace`` normaliser per table entry, after zhbert-1's;
* vocabulary aliases: zhbert-1's normaliser, and each traditional character given its
  simplified character's id in the WordPiece vocabulary (decoding an id then names either);
* Python ``str.translate`` before tokenising: exact, but invisible to plain transformers, which
  would read the traditional characters as they are.

For each: tokenising speed on the CityU test (traditional) and the PKU test (simplified), token
ids and offsets against the shipped tokenizer, ``tokenizer.json`` size, and whether a plain
``AutoTokenizer`` loading the saved folder reads the traditional text the same way.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path


def _texts(name: str) -> list[str]:
    from zhbert.data import read_segmented
    from zhbert.data.paths import shared_dir

    rows = read_segmented(str(shared_dir(required=True) / "datasets" / "sighan2005_icwb2" / name))
    return ["".join(w) for w in rows["words"]]


def _from_doc(doc: dict, base):
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(json.dumps(doc, ensure_ascii=False)))
    fast.add_special_tokens({k: getattr(base, k) for k in ("unk_token", "cls_token", "sep_token", "pad_token", "mask_token")})
    return fast


def variants():
    from zhbert.models_registry import bundled_path
    from zhbert.tokenizer import _our_pipeline_json, load_tokenizer
    from zhbert.traditional import read_table

    shipped = load_tokenizer(bundled_path("cws"))
    table = read_table()
    doc = json.loads(shipped.backend_tokenizer.to_str())
    old_norm = _our_pipeline_json("zhbert-1")[0]

    replace = json.loads(json.dumps(doc))
    steps = [{"type": "Replace", "pattern": {"String": t}, "content": s} for t, s in table.items()]
    replace["normalizer"] = {"type": "Sequence", "normalizers": [old_norm, *steps]}

    alias = json.loads(json.dumps(doc))
    alias["normalizer"] = old_norm
    vocab = alias["model"]["vocab"]
    for t, s in table.items():
        if s in vocab:  # the traditional character reads as its simplified one's id (its own row, if any, goes unused)
            vocab[t] = vocab[s]

    plain = json.loads(json.dumps(doc))
    plain["normalizer"] = old_norm
    fold = str.maketrans(table)
    return {
        "Precompiled (shipped)": (shipped, None, doc),
        "Replace x 4,540": (_from_doc(replace, shipped), None, replace),
        "vocabulary aliases": (_from_doc(alias, shipped), None, alias),
        "str.translate in Python": (_from_doc(plain, shipped), fold, plain),
    }


def main(argv=None) -> None:
    import argparse

    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=None, help="read only the first N lines of each test file")
    args = parser.parse_args(argv)

    torch.set_num_threads(1)
    from transformers import AutoTokenizer

    cityu, pku = _texts("cityu_test_gold.utf8")[: args.lines], _texts("pku_test_gold.utf8")[: args.lines]
    found = variants()
    reference = found["Precompiled (shipped)"][0].backend_tokenizer
    ref_ids = {n: [e.ids for e in reference.encode_batch(t)] for n, t in (("cityu", cityu), ("pku", pku))}
    ref_offsets = [e.offsets for e in reference.encode_batch(cityu)]
    print(f"CityU test {sum(map(len, cityu)):,} characters (traditional), PKU test {sum(map(len, pku)):,} (simplified)\n")
    print("| normaliser | CityU chars/s | PKU chars/s | CityU ids as shipped | PKU ids as shipped | CityU offsets as shipped "
          "| tokenizer.json | plain AutoTokenizer reads CityU the same |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name, (tok, fold, doc) in found.items():
        backend = tok.backend_tokenizer
        speeds, same = {}, {}
        for label, texts in (("cityu", cityu), ("pku", pku)):
            inputs = [t.translate(fold) for t in texts] if fold else texts
            backend.encode_batch(inputs[:200])  # warm-up
            start = time.perf_counter()
            encs = backend.encode_batch(inputs)
            speeds[label] = sum(map(len, texts)) / (time.perf_counter() - start)
            same[label] = sum(e.ids == r for e, r in zip(encs, ref_ids[label])) / len(texts)
            if label == "cityu":
                offsets = sum(e.offsets == r for e, r in zip(encs, ref_offsets)) / len(texts)
        with tempfile.TemporaryDirectory() as tmp:
            tok.save_pretrained(tmp)
            size = (Path(tmp) / "tokenizer.json").stat().st_size
            reloaded = AutoTokenizer.from_pretrained(tmp)
            plain_ids = [reloaded(t)["input_ids"] for t in cityu[:500]]  # as a pipeline calls it
            plain_same = sum(a == r for a, r in zip(plain_ids, ref_ids["cityu"])) / len(plain_ids)
        print(
            f"| {name} | {speeds['cityu']:,.0f} | {speeds['pku']:,.0f} | {same['cityu']:.1%} | {same['pku']:.1%} | {offsets:.1%} "
            f"| {size / 1e3:,.0f} KB | {plain_same:.1%} of 500 lines |",
            flush=True,
        )


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()
