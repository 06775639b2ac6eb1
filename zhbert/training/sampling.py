"""Batches of similar length, in an order drawn from the seed and the epoch alone.

Transformers' ``LengthGroupedSampler`` (``train_sampling_strategy="group_by_length"``) draws each
epoch's order from torch's global generator when the epoch starts, so the order depends on every
random draw made before it (dropout, initialisation). A run resumed part way through an epoch then
skips the right number of batches of a different order, and trains on other batches than the
uninterrupted run would have (``finetune_resume.py``). Here the generator is re-seeded from the
run's seed and the epoch at every epoch (``set_epoch``, which the Trainer calls), as the Trainer's
own random sampler does: the same megabatch grouping, an order that resumes exactly.
"""

from __future__ import annotations

import torch
from transformers import Trainer
from transformers.trainer_pt_utils import LengthGroupedSampler, get_length_grouped_indices

__all__ = ["EpochSeededLengthGroupedSampler", "FineTuneTrainer"]


class EpochSeededLengthGroupedSampler(LengthGroupedSampler):
    def __init__(self, batch_size: int, lengths: list[int], seed: int):
        super().__init__(batch_size, lengths=lengths)
        self.seed, self.epoch = seed, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __iter__(self):
        generator = torch.Generator().manual_seed(self.seed + self.epoch)
        return iter(get_length_grouped_indices(self.lengths, self.batch_size, generator=generator))


class FineTuneTrainer(Trainer):
    """``Trainer`` whose length-grouped batches come from :class:`EpochSeededLengthGroupedSampler`."""

    def _get_train_sampler(self, train_dataset=None):
        dataset = self.train_dataset if train_dataset is None else train_dataset
        if self.args.train_sampling_strategy != "group_by_length" or self.args.length_column_name not in dataset.column_names:
            return super()._get_train_sampler(train_dataset)
        batch = self.args.train_batch_size * self.args.gradient_accumulation_steps
        return EpochSeededLengthGroupedSampler(batch, dataset[self.args.length_column_name], self.args.data_seed or self.args.seed)
