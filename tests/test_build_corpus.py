"""corpora/build_corpus.py: the folder it writes is a corpus `zhbert pretrain --corpus` and `prepare-corpus` read whole."""

from __future__ import annotations

import json

import pytest

from zhbert.data import read_corpus


def _build(module, out, texts):
    """The script's own writer and manifest on a few real sentences (the full build reads every dataset: a minute)."""
    module.check_manifest_free(out)
    writer = module.Writer(out)
    writer.write("shared/peoples_daily", texts, keys=set())
    return module.write_manifest(out, {"evaluation_keys": 0, "sources": writer.stats})


def test_the_built_folder_reads_as_its_documents_and_no_more(repo_script, pd_sentences, tmp_path):
    module = repo_script("corpora/build_corpus.py")
    texts = pd_sentences[:20]
    out = tmp_path / "corpus"
    manifest = _build(module, out, texts)
    # the manifest sits beside the folder: inside, its pretty-printed JSON was read as a corpus file and refused
    # ("manifest.json:1: not a JSON object on one line"), which stopped every pretraining script on a fresh machine
    assert (
        manifest.parent == out.parent
        and json.loads(manifest.read_text(encoding="utf-8"))["sources"]["shared/peoples_daily"]["documents"] == 20
    )
    assert read_corpus(out)["text"] == [" ".join(t.split()) for t in texts]


def test_a_file_of_the_users_at_the_manifests_path_is_never_overwritten(repo_script, tmp_path):
    module = repo_script("corpora/build_corpus.py")
    out = tmp_path / "corpus"
    notes = tmp_path / "corpus.manifest.json"
    notes.write_text('{"my": "notes"}\n', encoding="utf-8")
    with pytest.raises(SystemExit, match="corpus.manifest.json: exists and is not a corpus manifest"):
        module.check_manifest_free(out)
    assert notes.read_text(encoding="utf-8") == '{"my": "notes"}\n' and not out.exists()
    notes.write_text(json.dumps({"evaluation_keys": 3}), encoding="utf-8")  # an earlier build's: rebuilt over
    module.check_manifest_free(out)
