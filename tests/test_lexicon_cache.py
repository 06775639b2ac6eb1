"""The lexicon's disk cache: the same lexicon as a fresh build, never a stale or damaged one."""

from __future__ import annotations

import logging
import os
import shutil

import numpy as np
import pytest
from lexicon_checks import assert_same_lexicon
from safetensors import safe_open

from zhbert import lexicon_cache
from zhbert.dictionary import jieba_dictionary_path, read_dictionary
from zhbert.lexicon import LEXICON_TAGS, TokenLexicon, read_jieba_dict
from zhbert.lexicon_cache import cached_lexicon, shared_lexicon


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("ZHBERT_CACHE_DIR", str(folder))
    return folder / "lexicon"


@pytest.fixture
def small_dict(tmp_path):
    """Every 200th line of jieba's dictionary (words, frequencies, tags): 1,746 real entries."""
    lines = jieba_dictionary_path().read_text(encoding="utf-8").splitlines()[::200]
    path = tmp_path / "small.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class Builds:
    """A build function that counts its calls."""

    def __init__(self, path, tokenizer, buckets=512):
        self.path, self.tokenizer, self.buckets, self.calls = path, tokenizer, buckets, 0

    def __call__(self) -> TokenLexicon:
        self.calls += 1
        return TokenLexicon(read_dictionary(self.path), self.tokenizer, self.buckets)

    def cached(self) -> TokenLexicon:
        return cached_lexicon(self.path, self.tokenizer, self.buckets, LEXICON_TAGS, self)


def test_a_cached_jieba_lexicon_is_the_built_one_bit_for_bit(cache, tokenizer, pd_sentences, monkeypatch):
    import zhbert.lexicon_cache as lexicon_module

    path = jieba_dictionary_path()
    built = TokenLexicon(read_jieba_dict(path), tokenizer, 16384)
    monkeypatch.setattr(lexicon_module, "_SHARED", {})
    first = shared_lexicon("jieba", tokenizer, 16384)  # builds and writes
    (stored,) = cache.glob("lexicon-*.safetensors")
    with safe_open(str(stored), framework="numpy") as f:  # stored narrow, read back as int64
        assert f.get_slice("tokens").get_dtype() == "I16" and f.get_slice("trie.keys").get_dtype() == "I64"
    assert stored.stat().st_size < 28_000_000  # 24.9 MB; 52.0 MB with every integer array in int64
    monkeypatch.setattr(lexicon_module, "_SHARED", {})
    with monkeypatch.context() as m:
        m.setattr(TokenLexicon, "_build", lambda *a: pytest.fail("built again: the cache was not read"))
        second = shared_lexicon("jieba", tokenizer, 16384)
    assert second is not first
    assert_same_lexicon(built, first)
    assert_same_lexicon(built, second)
    assert len(second) > 300_000 and second.dictionary.duplicates > 0
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    rows = [[cls, *tokenizer(t, add_special_tokens=False)["input_ids"], sep] for t in pd_sentences[:64]]
    lengths = [len(r) for r in rows]
    want, got = built.match(rows, lengths), second.match(rows, lengths)
    assert len(want.rows) > 1000
    for field in ("rows", "positions", "sets", "words"):
        assert np.array_equal(getattr(want, field), getattr(got, field))
    # a user's words in `prefer` mode merge into the cached lexicon's dictionary as into the built one's
    extra = read_dictionary(["新冠肺炎 5 n", "区块链"])
    assert_same_lexicon(built.with_words(extra, tokenizer), second.with_words(extra, tokenizer))


def test_every_input_of_the_lexicon_is_in_its_key(cache, tokenizer, small_dict):
    builds = Builds(small_dict, tokenizer)
    builds.cached()
    builds.cached()
    assert builds.calls == 1
    other = Builds(small_dict, tokenizer, buckets=1024)  # another bucket count: another lexicon
    other.cached()
    assert other.calls == 1
    # the same size and modification time, one word changed: a key from size and mtime would read the old file
    stat = small_dict.stat()
    lines = small_dict.read_text(encoding="utf-8").split("\n")
    k = next(i for i, line in enumerate(lines) if "\u4e00" <= line[0] <= "\u9fff" and line[0] != "链")
    lines[k] = "链" + lines[k][1:]  # the same number of UTF-8 bytes
    small_dict.write_text("\n".join(lines), encoding="utf-8")
    assert small_dict.stat().st_size == stat.st_size
    os.utime(small_dict, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    changed = builds.cached()
    assert builds.calls == 2 and lines[k].split(" ")[0] in changed.dictionary.entries
    assert_same_lexicon(changed, TokenLexicon(read_dictionary(small_dict), tokenizer, 512))
    assert len(list(cache.glob("lexicon-*.safetensors"))) == 3


def test_a_damaged_cache_file_is_rebuilt_with_a_warning(cache, tokenizer, small_dict, caplog):
    builds = Builds(small_dict, tokenizer)
    good = builds.cached()
    (path,) = cache.glob("lexicon-*.safetensors")
    data = path.read_bytes()
    for damage in (data[: len(data) // 2], b"\x00" * 64, b""):
        path.write_bytes(damage)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="zhbert"):
            again = builds.cached()
        assert any("unreadable" in r.getMessage() and str(path) in r.getMessage() for r in caplog.records), damage[:8]
        assert_same_lexicon(good, again)
        calls = builds.calls
        assert_same_lexicon(good, builds.cached())  # replaced by a whole file, read from now on
        assert builds.calls == calls
    assert builds.calls == 4


def test_a_file_for_another_key_is_not_read(cache, tokenizer, small_dict, tmp_path, caplog):
    builds = Builds(small_dict, tokenizer)
    builds.cached()
    other = Builds(small_dict, tokenizer, buckets=1024)
    other.cached()
    mine, theirs = sorted(cache.glob("lexicon-*.safetensors"), key=lambda p: p.stat().st_mtime_ns)
    shutil.copy(theirs, mine)  # a file under the wrong name: its stored key disagrees
    with caplog.at_level(logging.WARNING, logger="zhbert"):
        lex = builds.cached()
    assert builds.calls == 2 and lex.bucket_count == 512
    assert any("key" in r.getMessage() for r in caplog.records)


def test_off_and_unwritable_caches_cost_time_not_the_load(tmp_path, tokenizer, small_dict, monkeypatch, caplog):
    monkeypatch.setenv("ZHBERT_CACHE_DIR", "off")
    builds = Builds(small_dict, tokenizer)
    builds.cached()
    builds.cached()
    assert builds.calls == 2 and lexicon_cache.cache_dir() is None
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("ZHBERT_CACHE_DIR", str(blocked))
    with caplog.at_level(logging.WARNING, logger="zhbert"):
        lex = builds.cached()
    assert builds.calls == 3 and len(lex) > 1000
    assert any("ZHBERT_CACHE_DIR" in r.getMessage() for r in caplog.records)
    assert not list(tmp_path.glob("**/*.tmp"))


def test_only_the_newest_files_are_kept(cache, tokenizer, small_dict):
    for buckets in range(100, 100 + lexicon_cache.KEEP + 2):
        Builds(small_dict, tokenizer, buckets).cached()
    files = list(cache.glob("lexicon-*"))
    assert len(files) == lexicon_cache.KEEP and all(f.suffix == ".safetensors" for f in files)
    newest = Builds(small_dict, tokenizer, 100 + lexicon_cache.KEEP + 1)
    newest.cached()
    assert newest.calls == 0  # the last one written is among those kept


def test_the_rebuild_warning_reaches_an_api_user_without_logging_set_up(cache, tokenizer, small_dict, monkeypatch):
    """zhbert's logger has only a NullHandler in a library user's process: the warning docs/using.md
    promises comes as a Python warning there (it used to go nowhere)."""
    builds = Builds(small_dict, tokenizer)
    builds.cached()
    (path,) = cache.glob("lexicon-*.safetensors")
    path.write_bytes(b"\x00" * 64)
    # no handler anywhere, as in a plain script (another test in this worker may have set up the CLI's)
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    monkeypatch.setattr(logging.getLogger("zhbert"), "handlers", [logging.NullHandler()])
    with pytest.warns(UserWarning, match=f"lexicon cache {path} unreadable"):
        builds.cached()
