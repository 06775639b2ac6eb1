"""Word information for token heads: SoftLexicon word sets and character bigrams.

For each token ``t`` of a row (shapes: ``input_ids (B, T)``):

* **lexicon** (SoftLexicon, Ma et al. 2020): the dictionary words that begin at ``t`` (B),
  contain it inside (M), end at it (E), or are it alone (S). A word's vector is
  ``e(w) = W[bucket(w)] + L[len(w)] + P[tag(w)]`` (a hashed word embedding, its length in
  tokens and its part of speech / entity type), and each set becomes
  ``v_X(t) = 4 / Z(t) * sum_{w in X(t)} z(w) e(w)`` with ``z(w) = log(1 + freq(w))`` and
  ``Z(t)`` the sum of ``z`` over all four sets; an empty set is a learned ``NONE_X`` vector.
  Output ``(B, T, 4 * lexicon_dim)``.
* **bigrams**: embeddings of the token pairs ``(t-1, t)`` and ``(t, t+1)``, hashed into
  ``bigram_buckets`` rows: ``(B, T, 2 * bigram_dim)``. They read the same ids the encoder
  reads; ``[CLS]``/``[SEP]``/padding are ordinary neighbours.

The features are concatenated to the encoder's token vectors before the BiLSTM / tagger
(``ZhBertForTask``), so they work with every token head: softmax or CRF, fine-tuned or
frozen encoder. Matching runs on the CPU in the model's forward (``zhbert.lexicon``), so
every window of every text gets its words the same way in training and prediction.
"""

from __future__ import annotations

import torch
from torch import nn

from ..lexicon import LEXICON_TAGS, MAX_WORD_TOKENS, SETS, TokenLexicon

__all__ = ["WordFeatures", "bigram_rows"]

_BIGRAM_PRIME = 1_000_003


def bigram_rows(left, right, buckets: int):
    """The hashed-table rows of token pairs ``(left, right)`` (tensors or int64 arrays alike)."""
    return (left * _BIGRAM_PRIME + right) % buckets


class WordFeatures(nn.Module):
    def __init__(self, lexicon_dim: int, lexicon_buckets: int, bigram_dim: int, bigram_buckets: int):
        super().__init__()
        self.lexicon_dim, self.bigram_dim = lexicon_dim, bigram_dim
        self.bigram_buckets = bigram_buckets
        if lexicon_dim:
            self.word_embeddings = nn.Embedding(lexicon_buckets, lexicon_dim)
            self.length_embeddings = nn.Embedding(MAX_WORD_TOKENS + 1, lexicon_dim)
            self.tag_embeddings = nn.Embedding(len(LEXICON_TAGS), lexicon_dim)
            self.none_embeddings = nn.Embedding(len(SETS), lexicon_dim)
        if bigram_dim:
            self.bigram_embeddings = nn.Embedding(bigram_buckets, bigram_dim)
        self.lexicon: TokenLexicon | None = None  # attached after loading (zhbert.heads.io)

    @property
    def output_size(self) -> int:
        return len(SETS) * self.lexicon_dim + 2 * self.bigram_dim

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        parts = []
        if self.lexicon_dim:
            parts.append(self._lexicon_sets(input_ids, attention_mask))
        if self.bigram_dim:
            parts.append(self._bigrams(input_ids))
        return torch.cat(parts, dim=-1)

    def _bigrams(self, ids: torch.Tensor) -> torch.Tensor:
        edge = torch.zeros_like(ids[:, :1])  # outside the row: id 0 ([PAD])
        left = torch.cat([edge, ids[:, :-1]], dim=1)
        right = torch.cat([ids[:, 1:], edge], dim=1)
        e, n = self.bigram_embeddings, self.bigram_buckets
        return torch.cat([e(bigram_rows(left, ids, n)), e(bigram_rows(ids, right, n))], dim=-1)

    def _lexicon_sets(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        lex = self.lexicon
        if lex is None:
            raise RuntimeError("this head reads lexicon features: attach a TokenLexicon first (zhbert.heads.io.attach_lexicon)")
        b, t = input_ids.shape
        d, dev = self.lexicon_dim, input_ids.device
        m = lex.match(input_ids.tolist(), attention_mask.sum(1).tolist())
        cell = torch.as_tensor((m.rows * t + m.positions) * len(SETS) + m.sets, device=dev)
        words = torch.as_tensor(m.words, device=dev)
        weights = torch.as_tensor(lex.weights, device=dev).index_select(0, words)
        dtype = self.word_embeddings.weight.dtype
        if torch.is_grad_enabled():
            vectors = self._word_vectors(words) * weights.unsqueeze(1).to(dtype)
        else:  # prediction: one gather from every word's weighted vector, computed once for these weights
            vectors = self._weighted_table().index_select(0, words)  # (index_select: 6x faster here than [words])
        cells = b * t * len(SETS)
        total = torch.zeros(cells, d, device=dev, dtype=dtype).index_add(0, cell, vectors)
        mass = torch.zeros(cells, device=dev, dtype=dtype).index_add(0, cell, weights.to(dtype))
        total, mass = total.view(b, t, len(SETS), d), mass.view(b, t, len(SETS))
        z = mass.sum(-1, keepdim=True).clamp(min=1e-6)  # Z(t): all four sets together
        sets = total * (len(SETS) / z).unsqueeze(-1)
        none = self.none_embeddings.weight.view(1, 1, len(SETS), d).expand(b, t, -1, -1)
        sets = torch.where((mass > 0).unsqueeze(-1), sets, none)
        return sets.reshape(b, t, len(SETS) * d)

    def _word_vectors(self, words: torch.Tensor) -> torch.Tensor:
        """``e(w) = W[bucket(w)] + L[len(w)] + P[tag(w)]`` of lexicon words (indices)."""
        lex, dev = self.lexicon, words.device
        return (
            self.word_embeddings(torch.as_tensor(lex.buckets, device=dev).index_select(0, words))
            + self.length_embeddings(torch.as_tensor(lex.lengths, device=dev).index_select(0, words))
            + self.tag_embeddings(torch.as_tensor(lex.tag_ids, device=dev).index_select(0, words))
        )

    def _weighted_table(self) -> torch.Tensor:
        """``z(w) e(w)`` for every lexicon word, ``(len(lexicon), lexicon_dim)``: five gathers and
        products per matched token become one (a fifth of a one-layer segmenter's time went to
        these features). Rebuilt whenever the lexicon or a table changes (training steps and
        ``load_state_dict`` write into the weights: their version counters move)."""
        tables = (self.word_embeddings.weight, self.length_embeddings.weight, self.tag_embeddings.weight)
        # the lexicon itself, not its id: a new lexicon may reuse a freed one's id
        key = (self.lexicon, *((w.data_ptr(), w._version, w.device, w.dtype) for w in tables))
        if getattr(self, "_table_key", None) != key:
            lex, dev = self.lexicon, tables[0].device
            everyone = torch.arange(len(lex), device=dev)
            weights = torch.as_tensor(lex.weights, device=dev).unsqueeze(1).to(tables[0].dtype)
            self._table, self._table_key = self._word_vectors(everyone) * weights, key
        return self._table
