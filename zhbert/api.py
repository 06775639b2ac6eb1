"""``zhbert.load(...)``: one call to load, then batched predictions as plain data.

One string in -> one result out; a list in -> a list out, order kept; inputs are
never modified. Every span carries ``start``/``end`` offsets into the caller's
*original* string (``text[start:end] == span.text``), through normalisation
(full-width forms, spaces, emoji, control characters). Long texts are windowed.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from .dictionary import gc_paused
from .encoder_info import trained_length
from .errors import ModelLoadError
from .heads import ZhBertForTask, char_spans, load_head, predict_scores, predict_tags
from .heads.thresholds import apply_thresholds
from .models_registry import read_config, resolve_model_path
from .text import MAX_TEXT_CHARS
from .tokenizer import encode, load_tokenizer
from .windows import owner_groups, owners, sentence_breaks, windows

logger = logging.getLogger("zhbert")

__all__ = [
    "load",
    "Span",
    "Label",
    "Classification",
    "Match",
    "Candidate",
    "MaskFill",
    "Segmenter",
    "POSTagger",
    "PERSON_NAMES",
    "FILL_ORDERS",
    "EntityRecognizer",
    "Tagger",
    "Classifier",
    "Matcher",
    "MaskedLM",
    "MultiTask",
]


def _plain(value):
    """Dataclasses -> dicts and tuples -> lists, recursively: JSON-ready."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class _Result:
    """Base of the frozen result types: ``to_dict()`` gives plain, JSON-serialisable data."""

    def to_dict(self) -> dict:
        return _plain(asdict(self))


@dataclass(frozen=True)
class Span(_Result):
    """A word or entity: ``text == input[start:end]``. ``score``: the model's mean probability of the
    span's tags (entities). ``forced``: a user dictionary (``dict_mode="force"``), or for segmentation a
    web unit (a URL, an @mention), decided this span, not
    the model; a forced entity's score is 1.0, so a filter such as ``score > 0.5`` keeps it."""

    text: str
    start: int
    end: int
    label: str | None = None
    score: float | None = None
    forced: bool = False


@dataclass(frozen=True)
class Label(_Result):
    label: str
    score: float


@dataclass(frozen=True)
class Classification(_Result):
    labels: tuple[Label, ...]  # the predicted label(s), best first
    scores: tuple[Label, ...]  # every label with its probability, best first


@dataclass(frozen=True)
class Match(_Result):
    label: str
    score: float  # probability of ``label`` (or the predicted score for a regression head)
    scores: tuple[Label, ...] = ()  # every label with its probability, best first (empty for regression)


@dataclass(frozen=True)
class Candidate(_Result):
    token: str
    score: float


@dataclass(frozen=True)
class MaskFill(_Result):
    start: int  # offsets of this "[MASK]" in the input
    end: int
    token: str  # the filled-in character
    candidates: tuple[Candidate, ...]


def _check_count(name: str, value, low: int = 1, high: int | None = None) -> int:
    """A positive whole-number argument, or a TypeError/ValueError that names it."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def _check_batch_size(value) -> None:
    """``batch_size`` of a prediction call: None (the model's token budget decides) or a positive int."""
    if value is not None:
        _check_count("batch_size", value)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _one_or_many(inputs, fn, pairs: bool | None = None):
    """``fn`` over a text, a pair or a list of them; ``pairs``: what the model reads (True: pairs
    only, False: texts only, None: either), so that the other kind is refused in words, not by
    the tokenizer three calls down."""
    if inputs is None or isinstance(inputs, (bytes, bytearray)) or not hasattr(inputs, "__iter__"):
        hint = " (decode bytes to str first)" if isinstance(inputs, (bytes, bytearray)) else ""
        raise TypeError(f"inputs must be a string, a (text_a, text_b) pair, or a list of them; got {type(inputs).__name__}{hint}")
    single = isinstance(inputs, str) or (isinstance(inputs, tuple) and len(inputs) == 2 and all(isinstance(x, str) for x in inputs))
    items = [inputs] if single else list(inputs)
    for i, x in enumerate(items):
        ok = isinstance(x, str) or (isinstance(x, tuple) and len(x) == 2 and all(isinstance(y, str) for y in x))
        if not ok:
            raise TypeError(f"input {i}: expected a string (or a pair of strings), got {type(x).__name__}")
        if pairs is not None and isinstance(x, tuple) != pairs:
            wanted = "a matching model takes (text_a, text_b) pairs, not a text" if pairs else (
                "this model takes texts, not a (text_a, text_b) pair (a matching model's input); pass several texts as a list"
            )  # fmt: skip
            raise TypeError(f"input {i}: {wanted}")
        for side, text in enumerate((x,) if isinstance(x, str) else x):
            if len(text) > MAX_TEXT_CHARS:  # held whole with its tokens and spans: memory grows with it
                where = f"input {i}" + (f", text {'ab'[side]}" if isinstance(x, tuple) else "")
                raise ValueError(
                    f"{where}: {len(text):,} characters; one text takes up to {MAX_TEXT_CHARS:,} (about 1.6 GB at that size): "
                    "split it, e.g. at paragraph or sentence ends, and pass the parts as a list"
                )
            bad = _SURROGATE.search(text)
            if bad:  # no UTF-8 exists for it: the tokenizer would fail with a misleading TypeError
                where = f"input {i}" + (f", text {'ab'[side]}" if isinstance(x, tuple) else "")
                code = f"U+{ord(bad.group()):04X}"
                raise ValueError(f"{where}, character {bad.start()}: lone surrogate {code} (not a character; fix the decoding)")
    # the cyclic collector paused: a batch's results are hundreds of thousands of acyclic objects
    # (spans, offsets), and the full passes they set off over every object of the process took a
    # sixth of a one-layer segmenter's time; reference counting still frees them all
    with gc_paused():
        out = fn(items)
    return out[0] if single else out


class _HeadPredictor:
    reads_pairs = False  # a text per input; a Matcher reads (text_a, text_b) pairs

    def __init__(self, model: ZhBertForTask, tokenizer, path: Path):
        self.model, self.tokenizer, self.path = model, tokenizer, path
        self.head = model.head
        self.units = None  # web units (zhbert.web_units.WebUnits) a token head decodes around
        self._forced_dictionary = None  # the user dictionary whose words are forced (token heads)
        self._forced_words = None  # its matcher (heads.user_dict.ForcedWords), built once per dictionary
        self.forced = None  # what decoding enforces: the forced words and, for segmentation, the units
        self.criterion = None  # the annotation standard to tag by (a head trained with criteria); None: its default
        self.dictionary_summary = None  # what the user dictionary held: entries, repeats merged, lines skipped, words left out

    def _check_token_head(self, what: str = "a user dictionary") -> None:
        if self.head.kind != "token":
            raise ValueError(f"{what} applies to segmentation and NER models; {self.path} is a {self.head.kind} head")

    def _refresh_forced(self) -> None:
        from .dictionary import Dictionary
        from .heads.user_dict import ForcedWords

        if self._forced_dictionary is None and self.units is None:
            self.forced = None
            return
        if self._forced_words is None:
            self._forced_words = ForcedWords(self._forced_dictionary or Dictionary("<none>"), self.head.labels, self.head.scheme)
        forced = self._forced_words.with_units(self.units)
        self.forced = forced if forced else None

    def forcing(self, user_dict) -> "_HeadPredictor":
        """A copy of this predictor that forces ``user_dict``'s words (``dict_mode="force"``), sharing the
        model: nothing of this predictor changes (the demo's per-request dictionary box)."""
        import copy

        from .dictionary import read_dictionary

        self._check_token_head()
        other = copy.copy(self)
        other._forced_dictionary = read_dictionary(user_dict)
        other.dictionary_summary = other._forced_dictionary.summary()
        other._forced_words = None
        other._refresh_forced()
        return other

    def _forced_spans(self, texts: list[str]) -> list[dict[tuple[int, int], str | None]]:
        """Per text, the spans a user dictionary (or, for segmentation, a web unit) forces: (start, end) -> type."""
        if self.forced is None:
            return [{} for _ in texts]
        return [{(s, e): t for s, e, t in spans} for spans in self.forced.spans_many(texts)]

    def tags(self, texts: list[str], batch_size: int | None = None, with_scores: bool = True):
        """A token head's tag predictions (``predict_tags``' records, scores included unless ``with_scores``
        is False) of ``texts`` under this predictor's forced words and criterion: what its answers are built
        from, and what silver-label scripts read."""
        self._check_token_head("tags")
        return predict_tags(
            self.model, self.tokenizer, texts, batch_size, forced=self.forced, criterion=self.criterion, with_scores=with_scores
        )

    def use_criterion(self, criterion: str | None) -> None:
        """Tag by ``criterion``, one of the standards the head was trained on (``head.criteria``, e.g.
        ``"pku"`` or ``"weibo"`` for a segmenter trained with ``--criteria pku,weibo``); ``None``: its default
        (``head.default_criterion``, else the first)."""
        self._check_token_head("criterion")
        if criterion is not None and not self.head.criteria:
            raise ValueError(f"criterion {criterion!r}: {self.path} was trained on one annotation standard (no --criteria)")
        if criterion is not None and criterion not in self.head.criteria:
            known = ", ".join(self.head.criteria)
            raise ValueError(f"criterion {criterion!r} is not one of the standards {self.path} was trained on: {known}")
        self.criterion = criterion

    def use_web_units(self, kinds=True) -> None:
        """Decode around web units (URLs, @mentions, #topics#, emoji, ...; ``zhbert/web_units.py``):
        ``True`` for the default kinds, ``False`` for none, or a list of kinds."""
        from .web_units import DEFAULT_KINDS, WebUnits

        self._check_token_head("web_units")
        self.units = WebUnits(DEFAULT_KINDS if kinds is True else kinds) if kinds else None
        if self.units is not None and not self.units.kinds:
            self.units = None
        self._refresh_forced()

    def use_dictionary(self, user_dict, dict_mode: str = "force") -> None:
        """Apply a user dictionary (a file path or a list of words) to this predictor only.

        ``force``: every listed word found in a text comes out whole (an entity of its type for
        NER: ``word<TAB>TYPE``), enforced in decoding; on a head with lexicon features the words
        also join its lexicon. ``prefer``: the words join the lexicon of a head trained with one
        (``--lexicon``) and the model decides. See ``zhbert/heads/user_dict.py``."""
        from .dictionary import read_dictionary
        from .heads.user_dict import DICT_MODES

        if dict_mode not in DICT_MODES:
            raise ValueError(f"dict_mode must be one of {', '.join(DICT_MODES)}, got {dict_mode!r}")
        self._check_token_head()
        with gc_paused():  # a million entries stay alive throughout: each full collection would walk them all
            self._use_dictionary(read_dictionary(user_dict), dict_mode)

    def _use_dictionary(self, dictionary, dict_mode: str) -> None:
        from .heads.user_dict import ForcedWords

        has_lexicon = self.model.word_features is not None and self.model.word_features.lexicon is not None
        if dict_mode == "prefer" and not has_lexicon:
            raise ValueError(
                f"dict_mode='prefer' adds words to the lexicon of a head trained with one (--lexicon jieba); "
                f"{self.path} has no lexicon features: use dict_mode='force'"
            )
        if dict_mode == "force":
            words = ForcedWords(dictionary, self.head.labels, self.head.scheme)  # checks NER types before anything changes
            self._forced_dictionary, self._forced_words = dictionary, words
            self._refresh_forced()
        self.dictionary_summary = dictionary.summary()
        if has_lexicon:
            before = self.model.word_features.lexicon
            self.model.word_features.lexicon = before.with_words(dictionary, self.tokenizer)
            unreadable = self.model.word_features.lexicon.unreadable - before.unreadable
            if unreadable:
                self.dictionary_summary += (
                    f"; {unreadable:,} word{'s' if unreadable > 1 else ''} with a character this model's vocabulary cannot "
                    f"read ([UNK]) left out of its lexicon{' (still forced whole)' if dict_mode == 'force' else ''}"
                )
        logger.info("user dictionary %s", self.dictionary_summary)

    def __call__(self, inputs, batch_size: int | None = None):
        """Predictions for a text (or pair) or a list of them; ``batch_size``: at most this many rows
        per batch (``None``: a segmentation or NER model fills its token budget,
        ``zhbert.heads.inference.batch_token_budget``; a classifier or matcher takes 32)."""
        _check_batch_size(batch_size)
        return _one_or_many(inputs, lambda items: self._predict(items, batch_size), pairs=self.reads_pairs)

    predict = __call__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r}, labels={self.head.labels})"


PERSON_NAMES = ("split", "whole")


class Segmenter(_HeadPredictor):
    """Word segmentation: words as spans that concatenate back to the input (minus spaces).

    ``person_names="split"`` (default) follows the PKU standard the bundled model learned from
    People's Daily, surname and given name apart (``江 / 泽民``); ``"whole"`` keeps each person
    name one word (``江泽民``), as most users expect: the words inside a ``PER`` entity found by
    ``name_finder`` (the bundled ``ner`` model unless set) are joined, where the entity starts
    and ends on word boundaries (a word is never cut)."""

    def __init__(self, model, tokenizer, path):
        super().__init__(model, tokenizer, path)
        self.name_finder: EntityRecognizer | None = None  # loaded on first use of person_names="whole"

    def __call__(self, inputs, batch_size: int | None = None, person_names: str = "split"):
        _check_batch_size(batch_size)
        if person_names not in PERSON_NAMES:
            raise ValueError(f"person_names must be one of {', '.join(PERSON_NAMES)}, got {person_names!r}")
        return _one_or_many(inputs, lambda items: self._predict(items, batch_size, person_names), pairs=False)

    predict = __call__

    def _predict(self, texts, batch_size, person_names="split"):
        words = self._from_raw(texts, self.tags(texts, batch_size, with_scores=False))
        if person_names == "whole":
            if self.name_finder is None:
                self.name_finder = load("ner")
            entities = self.name_finder(texts, batch_size=batch_size)
            words = [join_words(t, w, [(e.start, e.end) for e in ents if e.label == "PER"]) for t, w, ents in zip(texts, words, entities)]
        return words

    def _from_raw(self, texts, preds):
        forced = self._forced_spans(texts)
        return [
            [Span(t[s:e], s, e, forced=(s, e) in own) for _, s, e in char_spans(p, self.head.scheme)]
            for t, p, own in zip(texts, preds, forced)
        ]


def join_words(text: str, words: list[Span], spans: list[tuple[int, int]]) -> list[Span]:
    """One word for each span that starts and ends on word boundaries and covers two words or more."""
    starts = {w.start: i for i, w in enumerate(words)}
    ends = {w.end: i for i, w in enumerate(words)}
    out, i = [], 0
    joins = {starts[s]: ends[e] for s, e in spans if s in starts and e in ends and ends[e] > starts[s]}
    while i < len(words):
        j = joins.get(i, i)
        a, b = words[i].start, words[j].end
        out.append(words[i] if j == i else Span(text[a:b], a, b))
        i = j + 1
    return out


class POSTagger(Segmenter):
    """Words with part-of-speech tags (the PKU tagset): the segmenter's words, as :class:`Segmenter`
    gives them (user dictionary, web units, ``person_names``), each labelled with the tag its
    characters vote for and that tag's mean probability (:mod:`zhbert.heads.pos`). A word the user
    dictionary forces takes the dictionary's tag where its line gives one of the tagset (``字节跳动 3 nt``,
    as jieba's posseg does), with score 1.0.
    A second pass of the shared encoder computes the tags: about half the segmenter's speed."""

    def __init__(self, segmenter: Segmenter, pos_model: ZhBertForTask, path: Path):
        super().__init__(segmenter.model, segmenter.tokenizer, path)
        self.pos_model = pos_model
        self._tags_of = (None, {})  # (the forced dictionary, its words' tags of this tagset), built once per dictionary

    def _dictionary_tags(self) -> dict[str, str]:
        """The forced dictionary's words (folded as the matcher reads them) with a tag of this model's tagset."""
        from .heads.user_dict import fold_traditional

        dictionary = self._forced_dictionary
        if dictionary is None:
            return {}
        if self._tags_of[0] is not dictionary:
            known = {label.split("-", 1)[1] for label in self.pos_model.head.labels if "-" in label}
            words, _, tags, _ = dictionary.columns()
            self._tags_of = (dictionary, {fold_traditional(w): t for w, t in zip(words, tags) if t in known})
        return self._tags_of[1]

    def _predict(self, texts, batch_size, person_names="split"):
        from .heads.pos import vote
        from .heads.user_dict import fold_traditional

        words = super()._predict(texts, batch_size, person_names)
        tags = predict_tags(self.pos_model, self.tokenizer, texts, batch_size)
        given = self._dictionary_tags()
        out = []
        for ws, tt in zip(words, tags):
            row = []
            for w, (t, p) in zip(ws, vote(ws, tt)):
                own = given.get(fold_traditional(w.text)) if w.forced and given else None
                row.append(Span(w.text, w.start, w.end, label=own or t, score=1.0 if own else round(p, 6), forced=w.forced))
            out.append(row)
        return out


class EntityRecognizer(_HeadPredictor):
    """NER: entities with type, offsets and a score (the mean probability of the span's tags)."""

    def _predict(self, texts, batch_size):
        return self._from_raw(texts, self.tags(texts, batch_size))

    def _from_raw(self, texts, preds):
        from .web_units import snap_entities

        out = []
        for text, p, own in zip(texts, preds, self._forced_spans(texts)):
            spans = [(s, e, t, sc) for t, s, e, sc in char_spans(p, self.head.scheme, with_scores=True)]
            if self.units is not None:  # no entity starts or ends inside a URL, @mention, ...
                spans = snap_entities(spans, self.units.spans(text))
            out.append(
                [
                    Span(text[s:e], s, e, label=t, score=1.0, forced=True)
                    if own.get((s, e), "") == t  # the dictionary's word with the dictionary's type
                    else Span(text[s:e], s, e, label=t, score=round(sc, 6))
                    for s, e, t, sc in spans
                ]
            )
        return out


Tagger = EntityRecognizer  # the name before 0.2 ("tagging" is Weibo post classification in zhbert)


class Classifier(_HeadPredictor):
    """Post tagging: the predicted label (or labels, multi-label) and every label's probability."""

    def _predict(self, texts, batch_size):
        return self._from_raw(texts, predict_scores(self.model, self.tokenizer, texts, batch_size))

    def _from_raw(self, texts, probs):
        labels = self.head.labels
        out = []
        for row in probs:
            scores = tuple(sorted((Label(l, float(p)) for l, p in zip(labels, row)), key=lambda x: -x.score))
            if self.head.multi_label:
                chosen = apply_thresholds(row[None], self.head.thresholds)[0]
                picked = tuple(s for s in scores if chosen[labels.index(s.label)])
            else:
                picked = scores[:1]
            out.append(Classification(picked, scores))
        return out


class Matcher(_HeadPredictor):
    """Sentence pairs: the predicted relation and its probability (or a similarity score)."""

    reads_pairs = True

    def _predict(self, pairs, batch_size):
        scores = predict_scores(self.model, self.tokenizer, pairs, batch_size)
        if self.head.regression:
            return [Match(self.head.labels[0], float(s)) for s in scores]
        labels = self.head.labels
        out = []
        for row in scores:
            every = tuple(sorted((Label(l, float(p)) for l, p in zip(labels, row)), key=lambda x: -x.score))
            out.append(Match(every[0].label, every[0].score, every))
        return out


def _head_predictor_class(head) -> type[_HeadPredictor]:
    if head.kind == "token":
        return Segmenter if head.scheme == "BMES-untyped" else EntityRecognizer
    return {"sequence": Classifier, "pair": Matcher}[head.kind]


class MultiTask:
    """Several heads on one shared encoder (a ``zhbert train multitask`` folder).

    ``mt(texts)`` runs the encoder once per batch of windows and every token and sequence
    head on its output: ``{head name: result}`` per text (a list in, a list out); a pair
    head reads pairs, so it is left out there and called as ``mt[name]((a, b))``. ``mt[name]``
    is each head's own predictor (``Segmenter``, ``EntityRecognizer``, ``Classifier``,
    ``Matcher``), also for options such as ``person_names``."""

    def __init__(self, model, tokenizer, path: Path):
        self.model, self.tokenizer, self.path = model, tokenizer, path
        self.heads = {name: _head_predictor_class(view.head)(view, tokenizer, path) for name, view in model.tasks.items()}

    def __getitem__(self, name: str) -> _HeadPredictor:
        if name not in self.heads:
            raise KeyError(f"{name!r}: this model's heads are {', '.join(self.heads)}")
        return self.heads[name]

    def __repr__(self) -> str:
        return f"MultiTask({str(self.path)!r}, heads={list(self.heads)})"

    def __call__(self, inputs, batch_size: int | None = None):
        from .heads.multitask import predict_all

        _check_batch_size(batch_size)

        def run(texts):
            if not all(isinstance(t, str) for t in texts):
                raise TypeError("one pass over every head takes texts; use mt[name] for a pair head")
            single = [name for name, p in self.heads.items() if not isinstance(p, Matcher)]
            if not single:
                raise ValueError(f"every head of this model reads pairs: call mt[name] with (text_a, text_b), name in {list(self.heads)}")
            raw = predict_all(self.model, self.tokenizer, texts, batch_size, names=single)
            per_head = {name: self.heads[name]._from_raw(texts, out) for name, out in raw.items()}
            return [{name: results[k] for name, results in per_head.items()} for k in range(len(texts))]

        return _one_or_many(inputs, run)

    predict = __call__


#: [MASK] as people type it: in any case, or in a Chinese input method's full-width brackets (［MASK］);
#: six characters like [MASK] itself, so every offset into the text still holds
_MASK_SPELLINGS = re.compile(r"[\[［](?i:mask)[\]］]")
FILL_ORDERS = ("confident", "left-to-right", "all-at-once")
MAX_MASKS = 64  # [MASK]s per text: each is one more pass over its window (1,000 of them ran past 300 s)


class MaskedLM:
    """The pretrained encoder: fill ``[MASK]`` (also typed ``[mask]`` or ``［MASK］``; several in a row fill one at a time,
    most confident first) and features for any representation."""

    def __init__(self, model, tokenizer, path: Path, has_mlm_head: bool = True):
        self.model, self.tokenizer, self.path = model.eval(), tokenizer, path
        self.has_mlm_head = has_mlm_head
        self.window = trained_length(model.config)  # never read positions the encoder did not train

    def __repr__(self) -> str:
        return f"MaskedLM({str(self.path)!r})"

    def _ids(self, text: str) -> tuple[list[int], list[tuple[int, int]], list[int]]:
        # "[MASK]" is a special token of the tokenizer: it is matched before normalisation
        enc = encode(self.tokenizer, _MASK_SPELLINGS.sub("[MASK]", text))
        mask_id = self.tokenizer.mask_token_id
        return list(enc.ids), list(enc.offsets), [k for k, i in enumerate(enc.ids) if i == mask_id]

    @torch.no_grad()
    def fill_mask(self, inputs, top_k: int = 5, order: str = "confident"):
        """Top-k candidates for each ``[MASK]``. Several masks fill in ``order``: ``"confident"``
        (default: the most confident mask first, then the others again with it filled in),
        ``"left-to-right"`` (one at a time from the start) or ``"all-at-once"`` (every mask from
        one pass, none seeing another's answer)."""
        if order not in FILL_ORDERS:
            raise ValueError(f"order must be one of {', '.join(FILL_ORDERS)}, got {order!r}")
        if not self.has_mlm_head:
            raise ValueError(
                f"{self.path}: this checkpoint has no masked-LM head (e.g. a sentence-transformers "
                "BertModel), so fill-mask would answer from random weights; use features() instead"
            )
        _check_count("top_k", top_k, 1, self.model.config.vocab_size)
        return _one_or_many(inputs, lambda items: [self._fill(t, top_k, order) for t in items])

    def _mask_probs(self, ids: list[int], masks: list[int]) -> dict[int, torch.Tensor]:
        """Vocabulary probabilities at each mask position, from the window where it sits farthest
        from an edge; the windows needed run as one batch."""
        from .heads.inputs import window_batch

        if not masks:
            return {}
        spans = windows(len(ids), self.window - 2)
        own = owners(len(ids), spans)
        needed = sorted({own[k] for k in masks})
        tok = self.tokenizer
        batch = window_batch([ids[spans[w][0] : spans[w][1]] for w in needed], tok.cls_token_id, tok.sep_token_id, tok.pad_token_id)
        device = next(self.model.parameters()).device
        logits = self.model(**{k: v.to(device) for k, v in batch.items()}).logits.float().cpu()
        row = {w: r for r, w in enumerate(needed)}
        return {k: torch.softmax(logits[row[own[k]], 1 + k - spans[own[k]][0]], dim=-1) for k in masks}

    def _fill(self, text: str, top_k: int, order: str = "confident") -> list[MaskFill]:
        ids, offsets, masks = self._ids(text)
        if not masks:
            other = " (<mask> is RoBERTa's spelling; this model's is [MASK])" if "<mask>" in text.lower() else ""
            raise ValueError(f"the text has no [MASK] to fill{other}")
        if len(masks) > MAX_MASKS:  # one model pass per mask, each over its window: time grows with their number
            raise ValueError(f"the text has {len(masks):,} [MASK]s; one text takes up to {MAX_MASKS} (they are filled one at a time)")
        filled: dict[int, MaskFill] = {}
        special = sorted(set(self.tokenizer.all_special_ids))
        spans = windows(len(ids), self.window - 2)
        own = owners(len(ids), spans)
        probs: dict[int, torch.Tensor] = {}
        while len(filled) < len(masks):
            # a filled mask changes only the windows that contain it: the other masks keep their probabilities
            stale = [k for k in masks if k not in filled and k not in probs]
            for k, p in self._mask_probs(ids, stale).items():
                p[special] = 0
                probs[k] = p
            open_masks = [k for k in masks if k not in filled]
            if order == "left-to-right":
                best = open_masks[0]
            else:  # confident; all-at-once takes them in the same order but never recomputes
                best = max(open_masks, key=lambda k: float(probs[k].max()))
            p, idx = probs.pop(best).topk(top_k)
            cands = tuple(Candidate(self.tokenizer.convert_ids_to_tokens(int(i)), float(s)) for s, i in zip(p, idx))
            s, e = offsets[best]
            filled[best] = MaskFill(s, e, cands[0].token, cands)
            if order == "all-at-once":
                continue  # the other masks keep the probabilities of the first pass
            ids[best] = int(idx[0])
            for k in list(probs):
                ka, kb = spans[own[k]]
                if ka <= best < kb:
                    del probs[k]
        return [filled[k] for k in masks]

    def require_mlm_head_for_scoring(self) -> None:
        """Raises ValueError when this folder has no masked-LM head to score blanks with."""
        if not self.has_mlm_head:
            raise ValueError(
                f"{self.path}: no masked-LM head, so its blanks would be filled by random weights "
                "(an ELECTRA run's encoder: score the generator folder beside it, final/generator)"
            )

    def score_blanks(self, texts: list[str], max_chars: int = 100_000) -> dict:
        """How well this model fills blanks in ``texts`` (its first ``max_chars`` characters): 15% of the
        characters blanked one at a time and 15% of jieba's words blanked whole, the same blanks for every
        model with this vocabulary. ``char_accuracy``, ``word_accuracy`` (top-1 shares), ``char_perplexity``
        and ``char_blanks``, as ``zhbert pretrain --eval-corpus`` logs them (:mod:`zhbert.training.heldout`)."""
        from .training.heldout import heldout_scores, heldout_text

        self.require_mlm_head_for_scoring()
        if isinstance(texts, str):
            raise TypeError("score_blanks takes a list of texts (one document each)")
        heldout = heldout_text(texts, max_chars, "the texts")
        return heldout_scores(self.model, self.tokenizer, heldout, max_length=self.window)

    @torch.no_grad()
    def features(self, inputs, representation: str = "last", pooled: bool = True, batch_size: int = 32, return_tensors: str | None = None):
        """Vectors per text (``pooled``: mean over tokens, or ``[CLS]`` for ``cls``) or per token.

        Long texts are cut into windows of the encoder's pretraining length, each holding whole
        sentences (overlapping only inside a sentence longer than a window); the
        windows of all texts run together in batches of ``batch_size`` rows, and each token's
        vector comes from its owner window. ``return_tensors="np"``: a ``(N, D)`` array when
        pooled, else ``{"offsets": [...], "vectors": (T, D) array}`` per text; default: lists.
        """
        from .fusion import LayerFusion, sequence_vector
        from .heads.inference import row_batches, window_rows
        from .heads.inputs import window_batch

        _check_count("batch_size", batch_size)
        if return_tensors not in (None, "np"):
            raise ValueError(f"return_tensors must be None or 'np', got {return_tensors!r}")
        cfg = self.model.config
        fusion = LayerFusion(representation, cfg.num_hidden_layers, cfg.hidden_size)
        if fusion.learned:
            raise ValueError(f"{representation} has learned weights: train a head with it instead")
        pooler = getattr(self.model.base_model, "pooler", None)
        size = self.window - 2
        tok = self.tokenizer
        device = next(self.model.parameters()).device

        def run(texts):
            encs = encode(tok, texts)
            # whole sentences packed into each window of a long text (zhbert.windows)
            spans = [windows(len(e), size, breaks=sentence_breaks(e.text, e.offsets) if len(e) > size else None) for e in encs]
            outputs: dict[tuple[int, int], torch.Tensor] = {}  # (text, window start) -> sequence vector + its tokens
            for chunk in row_batches(window_rows(spans, keep_empty=True), batch_size):  # similar lengths share a batch
                bodies = [encs[i].ids[a:b] for i, a, b in chunk]
                batch = {k: v.to(device) for k, v in window_batch(bodies, tok.cls_token_id, tok.sep_token_id, tok.pad_token_id).items()}
                hidden = self.model.base_model(**batch, output_hidden_states=True).hidden_states
                fused = fusion(hidden).clone()
                if fusion.pools_cls:  # cls is the pooled [CLS], as a head reads it
                    pooled_cls = pooler(hidden[-1]) if pooler is not None else None
                    fused[:, 0] = sequence_vector(fusion, fused, batch["attention_mask"], pooled_cls)
                fused = fused.float().cpu()
                for r, (i, a, b) in enumerate(chunk):
                    outputs[(i, a)] = fused[r, : b - a + 1]
            out = []
            for i, enc in enumerate(encs):
                cls_vecs = torch.stack([outputs[(i, a)][0] for a, _ in spans[i]])
                parts = []  # each token's vector from its owner window; windows that overlap nothing whole
                for first, group, own in owner_groups([(a, b) for a, b in spans[i] if b > a]):
                    if own is None:
                        parts.append(outputs[(i, first)][1:])
                    else:
                        parts.append(torch.stack([outputs[(i, group[w][0])][1 + k - group[w][0]] for k, w in enumerate(own, start=first)]))
                vecs = torch.cat(parts) if parts else torch.empty(0, cls_vecs.size(-1))
                if pooled:  # [CLS] averaged over windows; an empty text has only [CLS]
                    v = cls_vecs.mean(0) if fusion.pools_cls or not len(vecs) else vecs.mean(0)
                    out.append(v.numpy() if return_tensors else v.tolist())
                elif return_tensors:
                    out.append({"offsets": list(enc.offsets), "vectors": vecs.numpy()})
                else:
                    out.append([{"start": s, "end": e, "vector": v.tolist()} for (s, e), v in zip(enc.offsets, vecs)])
            return out

        result = _one_or_many(inputs, run)
        if pooled and return_tensors and isinstance(result, list):  # a list of texts: one (N, D) array
            import numpy as np

            return np.stack(result) if result else np.empty((0, cfg.hidden_size), dtype=np.float32)
        return result

    __call__ = fill_mask


BACKENDS = ("torch", "int8", "onnx", "onnx-int8")


@functools.cache
def _fill_mask_class():
    """``BertForMaskedLM`` that loads a pretraining folder (``BertForPreTraining``: the bundled
    ``base``, and every original BERT checkpoint) without a warning about the two heads fill-mask
    does not use: the pooler and the NSP/SOP classifier stay in the file for fine-tuning."""
    from transformers import BertForMaskedLM

    class BertForMaskedLMFromPretraining(BertForMaskedLM):
        _keys_to_ignore_on_load_unexpected = [r"^bert\.pooler\.", r"^cls\.seq_relationship\."]

    return BertForMaskedLMFromPretraining


def load(
    name_or_path: str,
    device: str | None = None,
    backend: str = "torch",
    user_dict=None,
    dict_mode: str = "force",
    web_units=True,
    criterion: str | None = None,
    local_files_only: bool = False,
    pairs: bool = False,
):
    """A predictor for a bundled model (``"base"``, ``"electra"``, ``"cws"``, ``"cws-fast"``, ``"ner"``,
    ``"pos"``, ``"tagging"``, ``"matching"``), any local ``save_pretrained`` folder, or a Hugging Face model id
    (``"hfl/chinese-macbert-base"``) in the local Hugging Face cache; one missing there is downloaded
    (config, safetensors weights and tokenizer only) unless ``local_files_only`` or ``HF_HUB_OFFLINE``.

    ``user_dict`` (segmentation and NER): a dictionary file (``word``, ``word FREQ [POS]`` as
    jieba writes it, or ``word<TAB>TYPE`` for NER) or a list of words, for this predictor only;
    ``dict_mode``: ``"force"`` (listed words always come out whole) or ``"prefer"`` (they join
    the lexicon of a head trained with one). ``zhbert/heads/user_dict.py`` has the rules.

    ``web_units`` (segmentation and NER): URLs, e-mail addresses, @mentions, #topics# and emoji
    come out as units: one word each, never cut or glued to a neighbour, and no entity edge
    inside one. ``True`` (default) for those kinds, ``False`` for none, or a list of kinds from
    ``zhbert.web_units.KINDS`` (which adds ``"number"`` and ``"latin"``); ignored by other heads
    when left at ``True``. ``zhbert/web_units.py`` has the rules.

    ``criterion`` (a segmentation or NER model trained on several annotation standards with
    ``--criteria``, e.g. ``"pku"`` or ``"weibo"``): the standard to tag by; ``None``: the model's default, the first
    it was trained with unless ``zhbert export --blend-criteria`` made a reading between them the
    default. ``zhbert/heads/criteria.py`` has the details.

    A plain transformers classifier folder (``BertForTokenClassification`` or
    ``BertForSequenceClassification``, as ``run_ner.py`` and ``run_glue.py`` save them; ERNIE, ALBERT and
    Megatron-BERT too, and any type's token classifier) loads as zhbert's head of that shape, its labels
    from ``id2label``: an NER or segmentation model by its tags (BIO, BIOES, BIOS, BMES), a classifier of
    texts otherwise, or of ``(text_a, text_b)`` pairs with ``pairs=True``.

    ``backend="int8"`` (CPU only) runs the linear layers in int8 (dynamic quantisation): on the
    bundled ``cws``, 1.4-1.6x faster for -0.15 PKU word F1 (bench/LOG.md, "Inference against
    the CPU's limit"); answers can differ from the fp32 model's where it was unsure.

    ``backend="onnx"`` (a task head exported with ``zhbert export MODEL DIR --onnx``; CPU only) runs the
    encoder in ONNX Runtime from ``DIR/onnx/model.onnx``, and ``"onnx-int8"`` from its int8 graph
    (``--onnx --int8``); the rest of the head, decoding and offsets are the same code as in torch."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend != "torch" and device not in (None, "cpu"):
        raise ValueError(f"backend={backend!r} runs on the CPU only, got device={device!r}")
    predictor = _load(name_or_path, device, local_files_only, pairs)
    if pairs and not isinstance(predictor, Matcher):
        what = f"{name_or_path!r} loads as {type(predictor).__name__}"
        raise ValueError(f"pairs=True reads a plain transformers sequence classifier as a matching model; {what}")
    if isinstance(predictor, _HeadPredictor) and predictor.head.kind == "token":
        predictor.use_web_units(web_units)
    elif web_units not in (True, False, None):
        raise ValueError(f"web_units applies to segmentation and NER models, not to {name_or_path!r} ({type(predictor).__name__})")
    if criterion is not None:
        if not isinstance(predictor, _HeadPredictor):
            raise ValueError(f"criterion applies to segmentation and NER models, not to {type(predictor).__name__}")
        predictor.use_criterion(criterion)
    if user_dict is not None:
        if not isinstance(predictor, _HeadPredictor):
            raise ValueError(f"a user dictionary applies to segmentation and NER models, not to {type(predictor).__name__}")
        predictor.use_dictionary(user_dict, dict_mode)
    if backend == "int8":
        _to_int8(predictor.model)
    elif backend.startswith("onnx"):
        if not isinstance(predictor, _HeadPredictor) or isinstance(predictor, POSTagger):
            what = f"{type(predictor).__name__} ({name_or_path!r})"
            raise ValueError(f"backend={backend!r} serves task heads exported with --onnx, not {what}")
        from .onnx_backend import serve_from_onnx

        serve_from_onnx(predictor.model, predictor.path, backend)
    return predictor


def _load_pos(path: Path, device: str | None) -> POSTagger:
    from .heads.pos import attach_head, load_pos_folder

    seg_path, head, weights = load_pos_folder(path)
    segmenter = _load(str(seg_path), device)
    if type(segmenter) is not Segmenter:  # a plain segmenter, not another POS folder or head
        raise ModelLoadError(f"{path}: its segmenter {seg_path} is not a segmentation model ({type(segmenter).__name__})")
    pos = attach_head(segmenter.model, head, weights, path)
    if device:
        pos.to(device)
    return POSTagger(segmenter, pos, path)


def _to_int8(model: torch.nn.Module) -> None:
    """Swap ``model``'s linear layers, in place (every head and view sharing them follows), for
    int8 ones whose activations are scaled per batch (``torch.ao.quantization.quantize_dynamic``)."""
    import warnings

    with warnings.catch_warnings():  # torch announces a move of this API to the torchao package
        warnings.simplefilter("ignore")
        torch.ao.quantization.quantize_dynamic(model.eval(), {torch.nn.Linear}, dtype=torch.qint8, inplace=True)


def _load(name_or_path: str, device: str | None, local_files_only: bool = False, pairs: bool = False):
    from .heads.pos import MARKER

    path = resolve_model_path(name_or_path, local_files_only)
    if (path / MARKER).is_file():  # a POS head over a segmenter's features
        return _load_pos(path, device)
    config = read_config(path)
    tokenizer = load_tokenizer(path)
    rows = config.get("vocab_size")
    if isinstance(rows, int) and not 0.9 * rows <= len(tokenizer) <= rows:
        # e.g. a vocab.txt cut short: almost every character would become [UNK] without a word
        source = "tokenizer.json" if (path / "tokenizer.json").is_file() else "vocab.txt"
        raise ModelLoadError(
            f"{path / source}: the tokenizer has {len(tokenizer):,} tokens but the model's embedding "
            f"has {rows:,} rows; the vocabulary does not belong to this model (or is truncated)"
        )
    if config.get("zhbert_heads"):
        from .heads.multitask import load_multitask

        model = load_multitask(path)
        if device:
            model.to(device)
        return MultiTask(model, tokenizer, path)
    if config.get("zhbert_head"):
        model = load_head(path, pairs)
        if device:
            model.to(device)
        return _head_predictor_class(model.head)(model, tokenizer, path)
    from .heads.io import load_plain_head, plain_head_settings

    head = plain_head_settings(config, path / "config.json", pairs)
    if head is not None:  # a plain transformers classifier (run_ner.py's, run_glue.py's): zhbert's head without its settings
        model = load_plain_head(path, head)
        if device:
            model.to(device)
        return _head_predictor_class(model.head)(model, tokenizer, path)
    from .encoders import check_encoder_type, masked_lm_class

    model_type = check_encoder_type(config.get("model_type"), path / "config.json")
    from .model_folder import weight_files

    weight_files(path)  # model.safetensors or its shards, else an error naming what is missing
    mlm_class = _fill_mask_class() if model_type == "bert" else masked_lm_class(model_type)
    model, info = mlm_class.from_pretrained(
        str(path), local_files_only=True, dtype=torch.float32, trust_remote_code=False, output_loading_info=True
    )
    # an encoder saved without its masked-LM head (BertModel, sentence-transformers, an ELECTRA
    # discriminator) gets a random one: any weight missing outside the encoder is that head's
    encoder_prefix = model.base_model_prefix + "."
    # (a missing output bias alone is not a missing head: it is tied to the decoder's in old checkpoints)
    has_mlm_head = not any(not k.startswith(encoder_prefix) and not k.endswith(".bias") for k in info.get("missing_keys", []))
    if device:
        model.to(device)
    return MaskedLM(model, tokenizer, path, has_mlm_head=has_mlm_head)
