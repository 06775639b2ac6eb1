"""What a task head is: its kind, labels and the application mode, stored in config.json.

The settings live under ``"zhbert_head"`` in an ordinary ``BertConfig`` (model
type ``bert``), so plain transformers opens every zhbert folder: ``AutoModel``
gets the encoder, and heads that match a stock class (linear head on ``[CLS]``
or the last layer, no CRF) load as ``BertForSequenceClassification`` /
``BertForTokenClassification`` too. zhbert rebuilds custom heads (CRF, layer
fusion, bi-encoder) from these settings: no code is ever loaded from a folder.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from ..fusion import check_representation
from .criteria import check_criteria

__all__ = ["HeadConfig", "HEAD_KINDS", "MODES", "PAIR_ENCODINGS", "WINDOW_POOLS", "WINDOW_ALIGNS"]

HEAD_KINDS = ("sequence", "pair", "token")
MODES = ("finetune", "frozen")
PAIR_ENCODINGS = ("cross", "bi")
WINDOW_POOLS = ("mean", "mean-max")
WINDOW_ALIGNS = ("sentence", "packed", "token")


@dataclass
class HeadConfig:
    kind: str  # sequence | pair | token (a recipe's task, e.g. ner, is a different word)
    labels: list[str] = field(default_factory=list)  # class names, or tags for token heads
    multi_label: bool = False  # sequence/pair: sigmoid per label instead of softmax
    regression: bool = False  # pair/sequence: one real-valued output (e.g. STS-B), labels = ["score"]
    scheme: str | None = None  # token heads: BIO | BIOES | BMES | BMES-untyped
    crf: bool = False  # token heads: linear-chain CRF with constrained decoding
    # token heads: a BiLSTM of this many layers between the features and the tagger; 2 is the BERT
    # paper's feature-based NER head (zhbert.heads.bilstm)
    bilstm_layers: int = 0
    # its hidden size each way; None: the encoder's. Smaller costs less size and time (a bundled
    # model's BiLSTM must fit what the 100 MB budget leaves)
    bilstm_hidden: int | None = None
    # the tagger reads the features beside the BiLSTM's output (a skip connection), not its output
    # alone: a narrow BiLSTM then adds context without squeezing the features through it
    bilstm_skip: bool = False
    mode: str = "finetune"  # finetune | frozen (feature-based: encoder never updated)
    representation: str | None = None  # see zhbert.fusion; default cls (sequence/pair) / last (token)
    window: int | None = None  # tokens per window incl. [CLS]/[SEP]; default the encoder's pretraining length
    stride: int | None = None  # tokens between window starts; default half the window body
    # how a text longer than a window is cut (zhbert.windows): "sentence" gives each sentence
    # its own window, "packed" fills windows with whole sentences (overlap only inside a
    # sentence longer than a window), "token" overlaps windows anywhere. Default: sentence for
    # token heads (tagged sentence by sentence, as they are trained; MSRA NER on long documents
    # 82.25 F1 vs 81.35 overlapping), token for sequence and pair heads (trained on overlapping
    # windows of whole posts; the bundled tagging model: 70.50 macro-F1 token, 70.10 packed)
    window_align: str | None = None
    window_pool: str = "mean"  # sequence heads: how window vectors combine (mean | mean-max)
    pair_encoding: str = "cross"  # pair heads: cross ([CLS] a [SEP] b [SEP]) | bi (encode separately)
    thresholds: list[float] | None = None  # multi-label decision thresholds (tuned on dev)
    truncate: bool = False  # cut inputs to one window instead of windowing (only when asked)
    allow_untrained_positions: bool = False  # let a window reach past the encoder's pretraining length
    # token heads, word information (zhbert.heads.word_features): SoftLexicon B/M/E/S word sets from a
    # dictionary ("jieba": jieba's dict.txt, 349,046 words) and hashed character-bigram embeddings.
    # A head with either is zhbert-only: plain transformers cannot compute them (the encoder still opens there)
    lexicon: str | None = None  # None | "jieba"
    lexicon_dim: int = 50  # per set, so the tagger reads 4 x lexicon_dim more features
    lexicon_buckets: int = 16384  # rows of the hashed word-embedding table (about 21 of jieba's words share each)
    lexicon_sha256: str | None = None  # the dictionary file the head was trained with (checked on load)
    # a word list added to the dictionary for training (a domain's words): kept in the folder as
    # lexicon_words.txt, whose SHA-256 this is (checked on load); None: the dictionary alone
    lexicon_words_sha256: str | None = None
    bigram_dim: int = 0  # 0: no bigram features; else (t-1, t) and (t, t+1) embeddings of this size
    bigram_buckets: int = 65536
    # token heads: the annotation standards this head was trained on, one segment id each (criterion i
    # reads as token_type_ids == i; zhbert.heads.criteria). Empty: one standard
    criteria: list[str] = field(default_factory=list)
    # the criterion that criterion=None reads (None: the first); `zhbert export --blend-criteria NAME` adds
    # NAME, a reading between the standards (the mean of their segment rows), and makes it this default
    default_criterion: str | None = None

    def __post_init__(self):
        if self.kind not in HEAD_KINDS:
            raise ValueError(f"kind must be one of {', '.join(HEAD_KINDS)}, got {self.kind!r}")
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.representation is None:
            self.representation = "last" if self.kind == "token" else "cls"
        check_representation(self.representation)
        if self.pair_encoding not in PAIR_ENCODINGS:
            raise ValueError(f"pair_encoding must be one of {', '.join(PAIR_ENCODINGS)}, got {self.pair_encoding!r}")
        if self.window_align is None:
            self.window_align = "sentence" if self.kind == "token" else "token"
        if self.window_align not in WINDOW_ALIGNS:
            raise ValueError(f"window_align must be one of {', '.join(WINDOW_ALIGNS)}, got {self.window_align!r}")
        if self.window_pool not in WINDOW_POOLS:
            raise ValueError(f"window_pool must be one of {', '.join(WINDOW_POOLS)}, got {self.window_pool!r}")
        if self.regression:
            self.labels = self.labels or ["score"]
            if len(self.labels) != 1 or self.multi_label:
                raise ValueError("a regression head has exactly one output and is not multi-label")
        elif not self.labels:
            raise ValueError("labels must not be empty")
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(f"labels repeat: {self.labels}")
        if self.kind == "token":
            if not self.scheme:
                raise ValueError("a token head needs a tag scheme (BIO, BIOES, BMES or BMES-untyped)")
            if self.multi_label or self.regression:
                raise ValueError("token heads are single-label per token")
        elif self.crf:
            raise ValueError("a CRF applies to token heads only")
        elif self.bilstm_layers:
            raise ValueError("a BiLSTM (bilstm_layers) applies to token heads only")
        if (self.lexicon or self.bigram_dim) and self.kind != "token":
            raise ValueError("word features (lexicon, bigram_dim) apply to token heads only")
        if self.lexicon not in (None, "jieba"):
            raise ValueError(f"lexicon must be None or 'jieba', got {self.lexicon!r}")
        if self.lexicon_words_sha256 and not self.lexicon:
            raise ValueError("lexicon_words_sha256: a word list is added to a lexicon; this head has none")
        if self.bilstm_layers < 0:
            raise ValueError(f"bilstm_layers must be 0 (none) or more, got {self.bilstm_layers}")
        if self.bilstm_hidden is not None:
            if not self.bilstm_layers:
                raise ValueError(f"bilstm_hidden={self.bilstm_hidden} sizes a BiLSTM; this head has none (bilstm_layers=0)")
            if self.bilstm_hidden < 1:
                raise ValueError(f"bilstm_hidden must be 1 or more (None: the encoder's hidden size), got {self.bilstm_hidden}")
        if self.bilstm_skip and not self.bilstm_layers:
            raise ValueError("bilstm_skip passes the features around a BiLSTM; this head has none (bilstm_layers=0)")
        if self.criteria:
            if self.kind != "token":
                raise ValueError(f"criteria (annotation standards) apply to token heads only, not a {self.kind} head")
            check_criteria(self.criteria)
            if self.mode == "frozen":
                raise ValueError("criteria are learnt in the encoder's segment embeddings, which a frozen encoder never updates")
        if self.default_criterion is not None and self.default_criterion not in self.criteria:
            known = ", ".join(self.criteria) or "none (one standard)"
            raise ValueError(f"default_criterion {self.default_criterion!r} is not one of the head's criteria: {known}")
        if self.window is not None and self.window < 3:
            raise ValueError(f"window must hold at least [CLS] x [SEP] (3 tokens), got {self.window}")

    @property
    def word_features(self) -> bool:
        return bool(self.lexicon or self.bigram_dim)

    @property
    def num_outputs(self) -> int:
        return len(self.labels)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "HeadConfig":
        if "task" in d and "kind" not in d:  # folders saved before the rename (the bundled models among them)
            d = {("kind" if k == "task" else k): v for k, v in d.items()}
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown head settings {sorted(unknown)}")
        return cls(**d)
