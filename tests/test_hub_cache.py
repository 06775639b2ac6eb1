"""A Hugging Face model id resolves in the local Hugging Face cache, laid out as huggingface_hub lays it out
(models--org--name/snapshots/REV, refs/main), with HF_HUB_OFFLINE honoured; nothing is downloaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


@pytest.fixture
def hub_cache(tmp_path, tiny_encoder):
    """A cache holding `someone/tiny-zh-bert`: the tiny encoder's files under a snapshot of revision main."""
    import shutil

    repo = tmp_path / "hub" / "models--someone--tiny-zh-bert"
    revision = "0123456789abcdef0123456789abcdef01234567"
    snapshot = repo / "snapshots" / revision
    shutil.copytree(tiny_encoder, snapshot)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision, encoding="utf-8")
    return tmp_path / "hub"


def _python(code, hub_cache, **env):
    env = {**os.environ, "HF_HUB_CACHE": str(hub_cache), "HF_HUB_OFFLINE": "1", **env}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)


def test_a_model_id_in_the_cache_loads(hub_cache):
    r = _python("import zhbert; m = zhbert.load('someone/tiny-zh-bert'); print(type(m).__name__, m.path)", hub_cache)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("MaskedLM ") and "models--someone--tiny-zh-bert/snapshots/" in r.stdout
    r = subprocess.run([sys.executable, "-m", "zhbert", "info", "someone/tiny-zh-bert"], capture_output=True, text=True,
                       env={**os.environ, "HF_HUB_CACHE": str(hub_cache), "HF_HUB_OFFLINE": "1"}, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    assert "models--someone--tiny-zh-bert/snapshots/" in json.loads(r.stdout)["path"]


def test_a_model_id_missing_offline_is_one_clear_error(hub_cache):
    code = "import zhbert\ntry:\n    zhbert.load('someone/not-there')\nexcept Exception as e:\n    print(type(e).__name__, e)"
    r = _python(code, hub_cache)
    assert "ModelLoadError 'someone/not-there': not a bundled model" in r.stdout, r.stdout + r.stderr[-2000:]
    assert "HF_HUB_OFFLINE is set, so it is not downloaded" in r.stdout and str(hub_cache) in r.stdout
    code = "import zhbert\ntry:\n    zhbert.load('someone/not-there', local_files_only=True)\nexcept Exception as e:\n    print(e)"
    r = _python(code, hub_cache, HF_HUB_OFFLINE="0")
    assert "local_files_only=True, so it is not downloaded" in r.stdout, r.stdout + r.stderr[-2000:]


def test_a_bundled_name_and_a_local_folder_win_over_the_cache(hub_cache, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "someone").mkdir()  # a relative folder that exists is a folder, not a model id
    r = _python("import zhbert\ntry:\n    zhbert.load('someone')\nexcept Exception as e:\n    print(e)", hub_cache)
    assert "someone: not a model folder (config.json is missing)" in r.stdout, r.stdout + r.stderr[-1000:]


def test_a_models_cache_folder_given_as_a_folder_names_its_id_and_snapshot(hub_cache):
    """The cache's ``models--someone--tiny-zh-bert`` folder given as the model, as a file browser shows it:
    "config.json is missing" before; now its id (and the cache it is found in) and its snapshot folder,
    and each of those loads."""
    repo = hub_cache / "models--someone--tiny-zh-bert"
    snapshot = next((repo / "snapshots").iterdir())
    code = f"import zhbert\ntry:\n    zhbert.load({str(repo)!r})\nexcept Exception as e:\n    print(e)"
    r = _python(code, hub_cache)
    said = f"{repo}: a model's folder in the Hugging Face cache, not a model folder: "
    said += f"give its id, someone/tiny-zh-bert, or its snapshot folder {snapshot}"
    assert said in r.stdout, r.stdout + r.stderr[-2000:]
    r = _python(code, hub_cache, HF_HUB_CACHE=str(hub_cache.parent))  # another cache in use: the one to name
    assert f"give its id, someone/tiny-zh-bert with HF_HUB_CACHE={hub_cache}, or" in r.stdout, r.stdout + r.stderr[-2000:]
    r = _python(f"import zhbert; print(type(zhbert.load({str(snapshot)!r})).__name__)", hub_cache)
    assert r.stdout.strip() == "MaskedLM", r.stderr[-2000:]
