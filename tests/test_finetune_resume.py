"""A fine-tuning recipe killed part way (kill -9) resumes from its last complete checkpoint with
``--save-steps`` and ends on the same weights and dev scores as an uninterrupted run; a rerun with
other settings is refused rather than resumed. Real Resume NER sentences, a tiny encoder."""

import json
import os
import signal
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from stopped_run import shell_status, stop_after_a_checkpoint

ROOT = Path(__file__).resolve().parents[1]
# 32 sentences in batches of 8: 4 steps an epoch, 3 epochs; checkpoints at steps 4, 5, 8, 10 and 12
FLAGS = ["--dataset", "resume", "--crf", "--preset", "tiny", "--window", "64", "--max-steps", "12", "--best-epoch-on-dev"]
FLAGS += ["--save-steps", "5"]


def _ner(tiny_encoder, out, *extra, env=None):
    cmd = [sys.executable, str(ROOT / "recipes" / "ner.py"), "--encoder", str(tiny_encoder), "--output-dir", str(out), *FLAGS, *extra]
    env = {**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)


def _weights(out):
    return load_file(str(out / "model" / "model.safetensors"))


def _epoch_note(out):
    notes = json.loads((out / "metrics.json").read_text())["notes"]
    return next(n for n in notes if n.startswith("epoch chosen on dev"))


@pytest.fixture(scope="module")
def reference(tiny_encoder, tmp_path_factory):
    out = tmp_path_factory.mktemp("uninterrupted")
    r = _ner(tiny_encoder, out)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "resuming from" not in r.stderr
    return out


def test_killed_run_resumes_to_the_same_weights_and_epoch_scores(tiny_encoder, tmp_path, reference):
    r = _ner(tiny_encoder, tmp_path, env={"ZHBERT_FAULT_AT_STEP": "7"})
    assert r.returncode == -9  # SIGKILL in epoch 2, after the step-5 checkpoint
    ckpts = tmp_path / "checkpoints"
    assert (ckpts / "checkpoint-5" / "zhbert_complete.json").is_file() and not (tmp_path / "model").exists()
    assert "zhbert_epoch_state.safetensors" in json.loads((ckpts / "checkpoint-5" / "zhbert_complete.json").read_text())["files"]
    r = _ner(tiny_encoder, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "resuming from" in r.stderr and "checkpoint-5" in r.stderr
    # epoch 1 was scored before the kill: its score came back from the checkpoint, not from a rerun of it
    assert _epoch_note(tmp_path) == _epoch_note(reference)
    want, got = _weights(reference), _weights(tmp_path)
    assert want.keys() == got.keys()
    for k in want:
        torch.testing.assert_close(got[k], want[k], rtol=1e-5, atol=1e-6, msg=k)
    # a checkpoint falls at every epoch's end, holding that epoch's score; the newest two are kept
    assert sorted(p.name for p in ckpts.glob("checkpoint-*")) == ["checkpoint-10", "checkpoint-12"]

    # run again once finished: nothing is trained, the same weights are saved
    r = _ner(tiny_encoder, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "nothing left to train" in r.stderr
    assert _epoch_note(tmp_path) == _epoch_note(reference)
    for k, v in _weights(tmp_path).items():
        torch.testing.assert_close(v, want[k], rtol=1e-5, atol=1e-6, msg=k)


def test_a_rerun_with_other_settings_is_refused_not_resumed(tiny_encoder, tmp_path):
    r = _ner(tiny_encoder, tmp_path, env={"ZHBERT_FAULT_AT_STEP": "6"})
    assert r.returncode == -9
    r = _ner(tiny_encoder, tmp_path, "--learning-rate", "1e-3")
    assert r.returncode == 1
    err = r.stderr.strip().splitlines()[-1]
    assert err.startswith("error: ") and "checkpoints are from a different run" in err
    assert "config.learning_rate: null then, 0.001 now" in err and str(tmp_path / "checkpoints") in err
    r = _ner(tiny_encoder, tmp_path, "--max-train-samples", "24")
    assert r.returncode == 1 and "examples: 32 then, 24 now" in r.stderr


def test_save_steps_must_not_be_negative(tiny_encoder, tmp_path):
    r = _ner(tiny_encoder, tmp_path, "--save-steps", "-1")
    assert r.returncode == 1 and "--save-steps must be 0 (no checkpoints) or more, got -1" in r.stderr


def test_batch_order_depends_on_the_seed_and_epoch_only():
    from zhbert.training.sampling import EpochSeededLengthGroupedSampler

    lengths = [5 + (i * 37) % 90 for i in range(200)]
    sampler = EpochSeededLengthGroupedSampler(8, lengths, seed=3)
    torch.manual_seed(0)
    first = list(sampler)
    torch.rand(1000)  # other draws in between (dropout, initialisation) change nothing
    assert list(sampler) == first and sorted(first) == list(range(200))
    sampler.set_epoch(1)
    second = list(sampler)
    assert second != first and sorted(second) == list(range(200))
    assert list(EpochSeededLengthGroupedSampler(8, lengths, seed=4)) != first
    # batches of similar length, as transformers' sampler groups them: the longest example leads
    assert lengths[first[0]] == max(lengths)


def test_averaged_epochs_survive_a_checkpoint(tmp_path):
    from zhbert.training.finetune import AverageLastEpochs
    from zhbert.training.finetune_resume import EpochStateInCheckpoints

    model = torch.nn.Linear(3, 2)
    kept = AverageLastEpochs(model, 2)
    for step in range(3):  # three epochs end; the last two are kept
        with torch.no_grad():
            model.weight.add_(step + 1.0)
        kept.on_epoch_end(None, None, None)
    (tmp_path / "checkpoint-9").mkdir()
    args, state = types.SimpleNamespace(output_dir=str(tmp_path)), types.SimpleNamespace(global_step=9, is_world_process_zero=True)
    EpochStateInCheckpoints(kept).on_save(args, state, None)
    again = AverageLastEpochs(model, 2)
    EpochStateInCheckpoints(again).restore(tmp_path / "checkpoint-9")
    assert again.epochs == 3 and len(again.states) == 2
    for a, b in zip(kept.states, again.states):
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"])
def test_a_stopped_run_says_the_step_and_where_the_rerun_resumes(tiny_encoder, tmp_path, signum, status):
    flags = [f for f in FLAGS if f != "--best-epoch-on-dev"]
    flags[flags.index("--max-steps") + 1] = "5000"
    cmd = [sys.executable, str(ROOT / "recipes" / "ner.py"), "--encoder", str(tiny_encoder), "--output-dir", str(tmp_path), *flags]
    code, err = stop_after_a_checkpoint(cmd, {**os.environ, "OMP_NUM_THREADS": "1"}, tmp_path / "checkpoints", signum)
    assert shell_status(code) == status, err[-3000:]
    (line,) = [x for x in err.splitlines() if x.startswith("error:")]
    assert line.startswith(f"error: {tmp_path / 'checkpoints'}: interrupted at step ") and " of 5000; " in line, err[-3000:]
    assert "resumes from" in line and "checkpoint-" in line and "Traceback" not in err
    assert not (tmp_path / "model").exists()
