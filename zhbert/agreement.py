"""Does plain transformers answer as ``zhbert.load`` does on the same saved folder?

Every zhbert model folder promises to open in plain transformers; this checks that
it also *answers the same*: a ``transformers.pipeline`` over the folder against
``zhbert.load(folder)`` on real test text, model by model.

* token heads (NER): identical entity sets ``(type, start, end)``; the pipeline
  groups with ``aggregation_strategy="simple"``;
* token heads (segmentation): identical per-token labels, and identical words
  built from the pipeline's labels with the same conlleval-style reading (except
  on the rare character NFKD expands into several tokens, ``℃`` -> ``°c``: zhbert
  reads it as one unit so words never overlap; such inputs are counted);
* sequence and pair heads: every label's probability within ``tol``;
* the encoder: identical fill-mask top-1 (special tokens excluded, as zhbert
  does) with its probability within ``tol``.

Inputs are kept to one window of the encoder's pretraining length: past it the
pipeline and zhbert window differently by design (zhbert's windows at sentence ends
versus the pipeline's truncation), which is not what is compared here.
Only stock-compatible heads can be compared (a CRF or a fused representation has
no plain-transformers class); :func:`compare` says so instead of guessing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Agreement", "compare", "agreement_inputs"]


@dataclass
class Agreement:
    model: str
    kind: str
    n: int = 0
    agree: int = 0
    max_prob_diff: float = 0.0
    mismatches: list = field(default_factory=list)  # the first few disagreements, for the report
    shared_character_inputs: int = 0  # segmentation: inputs where one character carries several tokens
    pipeline_errors: int = 0  # inputs the plain pipeline could not read at all (longer than its position table)

    @property
    def rate(self) -> float:
        return self.agree / self.n if self.n else 0.0

    def add(self, ok: bool, example) -> None:
        self.n += 1
        self.agree += ok
        if not ok and len(self.mismatches) < 5:
            self.mismatches.append(example)


def _fits(tokenizer, text, limit: int) -> bool:
    return len(tokenizer(text, add_special_tokens=True)["input_ids"]) <= limit


def agreement_inputs(shared: str | Path, n: int, tokenizer, limit: int = 128, long: bool = False) -> dict[str, list]:
    """``n`` real test inputs per bundled model kind that fit ``limit`` tokens, from ``shared/datasets``;
    with ``long``, up to ``n`` that do not (where plain pipelines truncate at the folder's
    ``model_max_length`` and zhbert reads the rest through windows)."""
    from .data import read_char_tagged, read_msra_ner, read_ocnli, read_pair_tsv, read_segmented, read_smp2020_ewect
    from .data.splits import peoples_daily_heldout

    d = Path(shared) / "datasets"

    def take(texts, k):
        out = []
        for t in texts:
            if t and _fits(tokenizer, t if isinstance(t, str) else (t[0] + t[1]), limit - 1) != long:
                out.append(t)
                if len(out) == k:
                    break
        return out

    half = n // 2
    ner = take(read_msra_ner(str(d / "msra_ner" / "dh_msra.zip"), "test")["text"], half)
    ner += take(read_char_tagged(str(d / "peoples_daily_ner" / "example.test"))["text"], n - len(ner))
    pku = take(read_segmented(str(d / "sighan2005_icwb2" / "pku_test_gold.utf8"))["text"], n)
    posts = take(read_smp2020_ewect(str(d / "smp2020_ewect_usual" / "test.tsv"))["text"], n)
    oc = read_ocnli(str(d / "ocnli" / "dev.json"))
    lc = read_pair_tsv(str(d / "lcqmc" / "test.txt"))
    pairs = take(zip(oc["sentence1"], oc["sentence2"]), half)
    pairs += take(zip(lc["sentence1"], lc["sentence2"]), n - len(pairs))
    masked = []
    for text in peoples_daily_heldout():
        han = [i for i, c in enumerate(text) if "\u4e00" <= c <= "\u9fff"]
        if len(han) >= 4:
            k = han[len(han) // 2]  # one Han character in the middle of the sentence
            masked.append(text[:k] + "[MASK]" + text[k + 1 :])
    return {"ner": ner, "cws": pku, "cws-fast": pku, "tagging": posts, "matching": pairs, "base": take(masked, n)}


def _head_kind(path: Path) -> str:
    config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    head = config.get("zhbert_head")
    if not head:
        return "fill-mask"
    from .heads.config import HeadConfig
    from .heads.model import stock_architecture

    h = HeadConfig.from_dict(head)
    if h.word_features:
        raise ValueError(
            f"{path}: a zhbert-only head (word features: lexicon={h.lexicon}, bigram_dim={h.bigram_dim}); plain transformers "
            "cannot compute them, so there is nothing to compare against (its encoder still opens with AutoModel)"
        )
    if not stock_architecture(h, config.get("model_type", "bert")):
        raise ValueError(
            f"{path}: a {h.kind} head with representation={h.representation}, crf={h.crf}, bilstm_layers={h.bilstm_layers} has no "
            "plain-transformers class, so there is nothing to compare against"
        )
    if h.kind == "token":
        return "segmentation" if h.scheme and h.scheme.startswith("BMES") else "ner"
    return "pair" if h.kind == "pair" else "sequence"


def compare(name: str, path: str | Path, inputs: list, tol: float = 1e-5) -> Agreement:
    """Run ``inputs`` through ``transformers.pipeline`` and ``zhbert.load`` on the folder ``path``."""
    import torch
    from transformers import pipeline

    from . import load
    from .tags import lenient_spans

    path = Path(path)
    kind = _head_kind(path)
    ours = load(str(path), web_units=False)  # the model alone: plain transformers has no rule layer
    task = {"fill-mask": "fill-mask", "ner": "token-classification", "segmentation": "token-classification"}.get(
        kind, "text-classification"
    )
    kwargs = {"aggregation_strategy": "simple"} if kind == "ner" else {}
    pipe = pipeline(task, model=str(path), tokenizer=str(path), device="cpu", dtype=torch.float32, **kwargs)
    result = Agreement(name, kind)
    if kind == "fill-mask":
        special = set(pipe.tokenizer.all_special_tokens)
        for text in inputs:
            try:
                theirs = [c for c in pipe(text, top_k=8) if c["token_str"] not in special]
            except RuntimeError as e:  # a text past the position table: the pipeline cannot read it, zhbert windows it
                result.pipeline_errors += 1
                result.add(False, (text, f"pipeline failed: {str(e)[:80]}"))
                continue
            mine = ours.fill_mask(text, top_k=1)[0].candidates[0]
            diff = abs(theirs[0]["score"] - mine.score)
            result.max_prob_diff = max(result.max_prob_diff, diff)
            result.add(theirs[0]["token_str"] == mine.token and diff <= tol, (text, theirs[0]["token_str"], mine.token, diff))
    elif kind == "ner":
        for text, spans in zip(inputs, ours(inputs)):
            theirs = {(e["entity_group"], int(e["start"]), int(e["end"])) for e in pipe(text)}
            mine = {(s.label, s.start, s.end) for s in spans}
            result.add(theirs == mine, (text, sorted(theirs ^ mine)))
    elif kind == "segmentation":
        from .heads import predict_tags

        scheme = ours.head.scheme
        tags = predict_tags(ours.model, ours.tokenizer, inputs)
        for text, words, pred in zip(inputs, ours(inputs), tags):
            toks = pipe(text, aggregation_strategy="none")
            same_tags = [t["entity"] for t in toks] == list(pred.tags)
            offsets = [(int(t["start"]), int(t["end"])) for t in toks]
            if len(set(offsets)) < len(offsets):
                # NFKD gave one character several tokens (℃ -> "°", "c"): the pipeline's reading can
                # split or overlap there, zhbert reads the character as one unit; the tags must agree
                result.shared_character_inputs += 1
                result.add(same_tags, (text, "per-token tags differ"))
                continue
            spans = lenient_spans([t["entity"] for t in toks], scheme)
            theirs = [(offsets[s][0], offsets[e - 1][1]) for _, s, e in spans]
            mine = [(w.start, w.end) for w in words]
            result.add(same_tags and theirs == mine, (text, sorted(set(theirs) ^ set(mine))))
    else:
        for x, pred in zip(inputs, ours(inputs if kind == "sequence" else [tuple(p) for p in inputs])):
            arg = x if kind == "sequence" else {"text": x[0], "text_pair": x[1]}
            theirs = {c["label"]: c["score"] for c in pipe(arg, top_k=None)}
            mine = {s.label: s.score for s in pred.scores}
            diff = max(abs(theirs[k] - mine[k]) for k in mine)
            result.max_prob_diff = max(result.max_prob_diff, diff)
            result.add(diff <= tol and max(theirs, key=theirs.get) == max(mine, key=mine.get), (x, diff))
    return result
