"""Two CPU processes (gloo) under torchrun and accelerate: each rank sees its own
share of the data and exactly one set of checkpoints is written."""

import json
import os
import socket
import subprocess
import sys

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def corpus_file(pd_corpus_file):
    return pd_corpus_file


PRETRAIN = [
    "-m",
    "zhbert",
    "pretrain",
    "--size",
    "tiny",
    "--max-steps",
    "6",
    "--save-steps",
    "3",
    "--batch-size",
    "4",
    "--num-proc",
    "1",
    "--max-length",
    "64",
    "--logging-steps",
    "1",
]


def _check(out, record, steps=6, batch=4):
    seen = {}
    for rank in (0, 1):
        # accelerate's loader fetches one batch ahead, so a rank may collate steps + 1
        rows = [json.loads(l) for l in open(f"{record}.rank{rank}")]
        assert steps <= len(rows) <= steps + 1 and all(len(r) == batch for r in rows)
        seen[rank] = [i for r in rows for i in r]
    # the distributed sampler gives each rank a disjoint share of the blocks
    assert set(seen[0]).isdisjoint(seen[1]), "ranks saw the same examples"
    checkpoints = sorted(p.name for p in out.iterdir() if p.name.startswith("checkpoint-"))
    assert checkpoints == ["checkpoint-3", "checkpoint-6"]
    assert all((out / c / "zhbert_complete.json").is_file() for c in checkpoints)
    assert (out / "final" / "model.safetensors").is_file()
    log = [json.loads(l) for l in open(out / "loss_log.jsonl")]
    assert [r["step"] for r in log] == list(range(1, steps + 1))  # written once, by rank 0


def _env(record):
    return {**os.environ, "ZHBERT_RECORD_BATCHES": str(record), "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}


def test_torchrun_two_processes(corpus_file, tmp_path):
    out, record = tmp_path / "out", tmp_path / "batches"
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node=2",
        f"--master-port={_free_port()}",
        *PRETRAIN,
        "--corpus",
        str(corpus_file),
        "--output",
        str(out),
    ]
    r = subprocess.run(cmd, env=_env(record), capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    _check(out, record)


def test_accelerate_launch_two_processes(corpus_file, tmp_path):
    # --multi-gpu picks accelerate's torchrun launcher; without CUDA the Trainer uses gloo on CPU
    # (accelerate's --cpu multi-process path needs an MPI installation instead)
    out, record = tmp_path / "out", tmp_path / "batches"
    cmd = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--multi-gpu",
        "--num-processes",
        "2",
        "--num-machines",
        "1",
        "--mixed-precision",
        "no",
        "--dynamo-backend",
        "no",
        f"--main-process-port={_free_port()}",
        *PRETRAIN,
        "--corpus",
        str(corpus_file),
        "--output",
        str(out),
    ]
    r = subprocess.run(cmd, env=_env(record), capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    _check(out, record)


def _open_group(*_args, **_kwargs):
    """A one-rank gloo group, as the Trainer opens under torchrun."""
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{_free_port()}", rank=0, world_size=1)


@pytest.mark.parametrize(
    "ending, closed",
    [
        (None, True),  # the command returned
        (SystemExit(0), True),  # typer's way to end a command that succeeded
        (SystemExit(1), False),  # failed: another rank may still wait in a collective, so the group stays
    ],
)
def test_cli_closes_the_process_group_a_command_opened(monkeypatch, ending, closed):
    # an open gloo group at interpreter exit can abort a rank that finished its work (zhbert.training.process_group)
    import torch.distributed as dist

    from zhbert import cli

    def command():
        _open_group()
        if ending is not None:
            raise ending

    monkeypatch.setattr(cli, "app", command)
    try:
        if ending is None:
            cli.main()
        else:
            with pytest.raises(SystemExit):
                cli.main()
        assert dist.is_initialized() is not closed
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def test_recipe_scripts_close_the_process_group_after_their_run():
    import torch.distributed as dist

    from zhbert.recipes.arguments import run_cli

    try:
        run_cli(_open_group)
        assert not dist.is_initialized()
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
