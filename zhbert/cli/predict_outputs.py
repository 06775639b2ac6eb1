"""``predict --output-format text``: each prediction written in the form training reads.

JSON lines (the default) keep everything: offsets, scores, every label's probability. The text
form keeps what a next tool reads, and it is the form ``zhbert train`` reads back, so a model's
predictions on unlabelled text can be corrected by hand and trained on, or scored by the tools
that read them:

* segmentation: the words separated by spaces (``--format words``; SIGHAN 2005's ``score`` script
  reads it); POS: ``word/TAG`` items (People's Daily's form);
* NER: CoNLL, a character (or a CoNLL input's token) and its BIO tag a line, a blank line after
  each text; whitespace, which a CoNLL line cannot hold, is left out;
* tagging: ``text<TAB>label`` (several labels joined by ``,``: ``--label-separator ,`` reads them);
* matching: ``text_a<TAB>text_b<TAB>label`` (a similarity model's score, to four decimals);
* fill-mask: the text with each ``[MASK]`` filled by its best candidate.

A prediction the form cannot hold (a word with a space in it, a text with a tab) is an error for
that input, named with its line; the other inputs are still written.

``--output-format label-studio`` writes Label Studio's tasks with the model's answers as predictions
(pre-annotations, https://labelstud.io/guide/predictions): one JSON array, a task per text
(``{"data": {"text"}, "predictions": [{"model_version", "score", "result"}]}``), an NER model's entities as
``labels`` results and a tagging model's labels as ``choices``, under the name of the labeling config's
``<Labels>`` or ``<Choices>`` tag (``--studio-label-name``, ``label`` by default) and its ``<Text name="text">``.
A prediction's score is its least certain entity's (none: 1.0) or its chosen label's, so sorting tasks by it
puts the ones to check first. Annotators correct them, and Label Studio's export trains with ``zhbert train``.
"""

from __future__ import annotations

__all__ = ["OUTPUT_FORMATS", "text_lines", "studio_task", "STUDIO_FORMAT", "STUDIO_TEXT_NAME"]

STUDIO_FORMAT = "label-studio"
OUTPUT_FORMATS = ("jsonl", "text", STUDIO_FORMAT)
#: the name (and data key, ``$text``) of the Text tag in Label Studio's text templates
STUDIO_TEXT_NAME = "text"
LABEL_SEPARATOR = ","


def _tsv_cells(*cells: str) -> str:
    for cell in cells:
        if "\t" in cell or "\n" in cell or "\r" in cell:
            raise ValueError("a text holding a tab or a line break cannot be a TSV cell: use --output-format jsonl")
    return "\t".join(cells)


def _words(result) -> str:
    items = []
    for word in result:
        if any(c.isspace() for c in word.text):
            raise ValueError(f"the word {word.text!r} holds a space, which separates words in this form: use --output-format jsonl")
        items.append(f"{word.text}/{word.label}" if word.label else word.text)
    return " ".join(items)


def _conll(item: str, result, tokens: list[str] | None) -> list[str]:
    from ..tags import spans_to_tags
    from .predict_inputs import predicted_token_tags

    if tokens is not None:
        return [f"{token} {tag}" for token, tag in zip(tokens, predicted_token_tags(tokens, result))] + [""]
    tags = spans_to_tags(len(item), [(e.label, e.start, e.end) for e in result], "BIO")
    return [f"{char} {tag}" for char, tag in zip(item, tags) if not char.isspace()] + [""]


def _filled(item: str, result) -> str:
    for mask in sorted(result, key=lambda m: m.start, reverse=True):
        item = item[: mask.start] + mask.token.removeprefix("##") + item[mask.end :]
    return item


def text_lines(pred, item, result, kept: dict) -> list[str]:
    """The lines written for one input: ``item`` (a text, or a pair) and the model's ``result``."""
    from ..api import Classifier, EntityRecognizer, MaskedLM, Matcher, Segmenter
    from .predict_inputs import TOKENS_KEY

    if isinstance(pred, Segmenter):  # POSTagger too: its words carry their tags
        return [_words(result)]
    if isinstance(pred, EntityRecognizer):
        return _conll(item, result, kept.get(TOKENS_KEY))
    if isinstance(pred, Classifier):
        return [_tsv_cells(item, LABEL_SEPARATOR.join(label.label for label in result.labels))]
    if isinstance(pred, Matcher):  # a similarity score with its fraction, which training reads back as a score
        return [_tsv_cells(item[0], item[1], f"{result.score:.4f}" if pred.head.regression else result.label)]
    if isinstance(pred, MaskedLM):
        return [_filled(item, result)]
    raise ValueError(f"{type(pred).__name__} has no text form: use --output-format jsonl")


def studio_task(pred, item: str, result, kept: dict, model_version: str, label_name: str) -> dict:
    """One Label Studio task for ``item``: its text (and the input's id) as data, the model's answer as a prediction."""
    from ..api import Classifier, EntityRecognizer

    def result_item(k: int, kind: str, value: dict, score: float) -> dict:
        return {"id": f"r{k}", "from_name": label_name, "to_name": STUDIO_TEXT_NAME, "type": kind, "value": value, "score": score}

    if isinstance(pred, EntityRecognizer):
        results = [
            result_item(k, "labels", {"start": e.start, "end": e.end, "text": e.text, "labels": [e.label]}, e.score)
            for k, e in enumerate(result)
        ]
        score = min((e.score for e in result), default=1.0)
    elif isinstance(pred, Classifier):
        chosen = [label.label for label in result.labels]
        score = min((label.score for label in result.labels), default=1.0)
        results = [result_item(0, "choices", {"choices": chosen}, score)] if chosen else []
    else:
        raise ValueError(f"{type(pred).__name__} has no Label Studio form here (NER and tagging models have): use --output-format jsonl")
    data = {STUDIO_TEXT_NAME: item, **{k: v for k, v in kept.items() if k in ("id", "idx")}}
    return {"data": data, "predictions": [{"model_version": model_version, "score": score, "result": results}]}
