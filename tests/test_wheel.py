"""The built wheel on its own: installed into a fresh virtualenv and run outside the
checkout, `zhbert train`, `zhbert demo` and `zhbert study` work (recipes, demo and
bundled models are package code and package data, not files of a source tree)."""

import os
import site
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-w", str(tmp / "dist")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    (wheel,) = (tmp / "dist").glob("zhbert-*.whl")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp / "venv")], check=True, timeout=300)
    venv_site = next((tmp / "venv" / "lib").glob("python3*/site-packages"))
    # the dependencies (torch, transformers, gradio...) come from this test's environment: a
    # path line in a .pth, which adds the folder but not its own .pth files (so not the
    # editable install of the checkout); the venv's own site-packages, holding the wheel, comes first
    (venv_site / "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(tmp / "venv" / "bin" / "python"), "install", "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    work = tmp / "elsewhere"  # no recipes/, demo/ or zhbert/ folder in sight
    work.mkdir()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": ""}
    from zhbert.data.paths import shared_dir

    env["ZHBERT_SHARED"] = str(shared_dir())
    return tmp / "venv" / "bin", work, env


def test_the_wheel_runs_from_its_own_files(installed):
    bin_dir, work, env = installed
    where = subprocess.run(
        [str(bin_dir / "python"), "-c", "import zhbert, zhbert.recipes, zhbert.demo; print(zhbert.__file__)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert where.returncode == 0, where.stderr[-2000:]
    assert str(bin_dir.parent) in where.stdout and str(ROOT) not in where.stdout


def test_study_modes_help(installed):
    bin_dir, work, env = installed
    r = subprocess.run(
        [str(bin_dir / "zhbert"), "study", "modes", "--help"], cwd=work, env=env, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "--representation" in r.stdout and "--task" in r.stdout


def test_train_ner_tiny_on_the_bundled_encoder(installed):
    bin_dir, work, env = installed
    r = subprocess.run(
        [str(bin_dir / "zhbert"), "train", "ner", "--preset", "tiny", "--output-dir", "runs/ner"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert (work / "runs" / "ner" / "metrics.json").is_file() and (work / "runs" / "ner" / "model" / "config.json").is_file()
    assert "| ner-msra | electra |" in r.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_demo_serves_the_bundled_models(installed):
    bin_dir, work, env = installed
    port = _free_port()
    proc = subprocess.Popen(
        [str(bin_dir / "zhbert"), "demo", "--port", str(port)],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline, page = time.time() + 240, None
        while time.time() < deadline and proc.poll() is None:
            try:
                page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read().decode()
                break
            except OSError:
                time.sleep(1)
        assert page is not None, f"the demo did not answer (exit code {proc.poll()}): {proc.stdout.read()[-2000:] if proc.poll() else ''}"
        assert "zhbert" in page
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_readme_s_pip_lines_work_from_the_wheel(installed):
    """The README's first screen: after `pip install`, its one-line check answers from the installed wheel."""
    import re
    import shlex

    bin_dir, work, env = installed
    install = (ROOT / "README.md").read_text(encoding="utf-8").split("## Install", 1)[1].split("\n## ", 1)[0]
    (check,) = [line.split("  #")[0] for line in install.splitlines() if line.startswith("python -c ")]
    args = shlex.split(check)
    r = subprocess.run([str(bin_dir / "python"), *args[1:]], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert re.search(r"Span\(text='北京大学'|Span\(text='北京'", r.stdout), r.stdout
