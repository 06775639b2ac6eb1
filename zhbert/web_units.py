"""Web text units: URLs, e-mail addresses, @mentions, #topics#, emoji, numbers, Latin words.

A model trained on news reads ``https://t.cn/abc`` as nine tokens it has no word for, and
glues an emoji to the word before it. These units have a form a rule finds exactly, so a
rule layer finds them and the heads decode around them (``zhbert.load(..., web_units=...)``):

* **segmentation**: each unit is one word, never cut inside and never glued to the words
  next to it, enforced in decoding as a forced word of a user dictionary is
  (``zhbert/heads/user_dict.py``); where a unit and a dictionary word overlap, the unit wins;
* **entities**: no entity starts or ends inside a unit. An entity that does is dropped where
  the unit is a URL, an e-mail address or an emoji, which are never part of a name; cut back
  to the text between the marks of an @mention or a #topic# (``小明`` in ``@小明``: a name
  never holds the ``@``); widened to the edges of a number or a Latin word (``iPhone16``).

The kinds (``KINDS``), in the order they take precedence where two match at one position:

=========  ==========================================================  ===================
kind       what                                                         example
=========  ==========================================================  ===================
url        ``http(s)://`` or ``www.`` up to the first character no      ``https://t.cn/abc``
           URL has (trailing ``.,;:!?)`` left out)
email      ``name@domain.tld``                                          ``a.b@pku.edu.cn``
mention    ``@`` and the nickname: letters, digits, ``_``, ``-``, up    ``@小明``
           to 30 characters; ends at a space or punctuation
topic      ``#...#`` on one line, up to 60 characters inside           ``#iPhone16#``
emoji      one emoji sequence: ZWJ sequences, skin tones, variation     ``👨‍👩‍👧``, ``👍🏽``
           selectors, flags, keycaps
number     digits with decimals or thousands separators, a sign-free   ``2.5%``, ``3.5GHz``
           range, and a unit symbol or Latin unit glued to them
latin      a run of Latin letters and digits starting with a letter,    ``iPhone16``
           with inner ``-``, ``'`` or ``.``
=========  ==========================================================  ===================

Full-width forms (``ｉＰｈｏｎｅ``, ``１２３``) count as the ASCII ones. ``DEFAULT_KINDS``
are the units on by default: the ones whose rule measured no loss on the NLPCC-2016 Weibo
dev set and the PKU test set (``bench/web_units.py``); every kind can be asked for by name.
"""

from __future__ import annotations

import regex

__all__ = ["DEFAULT_KINDS", "KINDS", "WebUnits", "snap_entities"]

_L = "A-Za-z\uff21-\uff3a\uff41-\uff5a"  # Latin letters, half- and full-width
_D = "0-9\uff10-\uff19"  # digits, half- and full-width
_URL_CHARS = rf"[{_L}{_D}\-._~:/?#\[\]@!$&'()*+,;=%]"
_PATTERNS = {
    "url": rf"(?:(?:https?|ftp)://|www\.){_URL_CHARS}+",
    "email": rf"[{_L}{_D}._%+\-]+@[{_L}{_D}\-]+(?:\.[{_L}{_D}\-]+)*\.[{_L}]{{2,}}",
    "mention": r"@[\p{L}\p{N}_\-]{1,30}(?![\p{L}\p{N}_\-])",
    "topic": r"#[^#\s][^#\n]{0,59}(?<=\S)#",
    "emoji": r"\p{RI}\p{RI}|[#*0-9]\uFE0F?\u20E3|\p{Extended_Pictographic}[\uFE0E\uFE0F]?\p{EMod}?"
    r"(?:\u200D\p{Extended_Pictographic}[\uFE0E\uFE0F]?\p{EMod}?)*",
    "number": rf"(?<![{_L}{_D}.])[{_D}]+(?:[,，][{_D}]{{3}})*(?:[.．][{_D}]+)?"
    rf"(?:[%％‰℃℉]|°[CF]?|[{_L}]{{1,4}}(?![{_L}]))?(?![{_L}{_D}])",
    "latin": rf"[{_L}][{_L}{_D}]*(?:['’.\-][{_L}{_D}]+)*",
}
KINDS = tuple(_PATTERNS)
DEFAULT_KINDS = ("url", "email", "mention", "topic", "emoji")
# a URL rarely ends in these: the sentence's punctuation follows it
_URL_TRAILING = ".,;:!?)]'"


class WebUnits:
    """Finds the units of ``kinds`` in a text: ``spans(text) -> [(start, end, kind)]``."""

    def __init__(self, kinds=DEFAULT_KINDS):
        kinds = (kinds,) if isinstance(kinds, str) else tuple(kinds)
        unknown = [k for k in kinds if k not in _PATTERNS]
        if unknown:
            raise ValueError(f"unknown web unit kind(s) {', '.join(map(repr, unknown))}; known: {', '.join(KINDS)}")
        self.kinds = tuple(k for k in KINDS if k in kinds)  # precedence is KINDS' order, whatever the caller's
        self._pattern = regex.compile("|".join(f"(?P<{k}>{_PATTERNS[k]})" for k in self.kinds)) if self.kinds else None

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """Non-overlapping units, left to right, as ``(start, end, kind)`` with ``text[start:end]`` the unit."""
        if self._pattern is None:
            return []
        out = []
        for m in self._pattern.finditer(text):
            kind = m.lastgroup
            start, end = m.span()
            if kind == "url":
                while end > start and text[end - 1] in _URL_TRAILING:
                    end -= 1
            out.append((start, end, kind))
        return out

    def __repr__(self) -> str:
        return f"WebUnits({list(self.kinds)})"


# kinds that are never part of a name: an entity that cuts into one is dropped, not widened
_NEVER_IN_NAMES = ("url", "email", "emoji")
# kinds whose marks are never part of a name: (characters of mark before, after) the text a name can be in
_MARKS = {"mention": (1, 0), "topic": (1, 1)}


def snap_entities(entities: list[tuple], units: list[tuple[int, int, str]]) -> list[tuple]:
    """Entities ``(start, end, *rest)`` with no edge inside a unit: dropped for a URL, e-mail
    address or emoji; cut back to the text between the marks of an @mention or a #topic# (a
    name never holds the ``@`` or ``#``: ``小明`` in ``@小明``, whether the model took the mark
    in or not); widened to the unit's edges for a number or a Latin word (``iPhone16``). Where
    widening makes two entities overlap, the first one stays (entities arrive sorted by start)."""
    if not units or not entities:
        return entities
    out: list[tuple] = []
    for ent in entities:
        start, end = ent[0], ent[1]
        dropped = False
        for us, ue, kind in units:
            if ue <= start or us >= end:
                continue  # apart
            if kind in _MARKS:
                before, after = _MARKS[kind]
                if start < us + before or end > ue - after:  # it takes in a mark, or crosses the unit's edge
                    start, end = max(start, us + before), min(end, ue - after)
                if start >= end:  # the mark alone
                    dropped = True
                    break
                continue
            if us >= start and ue <= end:
                continue  # the unit lies wholly inside the entity
            if kind in _NEVER_IN_NAMES:
                dropped = True
                break
            start, end = min(start, us), max(end, ue)
        if dropped or (out and start < out[-1][1]):
            continue
        out.append((start, end, *ent[2:]))
    return out
