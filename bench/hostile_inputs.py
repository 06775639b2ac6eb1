"""Hostile inputs through every command and the API, each in its own process under a memory cap:
does it end in one line naming the file or input, the position and the problem?

    python bench/hostile_inputs.py            # about 5 minutes on 2 cores (also run by bench/bad_inputs.py)
    python bench/hostile_inputs.py --verbose  # and the last line of every case

One case per hostile input found by probing as a new user, or a hostile file, would: unbounded
inputs, damaged folders, full and read-only disks, interrupts, and destinations holding a user's files
(a case fails as "data loss" when a file of the user's is gone or changed afterwards). Everything is
generated here, in a temporary folder; nothing is read from the checkout but the bundled models (the
smallest, ``cws-fast``, is copied before it is damaged) and the tests' TensorFlow checkpoint (copied too). Each outcome is one of:

* clean: the run fails with one line (no traceback) containing every expected piece (the file or
  input, the position, the problem), or, for an input that must be accepted, it completes;
* vague: it fails in one line, but a piece is missing;
* traceback: a Python traceback, or a Rust panic, reaches the user;
* silent: a run that should have refused completes;
* past the bound: the process took more than 2 GB of memory (peak resident set, its workers
  included) or ran past its time limit.

A disk-full case needs a small tmpfs (``mount``, as root); where the machine refuses it, the case
says so and is not counted.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

MEMORY_BOUND = 2 << 30  # the bound: no single input may take more than about 2 GB
DATA_CAP = 3 << 30  # RLIMIT_DATA: torch maps about 1 GB at import, so the cap sits above the bound
ZHBERT = [sys.executable, "-m", "zhbert"]
PD_LINES = ["迈向充满希望的新世纪——一九九八年新年讲话", "中共中央总书记、国家主席江泽民", "北京市民在天安门广场欢度元旦。"] * 40


@dataclass
class Case:
    row: str  # the table row
    command: list[str]
    needles: list[str]  # every piece the one line must contain
    accept: bool = False  # the input is valid and must complete within the bound
    stdin: object = None  # bytes, or an open file
    timeout: int = 300
    note: str = ""
    cleanup: list = field(default_factory=list)
    survivors: list = field(default_factory=list)  # files of the user's that must still be there, unchanged, after
    sigint_when: Path | None = None  # send Ctrl-C once this file exists (an interrupted run)
    env: dict = field(default_factory=dict)
    skipped: str = ""  # why the case cannot run on this machine (counted apart)


def _python(code: str) -> list[str]:
    """A command running ``code``; an exception ends it in one line ``error: Type: message``, as the
    CLI's own handler would, so that the outcome depends on the exception's message and type only."""
    wrapped = (
        "import sys\ntry:\n"
        + "".join(f"    {line}\n" for line in code.splitlines())
        + "except Exception as e:\n    sys.exit(f'\\nerror: {type(e).__name__}: {e}')\n"  # a line of its own after a progress bar
    )
    return [sys.executable, "-c", wrapped]


def _edit_json(file: Path, change) -> None:
    doc = json.loads(file.read_text(encoding="utf-8"))
    change(doc)
    file.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")


def _model(tmp: Path, name: str) -> Path:
    from zhbert.models_registry import BUNDLED_DIR

    folder = tmp / name
    shutil.copytree(BUNDLED_DIR / "cws-fast", folder)
    return folder


def _zip_bomb(path: Path) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        with zf.open("dh_msra.txt", "w", force_zip64=True) as member:
            block = ("中\tO\n" * 100_000).encode("utf-8")
            for _ in range(2 * 2**30 // len(block)):  # 2 GB inflated, as in the issue (about 2 MB zipped)
                member.write(block)
    return path


def _one_line_corpus(path: Path, mb: int = 50) -> Path:
    """A ``mb``-MB file that is one line of real Chinese (People's Daily sentences, repeated)."""
    text = "".join(PD_LINES).encode("utf-8")
    with open(path, "wb") as f:
        for _ in range(mb * 2**20 // len(text)):
            f.write(text)
        f.write(b"\n")
    return path


def _tmpfs(folder: Path, size: str) -> bool:
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    out = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True)
    return out.returncode == 0


def cases(tmp: Path) -> list[Case]:
    corpus = tmp / "corpus.txt"
    corpus.write_text("\n".join(PD_LINES) + "\n", encoding="utf-8")
    tiny = ["pretrain", "--corpus", str(corpus), "--size", "tiny", "--max-steps", "2", "--save-steps", "1", "--batch-size", "4"]
    out: list[Case] = []

    endless = open("/dev/zero", "rb")  # noqa: SIM115 - closed by the caller through Case.cleanup
    out.append(Case("`predict --model M -` < /dev/zero", [*ZHBERT, "predict", "--model", "cws-fast", "-"], ["<stdin>:1:"],
                    stdin=endless, cleanup=[endless.close]))  # fmt: skip
    tokens = tmp / "endless.conll"  # a CoNLL file with no blank line: one sentence as long as the file
    with open(tokens, "w", encoding="utf-8") as f:
        f.write("中 O\n" * 1_200_000)
    out.append(Case("`predict --format conll` on 1,200,000 tokens and no blank line",
                    [*ZHBERT, "predict", "--model", "cws-fast", "--format", "conll", str(tokens)],
                    [f"{tokens}:1:", "a sentence of more than"]))  # fmt: skip
    bomb = _zip_bomb(tmp / "dh_msra.zip")
    read_bomb = _python(f"from zhbert.data import read_msra_ner\nread_msra_ner({str(bomb)!r}, split='train')")
    out.append(Case("MSRA zip whose member inflates to 2 GB", read_bomb, [f"{bomb}!dh_msra.txt:", "inflates to"]))
    big = _one_line_corpus(tmp / "oneline.txt")
    out.append(Case("`pretrain --corpus` on one 50 MB line (must complete)",
                    [*ZHBERT, "pretrain", "--corpus", str(big), "--size", "tiny", "--max-steps", "1", "--batch-size", "4",
                     "--output-dir", str(tmp / "pt-big")],
                    [], accept=True, timeout=900, note="accepted: cut into 100,000-character documents"))  # fmt: skip
    full = tmp / "full"
    if _tmpfs(full, "20m"):
        out.append(Case("disk full during `pretrain` (a 20 MB tmpfs)", [*ZHBERT, *tiny, "--output-dir", str(full / "run")],
                        [str(full / "run"), "no space left", "last complete checkpoint"],
                        cleanup=[lambda: subprocess.run(["umount", str(full)], check=False)]))  # fmt: skip

    far = _model(tmp, "far-id")
    _edit_json(far / "tokenizer.json", lambda d: d["model"]["vocab"].__setitem__("北", 5_000_000))
    out.append(Case("`tokenizer.json` maps 北 to id 5,000,000", [*ZHBERT, "predict", "--model", str(far), "-"],
                    [str(far / "tokenizer.json"), "5000000"], stdin="北京\n".encode()))  # fmt: skip
    regex = _model(tmp, "regex")
    evil = {"type": "Replace", "pattern": {"Regex": "(a|aa)+$"}, "content": "b"}
    _edit_json(regex / "tokenizer.json", lambda d: d["normalizer"]["normalizers"].append(evil))
    out.append(Case("normaliser gains the regex `(a|aa)+$`", [*ZHBERT, "predict", "--model", str(regex), "-"],
                    [str(regex / "tokenizer.json"), "regex"], stdin=("a" * 34 + "!\n").encode()))  # fmt: skip
    huge = _model(tmp, "huge-vocab")
    _edit_json(huge / "config.json", lambda d: d.__setitem__("vocab_size", 1_000_000_000))
    for command in (["info", str(huge)], ["pretrain", "--init", str(huge), "--corpus", str(corpus), "--output-dir", str(tmp / "o1")]):
        out.append(Case(f'`"vocab_size": 1000000000`: `{command[0]}{" --init" if command[0] == "pretrain" else ""}`',
                        [*ZHBERT, *command], [str(huge / "config.json"), "vocab_size is 1000000000"]))  # fmt: skip
    deep = _model(tmp, "deep")
    (deep / "config.json").write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    for name, command in (
        ("load", _python(f"import zhbert\nzhbert.load({str(deep)!r})")),
        ("info", [*ZHBERT, "info", str(deep)]),
        ("predict", [*ZHBERT, "predict", "--model", str(deep), "-"]),
    ):
        out.append(Case(f"`config.json` nested 100,000 deep: `{name}`", command, [str(deep / "config.json"), "nested too deeply"],
                        stdin="北京\n".encode()))  # fmt: skip
    pickled = _model(tmp, "pickled")
    (pickled / "model.safetensors").rename(pickled / "pytorch_model.bin")
    for name, command in (
        ("pretrain --init", ["pretrain", "--init", str(pickled), "--corpus", str(corpus), "--output-dir", str(tmp / "o2")]),
        ("probe", ["probe", str(pickled), "--output-dir", str(tmp / "o3")]),
    ):
        out.append(Case(f"pickle `pytorch_model.bin`: `{name}`", [*ZHBERT, *command], [str(pickled), "pytorch_model.bin (pickle"]))
    surrogate = _python("import zhbert\nzhbert.load('cws-fast')('北京\\ud800上海')")
    out.append(Case('lone surrogate: `zhbert.load(m)("北京\\ud800上海")`', surrogate, ["input 0, character 2: lone surrogate U+D800"]))
    out.append(Case("lone surrogate (UTF-8 encoded) on `predict` stdin, line 2", [*ZHBERT, "predict", "--model", "cws-fast", "-"],
                    ["<stdin>:2:"], stdin="北京\n".encode() + b"\xed\xa0\x80\n"))  # fmt: skip

    linked = tmp / "linked"
    (tmp / "elsewhere" / "checkpoint-7").mkdir(parents=True)
    _keep(linked / "zhbert_run.json", "{}\n")  # a run folder of zhbert's: its checkpoints are resumed, the link checked
    (linked / "checkpoint-7").symlink_to(tmp / "elsewhere" / "checkpoint-7", target_is_directory=True)
    out.append(Case("a checkpoint folder that links outside the output folder", [*ZHBERT, *tiny, "--output-dir", str(linked)],
                    ["checkpoint-7", "outside the output folder"]))  # fmt: skip
    held = tmp / "held"
    hold = (
        "import time\nfrom zhbert.training.lock import output_lock\n"
        f"with output_lock({str(held)!r}):\n    print('held', flush=True)\n    while True:\n        time.sleep(3600)"
    )
    # held until the case's cleanup kills the holder, however long the machine's load makes the wait
    holder = subprocess.Popen([sys.executable, "-c", hold], stdout=subprocess.PIPE, text=True)
    holder.stdout.readline()  # the lock is taken
    out.append(Case("two `zhbert pretrain` runs on one output folder", [*ZHBERT, *tiny, "--output-dir", str(held)],
                    [str(held), str(holder.pid)], cleanup=[holder.kill, holder.wait]))  # fmt: skip

    rows = "".join("北 B-LOC\n京 I-LOC\n人 O\n\n" for _ in range(200)) + "张 B-PER\n三 I-PER\n\n上 B-LCO\n海 I-LOC\n"
    typo = tmp / "typo.txt"
    typo.write_text(rows, encoding="utf-8")
    empty = tmp / "cluener.json"
    empty.write_text('{"text": "北京", "label": {"address": {"北京": [[0, 1]]}}}\n{"text": "上海", "label": []}\n', encoding="utf-8")
    pos = tmp / "pd.txt"
    pos.write_text("迈向/v  充满/v  希望/n  的/u  新/a  世纪/n\n", encoding="utf-8")
    tsv = tmp / "pairs.tsv"
    tsv.write_text("今天 天气 好\n花呗怎么还款\t花呗如何还钱\t1\n", encoding="utf-8")
    for row, call, where in (
        ("`B-LCO` with no types given", f"read_char_tagged({str(typo)!r}, scheme='BIO')", f"{typo}:{rows.count(chr(10)) - 1}:"),
        ('CLUENER `"label": []`', f"read_cluener({str(empty)!r})", f"{empty}:2:"),
        ("a word/POS file read as segmented text", f"read_segmented({str(pos)!r})", f"{pos}:1:"),
        ("a TSV file read as segmented text", f"read_segmented({str(tsv)!r})", f"{tsv}:2:"),
    ):
        out.append(Case(row, _python(f"from zhbert.data import read_char_tagged, read_cluener, read_segmented\n{call}"), [where]))
    out += destination_cases(tmp, corpus)
    out += size_cases(tmp)
    return out


def _keep(path: Path, text: str = "mine\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _bind_read_only(folder: Path) -> bool:
    """``folder`` as a read-only bind mount of a fresh one (root only)."""
    source = folder.with_name(folder.name + "-source")
    source.mkdir(parents=True)
    folder.mkdir(parents=True)
    if os.geteuid() != 0 or subprocess.run(["mount", "--bind", str(source), str(folder)], capture_output=True).returncode:
        return False
    return subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], capture_output=True).returncode == 0


def destination_cases(tmp: Path, corpus: Path) -> list[Case]:
    """Issue 92's rows 1-7 and 12: folders zhbert writes, and what happens to what is already there."""
    out: list[Case] = []
    proj = tmp / "proj"
    model = _model(proj, "model")
    log = _keep(proj / "train.log", "step 1 loss 9.9\n")
    out.append(Case("`export proj/model proj` (into the source's own parent)", [*ZHBERT, "export", str(model), str(proj)],
                    [str(proj), "contains the source"], survivors=[log, model / "model.safetensors"]))  # fmt: skip
    thesis = _keep(tmp / "mywork" / "thesis.tex", "\\documentclass{article}\n")
    out.append(Case("`export cws-fast mywork --overwrite`, mywork holding thesis.tex",
                    [*ZHBERT, "export", "cws-fast", str(thesis.parent), "--overwrite"], [str(thesis.parent), "thesis.tex"],
                    survivors=[thesis]))  # fmt: skip
    keep = _keep(tmp / "ship.tmp" / "keep.txt")
    out.append(Case("`export cws-fast ship` beside a user folder `ship.tmp/`", [*ZHBERT, "export", "cws-fast", str(tmp / "ship")],
                    [], accept=True, survivors=[keep]))  # fmt: skip
    runs = [_model(tmp, "run-a"), _model(tmp, "run-b")]
    notes = _keep(tmp / "soup" / "notes.txt")
    out.append(Case("`soup a b -o out`, out holding notes.txt", [*ZHBERT, "soup", *map(str, runs), "-o", str(notes.parent)],
                    [str(notes.parent), "notes.txt"], survivors=[notes]))  # fmt: skip
    hf_model = [_keep(tmp / "project" / "model" / "config.json", '{"model_type": "bert"}\n')]
    hf_model.append(_keep(tmp / "project" / "metrics.json", "{}\n"))
    conll = _keep(tmp / "mine.conll", "北 B-LOC\n京 I-LOC\n很 O\n大 O\n\n上 B-LOC\n海 I-LOC\n也 O\n是 O\n\n")
    out.append(Case("`train ner -o project`, project holding a model/ of another tool and a metrics.json",
                    [*ZHBERT, "train", "ner", "--train-file", str(conll), "--preset", "tiny", "--output-dir", str(tmp / "project")],
                    [str(tmp / "project" / "metrics.json"), "not scores zhbert train wrote"], survivors=hf_model))  # fmt: skip
    their_corpus = _keep(tmp / "notes.zhcorpus", "我的笔记\n")
    out.append(Case("`prepare-corpus -o notes.zhcorpus`, a file of the user's", [*ZHBERT, "prepare-corpus", "--corpus", str(corpus),
                    "-o", str(their_corpus)], [str(their_corpus), "not a .zhcorpus file zhbert wrote"],
                    survivors=[their_corpus]))  # fmt: skip
    essay = _keep(tmp / "essay" / "essay.tex", "\\documentclass{article}\n")
    out.append(Case("`small-encoder -o essay --overwrite`, essay holding essay.tex",
                    [*ZHBERT, "small-encoder", "--teacher", "cws-fast", "--output-dir", str(essay.parent), "--overwrite"],
                    [str(essay.parent), "essay.tex"], survivors=[essay]))  # fmt: skip
    vectors = _keep(tmp / "vectors" / "words.bin", "3 2\nmine\n")
    out.append(Case("`static-embeddings -o vectors`, vectors holding a words.bin of the user's",
                    [*ZHBERT, "static-embeddings", "--output-dir", str(vectors.parent)], [str(vectors), "not a folder of vectors"],
                    survivors=[vectors]))  # fmt: skip
    pos_notes = [_keep(tmp / "postag" / "model" / "config.json", '{"model_type": "bert"}\n')]
    pos_notes.append(_keep(tmp / "postag" / "model" / "metrics.json", '{"accuracy": 0.9}\n'))
    out.append(Case("`python -m zhbert.pos_on_segmenter --output-dir postag`, postag/model another tool's",
                    [sys.executable, "-m", "zhbert.pos_on_segmenter", "--output-dir", str(tmp / "postag")],
                    [str(pos_notes[0]), "not a file of a POS head zhbert saved"], survivors=pos_notes))  # fmt: skip
    a_file = _keep(tmp / "a_file", "not a folder\n")
    out.append(Case("`export` onto an existing file", [*ZHBERT, "export", "cws-fast", str(a_file)], [str(a_file), "not a folder"],
                    survivors=[a_file]))  # fmt: skip
    ro = tmp / "ro"
    if _bind_read_only(ro):
        out.append(Case("`export` into a read-only folder", [*ZHBERT, "export", "cws-fast", str(ro / "ship")],
                        [str(ro / "ship"), "read-only", "nothing was written"],
                        cleanup=[lambda: subprocess.run(["umount", str(ro)], check=False)]))  # fmt: skip
        turned = tmp / "turned"
        turned.mkdir()
        script = (
            "import subprocess\nfrom transformers import Trainer\nfrom zhbert.training.pretrain import PretrainConfig, pretrain\n"
            "real, calls = Trainer._save_checkpoint, []\n"
            "def save(self, *a, **k):\n"
            "    calls.append(1)\n"
            f"    if len(calls) == 2: subprocess.run(['mount', '-o', 'remount,bind,ro', {str(turned)!r}], check=True)\n"
            "    return real(self, *a, **k)\n"
            "Trainer._save_checkpoint = save\n"
            f"pretrain(PretrainConfig(corpus=[{str(corpus)!r}], output={str(turned / 'run')!r}, size='tiny', max_steps=4, "
            "save_steps=1, batch_size=4, num_proc=1, max_length=64))"
        )
        subprocess.run(["mount", "--bind", str(turned), str(turned)], check=False)
        out.append(Case("`pretrain` into a folder made read-only mid-run", _python(script),
                        [str(turned / "run"), "read-only", "checkpoint-1"],
                        cleanup=[lambda: subprocess.run(["umount", str(turned)], check=False)]))  # fmt: skip
    else:
        out.append(Case("`export` / `pretrain` into a read-only folder", [], [], skipped="needs root and a bind mount"))
    full = tmp / "still-full"
    if _tmpfs(full, "8m"):
        with open(full / "filler", "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 4096)
            except OSError:
                pass
        tiny = ["pretrain", "--corpus", str(corpus), "--size", "tiny", "--max-steps", "2", "--save-steps", "1", "--batch-size", "4"]
        out.append(Case("rerun `pretrain` while the disk is still full", [*ZHBERT, *tiny, "--output-dir", str(full / "run")],
                        [str(full / "run"), "no space left"],
                        cleanup=[lambda: subprocess.run(["umount", str(full)], check=False)]))  # fmt: skip
    else:
        out.append(Case("rerun `pretrain` while the disk is still full", [], [], skipped="needs root and a tmpfs"))
    trainer_out = tmp / "hf-run"
    theirs = [_keep(trainer_out / "checkpoint-500" / "model.safetensors", "weights\n"), _keep(trainer_out / "loss_log.jsonl", "{}\n")]
    out.append(Case("`pretrain` into a folder holding a Trainer's checkpoint-500/ and a loss_log.jsonl",
                    [*ZHBERT, "pretrain", "--corpus", str(corpus), "--size", "tiny", "--max-steps", "2", "--batch-size", "4",
                     "--output-dir", str(trainer_out)], [str(trainer_out), "checkpoint-500/", "did not write"],
                    survivors=theirs))  # fmt: skip
    interrupted = tmp / "interrupted"
    long_run = ["pretrain", "--corpus", str(corpus), "--size", "tiny", "--max-steps", "500", "--save-steps", "2", "--batch-size", "4"]
    out.append(Case("Ctrl-C during `pretrain`", [*ZHBERT, *long_run, "--output-dir", str(interrupted)],
                    [str(interrupted), "interrupted at step", "resumes from", "checkpoint-"],
                    sigint_when=interrupted / "checkpoint-2" / "zhbert_complete.json"))  # fmt: skip
    return out


def size_cases(tmp: Path) -> list[Case]:
    """Issue 92's rows 8-11 and 13-15: sizes, dictionaries and folders."""
    out: list[Case] = []
    api = _python("import zhbert\nzhbert.load('cws-fast')('北京大学' * 2_500_000)")
    out.append(Case("`zhbert.load('cws-fast')(10,000,000 characters)`", api, ["input 0", "10,000,000 characters", "1,000,000"]))
    runaway = tmp / "runaway.bio"
    with open(runaway, "w", encoding="utf-8") as f:
        f.write("啊 O\n" * 1_000_000)
    read = _python(f"from zhbert.data import read_char_tagged\nread_char_tagged({str(runaway)!r}, scheme='BIO', types=['LOC'])")
    out.append(Case("a training file holding one 1,000,000-character sentence", read, [f"{runaway}:1:", "200,000 characters"]))
    nested = tmp / "nested.txt"
    nested.write_text("".join("啊" * k + "\n" for k in range(1, 101)), encoding="utf-8")
    run = _python(f"import zhbert\nzhbert.load('cws-fast', user_dict={str(nested)!r})('啊' * 100_000)")
    out.append(Case("100 nested dictionary words over 100,000 characters of 啊 (must complete)", run, [], accept=True,
                    note="accepted: at most 8 candidate words end at each character"))  # fmt: skip
    masks = _python("import zhbert\nzhbert.load('base').fill_mask('[MASK]' * 1000)")
    out.append(Case("fill-mask with 1,000 `[MASK]`: API", masks, ["1,000 [MASK]s", "up to 64"]))
    out.append(
        Case("fill-mask with 1,000 `[MASK]`: `zhbert fill-mask`", [*ZHBERT, "fill-mask", "[MASK]" * 1000], ["1,000 [MASK]s", "up to 64"])
    )
    binary = tmp / "binary.dict"
    binary.write_bytes(bytes(range(256)) * 3)
    utf16 = tmp / "utf16be.dict"
    utf16.write_bytes("华为".encode("utf-16-be"))
    for path, problem in ((binary, "a binary file"), (utf16, "UTF-16 (big-endian, no byte-order mark)")):
        command = [*ZHBERT, "predict", "--model", "cws-fast", "--user-dict", str(path), "-"]
        out.append(Case(f"`--user-dict` {problem.split(' (')[0]}", command, [str(path), problem], stdin="华为手机\n".encode()))
    cache = tmp / "cache"
    warm = _python("import zhbert\nzhbert.load('cws')")
    subprocess.run(warm, env={**os.environ, "ZHBERT_CACHE_DIR": str(cache)}, capture_output=True, check=False)
    for damaged in cache.rglob("lexicon-*.safetensors"):
        damaged.write_bytes(b"\0" * 64)
    rebuild = _python("import zhbert\nzhbert.load('cws')('北京')")
    out.append(Case("a damaged lexicon cache: rebuilt, with the warning (must complete)", rebuild, ["lexicon cache", "unreadable"],
                    accept=True, env={"ZHBERT_CACHE_DIR": str(cache)}))  # fmt: skip
    from zhbert.models_registry import BUNDLED_DIR

    pos = tmp / "pos-self"
    shutil.copytree(BUNDLED_DIR / "pos", pos)
    _edit_json(pos / "zhbert_pos.json", lambda d: d.__setitem__("segmenter", str(pos)))
    out.append(Case("a `pos` folder naming itself as its segmenter", _python(f"import zhbert\nzhbert.load({str(pos)!r})"),
                    [str(pos), "names its own folder as its segmenter"]))  # fmt: skip
    unlabelled = _model(tmp, "no-labels")
    _edit_json(unlabelled / "config.json", lambda d: d["zhbert_head"].pop("labels"))
    out.append(Case("a head folder without labels", _python(f"import zhbert\nzhbert.load({str(unlabelled)!r})"),
                    [str(unlabelled / "config.json"), "labels must not be empty"]))  # fmt: skip
    fewer = _model(tmp, "fewer-labels")
    _edit_json(fewer / "config.json", lambda d: d["zhbert_head"].__setitem__("labels", d["zhbert_head"]["labels"][:-1]))
    out.append(Case("a head folder listing fewer labels than its weights", _python(f"import zhbert\nzhbert.load({str(fewer)!r})"),
                    [str(fewer / "model.safetensors"), "labels"]))  # fmt: skip
    out.extend(tf_checkpoint_cases(tmp))
    return out


def tf_checkpoint_cases(tmp: Path) -> list[Case]:
    """`convert-tf` on damaged copies of the TensorFlow checkpoint the tests use (written by TensorFlow)."""
    fixture = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "tf_bert_tiny"
    out: list[Case] = []
    huge = tmp / "tf-huge"
    shutil.copytree(fixture, huge)
    _edit_json(huge / "bert_config.json", lambda d: d.update(hidden_size=8192, intermediate_size=65536))
    out.append(Case("`convert-tf` whose bert_config.json makes a model over a million times its checkpoint",
                    [*ZHBERT, "convert-tf", str(huge), str(tmp / "tf-huge-out")],
                    [str(huge / "bert_model.ckpt.index"), "bert_config.json makes"]))  # fmt: skip
    cut = tmp / "tf-cut"
    shutil.copytree(fixture, cut)
    data = cut / "bert_model.ckpt.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[:4000])
    out.append(Case("`convert-tf` on a checkpoint whose data file was cut short",
                    [*ZHBERT, "convert-tf", str(cut), str(tmp / "tf-cut-out")], [str(data), "a cut download"]))  # fmt: skip
    mine = tmp / "tf-mine"
    notes = _keep(mine / "notes.txt")
    out.append(Case("`convert-tf` into a folder holding the user's notes",
                    [*ZHBERT, "convert-tf", str(fixture), str(mine)], [str(mine), "not empty and not a model folder"],
                    survivors=[notes]))  # fmt: skip
    return out


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_DATA, (DATA_CAP, DATA_CAP))
    # a case's Ctrl-C reaches it as a terminal's would, also when this bench runs in the
    # background (a shell starts background jobs with SIGINT ignored, and children inherit that)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_case(case: Case) -> tuple[str, str, float, float]:
    """(outcome, last line of stderr, peak memory in GB, seconds) of one case."""
    if case.skipped:
        return "not run", case.skipped, float("nan"), 0.0
    before = {p: p.read_bytes() for p in case.survivors}
    stdin = case.stdin if not isinstance(case.stdin, bytes | str) else subprocess.PIPE
    timed = ["/usr/bin/time", "-f", "zhbert-bench-peak-kb %M elapsed %e"] if Path("/usr/bin/time").exists() else []
    env = {**os.environ, **case.env}
    proc = subprocess.Popen(
        [*timed, *case.command], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_limit, env=env
    )
    try:
        if case.sigint_when is not None:
            _interrupt_when(proc, case.sigint_when, case.timeout)
        _, err = proc.communicate(case.stdin if stdin is subprocess.PIPE else None, timeout=case.timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return "past the bound", f"(no end after {case.timeout} s)", float("nan"), case.timeout
    finally:
        for undo in case.cleanup:
            undo()
    lines = err.decode("utf-8", "replace").splitlines()
    peak, seconds = float("nan"), float("nan")
    if lines and lines[-1].startswith("zhbert-bench-peak-kb"):
        _, kb, _, secs = lines.pop().split()
        peak, seconds = int(kb) * 1024 / 2**30, float(secs)
        if lines and lines[-1].startswith(("Command exited with non-zero status", "Command terminated by signal")):
            lines.pop()  # GNU time's own report of the status
    text = "\n".join(lines)
    # the error line: a progress bar may end just before it on the same line, or print after it at exit
    errors = [line[line.find("error:") :] for line in lines if line.startswith("error:") or "zhbert: error:" in line]
    last = errors[-1] if errors else next((line for line in reversed(lines) if line.strip()), "")
    lost = [p for p, data in before.items() if not p.is_file() or p.read_bytes() != data]
    if lost:
        outcome, last = "data loss", f"gone or changed: {', '.join(map(str, lost))}"
    elif "MemoryError" in text or peak * 2**30 > MEMORY_BOUND:
        outcome = "past the bound"
    elif "Traceback" in text or "PanicException" in text or "panicked" in text:
        outcome = "traceback"
    elif case.accept:  # needles of an accepted input: what it must say while it completes (a warning)
        outcome = "clean" if proc.returncode == 0 and all(n in text for n in case.needles) else "vague"
    elif proc.returncode == 0:
        outcome = "silent"
    else:
        outcome = "clean" if all(n in last for n in case.needles) else "vague"
    return outcome, last, peak, seconds


def _interrupt_when(proc: subprocess.Popen, marker: Path, timeout: float) -> None:
    """Ctrl-C (SIGINT) to ``proc`` and its children once ``marker`` exists, as a terminal sends it."""
    import time

    deadline = time.time() + timeout
    while not marker.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    if proc.poll() is None:
        _signal_tree(proc.pid)


def _signal_tree(pid: int) -> None:
    """SIGINT to ``pid``'s children (``/usr/bin/time`` passes none on) and to ``pid`` itself."""
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    for child in map(int, children):
        os.kill(child, signal.SIGINT)
    if not children:
        os.kill(pid, signal.SIGINT)


def hostile_table(verbose: bool = False, only: str | None = None) -> collections.Counter:
    totals: collections.Counter = collections.Counter()
    print("| case | outcome | peak memory | seconds |")
    print("|---|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        built = cases(Path(tmp))
        if only:  # the other cases' holders and mounts still get their cleanup
            for case in built:
                if only not in case.row:
                    for undo in case.cleanup:
                        undo()
            built = [c for c in built if only in c.row]
        if not only and not any(c.row.startswith("disk full") for c in built):
            print("| disk full during `pretrain` | not run: this machine refuses a tmpfs mount (needs root) | | |")
        for case in built:
            outcome, last, peak, seconds = run_case(case)
            totals[outcome] += 1
            note = f" ({case.note})" if case.note and outcome == "clean" else ""
            print(f"| {case.row} | {outcome}{note} | {peak:.2f} GB | {seconds:.1f} |")
            if verbose or outcome != "clean":
                print(f"|   last line: `{last[:300]}` | | | |")
    print()
    print("| cases | clean | vague | traceback | silent | past the bound | data loss | not run here |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    counts = [totals[k] for k in ("clean", "vague", "traceback", "silent", "past the bound", "data loss", "not run")]
    print(f"| {sum(totals.values())} | " + " | ".join(map(str, counts)) + " |")
    return totals


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verbose", action="store_true", help="print every case's last line")
    ap.add_argument("--only", help="run only the cases whose row contains this text")
    args = ap.parse_args()
    hostile_table(args.verbose, args.only)


if __name__ == "__main__":
    main()
