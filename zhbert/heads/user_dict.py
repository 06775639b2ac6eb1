"""User dictionaries for token heads: words that come out whole (``force``) or that the
model weighs (``prefer``).

Two semantics, as HanLP names them:

* ``force`` (HanLP's ``dict_force``): every dictionary word found in the text is one word
  (segmentation) or one entity of its type (NER), enforced in decoding. The tag path is the
  best one under the model's scores among the paths that keep each forced word whole: the
  emissions of the tags a forced word rules out are set to ``-10000`` before Viterbi, with the
  CRF's transitions where the head has a CRF and the tag scheme's legal transitions where it
  does not. Overlapping dictionary words resolve **longest first**, then leftmost: in
  ``北京大学生``, with ``北京大学`` and ``大学生`` both listed, ``北京大学`` is forced and
  ``大学生`` is not.
* ``prefer`` (HanLP's ``dict_combine`` in spirit): the words join the head's lexicon (a head
  trained with ``--lexicon``) and the model decides; nothing is enforced.

Matching is exact on the caller's text (``pyahocorasick``, one pass). A forced word whose edge
falls inside one token (``iPhone`` inside the single token ``iphone15``) takes in that whole
token: no head can cut a token. A forced word that crosses a window cut (only possible inside
a sentence longer than a window) is enforced in neither window.
"""

from __future__ import annotations

import bisect

import torch

from ..crf import CRF, FORBIDDEN
from ..dictionary import Dictionary
from ..tags import SCHEMES, parse_tag

__all__ = ["DICT_MODES", "ForcedWords", "constrained_decode"]

DICT_MODES = ("force", "prefer")


class ForcedWords:
    """Dictionary words to force, for a head with ``labels`` in ``scheme``."""

    def __init__(self, dictionary: Dictionary, labels: list[str], scheme: str):
        import ahocorasick

        self.labels, self.scheme = list(labels), scheme
        self.typed = scheme != "BMES-untyped"
        self._index = {l: i for i, l in enumerate(self.labels)}
        types = sorted({parse_tag(l, scheme)[1] for l in self.labels if l != "O"} - {None})
        self._automaton = ahocorasick.Automaton()
        for e in dictionary:
            tag = None
            if self.typed:
                if e.tag is None:
                    raise ValueError(
                        f"{dictionary.where(e)}: {e.word!r} has no type; an entity model forces typed words "
                        f"(word<TAB>TYPE), this model's types: {', '.join(types)}"
                    )
                if e.tag not in types:
                    where = dictionary.where(e)
                    raise ValueError(f"{where}: type {e.tag!r} of {e.word!r} is not one of this model's types: {', '.join(types)}")
                tag = e.tag
            self._automaton.add_word(e.word, (len(e.word), tag))
        self.size = len(dictionary)
        if self.size:
            self._automaton.make_automaton()

    def spans(self, text: str) -> list[tuple[int, int, str | None]]:
        """The forced ``(start, end, type)`` spans of ``text``: longest first, then leftmost, never overlapping."""
        if not self.size or not text:
            return []
        found = [(end + 1 - n, end + 1, tag) for end, (n, tag) in self._automaton.iter(text)]
        found.sort(key=lambda m: (m[0] - m[1], m[0]))
        taken = bytearray(len(text))
        out = []
        for s, e, tag in found:
            if not any(taken[s:e]):
                taken[s:e] = b"\x01" * (e - s)
                out.append((s, e, tag))
        out.sort()
        return out

    def token_constraints(self, text: str, offsets: list[tuple[int, int]]) -> dict[int, list[bool]]:
        """``{token index: allowed tags}`` that keep every forced word of ``text`` whole
        (``offsets``: each token's character span in ``text``)."""
        spans = self.spans(text)
        if not spans:
            return {}
        starts = [s for s, _ in offsets]
        ends = [e for _, e in offsets]
        k = len(self.labels)
        out: dict[int, list[bool]] = {}
        spec = SCHEMES[self.scheme.split("-")[0]]
        for s, e, tag in spans:
            a, b = bisect.bisect_right(ends, s), bisect.bisect_left(starts, e)
            if a >= b:
                continue  # no token inside (e.g. a word of spaces)
            name = (lambda p: p) if tag is None else (lambda p: f"{p}-{tag}")
            if b - a == 1:
                wanted = [name(spec["single"] or spec["begin"])]
            else:
                last = spec["end"] or spec["inside"]
                wanted = [name(spec["begin"])] + [name(spec["inside"])] * (b - a - 2) + [name(last)]
            for t, label in zip(range(a, b), wanted):
                row = [False] * k
                row[self._index[label]] = True
                out[t] = row
            if spec["end"] is None and b < len(offsets) and b not in out:
                # BIO: the token after the entity must not continue it
                out[b] = [label != name(spec["inside"]) for label in self.labels]
        return out


def constrained_decode(model, em: torch.Tensor, mask: torch.Tensor, allowed: torch.Tensor) -> list[list[int]]:
    """Viterbi over ``em`` (``(B, T, K)``, positions after [CLS]) with the tags outside ``allowed``
    ruled out: the head's CRF, or (softmax heads) log-probabilities under the scheme's legal transitions."""
    crf = model.crf
    if crf is None:
        crf = getattr(model, "_constraint_crf", None)
        if crf is None:
            crf = CRF(model.head.labels, model.head.scheme).to(em.device)  # zero learned scores: legality only
            object.__setattr__(model, "_constraint_crf", crf)  # not a submodule: never saved
        em = torch.log_softmax(em.float(), dim=-1)
    return crf.decode(em.masked_fill(~allowed, FORBIDDEN), mask)
