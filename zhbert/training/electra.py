"""ELECTRA-style replaced-token detection (Clark et al., ICLR 2020) on a BERT encoder.

A small masked-LM *generator* fills the masked positions with tokens sampled from its own
predictions; the *discriminator* then reads the whole corrupted block and says, at every
position, whether the token there is the original (0) or a replacement (1)::

    L = L_mlm(generator)  +  rtd_weight * L_bce(discriminator, every non-pad position)

with ``rtd_weight`` = 50 as in the paper. A sampled token that happens to equal the original
counts as original, as in the paper.

Shapes follow ELECTRA's: the discriminator is a stock ``BertModel`` (embedding size = hidden
size), so its folder is read by every zhbert head and by plain transformers; the generator is
an ``ElectraForMaskedLM`` of the same depth at a fraction of the width whose embedding size is
the discriminator's hidden size, which lets both share one embedding module (word, position and
segment embeddings and their LayerNorm; ELECTRA's ``embeddings`` scope). The generator's
vocabulary projection is tied to the shared word embeddings and, as in ``mlm_model``, computed
only at masked positions. The discriminator's head (dense, GELU, one logit) is ELECTRA's
``discriminator_predictions``; it is used only in pretraining.

Sampling draws Gumbel noise from torch's global generator, which the Trainer saves in every
checkpoint, so a resumed run replays the same replacements.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from transformers import BertConfig, BertModel, ElectraConfig, ElectraForMaskedLM, PreTrainedModel
from transformers.modeling_outputs import ModelOutput

__all__ = ["ElectraPretrainingModel", "ElectraPretrainingOutput", "generator_config", "gumbel_sample", "SHARED_EMBEDDINGS"]

# the discriminator's embedding sub-modules the generator reads (ELECTRA shares the whole scope)
SHARED_EMBEDDINGS = ("word_embeddings", "position_embeddings", "token_type_embeddings", "LayerNorm")


def generator_config(discriminator: BertConfig, width: float = 0.25) -> ElectraConfig:
    """The generator for a discriminator: same depth, ``width`` times its hidden size (the paper
    found 1/4 to 1/2 best), 64-dimensional attention heads as in BERT and ELECTRA."""
    if not 0 < width <= 1:
        raise ValueError(f"generator width must be in (0, 1], got {width}")
    hidden = max(16, int(round(discriminator.hidden_size * width)))
    heads = max(1, hidden // 64)
    if hidden % heads:
        raise ValueError(f"generator hidden size {hidden} is not a multiple of its {heads} heads")
    return ElectraConfig(
        vocab_size=discriminator.vocab_size,
        embedding_size=discriminator.hidden_size,
        hidden_size=hidden,
        num_hidden_layers=discriminator.num_hidden_layers,
        num_attention_heads=heads,
        intermediate_size=4 * hidden,
        max_position_embeddings=discriminator.max_position_embeddings,
        type_vocab_size=discriminator.type_vocab_size,
        pad_token_id=discriminator.pad_token_id,
        layer_norm_eps=discriminator.layer_norm_eps,
        hidden_dropout_prob=discriminator.hidden_dropout_prob,
        attention_probs_dropout_prob=discriminator.attention_probs_dropout_prob,
        tie_word_embeddings=True,
    )


@dataclass
class ElectraPretrainingOutput(ModelOutput):
    loss: torch.Tensor | None = None
    mlm_loss: torch.Tensor | None = None
    rtd_loss: torch.Tensor | None = None
    replaced_share: torch.Tensor | None = None  # replaced tokens among non-pad ones (easier as the generator improves)
    rtd_accuracy: torch.Tensor | None = None  # discriminator's accuracy over non-pad tokens


class ElectraPretrainingModel(PreTrainedModel):
    """Generator + discriminator trained jointly. ``config`` is the discriminator's
    ``BertConfig``; ``config.zhbert_generator`` holds the generator's as a dict."""

    config_class = BertConfig
    base_model_prefix = "discriminator"
    _supports_sdpa = True  # both parts are stock BERT/ELECTRA modules, which do
    # saved once, under the discriminator; the generator's copies are the same tensors
    _tied_weights_keys = {
        **{
            f"generator.electra.embeddings.{name}.{p}": f"discriminator.embeddings.{name}.{p}"
            for name in SHARED_EMBEDDINGS
            for p in (("weight", "bias") if name == "LayerNorm" else ("weight",))
        },
        "generator.generator_lm_head.weight": "discriminator.embeddings.word_embeddings.weight",
    }

    def __init__(self, config: BertConfig, generator: ElectraConfig | None = None, rtd_weight: float = 50.0):
        super().__init__(config)
        if generator is None:
            saved = getattr(config, "zhbert_generator", None)
            generator = ElectraConfig(**saved) if isinstance(saved, dict) else generator_config(config)
        if generator.embedding_size != config.hidden_size:
            raise ValueError(
                f"generator embedding size {generator.embedding_size} must equal the discriminator's hidden size {config.hidden_size}"
            )
        config.zhbert_generator = {k: v for k, v in generator.to_dict().items() if k in _GENERATOR_KEYS}
        config.zhbert_rtd_weight = float(getattr(config, "zhbert_rtd_weight", rtd_weight))
        self.rtd_weight = config.zhbert_rtd_weight
        self.discriminator = BertModel(config, add_pooling_layer=True)
        self.discriminator_head = _DiscriminatorHead(config)
        self.generator = ElectraForMaskedLM(generator)
        self._share_embeddings()
        self.running = RunningMeans()
        self.post_init()

    def _share_embeddings(self) -> None:
        for name in SHARED_EMBEDDINGS:
            setattr(self.generator.electra.embeddings, name, getattr(self.discriminator.embeddings, name))
        self.generator.generator_lm_head.weight = self.discriminator.embeddings.word_embeddings.weight

    def tie_weights(self, *args, **kwargs):  # transformers calls this after loading: keep the sharing exact
        self._share_embeddings()

    def grow_vocabulary(self, added: int, unk_id: int) -> None:
        """Append ``added`` rows to the shared word embeddings and the generator's output bias, each
        a copy of the ``[UNK]`` row (:mod:`zhbert.training.vocab_growth`)."""
        old = self.discriminator.embeddings.word_embeddings
        rows = old.weight.shape[0]
        table = nn.Embedding(rows + added, old.weight.shape[1], padding_idx=old.padding_idx)
        head = self.generator.generator_lm_head
        projection = nn.Linear(head.in_features, rows + added, bias=head.bias is not None)
        with torch.no_grad():
            table.weight[:rows] = old.weight
            table.weight[rows:] = old.weight[unk_id]
            if head.bias is not None:
                projection.bias[:rows] = head.bias
                projection.bias[rows:] = head.bias[unk_id]
        self.discriminator.embeddings.word_embeddings = table
        self.generator.generator_lm_head = projection
        for config in (self.config, self.discriminator.config, self.generator.config):
            config.vocab_size = rows + added
        self.config.zhbert_generator["vocab_size"] = rows + added
        self._share_embeddings()

    def _init_weights(self, module):
        std = self.config.initializer_range
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(0.0, std)
            if module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(0.0, std)
            if module.padding_idx is not None:
                module.weight.data[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            module.weight.data.fill_(1.0)
            module.bias.data.zero_()

    def generator_logits(self, input_ids, attention_mask, token_type_ids, picked):
        """Vocabulary logits of the generator at the ``picked`` positions only: (n_picked, V)."""
        hidden = self.generator.electra(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)[0]
        return self.generator.generator_lm_head(self.generator.generator_predictions(hidden[picked]))

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, labels=None, **kwargs):
        if labels is None:
            raise ValueError("ElectraPretrainingModel trains only: pass labels (-100 where nothing was masked)")
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        picked = labels != -100
        logits = self.generator_logits(input_ids, attention_mask, token_type_ids, picked)
        mlm_loss = nn.functional.cross_entropy(logits.float(), labels[picked])
        with torch.no_grad():  # the discriminator's loss never reaches the generator (not differentiable through sampling)
            sampled = gumbel_sample(logits)
            corrupted = input_ids.clone()
            corrupted[picked] = sampled
            original = torch.where(picked, labels, input_ids)
            replaced = (corrupted != original).float()
        hidden = self.discriminator(input_ids=corrupted, attention_mask=attention_mask, token_type_ids=token_type_ids)[0]
        rtd_logits = self.discriminator_head(hidden)
        real = attention_mask.bool()
        rtd_loss = nn.functional.binary_cross_entropy_with_logits(rtd_logits[real].float(), replaced[real])
        with torch.no_grad():
            accuracy = ((rtd_logits[real] > 0).float() == replaced[real]).float().mean()
        parts = {
            "mlm_loss": mlm_loss.detach(),
            "rtd_loss": rtd_loss.detach(),
            "replaced_share": replaced[real].mean(),
            "rtd_accuracy": accuracy,
        }
        if self.training:
            self.running.add(parts)
        return ElectraPretrainingOutput(
            loss=mlm_loss + self.rtd_weight * rtd_loss,
            mlm_loss=mlm_loss.detach(),
            rtd_loss=rtd_loss.detach(),
            replaced_share=replaced[real].mean(),
            rtd_accuracy=accuracy,
        )

    def save_parts(self, folder) -> dict:
        """Write the discriminator as a stock ``BertModel`` folder (``folder``) and the generator as a
        stock ``ElectraForMaskedLM`` folder (``folder/generator``); returns both paths."""
        from pathlib import Path

        folder = Path(folder)
        self.discriminator.config.architectures = ["BertModel"]
        self.discriminator.save_pretrained(folder)
        generator_dir = folder / "generator"
        self.generator.config.architectures = ["ElectraForMaskedLM"]
        self.generator.save_pretrained(generator_dir)
        return {"discriminator": folder, "generator": generator_dir}

    @classmethod
    def from_bert(cls, bert_folder: str, generator_width: float = 0.25, rtd_weight: float = 50.0):
        """Discriminator initialised from a local BERT checkpoint's encoder (any head is ignored). The
        generator continues from ``bert_folder/generator`` when the folder holds one of this width (the
        ``final/`` of an ELECTRA run), else starts fresh; either way it shares the checkpoint's embeddings.
        Returns the model and the names of the weights that start fresh."""
        from pathlib import Path

        config = BertConfig.from_pretrained(bert_folder, local_files_only=True, trust_remote_code=False)
        gen_config = generator_config(config, generator_width)
        model = cls(config, gen_config, rtd_weight=rtd_weight)
        fresh = []
        saved_generator = Path(bert_folder) / "generator"
        if (saved_generator / "config.json").is_file():
            saved = ElectraConfig.from_pretrained(str(saved_generator), local_files_only=True, trust_remote_code=False)
            if (saved.hidden_size, saved.num_hidden_layers) != (gen_config.hidden_size, gen_config.num_hidden_layers):
                raise ValueError(
                    f"{saved_generator}: a generator {saved.num_hidden_layers} x {saved.hidden_size}, but --generator-width "
                    f"{generator_width:g} makes {gen_config.num_hidden_layers} x {gen_config.hidden_size}: give its width"
                )
            generator = ElectraForMaskedLM.from_pretrained(
                str(saved_generator), local_files_only=True, trust_remote_code=False, dtype=torch.float32
            )
            own = {k: v for k, v in generator.state_dict().items() if not k.startswith("electra.embeddings.")}
            own.pop("generator_lm_head.weight", None)  # the shared embeddings come from the discriminator below
            model.generator.load_state_dict(own, strict=False)
        else:
            fresh.append("generator")
        bert = BertModel.from_pretrained(bert_folder, local_files_only=True, trust_remote_code=False, dtype=torch.float32)
        missing, unexpected = model.discriminator.load_state_dict(bert.state_dict(), strict=False)
        if unexpected:
            raise ValueError(f"{bert_folder}: unexpected encoder weights {sorted(unexpected)[:5]}")
        model._share_embeddings()
        return model, sorted(missing) + fresh + ["discriminator_head"]


# generator config fields worth keeping in the discriminator's config.json (the rest are defaults)
_GENERATOR_KEYS = (
    "vocab_size",
    "embedding_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "max_position_embeddings",
    "type_vocab_size",
    "pad_token_id",
    "layer_norm_eps",
    "hidden_dropout_prob",
    "attention_probs_dropout_prob",
)


def gumbel_sample(logits: torch.Tensor) -> torch.Tensor:
    """One draw from ``softmax(logits)`` per row, by Gumbel-max: ``argmax(logits - log(-log u))``.

    The noise is transformed in place in one buffer: over a (masked positions x vocabulary)
    matrix each temporary tensor is another full pass, and in place the sampling takes about 40%
    less CPU time. The draws are bit for bit the plain formula's, so runs resume as they began.
    """
    noise = torch.rand_like(logits, dtype=torch.float32).clamp_(1e-9, 1.0)
    noise.log_().neg_().log_()
    return torch.sub(logits.float(), noise, out=noise).argmax(-1)


class RunningMeans:
    """Means of the loss parts since the last read: the Trainer logs only the summed loss."""

    def __init__(self):
        self.sums: dict[str, float] = {}
        self.count = 0

    def add(self, parts: dict) -> None:
        for key, value in parts.items():
            self.sums[key] = self.sums.get(key, 0.0) + float(value)
        self.count += 1

    def pop(self) -> dict[str, float]:
        means = {key: round(value / self.count, 4) for key, value in self.sums.items()} if self.count else {}
        self.sums, self.count = {}, 0
        return means


class _DiscriminatorHead(nn.Module):
    """ELECTRA's ``discriminator_predictions``: dense, GELU, one logit per token."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.dense_prediction = nn.Linear(config.hidden_size, 1)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.dense_prediction(nn.functional.gelu(self.dense(hidden))).squeeze(-1)
