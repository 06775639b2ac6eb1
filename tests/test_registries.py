"""One registry per kind of part: a fusion method, a masking strategy and a dataset are
each added in one module, and everything that uses them asks the registry."""

import pytest
import torch

from zhbert import fusion
from zhbert.data.splits import iter_split_texts
from zhbert.data.tasks import DATASETS, SPLITS, read_split
from zhbert.heads import HeadConfig, new_head
from zhbert.masking import MASKERS, masker_class
from zhbert.masking.strategies import WholeWordMasker
from zhbert.recipes import RECIPES


class MaxLast2(fusion.Fusion):
    """A method written the way a user adds one: a class, registered."""

    name = "max-last-2"
    min_layers = 2

    def forward(self, hidden_states):
        return torch.maximum(hidden_states[-1], hidden_states[-2])


@pytest.fixture
def max_last_2():
    fusion.register(MaxLast2)
    yield MaxLast2
    del fusion.FUSIONS[MaxLast2.name]


def test_a_registered_fusion_method_works_in_a_head(max_last_2, tiny_encoder, tokenizer):
    head = new_head(
        tiny_encoder, HeadConfig(kind="token", labels=["B", "M", "E", "S"], scheme="BMES-untyped", representation="max-last-2", window=64)
    )
    ids = torch.tensor([[tokenizer.cls_token_id, *tokenizer.convert_tokens_to_ids(list("人民日报")), tokenizer.sep_token_id]])
    out = head(input_ids=ids)
    assert out.logits.shape == (1, 6, 4)
    assert head.fusion.needs_all_layers and isinstance(head.fusion, MaxLast2)


def test_an_unknown_fusion_method_is_an_error_listing_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown representation 'max-last-3'; choose one of cls, last, mean-last-4"):
        HeadConfig(kind="token", labels=["O"], scheme="BIO", representation="max-last-3")
    with pytest.raises(ValueError, match="unknown representation"):
        fusion.LayerFusion("first-layer", 4, 8)


def test_the_fusion_table_knows_each_method():
    assert fusion.REPRESENTATIONS == ("cls", "last", "mean-last-4", "concat-last-4", "scalar-mix", "layer-attention")
    assert fusion.PAPER_REPRESENTATIONS == ("embeddings", "second-to-last", "scalar-mix-last-4")
    assert {n for n, c in fusion.FUSIONS.items() if c.learned} == {"scalar-mix", "layer-attention", "scalar-mix-last-4"}
    assert [n for n, c in fusion.FUSIONS.items() if not c.needs_all_layers] == ["cls", "last"]
    assert fusion.fused_size("concat-last-4", 8) == 32 and fusion.fused_size("scalar-mix", 8) == 8


def test_cls_means_the_pooled_cls_wherever_it_is_read():
    f = fusion.LayerFusion("cls", 4, 3)
    tokens, mask = torch.randn(2, 5, 3), torch.ones(2, 5, dtype=torch.long)
    pooled = torch.randn(2, 3)
    assert torch.equal(fusion.sequence_vector(f, tokens, mask, pooled), pooled)
    assert torch.equal(fusion.sequence_vector(f, tokens, mask, None), tokens[:, 0])  # an encoder without a pooler
    mean = fusion.sequence_vector(fusion.LayerFusion("last", 4, 3), tokens, mask, pooled)
    assert torch.allclose(mean, tokens.mean(1))


class EntityOnlyMasker(WholeWordMasker):
    name = "entity-only"
    unit_column = "ernie_ids"
    needs_units = ("word_ids", "ernie_ids")


def test_corpus_preparation_asks_the_strategy_for_its_units(tokenizer, pd_sentences):
    from datasets import Dataset

    from zhbert.training.pretrain_data import prepare

    MASKERS[EntityOnlyMasker.name] = EntityOnlyMasker
    try:
        docs = Dataset.from_dict({"text": pd_sentences[:20]})
        assert "ernie_ids" in prepare(docs, tokenizer, "entity-only", num_proc=1).column_names
        assert "ernie_ids" not in prepare(docs, tokenizer, "ngram", num_proc=1).column_names
        assert masker_class("entity-only") is EntityOnlyMasker
    finally:
        del MASKERS[EntityOnlyMasker.name]
    with pytest.raises(ValueError, match="unknown masking strategy 'entity-only'; choose one of char, wwm, ernie, ngram, mixed"):
        masker_class("entity-only")


def test_each_split_file_is_classified_once(datasets_dir):
    assert all(s.role in ("train", "eval", "train+eval") for s in SPLITS.values())
    for s in SPLITS.values():
        assert (datasets_dir / s.name.split("/")[0] / s.args[0]).is_file(), s.name
    # LCQMC has no train split here: its dev file is what the recipe trains on, in both uses
    assert SPLITS["lcqmc/dev"].role == "train" and SPLITS["lcqmc/test"].role == "eval"
    with pytest.raises(ValueError, match="lcqmc/test has the role 'eval': it cannot be used for train"):
        read_split("lcqmc/test", "train")
    # BQ's labelled dev file is cut into train and scored parts: never pretraining text
    assert SPLITS["bq_corpus/dev"].role == "train+eval"
    train_names = {name for name, _ in iter_split_texts("train")}
    assert "lcqmc/dev" in train_names and "bq_corpus/dev" not in train_names and "lcqmc/test" not in train_names


def test_recipes_and_datasets_agree():
    for r in RECIPES.values():
        if r.head == "several":  # multitask: recipe=dataset pairs of the others
            from zhbert.recipes.multitask import plan

            assert all(d in DATASETS[t] for t, d in plan(r.default_dataset).items())
            continue
        assert r.default_dataset in DATASETS[r.name] and r.study_dataset in DATASETS[r.name]
    assert DATASETS["matching"] == ("afqmc", "ocnli", "bq", "lcqmc", "pawsx", "paraphrase", "transfer-lcqmc", "transfer-bq", "sts")


def test_recipe_names_agree_everywhere():
    """`zhbert train NAME`, `recipes/NAME.py` and `zhbert/recipes/NAME.py` are one name per recipe."""
    from pathlib import Path

    from zhbert.recipes import RECIPES

    root = Path(__file__).resolve().parents[1]
    scripts = {p.stem for p in (root / "recipes").glob("*.py")}
    assert scripts == set(RECIPES)
    for name, r in RECIPES.items():
        assert r.module == name and (root / "zhbert" / "recipes" / f"{name}.py").is_file()
        assert f'RECIPES["{name}"].main()' in (root / "recipes" / f"{name}.py").read_text(encoding="utf-8")
