"""A soup of NER runs against the ensemble of the same runs: is there anything above the soup?

    python bench/soup_vs_ensemble.py --dataset resume runs/resume-s{42,2,3,4,5,6}/model

The ensemble runs every model on each window and decodes the mean of their emissions under the
mean of their CRF scores (Viterbi on the mean path score): a model soup's upper bound at N times
its cost at prediction. Prints the ensemble's dev and test F1, scored as the recipe scores a
run (``zhbert train ner --evaluate_only``, with and without ``--score_on dev``); the soup itself
is scored that way after ``zhbert soup``. One model through this script gives that model's own scores.
"""

from __future__ import annotations

import argparse
import copy
import types

import torch

from zhbert.heads.io import load_head
from zhbert.heads.model import ZhBertForTask
from zhbert.recipes.arguments import RecipeArguments
from zhbert.recipes.common import load_splits
from zhbert.recipes.ner import evaluate
from zhbert.tokenizer import load_tokenizer


class Ensemble(torch.nn.Module):
    """Quacks like a token head for ``predict_tags``: mean emissions, one CRF with the mean scores."""

    decode_tokens = ZhBertForTask.decode_tokens

    def __init__(self, models: list[ZhBertForTask]):
        super().__init__()
        self.members = torch.nn.ModuleList(models)
        self.head, self.config = models[0].head, models[0].config
        self.crf = copy.deepcopy(models[0].crf)
        if self.crf is not None:
            with torch.no_grad():
                for name, p in self.crf.named_parameters():
                    p.copy_(torch.stack([dict(m.crf.named_parameters())[name] for m in models]).mean(0))

    def forward(self, input_ids, attention_mask):
        logits = [m(input_ids=input_ids, attention_mask=attention_mask).logits for m in self.members]
        return types.SimpleNamespace(logits=torch.stack(logits).mean(0))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", help="task folders of one recipe (different seeds)")
    ap.add_argument("--dataset", default="resume", help="an NER dataset of `zhbert train ner` with a dev split")
    args = ap.parse_args()
    models = [load_head(p).eval() for p in args.models]
    ensemble, tokenizer = Ensemble(models).eval(), load_tokenizer(args.models[0])
    print(f"| {len(models)} models, {args.dataset} | F1 |\n|---|---:|")
    for split in ("dev", "test"):
        recipe = RecipeArguments(dataset=args.dataset, score_on=split) if split == "dev" else RecipeArguments(dataset=args.dataset)
        metrics, _ = evaluate(recipe, load_splits(recipe, "ner"), ensemble, tokenizer)
        print(f"| {split} | {100 * metrics['overall']['f1']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
