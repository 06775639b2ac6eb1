"""``--freeze-encoder-steps``: the first steps of a continued run train only what surrounds the encoder.

A run continued from a checkpoint that lacks some of its parts (an ELECTRA run from a plain BERT folder: a new
generator and replaced-token head; a masked LM from an encoder without its head) starts those parts random, and
their first gradients, large and meaningless, reach the encoder it was continued for. Training the new parts first
with the encoder held as it is, then everything, is linear probing before fine-tuning (Kumar et al., ICLR 2022),
applied to pretraining.

Held means the encoder's parameters (the model's ``base_model``: its embeddings, which an ELECTRA generator shares,
and its layers) do not require gradients: no backward pass runs through the encoder, and AdamW, which skips a
parameter without a gradient, neither moves it nor decays it. Which steps are frozen follows from the step count
alone, so a resumed run freezes exactly what an uninterrupted one would.

The optimizer holds every parameter (the Trainer builds it before the first step, when all still require
gradients); under ``torchrun`` DDP fixes at its start which parameters it reduces, so this is for one process.
"""

from __future__ import annotations

from transformers import TrainerCallback

__all__ = ["FrozenEncoderSteps", "encoder_parameters", "held_steps"]


def held_steps(done: int, until: int, frozen_steps: int) -> int:
    """How many of optimizer steps ``done + 1`` .. ``until`` hold the encoder when steps 1..``frozen_steps`` do:
    the one rule for the callback (is the next step held?) and for the MFU of a logged interval."""
    return max(0, min(until, frozen_steps) - done)


def encoder_parameters(model) -> list:
    """The parameters of the encoder that ``model`` (a masked LM or an ELECTRA pair) continues."""
    return list(model.base_model.parameters())


class FrozenEncoderSteps(TrainerCallback):
    """Holds the encoder for optimizer steps 1..``steps``, and trains it from step ``steps + 1`` on."""

    def __init__(self, steps: int):
        self.steps = steps

    def frozen_at(self, global_step: int) -> bool:
        """Whether the step after ``global_step`` (the one about to run) holds the encoder."""
        return held_steps(global_step, global_step + 1, self.steps) > 0

    def on_step_begin(self, args, state, control, model=None, **kwargs):
        frozen = self.frozen_at(state.global_step)
        for parameter in encoder_parameters(model):
            parameter.requires_grad_(not frozen)

    def on_train_end(self, args, state, control, model=None, **kwargs):
        for parameter in encoder_parameters(model):  # the model leaves the run as it came: every part trainable
            parameter.requires_grad_(True)
