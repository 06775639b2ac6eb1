"""One writer per output folder, and checkpoints that live inside it."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from zhbert.errors import ModelLoadError, StorageError
from zhbert.training.checkpoints import latest_complete_checkpoint
from zhbert.training.lock import LOCK_NAME, output_lock


@pytest.fixture
def other_process():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc.pid
    proc.kill()
    proc.wait()


def test_a_second_writer_is_refused_with_the_holders_pid(tmp_path, other_process):
    (tmp_path / LOCK_NAME).write_text(f"{other_process} {socket.gethostname()} 2026-11-25T10:00:00")
    with pytest.raises(StorageError, match=rf"another zhbert run is writing here \(PID {other_process} on "):
        with output_lock(tmp_path):
            pass
    assert (tmp_path / LOCK_NAME).is_file()  # the holder's lock is left alone


def test_a_stale_lock_is_replaced_and_released(tmp_path, caplog):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    (tmp_path / LOCK_NAME).write_text(f"{dead} {socket.gethostname()} 2026-11-25T10:00:00")
    with output_lock(tmp_path) as lock:
        assert lock.read_text().split()[0] != dead
    assert "stale lock" in caplog.text and not (tmp_path / LOCK_NAME).exists()


def test_recipe_refuses_a_locked_output_folder(tmp_path, other_process, shared):
    from zhbert.recipes import RECIPES

    (tmp_path / LOCK_NAME).write_text(f"{other_process} {socket.gethostname()} 2026-11-25T10:00:00")
    recipe = RECIPES["ner"]
    with pytest.raises(StorageError, match=f"PID {other_process}"):
        recipe.run(recipe.arguments(dataset="resume", preset="tiny", output_dir=str(tmp_path)))


def test_checkpoint_outside_the_output_folder_is_refused(tmp_path):
    elsewhere = tmp_path / "someone-else" / "checkpoint-7"
    elsewhere.mkdir(parents=True)
    out = tmp_path / "run"
    out.mkdir()
    (out / "checkpoint-7").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(ModelLoadError, match="outside the output folder"):
        latest_complete_checkpoint(out)
    assert elsewhere.is_dir()  # nothing of it was removed
