"""One entity-type set across the NER sources here, so a head can learn from all of them and be
judged on the one it did not see (leave-one-source-out).

The shared set is the three name types every source has in some form: PER, LOC, ORG. People's
Daily NER is not among the sources: nearly all of its sentences are MSRA's, tagged the same.

| source | PER | LOC | ORG | left out (tagged O) |
|---|---|---|---|---|
| MSRA (1998 news) | PER | LOC | ORG | - |
| CLUENER2020 (2020 web news) | name | address | company, organization, government | scene, book, game, movie, position |
| Weibo NER (posts) | PER.NAM | LOC.NAM, GPE.NAM | ORG.NAM | nominal mentions (*.NOM: 女人, 学校, 宿舍) |
| Resume (résumés) | NAME | LOC | ORG | CONT (中国国籍), RACE, TITLE, EDU (本科学历), PRO |

CLUENER's ``scene`` (sights: 博物馆, 洱海) is left out because MSRA tags some of them LOC and others
nothing; nominal mentions are not names. A left-out type becomes O, the same in training and
scoring, so a CLUENER ``scene`` is O to the model. Resume also follows its own standard for the types
that map (ORG includes 本公司, NAME is often a bare surname): the leave-one-source-out score says
how much such differences cost.
"""

from __future__ import annotations

from ..tags import spans_to_tags, tags_to_spans

__all__ = ["SHARED_TYPES", "TYPE_MAPS", "to_shared_types"]

SHARED_TYPES = ["LOC", "ORG", "PER"]
_SAME = {t: t for t in SHARED_TYPES}
TYPE_MAPS: dict[str, dict[str, str]] = {
    "msra": _SAME,
    "cluener": {"name": "PER", "address": "LOC", "company": "ORG", "organization": "ORG", "government": "ORG"},
    "weibo": {"PER.NAM": "PER", "LOC.NAM": "LOC", "GPE.NAM": "LOC", "ORG.NAM": "ORG"},
    "resume": {"NAME": "PER", "LOC": "LOC", "ORG": "ORG"},
}


def to_shared_types(rows: list[dict], source: str, scheme: str) -> list[dict]:
    """``rows`` (``text``, ``tags`` in ``scheme``) re-tagged in BIO over :data:`SHARED_TYPES`, each
    row naming its source as its ``criterion`` (for a head that keeps the sources' standards apart)."""
    mapping = TYPE_MAPS[source]
    out = []
    for row in rows:
        spans = [(mapping[t], a, b) for t, a, b in tags_to_spans(row["tags"], scheme) if t in mapping]
        out.append({"text": row["text"], "tags": spans_to_tags(len(row["text"]), spans, "BIO"), "criterion": source})
    return out
