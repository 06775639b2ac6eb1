"""Every bundled folder carries a model card (README.md, as Hugging Face model cards): what it is, its
data, its scores and limits; the scores are its metrics.json's, and a folder plain transformers cannot
run says so."""

from __future__ import annotations

import json
import re

import pytest

from zhbert.heads.config import HeadConfig
from zhbert.model_card import zhbert_only_reasons
from zhbert.models_registry import bundled_path

BUNDLED = ["base", "electra", "cws", "cws-fast", "ner", "pos", "tagging", "matching"]


@pytest.mark.parametrize("name", BUNDLED)
def test_a_bundled_folder_has_a_card_with_its_own_scores(name):
    folder = bundled_path(name)
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert card.startswith(f"# zhbert `{name}`: ")
    for section in ("## Model", "## Training data", "## Scores", "## Limits"):
        assert section in card, f"{name}: no {section}"
    scores = card.split("## Scores", 1)[1].split("\n## ", 1)[0]
    first_row = [line for line in scores.splitlines() if line.startswith("|")][2]  # after the header and its rule
    shown = [float(x) for x in re.findall(r"\d+\.\d+", first_row.split("|")[2])]  # a default figure, and another setting's
    assert shown, f"{name}: no score in the first row of its table"
    if (folder / "metrics.json").is_file():
        record = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
        assert round(100 * record["score"], 2) in shown, f"{name}: the card shows {shown}, metrics.json {record['score']}"
    config = folder / "config.json"
    head = json.loads(config.read_text(encoding="utf-8")).get("zhbert_head") if config.is_file() else None
    needs_zhbert = bool(head and zhbert_only_reasons(HeadConfig.from_dict(head)))
    assert ("**Needs zhbert**" in card) == needs_zhbert, name
    if config.is_file():  # and config.json says it where a plain-transformers user looks
        assert ("zhbert_only" in json.loads(config.read_text(encoding="utf-8"))) == needs_zhbert, name
