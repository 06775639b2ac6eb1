"""One token head for several annotation standards (zhbert/heads/criteria.py): each sentence's
standard is its segment id, chosen per text at prediction time."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
BMES = dict(kind="token", labels=["B", "M", "E", "S"], scheme="BMES-untyped", window=64)


@pytest.fixture(scope="module")
def sentences():
    """Real PKU test sentences and NLPCC-2016 Weibo posts, with their standards."""
    from zhbert.data.tasks import load_task_data

    data = load_task_data("cws", "news+weibo")
    return data.test[:6] + data.extra_test[:6]


def _type_table(model):
    return model.bert.embeddings.token_type_embeddings.weight.detach()


def test_a_new_criterion_starts_from_the_models_answers_then_tags_by_its_own_row(tiny_encoder, tokenizer, sentences, tmp_path, repo_script):
    from zhbert.heads import HeadConfig, char_spans, load_head, new_head, predict_tags, save_head

    model = new_head(tiny_encoder, HeadConfig(**BMES, crf=True, criteria=["pku", "weibo", "ctb"])).eval()
    table = _type_table(model)
    # a third standard widens BERT's two-row segment table; every new row is row 0, the one the encoder read single texts with
    assert model.config.type_vocab_size == 3 and table.shape[0] == 3
    assert torch.equal(table[1], table[0]) and torch.equal(table[2], table[0])
    texts = [r["text"] for r in sentences]
    plain = predict_tags(model, tokenizer, texts)
    assert [p.tags for p in predict_tags(model, tokenizer, texts, criterion="weibo")] == [p.tags for p in plain]

    with torch.no_grad():  # as training moves the Weibo row away from the news row
        model.bert.embeddings.token_type_embeddings.weight[1] += 3 * torch.randn(table.shape[1], generator=torch.Generator().manual_seed(0))
    weibo = predict_tags(model, tokenizer, texts, criterion="weibo")
    assert [p.tags for p in weibo] != [p.tags for p in plain]
    # one batch of mixed standards answers as each text alone under its own standard
    mixed = predict_tags(model, tokenizer, texts, criterion=[r["criterion"] for r in sentences])
    alone = [predict_tags(model, tokenizer, [r["text"]], criterion=r["criterion"])[0] for r in sentences]
    assert [p.tags for p in mixed] == [p.tags for p in alone]
    assert [p.tags for p in mixed[6:]] == [p.tags for p in weibo[6:]] and [p.tags for p in mixed[:6]] == [p.tags for p in plain[:6]]

    folder = tmp_path / "model"
    save_head(model, tokenizer, folder)
    assert json.loads((folder / "config.json").read_text())["zhbert_head"]["criteria"] == ["pku", "weibo", "ctb"]
    from zhbert.model_info import describe

    assert describe(str(folder))["criteria"] == ["pku", "weibo", "ctb"]  # what `zhbert info` shows
    again = load_head(folder).eval()
    assert again.head.criteria == ["pku", "weibo", "ctb"] and torch.equal(_type_table(again), _type_table(model))

    import zhbert

    seg = zhbert.load(str(folder), criterion="weibo", web_units=False)
    assert seg.criterion == "weibo"
    words = seg(texts)
    assert [[(w.start, w.end) for w in ws] for ws in words] == [[(s, e) for _, s, e in char_spans(p, "BMES-untyped")] for p in weibo]
    assert all("".join(w.text for w in ws) == t.replace(" ", "") for ws, t in zip(words, texts))
    assert [p.tags for p in seg.tags(texts)] == [p.tags for p in weibo]

    # silver text for a student: the teacher's cuts under the standard asked for, not its default
    silver = repo_script("corpora/silver_segmentation.py")
    assert [[w for w, _ in ws] for ws in silver.scored_words(seg, texts)] == [[w.text for w in ws] for ws in words]
    cmd = [sys.executable, str(ROOT / "corpora" / "silver_segmentation.py"), "--teacher", str(folder), "--chars", "1500"]
    files = {}
    for standard in ("pku", "weibo"):
        files[standard] = tmp_path / f"silver-{standard}.txt"
        r = subprocess.run([*cmd, "--criterion", standard, "--output", str(files[standard])], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-2000:]
    pku, weibo_lines = (files[s].read_text(encoding="utf-8").splitlines() for s in ("pku", "weibo"))
    assert len(pku) == len(weibo_lines) > 5 and [x.replace(" ", "") for x in pku] == [x.replace(" ", "") for x in weibo_lines]
    assert pku != weibo_lines


def test_a_blended_reading_between_the_standards_becomes_the_default(tiny_encoder, tokenizer, sentences, tmp_path):
    """`zhbert export --blend-criteria NAME`: NAME's segment row is the mean of the trained standards'
    rows, criterion=None reads it, and each trained standard still reads by its own row."""
    from zhbert.export import export_model
    from zhbert.heads import HeadConfig, load_head, new_head, predict_tags, save_head
    from zhbert.model_info import describe

    model = new_head(tiny_encoder, HeadConfig(**BMES, crf=True, criteria=["pku", "weibo"])).eval()
    with torch.no_grad():  # two standards that training has moved apart
        model.bert.embeddings.token_type_embeddings.weight[1] += 3 * torch.randn(
            model.config.hidden_size, generator=torch.Generator().manual_seed(0)
        )
    folder, blended_folder = tmp_path / "model", tmp_path / "blended"
    save_head(model, tokenizer, folder)
    cmd = [sys.executable, "-m", "zhbert", "export", str(folder), str(blended_folder), "--no-fp16", "--blend-criteria", "mixed"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    blended = load_head(blended_folder).eval()
    old, table = _type_table(model), _type_table(blended)
    assert blended.head.criteria == ["pku", "weibo", "mixed"] and blended.head.default_criterion == "mixed"
    assert blended.config.type_vocab_size == 3 and torch.equal(table[:2], old) and torch.allclose(table[2], old.mean(0))
    assert describe(str(blended_folder))["default_criterion"] == "mixed"  # what `zhbert info` shows

    def tags(preds):
        return [p.tags for p in preds]

    texts = [r["text"] for r in sentences]
    default = tags(predict_tags(blended, tokenizer, texts))
    assert default == tags(predict_tags(blended, tokenizer, texts, criterion="mixed"))
    for standard in ("pku", "weibo"):
        assert tags(predict_tags(blended, tokenizer, texts, criterion=standard)) == tags(
            predict_tags(model, tokenizer, texts, criterion=standard)
        )
    assert default != tags(predict_tags(model, tokenizer, texts, criterion="pku"))
    with torch.no_grad():  # the oracle: the unblended model with its first row set to the mean by hand
        model.bert.embeddings.token_type_embeddings.weight[0] = old.mean(0)
    assert default == tags(predict_tags(model, tokenizer, texts))

    import zhbert

    seg = zhbert.load(str(blended_folder), web_units=False)
    assert seg.criterion is None and [p.tags for p in seg.tags(texts)] == default

    with pytest.raises(ValueError, match="criterion 'pku' is one of this model's already: pku, weibo"):
        export_model(folder, tmp_path / "again", blend_criteria="pku")
    one = tmp_path / "one"
    save_head(new_head(tiny_encoder, HeadConfig(**BMES)), tokenizer, one)
    with pytest.raises(ValueError, match="this model has no criteria"):
        export_model(one, tmp_path / "one-blended", blend_criteria="mixed")
    assert not (tmp_path / "again").exists() and not (tmp_path / "one-blended").exists()
    with pytest.raises(ValueError, match="default_criterion 'mixed' is not one of the head's criteria: pku, weibo"):
        HeadConfig(**BMES, criteria=["pku", "weibo"], default_criterion="mixed")


def test_criteria_are_refused_where_they_cannot_work(tiny_encoder, tokenizer):
    from zhbert.heads import HeadConfig, new_head, predict_tags
    from zhbert.heads.criteria import add_criteria

    with pytest.raises(ValueError, match="token heads only, not a sequence head"):
        HeadConfig(kind="sequence", labels=["a", "b"], criteria=["pku", "weibo"])
    with pytest.raises(ValueError, match="criteria repeat"):
        HeadConfig(**BMES, criteria=["pku", "pku"])
    with pytest.raises(ValueError, match="without spaces or commas, got 'pku weibo'"):
        HeadConfig(**BMES, criteria=["pku weibo"])
    with pytest.raises(ValueError, match="frozen encoder never updates"):
        HeadConfig(**BMES, criteria=["pku", "weibo"], mode="frozen")

    model = new_head(tiny_encoder, HeadConfig(**BMES, criteria=["pku", "weibo"]))
    with pytest.raises(ValueError, match="must list them first, in that order"):
        add_criteria(model, ["weibo", "pku"], trained=["pku", "weibo"])
    with pytest.raises(ValueError, match="text 1: criterion 'ctb' is not one of this model's: pku, weibo"):
        predict_tags(model, tokenizer, ["迈向充满希望的新世纪", "新年好"], criterion=["pku", "ctb"])
    with pytest.raises(ValueError, match="2 criteria for 1 texts"):
        predict_tags(model, tokenizer, ["迈向充满希望的新世纪"], criterion=["pku", "weibo"])
    one = new_head(tiny_encoder, HeadConfig(**BMES))
    with pytest.raises(ValueError, match="trained on one standard"):
        predict_tags(one, tokenizer, ["迈向充满希望的新世纪"], criterion="weibo")

    import zhbert

    with pytest.raises(ValueError, match="criterion 'weibo': .*cws was trained on one annotation standard"):
        zhbert.load("cws", criterion="weibo")
    with pytest.raises(ValueError, match="criterion applies to segmentation and NER models"):
        zhbert.load("base", criterion="weibo")
    with pytest.raises(ValueError, match="tags applies to segmentation and NER models; .*tagging is a sequence head"):
        zhbert.load("tagging").tags(["新年好"])


def test_each_training_sentence_carries_its_standard_as_its_segment_id(tiny_encoder, tokenizer, tmp_path):
    """news+weibo rows name their standard; the examples and the collator's batches carry it as
    the segment id of every position; a sentence that names none is refused, not trained as the default."""
    from zhbert.heads import HeadConfig, TaskCollator
    from zhbert.recipes.arguments import RecipeArguments
    from zhbert.recipes.common import char_tag_examples, load_splits

    silver = tmp_path / "weibo.txt"
    silver.write_text("今天 天气 真 好 ！\n转发 微博\n", encoding="utf-8")
    data = load_splits(RecipeArguments(dataset="news+weibo", extra_train=str(silver), extra_train_criterion="weibo"), "cws")
    assert {r["criterion"] for r in data.train[:1000]} == {"pku"} and [r["criterion"] for r in data.train[-2:]] == ["weibo", "weibo"]
    assert {r["criterion"] for r in data.test} == {"pku"} and {r["criterion"] for r in data.extra_test} == {"weibo"}
    assert data.notes[-1].endswith("standard weibo")
    rows = data.train[:3] + data.train[-2:]
    examples = char_tag_examples(tokenizer, rows, data.labels, data.scheme, ["pku", "weibo"])
    assert [e["criterion"] for e in examples] == [0, 0, 0, 1, 1]
    head = HeadConfig(**BMES, criteria=["pku", "weibo"])
    batch = TaskCollator(tokenizer, head, 64)(examples)
    n = batch["input_ids"].shape[0]
    assert batch["token_type_ids"].shape == batch["input_ids"].shape and n == 5
    assert batch["token_type_ids"][:3].eq(0).all() and batch["token_type_ids"][3:].eq(1).all()
    assert "token_type_ids" not in TaskCollator(tokenizer, HeadConfig(**BMES), 64)(examples)

    with pytest.raises(ValueError, match="training sentence 0 .*names no annotation standard.*--extra-train-criterion"):
        char_tag_examples(tokenizer, [{k: v for k, v in r.items() if k != "criterion"} for r in rows], data.labels, data.scheme, ["pku"])
    with pytest.raises(ValueError, match="training sentence 3: criterion 'weibo' is not one of this model's: pku, ctb"):
        char_tag_examples(tokenizer, rows, data.labels, data.scheme, ["pku", "ctb"])
    with pytest.raises(ValueError, match="--extra-train-criterion names the standard of the sentences of --extra-train"):
        load_splits(RecipeArguments(dataset="news+weibo", extra_train_criterion="weibo"), "cws")


def test_cws_recipe_trains_and_scores_each_test_set_under_its_own_standard(tiny_encoder, tmp_path):
    from zhbert.data import read_peoples_daily

    silver = tmp_path / "silver.txt"  # real People's Daily sentences, given as a second standard's text
    silver.write_text("\n".join(" ".join(w) for w in read_peoples_daily()["words"][:24]) + "\n", encoding="utf-8")
    base = [sys.executable, str(ROOT / "recipes" / "cws.py"), "--preset", "tiny", "--window", "64", "--dataset", "news+weibo"]
    env = {**__import__("os").environ, "OMP_NUM_THREADS": "1"}
    train = [*base, "--encoder", str(tiny_encoder), "--crf", "--criteria", "pku,weibo", "--output-dir", str(tmp_path / "mc")]
    r = subprocess.run([*train, "--extra-train", str(silver), "--extra-train-criterion", "weibo"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "+ CRF + criteria pku,weibo |" in r.stdout
    m = json.loads((tmp_path / "mc" / "metrics.json").read_text())
    assert m["head"]["criteria"] == ["pku", "weibo"] and {"zhbert", "zhbert_extra_test"} <= set(m["metrics"])
    # scored again from the folder: each test set under its standard again, the same figures
    folder = str(tmp_path / "mc" / "model")
    again = [*base, "--evaluate-only", folder, "--output-dir", str(tmp_path / "again")]
    r2 = subprocess.run(again, capture_output=True, text=True, env=env)
    assert r2.returncode == 0, r2.stderr[-3000:]
    assert json.loads((tmp_path / "again" / "metrics.json").read_text())["metrics"] == m["metrics"]
    r3 = subprocess.run([*again, "--criteria", "pku,weibo"], capture_output=True, text=True, env=env)
    assert r3.returncode != 0 and "--criteria is a training option" in r3.stderr


def test_msra_plus_peoples_daily_names_each_standard_and_holds_out_every_msra_test_sentence(tokenizer):
    """People's Daily 1998-01 shares 169 sentences with MSRA's test set; msra+pd drops them from training
    and gives each sentence its standard (People's Daily tags organisations word by word)."""
    from zhbert.data import read_peoples_daily
    from zhbert.data.peoples_daily import overlap_key
    from zhbert.data.tasks import load_task_data
    from zhbert.recipes.common import char_tag_examples

    d = load_task_data("ner", "msra+pd")
    msra = load_task_data("ner", "msra")
    pd_rows = [r for r in d.train if r["criterion"] == "pd"]
    assert d.train[: len(msra.train)] == [{**r, "criterion": "msra"} for r in msra.train] and len(pd_rows) == len(d.train) - len(msra.train)
    assert {r["criterion"] for r in d.dev + d.test} == {"msra"} and [r["text"] for r in d.test] == [r["text"] for r in msra.test]
    held = {overlap_key(r["text"]) for r in msra.dev + msra.test + load_task_data("ner", "msra-bio").test}
    assert sum(overlap_key(t) in held for t in read_peoples_daily()["text"]) >= 169  # the corpus has them ...
    assert not any(overlap_key(r["text"]) in held for r in pd_rows)  # ... training has none
    xinhua = next(r for r in pd_rows if r["text"].startswith("新华社北京十二月三十一日电"))
    assert xinhua["tags"][:3] == ["B-ORG", "I-ORG", "I-ORG"] and xinhua["tags"][3:5] == ["B-LOC", "I-LOC"]
    examples = char_tag_examples(tokenizer, [d.train[0], xinhua], d.labels, d.scheme, ["msra", "pd"])
    assert [e["criterion"] for e in examples] == [0, 1]
