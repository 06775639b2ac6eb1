"""Annotation criteria: one token head for several standards, told apart by BERT's segment ids.

Segmentation standards disagree (PKU joins less than the NLPCC Weibo guidelines: ``副 / 总理``
against ``副总理``), so one segmenter trained on both learns a compromise that serves neither
(bench/LOG.md: every PKU + Weibo model measured lay on one trade-off line). Multi-criteria
segmentation (Chen et al., ACL 2017; He et al., AAAI 2019; Qiu et al. 2019) gives the model
the standard as an input instead, and shares everything else.

Here the input is BERT's token-type (segment) embedding, added at every position: criterion i
of ``HeadConfig.criteria`` reads as ``token_type_ids == i``. Nothing else changes, so a saved
model stays a stock ``BertModel`` underneath, and plain transformers (``token_type_ids`` of 0
by default) reads text under the first criterion. A model not trained with criteria starts each
new criterion's row from row 0, the one it was trained with: training begins from the model's
own answers and each criterion's row moves only with its own sentences.
"""

from __future__ import annotations

import torch
from torch import nn

from ..encoders import token_type_table

__all__ = ["check_criteria", "criterion_ids", "segment_ids", "add_criteria", "blend_criteria"]


def check_criteria(criteria: list[str]) -> None:
    """Criterion names: non-empty, no whitespace or comma, none twice."""
    for name in criteria:
        if not isinstance(name, str) or not name or any(c.isspace() or c == "," for c in name):
            raise ValueError(f"a criterion name is a non-empty word without spaces or commas, got {name!r}")
    if len(set(criteria)) != len(criteria):
        raise ValueError(f"criteria repeat: {list(criteria)}")


def criterion_ids(criteria: list[str], names: list[str | None], where: str = "text", default: str | None = None) -> list[int]:
    """The segment id of each name (``None``: ``default``, else the first criterion); an unknown
    name is an error naming its position (``where`` says what the positions count)."""
    if not criteria:
        given = sorted({n for n in names if n is not None})
        if given:
            raise ValueError(f"criterion {given[0]!r}: this model was trained on one standard (no --criteria), it has none to choose")
        return [0] * len(names)
    index = {name: i for i, name in enumerate(criteria)}
    out = []
    for k, name in enumerate(names):
        if name is None:
            out.append(index[default] if default is not None else 0)
        elif name in index:
            out.append(index[name])
        else:
            raise ValueError(f"{where} {k}: criterion {name!r} is not one of this model's: {', '.join(criteria)}")
    return out


def segment_ids(types: list[int], input_ids: torch.Tensor) -> torch.Tensor:
    """``token_type_ids`` for a batch of window rows: row r's criterion ``types[r]`` at every position."""
    return torch.tensor(types, dtype=torch.long, device=input_ids.device)[:, None].expand_as(input_ids).contiguous()


def add_criteria(model, criteria: list[str], trained: list[str]) -> None:
    """Make room for ``criteria`` in ``model``'s token-type table, in place. ``trained``: the criteria
    the loaded weights were trained with (none for an encoder or a one-standard head); they must
    begin ``criteria`` and keep their rows. Every other row from the first on is a copy of row 0."""
    check_criteria(criteria)
    if trained and list(criteria[: len(trained)]) != list(trained):
        raise ValueError(
            f"the encoder was trained with criteria {', '.join(trained)}; --criteria must list them first, "
            f"in that order (got {', '.join(criteria)})"
        )
    table = token_type_table(model)
    if table is None:
        raise ValueError(f"--criteria gives each standard a token-type row: this {model.config.model_type} encoder has no token-type table")
    old = table.weight.data
    n = max(len(criteria), old.size(0))
    weight = torch.empty(n, old.size(1), dtype=old.dtype, device=old.device)
    weight[: old.size(0)] = old
    first_new = max(len(trained), 1)
    weight[first_new : len(criteria)] = old[0]
    if n != old.size(0):
        model.base_model.embeddings.token_type_embeddings = nn.Embedding(n, old.size(1), device=old.device, dtype=old.dtype)
        model.config.type_vocab_size = n
    token_type_table(model).weight.data.copy_(weight)


def blend_criteria(tensors: dict[str, torch.Tensor], config: dict, name: str) -> None:
    """Add ``name`` to a saved head's criteria, a reading between its standards: its segment row is
    the mean of theirs, and ``criterion=None`` reads it from then on (``default_criterion``). In place,
    on the weights and the ``config.json`` dict of a model folder (``zhbert export --blend-criteria``).
    Text whose standard is unknown, a user's, agrees with neither standard's habits in particular;
    bench/LOG.md measures such readings on each standard's dev split."""
    head = config.get("zhbert_head") or {}
    criteria = list(head.get("criteria") or [])
    if len(criteria) < 2:
        raise ValueError(
            f"--blend-criteria averages the segment rows of the standards a head was trained on (--criteria); "
            f"this model has {len(criteria) or 'no'} criteri{'on' if len(criteria) == 1 else 'a'}"
        )
    if name in criteria:
        raise ValueError(f"criterion {name!r} is one of this model's already: {', '.join(criteria)}")
    check_criteria([*criteria, name])
    key = next((k for k in tensors if k.endswith("embeddings.token_type_embeddings.weight")), None)
    if key is None:
        raise ValueError("--blend-criteria writes a segment row: this model has no token-type table")
    rows, n = tensors[key], len(criteria)
    mean = rows[:n].float().mean(0).to(rows.dtype)
    if rows.shape[0] > n:  # a row no criterion reads
        rows = rows.clone()
        rows[n] = mean
    else:
        rows = torch.cat([rows, mean[None]])
    tensors[key] = rows
    config["type_vocab_size"] = max(int(config.get("type_vocab_size") or 0), n + 1)
    head["criteria"], head["default_criterion"] = [*criteria, name], name
