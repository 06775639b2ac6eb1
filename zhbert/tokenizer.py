"""The zhbert tokenizer: a WordPiece ``tokenizers`` pipeline that owns its normalisation.

Everything that turns a caller's string into tokens lives in the saved
``tokenizer.json``, so ``AutoTokenizer``, every ``transformers.pipeline`` and
zhbert read a text identically, and token offsets point into the caller's
original string (the ``tokenizers`` normalizers keep that alignment):

* normaliser (:func:`zhbert_normalizer`): every whitespace character (U+3000,
  NBSP, and the separators Python's ``str.isspace`` counts) becomes a space;
  control, format, private-use and unassigned characters and U+FFFD are removed;
  curly quotes, dashes and the ellipsis become their ASCII forms (the Chinese
  BERT vocabulary lacks them: every ``“`` of People's Daily was ``[UNK]``);
  NFKD then accents stripped, lower-cased, NFC (full-width ``ＡＢＣ１２３，`` ->
  ``abc123,``; NFC recomposes Hangul so a syllable stays one token); then
  traditional characters become the simplified ones the models learned
  (``臺灣 -> 台湾``, one character to one, :mod:`zhbert.traditional`);
* pre-tokeniser (:func:`zhbert_pre_tokenizer`): split on whitespace, then each Han
  character and each symbol is a word of its own and letters/digits form runs
  (BERT's own pre-tokeniser glues ``abc123😀`` into one word, which is ``[UNK]``);
* WordPiece over the 21,128-entry Chinese BERT vocabulary.

A checkpoint from elsewhere keeps its own tokenizer (plain transformers reads it
so); a model folder that older zhbert trained on its Python-side normalisation is
converted on load (:func:`load_tokenizer`), so those models keep working.

Transformers 5 traps handled here: ``BertTokenizerFast(vocab_file=...)`` ignores
the file (5-token vocabulary), and ``tokenizer_class: BertTokenizer`` makes
``AutoTokenizer`` rebuild the stock ``BertNormalizer``, discarding ours; so we
save the generic fast-tokenizer class, which loads ``tokenizer.json`` as it is.
"""

from __future__ import annotations

import copy
import json
import os
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Sequence

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from transformers import PreTrainedTokenizerBase, PreTrainedTokenizerFast

from .errors import DataFormatError, ModelLoadError
from .text import HAN_RANGES
from .traditional import traditional_normalizer

RESOURCES = Path(__file__).parent / "resources"
DEFAULT_VOCAB = RESOURCES / "vocab.txt"
SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
MODEL_INPUT_NAMES = ["input_ids", "token_type_ids", "attention_mask"]
#: zhbert's normaliser versions, oldest first: ``zhbert-2`` adds the traditional -> simplified map.
#: A folder keeps the version it was saved with, so plain transformers keeps reading it as zhbert does.
NORMALIZER_VERSIONS = ("zhbert-1", "zhbert-2")
#: the version new tokenizers get, recorded with every model whose tokenizer carries it
NORMALIZER_NAME = NORMALIZER_VERSIONS[-1]

__all__ = [
    "DEFAULT_VOCAB",
    "NORMALIZER_NAME",
    "NORMALIZER_VERSIONS",
    "Encoding",
    "build_tokenizer",
    "convert_tokenizer",
    "has_zhbert_normalizer",
    "load_tokenizer",
    "normalizer_name",
    "save_tokenizer",
    "simplify_traditional",
    "read_vocab",
    "encode",
    "unk_rate",
    "check_unk_rate",
    "zhbert_normalizer",
    "zhbert_pre_tokenizer",
]

# typographic punctuation the Chinese BERT vocabulary lacks -> its ASCII counterpart
_PUNCT_GROUPS = {
    '"': "\u201c\u201d\u201e\u201f",
    "'": "\u2018\u2019\u201a\u201b",
    "-": "\u2014\u2013\u2015\u2012",
    ".": "\u2026",
}


def _char_class(chars: Iterable[str]) -> str:
    return "[" + "".join(f"\\x{{{ord(c):X}}}" for c in sorted(chars)) + "]"


@lru_cache(maxsize=1)
def _whitespace_chars() -> tuple[str, ...]:
    """Python's whitespace (``str.isspace``, which includes U+001C-001F) plus ``Zs``."""
    return tuple(
        chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and (chr(c).isspace() or unicodedata.category(chr(c)) == "Zs")
    )


def zhbert_normalizer(version: str = NORMALIZER_NAME) -> normalizers.Normalizer:
    """zhbert's normalisation as a ``tokenizers`` normaliser (see the module docstring)."""
    if version not in NORMALIZER_VERSIONS:
        raise ValueError(f"unknown normaliser version {version!r}; known: {', '.join(NORMALIZER_VERSIONS)}")
    steps = [
        # whitespace first: tabs and newlines are control characters too
        normalizers.Replace(Regex(_char_class(_whitespace_chars())), " "),
        normalizers.Replace(Regex(r"[\p{Cc}\p{Cf}\p{Co}\p{Cn}\x{FFFD}]"), ""),
    ]
    steps += [normalizers.Replace(Regex(_char_class(src)), dst) for dst, src in _PUNCT_GROUPS.items()]
    steps += [normalizers.NFKD(), normalizers.StripAccents(), normalizers.Lowercase(), normalizers.NFC()]
    if version != "zhbert-1":
        # last, so compatibility ideographs (U+F900 block) are unified by NFKD before the lookup
        steps.append(traditional_normalizer())
    return normalizers.Sequence(steps)


def zhbert_pre_tokenizer() -> pre_tokenizers.PreTokenizer:
    """Whitespace splits words; each Han character and each symbol is a word; letters/digits form runs."""
    han = "".join(f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in HAN_RANGES)
    return pre_tokenizers.Sequence(
        [
            pre_tokenizers.WhitespaceSplit(),
            pre_tokenizers.Split(Regex(f"[{han}]|[^\\p{{L}}\\p{{N}}]"), behavior="isolated"),
        ]
    )


def read_vocab(path: str | os.PathLike) -> list[str]:
    """Read a one-token-per-line vocabulary, checking for duplicates and specials."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: vocabulary file not found")
    tokens: list[str] = []
    seen: dict[str, int] = {}
    with open(path, encoding="utf-8-sig") as f:
        for lineno, line in enumerate(f, 1):
            tok = line.rstrip("\r\n")
            if not tok:
                raise DataFormatError(str(path), lineno, "empty vocabulary entry")
            if tok in seen:
                raise DataFormatError(str(path), lineno, f"duplicate token {tok!r} (first on line {seen[tok]})")
            seen[tok] = lineno
            tokens.append(tok)
    missing = [t for t in SPECIAL_TOKENS if t not in seen]
    if missing:
        raise DataFormatError(str(path), None, f"vocabulary lacks special tokens {missing}")
    return tokens


def build_tokenizer(vocab: str | os.PathLike | Sequence[str] | None = None, model_max_length: int = 512) -> PreTrainedTokenizerFast:
    """zhbert's fast tokenizer over ``vocab`` (a path or a token list in id order)."""
    if vocab is None:
        vocab = DEFAULT_VOCAB
    tokens = read_vocab(vocab) if isinstance(vocab, (str, os.PathLike)) else list(vocab)
    ids = {t: i for i, t in enumerate(tokens)}
    missing = [t for t in SPECIAL_TOKENS if t not in ids]
    if missing:
        raise ValueError(f"vocabulary lacks special tokens {missing}")
    backend = Tokenizer(models.WordPiece(vocab=ids, unk_token="[UNK]", continuing_subword_prefix="##", max_input_chars_per_word=100))
    backend.normalizer = zhbert_normalizer()
    backend.pre_tokenizer = zhbert_pre_tokenizer()
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])],
    )
    backend.decoder = decoders.WordPiece(prefix="##")
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=model_max_length,
        model_input_names=list(MODEL_INPUT_NAMES),
        padding_side="right",
    )


def _pipeline_json(tokenizer: PreTrainedTokenizerBase) -> dict:
    return json.loads(tokenizer.backend_tokenizer.to_str())


def zhbert_normalizer_version(tokenizer: PreTrainedTokenizerBase) -> str | None:
    """Which version of zhbert's normaliser and pre-tokeniser the tokenizer carries, or None."""
    if not getattr(tokenizer, "is_fast", False):
        return None
    doc = _pipeline_json(tokenizer)
    for version in NORMALIZER_VERSIONS:
        norm, pre = _our_pipeline_json(version)
        if doc.get("normalizer") == norm and doc.get("pre_tokenizer") == pre:
            return version
    return None


def has_zhbert_normalizer(tokenizer: PreTrainedTokenizerBase) -> bool:
    """True when the tokenizer normalises and pre-tokenises as some version of zhbert's does."""
    return zhbert_normalizer_version(tokenizer) is not None


@lru_cache(maxsize=None)
def _our_pipeline_json(version: str) -> tuple[dict, dict]:
    t = Tokenizer(models.WordPiece(vocab={"[UNK]": 0}, unk_token="[UNK]"))
    t.normalizer, t.pre_tokenizer = zhbert_normalizer(version), zhbert_pre_tokenizer()
    doc = json.loads(t.to_str())
    return doc["normalizer"], doc["pre_tokenizer"]


def normalizer_name(tokenizer: PreTrainedTokenizerBase) -> str:
    """What ``zhbert_encoder.normalizer`` records for this tokenizer."""
    return zhbert_normalizer_version(tokenizer) or "tokenizer"


def simplify_traditional(tokenizer: PreTrainedTokenizerBase) -> PreTrainedTokenizerFast:
    """A ``zhbert-1`` tokenizer with the current normaliser, which reads traditional characters
    as simplified; the vocabulary, ids and everything else stay. Save it with :func:`save_tokenizer`
    to upgrade a folder (``zhbert.load`` keeps a folder's tokenizer as saved)."""
    if zhbert_normalizer_version(tokenizer) != "zhbert-1":
        raise ValueError(f"expected a tokenizer with zhbert's zhbert-1 normaliser, got {normalizer_name(tokenizer)!r}")
    upgraded = copy.deepcopy(tokenizer)
    upgraded.backend_tokenizer.normalizer = zhbert_normalizer()
    return upgraded


def convert_tokenizer(tokenizer: PreTrainedTokenizerBase) -> PreTrainedTokenizerFast:
    """The same vocabulary behind zhbert's normaliser and pre-tokeniser.

    For model folders that older zhbert versions trained on text normalised in
    Python: their saved tokenizer was a stock ``BertTokenizer`` that knew nothing
    of it, so plain transformers read ``，“１９`` differently from training.
    """
    vocab = tokenizer.get_vocab()
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    if [vocab[t] for t in tokens] != list(range(len(tokens))):
        raise ModelLoadError("the tokenizer's vocabulary ids are not 0..N-1; cannot convert it")
    return build_tokenizer(tokens, model_max_length=min(int(tokenizer.model_max_length or 512), 10**6))


def save_tokenizer(tokenizer: PreTrainedTokenizerBase, path: str | os.PathLike, max_length: int | None = None) -> None:
    """``save_pretrained`` plus the config keys that keep ``AutoTokenizer`` from rebuilding the pipeline.

    ``max_length``: the encoder's trained length, written as ``model_max_length`` so plain
    ``transformers`` pipelines truncate there rather than read positions the encoder never trained."""
    path = Path(path)
    tokenizer.save_pretrained(str(path))
    cfg_file = path / "tokenizer_config.json"
    if max_length and cfg_file.is_file():
        cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
        cfg["model_max_length"] = int(max_length)
        cfg_file.write_text(json.dumps(cfg, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    if has_zhbert_normalizer(tokenizer) and cfg_file.is_file():
        cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
        cfg["tokenizer_class"] = "PreTrainedTokenizerFast"
        cfg["model_input_names"] = list(MODEL_INPUT_NAMES)
        for key in ("do_lower_case", "strip_accents", "tokenize_chinese_chars", "is_local", "local_files_only"):
            cfg.pop(key, None)
        cfg_file.write_text(json.dumps(cfg, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def _trained_on_zhbert_normalisation(path: Path) -> bool:
    """A folder older zhbert made: zhbert settings in config.json but no ``zhbert_encoder`` record."""
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(config, dict) or "zhbert_encoder" in config:
        return False
    return "zhbert_head" in config or (path / "zhbert_pretrain.json").is_file()


def load_tokenizer(path: str | os.PathLike) -> PreTrainedTokenizerBase:
    """Load the tokenizer saved in a model folder (local files only, never remote code).

    Folders made by older zhbert versions get zhbert's normaliser (see
    :func:`convert_tokenizer`); every other folder's tokenizer is used as saved.
    """
    from transformers import AutoTokenizer

    path = Path(path)
    if not path.is_dir():
        raise ModelLoadError(f"{path}: not a directory with a saved tokenizer")
    if not any((path / f).is_file() for f in ("tokenizer.json", "vocab.txt")):
        raise ModelLoadError(f"{path}: no tokenizer.json or vocab.txt in the folder")
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True, trust_remote_code=False)
    except Exception as e:  # a truncated tokenizer.json, a broken tokenizer_config.json, ...
        raise ModelLoadError(f"{path}: cannot load the tokenizer ({type(e).__name__}: {str(e)[:200]})") from None
    if not getattr(tokenizer, "is_fast", False):
        raise ModelLoadError(f"{path}: zhbert needs a fast tokenizer (tokenizer.json); this folder gives {type(tokenizer).__name__}")
    if _trained_on_zhbert_normalisation(path) and not has_zhbert_normalizer(tokenizer):
        tokenizer = convert_tokenizer(tokenizer)
    return tokenizer


@dataclass(frozen=True)
class Encoding:
    """Token ids with offsets into the caller's *original* text (no [CLS]/[SEP])."""

    text: str
    ids: tuple[int, ...]
    offsets: tuple[tuple[int, int], ...]
    word_ids: tuple[int, ...]  # index of the pre-tokenised word each token belongs to
    # the tokenizer's own encoding, read for ``tokens`` on demand: only the demo shows token
    # strings, and making them for every text took 4% of a small segmenter's time
    source: Any = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def tokens(self) -> tuple[str, ...]:
        return tuple(self.source.tokens)


def encode(tokenizer: PreTrainedTokenizerBase, texts: str | Iterable[str]) -> Encoding | list[Encoding]:
    """Tokenise one text or a list, offsets into the original strings, no truncation."""
    single = isinstance(texts, str)
    batch = [texts] if single else list(texts)
    for i, t in enumerate(batch):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}]: expected str, got {type(t).__name__}")
    if not batch:
        return []
    backend = getattr(tokenizer, "backend_tokenizer", None)
    try:
        if backend is not None and backend.truncation is None and backend.padding is None:
            # straight to the Rust tokenizer: the same encodings without transformers' per-text wrapping
            encodings = backend.encode_batch(batch, add_special_tokens=False)
        else:
            encodings = tokenizer(batch, add_special_tokens=False, return_offsets_mapping=True, truncation=False, verbose=False).encodings
    except BaseException as e:  # noqa: BLE001 - a Rust panic is a BaseException (pyo3's PanicException), not an Exception
        if type(e).__name__ != "PanicException":
            raise
        where = getattr(tokenizer, "name_or_path", "") or "the tokenizer"
        raise ValueError(f"{where}: the tokenizer crashed (Rust panic: {str(e)[:160]}); its tokenizer.json is damaged or hostile") from None
    out = [
        Encoding(
            text,
            tuple(e.ids),
            tuple(map(tuple, e.offsets)),
            tuple([-1 if w is None else w for w in e.word_ids]),
            e,
        )
        for text, e in zip(batch, encodings)
    ]
    return out[0] if single else out


def unk_rate(tokenizer: PreTrainedTokenizerBase, texts: Iterable[str], batch_size: int = 1000) -> tuple[float, int, int]:
    """Share of tokens that are ``[UNK]`` over ``texts``: (rate, n_unk, n_tokens)."""
    unk_id = tokenizer.unk_token_id
    n_unk = n_tok = 0
    buf: list[str] = []

    def flush():
        nonlocal n_unk, n_tok
        for e in encode(tokenizer, buf):
            n_tok += len(e.ids)
            n_unk += sum(1 for i in e.ids if i == unk_id)
        buf.clear()

    for t in texts:
        buf.append(t)
        if len(buf) >= batch_size:
            flush()
    if buf:
        flush()
    return (n_unk / n_tok if n_tok else 0.0), n_unk, n_tok


#: above this share of [UNK] tokens, training stops unless the caller overrides it
MAX_UNK_RATE = 0.05


SAMPLE_CHARS = 1_000_000  # characters of text the [UNK] check reads at most


def check_unk_rate(
    tokenizer: PreTrainedTokenizerBase, texts: Iterable[str], what: str, limit: float = MAX_UNK_RATE, sample: int = 2000
) -> float:
    """Refuse to train on text the vocabulary cannot read (an English WordPiece vocabulary
    turns 62.7% of Chinese into ``[UNK]``); returns the measured rate of the first ``sample`` texts,
    and of no more than ``SAMPLE_CHARS`` characters (2,000 corpus pieces of 100,000 characters
    each, tokenised at once with their offsets, once took gigabytes)."""
    head, chars = [], 0
    for t in texts:
        head.append(t[: SAMPLE_CHARS - chars])
        chars += len(head[-1])
        if len(head) >= sample or chars >= SAMPLE_CHARS:
            break
    rate, n_unk, n_tok = unk_rate(tokenizer, head)
    if rate > limit:
        raise ValueError(
            f"{what}: {rate:.1%} of tokens ({n_unk:,} of {n_tok:,} in the first {len(head):,} texts) are [UNK] "
            f"under this vocabulary (limit {limit:.0%}): use a vocabulary that covers the text (zhbert's default "
            "Chinese vocabulary, or the encoder's own), or pass --max-unk-rate 1 to train anyway"
        )
    return rate
