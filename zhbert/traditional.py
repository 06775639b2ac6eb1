"""Traditional characters read as the simplified ones the models learned, inside ``tokenizer.json``.

The Chinese BERT vocabulary and every zhbert training set are simplified Chinese:
``臺灣大學`` reached the bundled models as four characters they had barely seen.
zhbert's tokenizer therefore maps traditional characters to simplified ones in its
normaliser, so every ``AutoTokenizer`` and ``transformers.pipeline`` reads the text
the same way, and token offsets still point into the caller's traditional string.

* **The table** (``resources/t2s_chars.tsv``, one ``traditional<TAB>simplified`` pair
  per line) is OpenCC's character table (``t2s``, its ``TSCharacters`` dictionary),
  one character to one character, over the Han blocks. OpenCC's phrase tables are
  not used: they can change a text's length, and a normaliser that keeps offsets
  exact must map character by character.
* **Characters that are simplified too** stay as they are. A character in GB 2312
  (the simplified character set) is mapped only when it is under 1% as frequent as
  its simplified counterpart in zhbert's simplified corpus (46.7 M characters), that
  is, when a simplified text almost never uses it: ``後 -> 后`` and ``於 -> 于`` are
  mapped; ``乾`` (乾隆, 乾坤; 1.2%), ``夥``, ``吒``, ``拚``, ``捱`` and ``薹`` are kept.
  A character map cannot tell ``乾淨`` (dry: 干净) from ``乾隆``; keeping ``乾`` errs
  toward the simplified text the models serve most.
* **Characters the vocabulary has and their simplified form lacks** stay too (31, such as
  Cantonese ``嗰``, whose simplified form ``𠮶`` is not among the 21,128 tokens): mapping them
  would turn a known token into ``[UNK]``.
* **One-to-many** conversions (``乾 -> 干 / 乾``, ``後 -> 后``, ``髮 -> 发``) are one-to-many
  only from simplified to traditional (``后 -> 後 / 后``, ``发 -> 發 / 髮``); from traditional
  to simplified OpenCC's character table gives one character for each, and this table
  uses it as is.
* **The normaliser** is ``tokenizers``' ``Precompiled``: a SentencePiece character map,
  compiled from the table by SentencePiece's trainer (``normalization_rule_tsv``) and
  stored as ``resources/t2s.charsmap``. It keeps the alignment to the original string,
  and it is one trie lookup per character, where 2,700 ``Replace`` steps would scan
  the text 2,700 times.

Rebuild both files (maintainers only; needs ``opencc`` and ``sentencepiece``)::

    python -m zhbert.traditional ../shared/corpora
"""

from __future__ import annotations

import collections
import io
import sys
from functools import lru_cache
from pathlib import Path

from tokenizers import normalizers

__all__ = ["CHARSMAP", "TABLE", "build_table", "compile_charsmap", "read_table", "traditional_normalizer"]

RESOURCES = Path(__file__).parent / "resources"
DEFAULT_VOCAB = RESOURCES / "vocab.txt"
TABLE = RESOURCES / "t2s_chars.tsv"
CHARSMAP = RESOURCES / "t2s.charsmap"
#: a GB 2312 character is mapped only when simplified text uses it less than this share as often as its target
KEEP_RATIO = 0.01
# the Han blocks OpenCC's character table covers (BMP and the supplementary ideographic planes)
_HAN_BLOCKS = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF), (0x2A700, 0x2EBEF), (0x30000, 0x3134F))


@lru_cache(maxsize=1)
def _charsmap() -> bytes:
    return CHARSMAP.read_bytes()


def traditional_normalizer() -> normalizers.Normalizer:
    """The ``Precompiled`` normaliser that maps traditional characters to simplified ones."""
    return normalizers.Precompiled(_charsmap())


def read_table(path: str | Path = TABLE) -> dict[str, str]:
    """The ``traditional -> simplified`` character table (comment lines start with ``#``)."""
    table: dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 2 or len(parts[0]) != 1 or len(parts[1]) != 1:
                raise ValueError(f"{path}:{lineno}: expected one character, a tab, one character")
            table[parts[0]] = parts[1]
    return table


def _is_gb2312(char: str) -> bool:
    try:
        char.encode("gb2312")
    except UnicodeEncodeError:
        return False
    return True


def build_table(corpus_dir: str | Path) -> tuple[dict[str, str], dict[str, tuple[str, int, int]], set[str]]:
    """OpenCC's one-character ``t2s`` mappings, minus the GB 2312 characters simplified text uses
    and the characters whose simplified form the default vocabulary lacks.

    Returns the table; for each character kept for its frequency, its OpenCC target, its corpus
    count and the target's; and the characters kept for the vocabulary."""
    import opencc

    converter = opencc.OpenCC("t2s")
    pairs = {}
    for start, end in _HAN_BLOCKS:
        for cp in range(start, end + 1):
            simplified = converter.convert(chr(cp))
            if simplified != chr(cp) and len(simplified) == 1:
                pairs[chr(cp)] = simplified
    counts: collections.Counter[str] = collections.Counter()
    for path in sorted(Path(corpus_dir).glob("*/*.txt")):
        with open(path, encoding="utf-8") as f:
            while chunk := f.read(1 << 22):
                counts.update(chunk)
    kept = {c: (s, counts[c], counts[s]) for c, s in pairs.items() if _is_gb2312(c) and counts[c] >= KEEP_RATIO * max(counts[s], 1)}
    vocab = set(DEFAULT_VOCAB.read_text(encoding="utf-8").splitlines())
    unknown_target = {c for c, s in pairs.items() if c in vocab and s not in vocab}
    return {c: s for c, s in pairs.items() if c not in kept and c not in unknown_target}, kept, unknown_target


def compile_charsmap(table: dict[str, str]) -> bytes:
    """SentencePiece's compiled character map for ``table`` (what ``Precompiled`` reads)."""
    import tempfile

    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2

    with tempfile.TemporaryDirectory() as tmp:
        rules = Path(tmp) / "rules.tsv"
        rules.write_text("".join(f"{ord(c):X}\t{ord(s):X}\n" for c, s in sorted(table.items())), encoding="utf-8")
        model = io.BytesIO()
        # the trainer compiles the rule table into the model's normaliser; the tiny vocabulary is thrown away
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(["臺灣大學的學生 abc"] * 20),
            model_writer=model,
            vocab_size=20,
            model_type="char",
            hard_vocab_limit=False,
            normalization_rule_tsv=str(rules),
            add_dummy_prefix=False,
            remove_extra_whitespaces=False,
            minloglevel=2,
        )
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model.getvalue())
    return proto.normalizer_spec.precompiled_charsmap


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        raise SystemExit("usage: python -m zhbert.traditional CORPUS_DIR   (the simplified corpus, e.g. ../shared/corpora)")
    table, kept, unknown_target = build_table(argv[0])
    header = [
        "# traditional -> simplified, one character to one: OpenCC's t2s character table (TSCharacters) over the Han blocks,",
        f"# minus GB 2312 characters that simplified text uses (corpus count >= {KEEP_RATIO:.0%} of the target's):",
        "# " + ", ".join(f"{c} ({a:,} vs {s} {b:,})" for c, (s, a, b) in sorted(kept.items())),
        "# and minus the characters the default vocabulary has while it lacks their simplified form: " + "".join(sorted(unknown_target)),
        "# built by: python -m zhbert.traditional CORPUS_DIR",
    ]
    TABLE.write_text("\n".join(header) + "\n" + "".join(f"{c}\t{s}\n" for c, s in sorted(table.items())), encoding="utf-8")
    CHARSMAP.write_bytes(compile_charsmap(table))
    print(f"{TABLE}: {len(table):,} characters; kept as they are: {''.join(sorted(kept))} and {len(unknown_target)} for the vocabulary")


if __name__ == "__main__":
    main(sys.argv[1:])
