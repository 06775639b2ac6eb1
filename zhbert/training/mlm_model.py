"""BERT masked-LM that computes vocabulary logits only where a token is predicted.

``BertForMaskedLM`` projects every position onto the 21,128-entry vocabulary
although only ~15% carry a label; on CPU that projection dominates a small
model's step. These subclasses gather the labelled positions first. Their
parameters are exactly those of the stock classes, so a checkpoint saved from
them loads with plain ``BertForMaskedLM`` / ``BertForPreTraining``.
"""

from __future__ import annotations

from torch import nn
from transformers import BertForMaskedLM, BertForPreTraining
from transformers.modeling_outputs import MaskedLMOutput
from transformers.models.bert.modeling_bert import BertForPreTrainingOutput

__all__ = ["SparseBertForMaskedLM", "SparseBertForPreTraining"]


def _sparse_mlm_loss(sequence_output, labels, predictions):
    picked = labels != -100
    hidden = sequence_output[picked]  # (n_masked, H)
    logits = predictions(hidden)  # (n_masked, V)
    loss = nn.functional.cross_entropy(logits.float(), labels[picked])
    return loss, logits


class SparseBertForMaskedLM(BertForMaskedLM):
    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, labels=None, **kwargs):
        if labels is None:
            return super().forward(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids, **kwargs)
        kwargs.pop("return_dict", None)
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids, **kwargs)
        loss, logits = _sparse_mlm_loss(out[0], labels, self.cls)
        return MaskedLMOutput(loss=loss, logits=logits)


class SparseBertForPreTraining(BertForPreTraining):
    """MLM + NSP; ``next_sentence_label`` 0 = true next segment, 1 = random."""

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, labels=None, next_sentence_label=None, **kwargs):
        if labels is None:
            return super().forward(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids, **kwargs)
        kwargs.pop("return_dict", None)
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids, **kwargs)
        loss, logits = _sparse_mlm_loss(out[0], labels, self.cls.predictions)
        nsp_logits = self.cls.seq_relationship(out[1])
        if next_sentence_label is not None:
            loss = loss + nn.functional.cross_entropy(nsp_logits.float(), next_sentence_label.view(-1))
        return BertForPreTrainingOutput(loss=loss, prediction_logits=logits, seq_relationship_logits=nsp_logits)
