"""Hostile inputs through every command and the API, each in its own process under a memory cap:
does it end in one line naming the file or input, the position and the problem?

    python bench/hostile_inputs.py            # about 5 minutes on 2 cores (also run by bench/bad_inputs.py)
    python bench/hostile_inputs.py --verbose  # and the last line of every case

One case per row of issue 38's table (the cases found by probing as a new user, or a hostile file,
would). Everything is generated here, in a temporary folder; nothing is read from the checkout but
the bundled ``cws-fast`` (the smallest model, copied before it is damaged). Each outcome is one of:

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


def _python(code: str) -> list[str]:
    """A command running ``code``; an exception ends it in one line ``error: Type: message``, as the
    CLI's own handler would, so that the outcome depends on the exception's message and type only."""
    wrapped = (
        "import sys\ntry:\n" + "".join(f"    {line}\n" for line in code.splitlines())
        + "except Exception as e:\n    sys.exit(f'error: {type(e).__name__}: {e}')\n"
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
    linked.mkdir()
    (linked / "checkpoint-7").symlink_to(tmp / "elsewhere" / "checkpoint-7", target_is_directory=True)
    out.append(Case("a checkpoint folder that links outside the output folder", [*ZHBERT, *tiny, "--output-dir", str(linked)],
                    ["checkpoint-7", "outside the output folder"]))  # fmt: skip
    held = tmp / "held"
    hold = (
        "import time\nfrom zhbert.training.lock import output_lock\n"
        f"with output_lock({str(held)!r}):\n    print('held', flush=True)\n    time.sleep(600)"
    )
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
    return out


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_DATA, (DATA_CAP, DATA_CAP))


def run_case(case: Case) -> tuple[str, str, float, float]:
    """(outcome, last line of stderr, peak memory in GB, seconds) of one case."""
    stdin = case.stdin if not isinstance(case.stdin, bytes | str) else subprocess.PIPE
    timed = ["/usr/bin/time", "-f", "zhbert-bench-peak-kb %M elapsed %e"] if Path("/usr/bin/time").exists() else []
    proc = subprocess.Popen([*timed, *case.command], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_limit)
    try:
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
    if "MemoryError" in text or peak * 2**30 > MEMORY_BOUND:
        outcome = "past the bound"
    elif "Traceback" in text or "PanicException" in text or "panicked" in text:
        outcome = "traceback"
    elif case.accept:
        outcome = "clean" if proc.returncode == 0 else "vague"
    elif proc.returncode == 0:
        outcome = "silent"
    else:
        outcome = "clean" if all(n in last for n in case.needles) else "vague"
    return outcome, last, peak, seconds


def hostile_table(verbose: bool = False) -> collections.Counter:
    totals: collections.Counter = collections.Counter()
    print("| case (issue 38's table) | outcome | peak memory | seconds |")
    print("|---|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        built = cases(Path(tmp))
        if not any(c.row.startswith("disk full") for c in built):
            print("| disk full during `pretrain` | not run: this machine refuses a tmpfs mount (needs root) | | |")
        for case in built:
            outcome, last, peak, seconds = run_case(case)
            totals[outcome] += 1
            note = f" ({case.note})" if case.note and outcome == "clean" else ""
            print(f"| {case.row} | {outcome}{note} | {peak:.2f} GB | {seconds:.1f} |")
            if verbose or outcome != "clean":
                print(f"|   last line: `{last[:300]}` | | | |")
    print()
    print("| cases | clean | vague | traceback | silent | past the bound |")
    print("|---:|---:|---:|---:|---:|---:|")
    counts = [totals[k] for k in ("clean", "vague", "traceback", "silent", "past the bound")]
    print(f"| {sum(totals.values())} | " + " | ".join(map(str, counts)) + " |")
    return totals


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verbose", action="store_true", help="print every case's last line")
    hostile_table(ap.parse_args().verbose)


if __name__ == "__main__":
    main()
