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

from collections import Counter

from ..tags import spans_to_tags, tags_to_spans

__all__ = ["SHARED_TYPES", "TYPE_MAPS", "to_shared_types", "parse_entity_map", "map_entity_types"]

SHARED_TYPES = ["LOC", "ORG", "PER"]
_SAME = {t: t for t in SHARED_TYPES}
TYPE_MAPS: dict[str, dict[str, str]] = {
    "msra": _SAME,
    "cluener": {"name": "PER", "address": "LOC", "company": "ORG", "organization": "ORG", "government": "ORG"},
    "weibo": {"PER.NAM": "PER", "LOC.NAM": "LOC", "GPE.NAM": "LOC", "ORG.NAM": "ORG"},
    "resume": {"NAME": "PER", "LOC": "LOC", "ORG": "ORG"},
}


def map_entity_types(rows: list[dict], scheme: str, mapping: dict[str, str], to_scheme: str | None = None) -> tuple[list[dict], Counter]:
    """``rows`` (``text``, ``tags`` in ``scheme``) with each entity's type renamed by ``mapping``; an
    entity of a type it does not name is left out (its characters tagged O). Returns the rows, in
    ``to_scheme`` (default: ``scheme``), and how many entities of each type were left out."""
    left_out: Counter = Counter()
    out = []
    for row in rows:
        spans = []
        for typ, a, b in tags_to_spans(row["tags"], scheme):
            if typ in mapping:
                spans.append((mapping[typ], a, b))
            else:
                left_out[typ] += 1
        out.append({**row, "tags": spans_to_tags(len(row["text"]), spans, to_scheme or scheme)})
    return out, left_out


def to_shared_types(rows: list[dict], source: str, scheme: str) -> list[dict]:
    """``rows`` (``text``, ``tags`` in ``scheme``) re-tagged in BIO over :data:`SHARED_TYPES`, each
    row naming its source as its ``criterion`` (for a head that keeps the sources' standards apart)."""
    mapped, _ = map_entity_types(rows, scheme, TYPE_MAPS[source], "BIO")
    return [{"text": r["text"], "tags": r["tags"], "criterion": source} for r in mapped]


def parse_entity_map(spec: str) -> dict[str, str]:
    """A map of entity types from ``NAME=PER,company=ORG,LOC`` (a bare type keeps its name), or from
    the name of a source here (``cluener``, ``weibo``, ``resume``, ``msra``: its map to PER/LOC/ORG)."""
    if spec.strip() in TYPE_MAPS:
        return dict(TYPE_MAPS[spec.strip()])
    mapping: dict[str, str] = {}
    for item in spec.split(","):
        if not item.strip():
            continue
        source, given, target = (part.strip() for part in item.partition("="))
        target = target if given else source
        if not source or not target or any(c.isspace() for c in source + target) or "-" in target:
            raise ValueError(
                f"--entity-map: {item.strip()!r} is not TYPE=NEW_TYPE (or a type to keep) with no spaces, and no '-' in the new type"
            )
        if mapping.get(source, target) != target:
            raise ValueError(f"--entity-map maps {source} twice ({mapping[source]} and {target})")
        mapping[source] = target
    if not mapping:
        raise ValueError(f"--entity-map is empty; give TYPE=NEW_TYPE pairs, comma-separated, or one of {', '.join(TYPE_MAPS)}")
    return mapping
