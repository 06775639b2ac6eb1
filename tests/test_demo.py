"""The Gradio demo on tiny models: every endpoint through gradio_client."""
import importlib.util
from pathlib import Path

import pytest

from zhbert.data.peoples_daily import NER_LABELS
from zhbert.heads import HeadConfig, new_head, save_head

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def app(tiny_encoder, tokenizer, tmp_path_factory):
    root = tmp_path_factory.mktemp("demo_models")
    heads = {
        "cws": HeadConfig(task="token", labels=["B", "M", "E", "S"], scheme="BMES-untyped", window=64),
        "ner": HeadConfig(task="token", labels=NER_LABELS, scheme="BIO", window=64),
        "tagging": HeadConfig(task="sequence", labels=["neutral", "angry", "happy", "sad", "fear", "surprise"], window=64),
        "matching": HeadConfig(task="pair", labels=["0", "1"], window=64),
    }
    models = {k: str(save_head(new_head(tiny_encoder, h), tokenizer, root / k)) for k, h in heads.items()}
    models["base"] = str(tiny_encoder)
    spec = importlib.util.spec_from_file_location("zhbert_demo_app", ROOT / "demo" / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    demo = module.build_demo(models)
    demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=None)
    yield module, demo
    demo.close()


def test_every_endpoint_with_gradio_client(app):
    from gradio_client import Client

    module, demo = app
    client = Client(demo.local_url, verbose=False)
    text = "国务院总理李鹏在人民大会堂会见了日本首相桥本龙太郎。"
    words, spans = client.predict(text, api_name="/segment")
    assert words.replace(" / ", "") == text and all(text[s["start"] : s["end"]] == s["text"] for s in spans)
    highlighted, ents = client.predict(text, api_name="/ner")
    assert all(text[e["start"] : e["end"]] == e["text"] for e in ents)
    label = client.predict("今天心情特别好😀", api_name="/tagging")
    assert label["label"] in ("neutral", "angry", "happy", "sad", "fear", "surprise")
    rel = client.predict("花呗怎么还款", "花呗如何还钱", api_name="/matching")
    assert rel["label"] in ("0", "1")
    filled, cands = client.predict("中国的首都是[MASK][MASK]。", api_name="/fill_mask")
    assert len(cands) == 2 and filled.startswith("中国的首都是") and "[MASK]" not in filled
    heatmap, table = client.predict(text, 2, 1, api_name="/attention")
    assert len(table["data"]) == 4  # one row per layer of the tiny encoder
    assert "layer 2, head 1" in heatmap and "李" in heatmap and heatmap.count("<tr>") == len(text) + 3
    with pytest.raises(Exception, match="up to 5,000 characters"):
        client.predict("长" * 6000, api_name="/tagging")
