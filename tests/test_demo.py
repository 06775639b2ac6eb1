"""The Gradio demo on tiny models: every endpoint through gradio_client."""

import os
import re
from pathlib import Path

import pytest

from zhbert.data.peoples_daily import NER_LABELS
from zhbert.heads import HeadConfig, new_head, save_head

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def app(tiny_encoder, tokenizer, tmp_path_factory):
    root = tmp_path_factory.mktemp("demo_models")
    heads = {
        "cws": HeadConfig(kind="token", labels=["B", "M", "E", "S"], scheme="BMES-untyped", window=64),
        "ner": HeadConfig(kind="token", labels=NER_LABELS, scheme="BIO", window=64),
        "tagging": HeadConfig(kind="sequence", labels=["neutral", "angry", "happy", "sad", "fear", "surprise"], window=64),
        "matching": HeadConfig(kind="pair", labels=["0", "1"], window=64),
    }
    models = {k: str(save_head(new_head(tiny_encoder, h), tokenizer, root / k)) for k, h in heads.items()}
    models["base"] = str(tiny_encoder)
    import zhbert.demo as module

    demo = module.build_demo(models)
    demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=None)
    yield module, demo
    demo.close()


def test_every_endpoint_with_gradio_client(app):
    from gradio_client import Client

    module, demo = app
    client = Client(demo.local_url, verbose=False)
    text = "国务院总理李鹏在人民大会堂会见了日本首相桥本龙太郎。"
    words, spans = client.predict(text, "", api_name="/segment")
    assert words.replace(" / ", "") == text and all(text[s["start"] : s["end"]] == s["text"] for s in spans)
    assert "人民大会堂" not in words.split(" / ")
    forced, _ = client.predict(text, "人民大会堂\n", api_name="/segment")  # the user-dictionary box
    assert "人民大会堂" in forced.split(" / ")
    tagged, spans = client.predict(text, "人民大会堂\n", api_name="/pos")  # the bundled pos, with the dictionary box
    assert "".join(w["text"] for w in spans) == text and {"人民大会堂", "会见"} <= {w["text"] for w in spans}
    assert {(w["text"], w["label"]) for w in spans} >= {("会见", "v"), ("。", "w")}
    highlighted, ents = client.predict(text, "", api_name="/ner")
    assert all(text[e["start"] : e["end"]] == e["text"] for e in ents)
    _, ents = client.predict(text, "人民大会堂 LOC", api_name="/ner")
    assert {"text": "人民大会堂", "label": "LOC"}.items() <= next(e for e in ents if e["text"] == "人民大会堂").items()
    label = client.predict("今天心情特别好😀", api_name="/tagging")
    assert label["label"] in ("neutral", "angry", "happy", "sad", "fear", "surprise")
    rel = client.predict("花呗怎么还款", "花呗如何还钱", api_name="/matching")
    assert rel["label"] in ("0", "1")
    assert {c["label"] for c in rel["confidences"]} == {"0", "1"}  # every label's probability is shown
    filled, cands = client.predict("中国的首都是[MASK][MASK]。", api_name="/fill_mask")
    assert len(cands) == 2 and filled.startswith("中国的首都是") and "[MASK]" not in filled
    heatmap, table = client.predict(text, 2, 1, api_name="/attention")
    assert len(table["data"]) == 4  # one row per layer of the tiny encoder
    assert "layer 2, head 1" in heatmap and "李" in heatmap and heatmap.count("<tr>") == len(text) + 3
    with pytest.raises(Exception, match="up to 5,000 characters"):
        client.predict("长" * 6000, api_name="/tagging")


CHROMIUM = "/usr/bin/chromium"  # Debian's package: Playwright's own browser download does not work offline
ARTIFACTS = Path(os.environ.get("ZHBERT_TEST_ARTIFACTS", ROOT / "test-artifacts")) / "demo"


def _chars(text: str, sep: str = "") -> "re.Pattern":
    return re.compile("^" + sep.join(re.escape(c) for c in text) + "$")


def test_every_tab_in_headless_chromium(app):
    """In each tab: click the second example, submit it, wait until the tab's output
    shows a result for *that* example (not the preset one), save a screenshot."""
    from playwright.sync_api import expect, sync_playwright

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: `make test` installs Debian's chromium package"
    module, demo = app
    ex = module.EXAMPLES
    labels = "|".join(["neutral", "angry", "happy", "sad", "fear", "surprise"])
    # tab, example button text, submit button, output element, what the output must show
    tabs = [
        ("Segmentation", ex["cws"][1], "Segment", "#segment-output textarea", ("value", _chars(ex["cws"][1], "(?: / )?"))),
        ("POS", ex["pos"][1], "Tag words", "#pos-output", ("text", re.compile(r"研發\s*v"))),
        ("NER", ex["ner"][1], "Find entities", "#ner-output", ("text", re.compile(r"\s*(?:[A-Z]+)?\s*".join(ex["ner"][1][:6])))),
        ("Weibo tagging", ex["tagging"][1], "Tag", "#tagging-output", ("text", re.compile(labels))),
        ("Matching", ex["matching"][1][0], "Compare", "#matching-output", ("text", re.compile(r"\b[01]\b"))),
        ("Fill-mask", ex["fill"][1], "Fill", "#fill_mask-output textarea", ("value", re.compile(r"^我们明天去北[^\[\]]大学参加会议。$"))),
        ("Attention", ex["ner"][1], "Show", "#attention-output", ("text", "layer 4, head 1")),
    ]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(demo.local_url)
        for tab, example, button, output, (kind, expected) in tabs:
            page.get_by_role("tab", name=tab, exact=True).click()
            panel = page.get_by_role("tabpanel").filter(visible=True)
            if tab == "Attention":  # no examples: type the text
                panel.get_by_label("Text").fill(example)
            else:
                panel.get_by_text(example, exact=True).first.click()
            # the example reaches the input box through the server: submit only once it is there
            expect(panel.locator("textarea").first).to_have_value(example, timeout=30_000)
            panel.get_by_role("button", name=button, exact=True).click()
            out = page.locator(output)
            if kind == "value":
                expect(out).to_have_value(expected, timeout=30_000)
            else:
                expect(out).to_contain_text(expected, timeout=30_000)
            # read top-down: the button sits between its input and its output
            assert panel.get_by_role("button", name=button, exact=True).bounding_box()["y"] < out.bounding_box()["y"], tab
            shot = ARTIFACTS / f"{tab.lower().replace(' ', '-')}.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 5_000
        browser.close()


def test_one_request_cannot_hold_fill_mask(app):
    """500 masks once held the tab for 94 s: more than MAX_MASKS is refused at once, with the reason."""
    import gradio as gr

    module, _ = app
    with pytest.raises(gr.Error, match="up to 20"):
        module.fill(None, "北[MASK]" * 21)  # refused before any model runs


def test_a_short_request_does_not_wait_for_a_long_one():
    """A 20-mask request over 5,000 characters once held fill-mask while a normal request sent
    after it waited: now a second request of the same tab runs beside it and finishes first
    (the bundled base, where the long request takes seconds)."""
    import time

    from gradio_client import Client

    import zhbert.demo as module
    from zhbert.models_registry import bundled_path

    demo = module.build_demo({"base": str(bundled_path("base"))})
    demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=None)
    try:
        client = Client(demo.local_url, verbose=False)
        segment = ("北京大学的学生在图书馆读书。" * 17)[:230]
        long_text = "".join(segment[:100] + "[MASK]" + segment[100:] for _ in range(20))
        assert long_text.count("[MASK]") == 20 and len(long_text) <= 5000
        start = time.perf_counter()
        slow = client.submit(long_text, api_name="/fill_mask")
        time.sleep(0.3)
        fast = client.submit("我们明天去北[MASK]大学参加会议。", api_name="/fill_mask")
        finished = {}
        while len(finished) < 2 and time.perf_counter() - start < 300:
            for name, job in (("fast", fast), ("slow", slow)):
                if name not in finished and job.done():
                    finished[name] = time.perf_counter() - start
            time.sleep(0.02)
        assert fast.status().success and slow.status().success
        assert finished["slow"] > 0.4, finished  # the long request is long enough to hold a queue (0.9-1.4 s here)
        assert finished["fast"] < finished["slow"], finished  # and the short one did not wait for it
    finally:
        demo.close()


def test_attention_of_the_longest_text_fits_1400px():
    """The attention tab reads up to 120 characters: on the bundled base, the whole map, [SEP]
    column included, fits a 1,400 px window (it used to run 1,700 px wide and cut [SEP] off)."""
    from playwright.sync_api import expect, sync_playwright

    import zhbert.demo as module
    from zhbert.models_registry import bundled_path

    demo = module.build_demo({"base": str(bundled_path("base"))})
    demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=None)
    text = ("北京大学的学生在图书馆读书。" * 9)[:120]
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(demo.local_url)
            page.get_by_role("tab", name="Attention", exact=True).click()
            panel = page.get_by_role("tabpanel").filter(visible=True)
            panel.get_by_label("Text").fill(text)
            panel.get_by_role("button", name="Show", exact=True).click()
            header = page.locator("#attention-output tr").first.locator("th")
            expect(header).to_have_count(1 + 122, timeout=60_000)  # the row-label corner, [CLS], 120 characters, [SEP]
            box = header.last.bounding_box()
            assert header.last.inner_text().strip() == "[SEP]" and box["x"] + box["width"] <= 1400, box
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "attention-120-characters.png"), full_page=True)
            browser.close()
    finally:
        demo.close()


def test_the_demo_command_shows_your_models_in_their_tabs(tiny_encoder, tokenizer, tmp_path, monkeypatch):
    """`zhbert demo --model TAB=FOLDER`: a model of the user's in its tab (the Python build_demo took
    folders; the command served only the bundled models). A folder of another kind is refused by name."""
    from typer.testing import CliRunner

    import zhbert.demo as module
    from zhbert.cli import app as cli

    heads = {
        "ner": HeadConfig(kind="token", labels=NER_LABELS, scheme="BIO", window=64),
        "tagging": HeadConfig(kind="sequence", labels=["neutral", "angry"], window=64),
    }
    folders = {k: str(save_head(new_head(tiny_encoder, h), tokenizer, tmp_path / k)) for k, h in heads.items()}
    launched = {}
    monkeypatch.setattr(module, "main", lambda host, port, models=None: launched.update(host=host, port=port, models=models))
    runner = CliRunner()
    r = runner.invoke(cli, ["demo", "--model", f"ner={folders['ner']}", "--model", f"tagging={folders['tagging']}", "--port", "7999"])
    assert r.exit_code == 0, r.output
    assert launched == {"host": "127.0.0.1", "port": 7999, "models": {"ner": folders["ner"], "tagging": folders["tagging"]}}
    r = runner.invoke(cli, ["demo", "--model", f"ner={folders['tagging']}"])
    assert r.exit_code == 1 and "loads as Classifier; the ner tab takes what loads as EntityRecognizer" in r.output
    r = runner.invoke(cli, ["demo", "--model", "sentiment=x"])
    assert r.exit_code == 2 and "expected TAB=FOLDER, TAB one of cws, pos, ner, tagging, matching, base" in r.output


def test_a_similarity_model_shows_its_score(tiny_encoder, tokenizer, tmp_path):
    """A matching model trained on similarity scores (regression): the tab shows the score as a number. Before, a
    probability bar of one label, 'score', and the paraphrase legend '1 = the same, 0 = not'."""
    from gradio_client import Client

    import zhbert
    import zhbert.demo as module

    folder = save_head(
        new_head(tiny_encoder, HeadConfig(kind="pair", labels=["score"], regression=True, window=64)), tokenizer, tmp_path / "sts"
    )
    demo = module.build_demo({**{task: str(tmp_path / "none") for task in module.TASKS}, "matching": str(folder)})
    demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=None)
    try:
        score = Client(demo.local_url, verbose=False).predict("花呗怎么还款", "花呗如何还钱", api_name="/matching")
    finally:
        demo.close()
    expected = zhbert.load(str(folder))(("花呗怎么还款", "花呗如何还钱")).score
    assert isinstance(score, float) and score == pytest.approx(expected, abs=1e-5)
