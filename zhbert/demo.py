"""Gradio demo over zhbert's models: one tab per fine-tuned head, fill-mask and attention.

    zhbert demo                   # or, in a source checkout: python demo/app.py
The models are the bundled ones by default; ``build_demo({"ner": "runs/ner-msra/model", ...})``
takes any folders. A tab whose model is missing explains how to make it.
Every event has an ``api_name``, so ``gradio_client`` can call each tab, and each
main output an ``elem_id`` (``<api_name>-output``) for browser tests.
"""

from __future__ import annotations

import gradio as gr

from .api import load
from .heads.inputs import window_batch
from .tokenizer import encode

MAX_CHARS = 5000  # longer inputs get a message instead of a long wait
MAX_DICT_WORDS = 1000  # words in the demo's user-dictionary box
MAX_MASKS = 20  # masks fill one at a time: 500 of them held the fill-mask tab for 94 s
CONCURRENT_REQUESTS = 2  # per tab: one per core of the machine the project runs on
TASKS = ("cws", "pos", "ner", "tagging", "matching", "base")

EXAMPLES = {
    "cws": ["江泽民主席在北京会见了美国总统克林顿。", "今天去西湖边散步，天气真好😀"],
    "pos": ["中国与周边国家的友好合作进一步加强。", "這家公司研發的石墨烯電池獲得了認證"],
    "ner": ["国务院总理李鹏在人民大会堂会见了日本首相桥本龙太郎。", "我在上海复旦大学读书，导师是王教授。"],
    "tagging": ["今天心情特别好，终于考完试了！", "气死我了，快递又丢了"],
    # the bundled matching model answers "do the two mean the same?" (paraphrase / different)
    "matching": [["手机没电了怎么办", "手机没电了该怎么办"], ["花呗怎么还款", "花呗可以分期吗"]],
    # what the bundled base answers (bench/LOG.md, stage 6): 文化 (节日 also fits), 京, 人, 好
    "fill": [
        "春节是中国最重要的传统[MASK][MASK]。",
        "我们明天去北[MASK]大学参加会议。",
        "中华[MASK]民共和国成立于一九四九年。",
        "今天天气很[MASK]，我们去公园散步吧。",
    ],
}


def _check(text: str) -> str:
    if len(text) > MAX_CHARS:
        raise gr.Error(
            f"the demo takes up to {MAX_CHARS:,} characters; this text has {len(text):,}. "
            "Use zhbert.load(...) or `zhbert predict` for long texts."
        )
    return text


def _load_all(models: dict[str, str] | None) -> dict[str, object]:
    paths = {t: (models or {}).get(t, t) for t in TASKS}
    loaded = {}
    for task, path in paths.items():
        try:
            loaded[task] = load(str(path))
        except Exception as e:  # a missing model disables its tab, with the reason shown
            loaded[task] = e
    return loaded


def _with_words(pred, words: str):
    """The predictor forcing the dictionary box's words (one per line; NER: word, a space or tab, TYPE)."""
    lines = [line.strip() for line in (words or "").splitlines() if line.strip()]
    if not lines:
        return pred
    if len(lines) > MAX_DICT_WORDS:
        raise gr.Error(f"the demo takes up to {MAX_DICT_WORDS:,} dictionary words; use zhbert.load(..., user_dict=FILE) for more")
    try:
        return pred.forcing(lines)
    except ValueError as e:
        raise gr.Error(str(e)) from None


def segment(pred, text, words=""):
    # person names whole (江泽民) when the demo has an NER model to find them; the PKU
    # standard the segmenter learned splits surname and given name (江 / 泽民)
    names = "whole" if pred.name_finder is not None else "split"
    words = _with_words(pred, words)(_check(text), person_names=names)
    return " / ".join(w.text for w in words), [w.to_dict() for w in words]


def pos_tags(pred, text, words=""):
    words = _with_words(pred, words)(_check(text))
    return [(w.text, w.label) for w in words], [w.to_dict() for w in words]


def entities(pred, text, words=""):
    text = _check(text)
    ents = _with_words(pred, words)(text)
    return {"text": text, "entities": [{"entity": e.label, "start": e.start, "end": e.end} for e in ents]}, [e.to_dict() for e in ents]


def tag_post(pred, text):
    r = pred(_check(text))
    return {s.label: s.score for s in r.scores}


def match(pred, a, b):
    r = pred((_check(a), _check(b)))
    if pred.head.regression:  # a similarity score on its training labels' scale, no probability
        return r.score
    return {s.label: s.score for s in r.scores}  # every label's probability


def fill(pred, text):
    masks = _check(text).count("[MASK]")
    if masks > MAX_MASKS:
        raise gr.Error(
            f"the demo fills up to {MAX_MASKS} [MASK]s per request (they are filled one at a time); "
            f"this text has {masks}. Use zhbert.load('base').fill_mask(...) for more."
        )
    try:
        fills = pred.fill_mask(text, top_k=5)
    except ValueError as e:
        raise gr.Error(str(e)) from None
    filled, pos = [], 0
    for f in fills:
        filled += [text[pos : f.start], f.token]
        pos = f.end
    return "".join(filled) + text[pos:], [f.to_dict() for f in fills]


def _heatmap_html(matrix, labels, title: str) -> str:
    """An HTML table heatmap: the browser draws the Chinese labels with its own fonts
    (matplotlib here has no CJK font and would print boxes)."""
    import html

    top = float(matrix.max()) or 1.0
    # cells shrink with the token count so the whole map, [SEP] column included, fits a 1,400 px
    # window (122 tokens: 8 px cells); the column labels shrink with them
    cell = max(6, min(14, 1000 // max(len(labels), 1)))
    font = f"font-size:{max(6, min(12, cell))}px;line-height:{cell}px;padding:0"
    head = "".join(f"<th style='writing-mode:vertical-rl;font-weight:normal;{font}'>{html.escape(l)}</th>" for l in labels)
    rows = []
    for label, row in zip(labels, matrix.tolist()):
        style = f"width:{cell}px;height:{cell}px;padding:0"
        cells = "".join(f"<td title='{v:.3f}' style='{style};background:rgba(37,99,235,{v / top:.3f})'></td>" for v in row)
        rows.append(f"<tr><th style='text-align:right;font-weight:normal;{font}'>{html.escape(label)}</th>{cells}</tr>")
    return (
        f"<div class='zhbert-attention' style='max-width:100%;overflow-x:auto'><b>{html.escape(title)}</b> "
        f"(row: attending token, column: attended token)<table style='border-collapse:collapse;table-layout:fixed'>"
        f"<tr><th></th>{head}</tr>{''.join(rows)}</table></div>"
    )


def attention(pred, text, layer, head):
    """Heatmap of one head's attention (character by character) and a per-layer summary."""
    import torch

    text = _check(text)[:120]
    enc = encode(pred.tokenizer, text)
    if not enc.ids:
        raise gr.Error("nothing to show: the text has no characters the model reads")
    model = pred.model
    model.set_attn_implementation("eager")  # sdpa returns no attention weights
    tok = pred.tokenizer
    batch = window_batch([enc.ids], tok.cls_token_id, tok.sep_token_id, tok.pad_token_id)
    with torch.no_grad():
        att = model.base_model(**batch, output_attentions=True).attentions  # L x (1, H, T, T)
    layer = min(int(layer), len(att)) - 1
    head = min(int(head), att[0].size(1)) - 1
    labels = ["[CLS]", *enc.tokens, "[SEP]"]
    heatmap = _heatmap_html(att[layer][0, head], labels, f"layer {layer + 1}, head {head + 1}")
    # per layer: mean attention entropy (broad vs focused) and share of attention on [CLS]/[SEP]
    rows = []
    for k, a in enumerate(att):
        a = a[0]
        entropy = float(-(a * (a + 1e-12).log()).sum(-1).mean())
        special = float((a[..., 0] + a[..., -1]).mean())
        rows.append([k + 1, round(entropy, 3), round(special, 3)])
    return heatmap, rows


def _missing(loaded, task) -> bool:
    """Explain a missing model in place of its tab's widgets; True when it is missing."""
    if isinstance(loaded[task], Exception):
        gr.Markdown(f"**This tab needs the `{task}` model:** {loaded[task]}")
        return True
    return False


def _text_tab(loaded, task, title, input_label, example_key, outputs, button, fn, api_name, dictionary: str | None = None):
    """A tab with one text box in (and a user-dictionary box, when ``dictionary`` labels it):
    its model's outputs, a button, real examples; or, when the model is missing, the reason and how to make it."""
    with gr.Tab(title):
        if _missing(loaded, task):
            return
        pred = loaded[task]
        inp = gr.Textbox(label=input_label, value=EXAMPLES[example_key][0])
        if dictionary:
            words = gr.Textbox(label=dictionary, value="", lines=2, elem_id=f"{api_name}-dict")
        run = gr.Button(button)  # read top-down: input, button, then what it gives
        outs = outputs()
        if dictionary:
            run.click(lambda t, w: fn(pred, t, w), [inp, words], outs, api_name=api_name)
        else:
            run.click(lambda t: fn(pred, t), inp, outs, api_name=api_name)
        gr.Examples([[e] for e in EXAMPLES[example_key]], inp)


def build_demo(models: dict[str, str] | None = None) -> gr.Blocks:
    loaded = _load_all(models)
    if not isinstance(loaded["cws"], Exception) and not isinstance(loaded["ner"], Exception):
        loaded["cws"].name_finder = loaded["ner"]  # the segmentation tab keeps person names whole
    with gr.Blocks(title="zhbert") as demo:
        gr.Markdown("# zhbert\nChinese BERT: segmentation, part of speech, Weibo post tagging, NER, matching, fill-mask and attention.")
        _text_tab(
            loaded,
            "cws",
            "Segmentation",
            "Text",
            "cws",
            lambda: [
                gr.Textbox(label="Words (person names whole; the PKU standard splits surname and given name)", elem_id="segment-output"),
                gr.JSON(label="Spans"),
            ],
            "Segment",
            segment,
            "segment",
            dictionary="User dictionary: words always kept whole, one per line (e.g. 北京大学)",
        )
        _text_tab(
            loaded,
            "pos",
            "POS",
            "Text",
            "pos",
            lambda: [gr.HighlightedText(label="Words and their part of speech (PKU tagset)", elem_id="pos-output"), gr.JSON(label="Spans")],
            "Tag words",
            pos_tags,
            "pos",
            dictionary="User dictionary: words always kept whole, one per line (e.g. 石墨烯)",
        )
        _text_tab(
            loaded,
            "ner",
            "NER",
            "Text",
            "ner",
            lambda: [gr.HighlightedText(label="Entities", elem_id="ner-output"), gr.JSON(label="Spans")],
            "Find entities",
            entities,
            "ner",
            dictionary="User dictionary: entities always found, one per line as word TYPE (e.g. 华为 ORG)",
        )
        _text_tab(
            loaded,
            "tagging",
            "Weibo tagging",
            "Post",
            "tagging",
            lambda: gr.Label(label="Emotion", num_top_classes=6, elem_id="tagging-output"),
            "Tag",
            tag_post,
            "tagging",
        )
        with gr.Tab("Matching"):
            if not _missing(loaded, "matching"):
                a = gr.Textbox(label="Sentence A", value=EXAMPLES["matching"][0][0])
                b = gr.Textbox(label="Sentence B", value=EXAMPLES["matching"][0][1])
                labels = loaded["matching"].head.labels
                if loaded["matching"].head.regression:
                    gr.Markdown("A similarity score, on the scale of the scores this model was trained on: higher, closer in meaning.")
                else:
                    gr.Markdown(
                        f"Labels: {', '.join(f'`{l}`' for l in labels)}. "
                        + (
                            "This model was trained on OCNLI (natural-language inference): does sentence A (the premise) "
                            "entail sentence B, leave it open (neutral), or contradict it?"
                            if "entailment" in labels
                            else "`paraphrase`: the two sentences mean the same (questions with the same intent); `different`: they "
                            "do not. The bundled model was trained on LCQMC, BQ, AFQMC and PAWS-X pairs (its model card gives its scores)."
                            if "paraphrase" in labels
                            else "1 = the two sentences mean the same (a paraphrase), 0 = they do not."
                        )
                    )
                compare = gr.Button("Compare")
                if loaded["matching"].head.regression:
                    out = gr.Number(label="Similarity score", elem_id="matching-output")
                else:
                    out = gr.Label(label="Relation (every label's probability)", elem_id="matching-output")
                compare.click(lambda x, y: match(loaded["matching"], x, y), [a, b], out, api_name="matching")
                gr.Examples(EXAMPLES["matching"], [a, b])
        _text_tab(
            loaded,
            "base",
            "Fill-mask",
            "Text with [MASK]",
            "fill",
            lambda: [gr.Textbox(label="Filled", elem_id="fill_mask-output"), gr.JSON(label="Candidates")],
            "Fill",
            fill,
            "fill_mask",
        )
        with gr.Tab("Attention"):
            if not _missing(loaded, "base"):
                cfg = loaded["base"].model.config
                inp = gr.Textbox(label="Text", value=EXAMPLES["ner"][0])
                layer = gr.Slider(1, cfg.num_hidden_layers, value=cfg.num_hidden_layers, step=1, label="Layer")
                head = gr.Slider(1, cfg.num_attention_heads, value=1, step=1, label="Head")
                show = gr.Button("Show")
                plot = gr.HTML(label="Attention", elem_id="attention-output")
                table = gr.Dataframe(headers=["layer", "mean entropy", "share on [CLS]/[SEP]"], label="Per layer")
                show.click(lambda t, l, h: attention(loaded["base"], t, l, h), [inp, layer, head], [plot, table], api_name="attention")
    # Two requests of one tab run side by side (Gradio's default is one at a time per event), so a
    # long request (20 masks in 5,000 characters) no longer makes a short one behind it wait for it;
    # the predictors only read their models, and torch releases the GIL.
    demo.queue(default_concurrency_limit=CONCURRENT_REQUESTS)
    return demo


def main(host: str = "127.0.0.1", port: int = 7860, models: dict[str, str] | None = None) -> None:
    build_demo(models).launch(server_name=host, server_port=port)
