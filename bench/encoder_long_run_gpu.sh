#!/usr/bin/env bash
# The long run (bench/encoder_long_run.sh) continued on a CUDA GPU from one of its CPU checkpoints: the token slots
# it still had to see (409.6 M in all), at 256 blocks of 128 a step instead of 32, in as many steps as a time
# budget allows. Every part of the ELECTRA pair continues from the checkpoint's weights; the optimizer starts fresh
# (its state is not carried), so the learning rate warms up again over 300 steps to 5e-4 (the CPU run's 2e-4 at
# 8x the batch, scaled by the square root, rounded to ELECTRA-small's published rate), then decays linearly to 0.
#
#   bash bench/encoder_long_run_gpu.sh trial INIT SAMPLE.zhcorpus        # seconds per step at this batch -> $STEP_FILE
#   bash bench/encoder_long_run_gpu.sh run INIT CORPUS.zhcorpus OUTDIR SECONDS   # train, ending within SECONDS
#
# `run` reads the trial's step time, prepares the corpus (cached beside it), then fits the step count to the time
# left, so that the schedule ends (learning rate 0) inside the budget. Checkpoints every 500 steps; a stop by the
# time limit leaves the last complete one.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}
STEP_FILE=${STEP_FILE:-/tmp/zhbert-gpu-step-seconds}
BATCH=${BATCH:-256}
WORKERS=${WORKERS:-12}
NUM_PROC=${NUM_PROC:-16}
LR=${LR:-5e-4}
WARMUP=${WARMUP:-300}
SEED=${SEED:-44}
SLOTS_LEFT=${SLOTS_LEFT:-$((409600000 - 12500 * 32 * 128))}  # after checkpoint-12500 of the CPU run
start=$(date +%s)
mode=$1 init=$2 corpus=$3
common=(--init "$init" --objective electra --masking wwm --max-length 128 --batch-size "$BATCH" --dataloader-workers "$WORKERS"
    --num-proc "$NUM_PROC" --seed "$SEED")

if [ "$mode" = trial ]; then
  trial=$(mktemp -d /tmp/zhbert-trial.XXXX)
  $PY -m zhbert pretrain --corpus "$corpus" "${common[@]}" --learning-rate "$LR" --warmup 20 --max-steps 150 \
      --save-steps 1000 --logging-steps 10 --output-dir "$trial/run"
  # the median seconds per step between log rows: epoch boundaries of the small sample (workers restart) stay out
  $PY - "$trial/run/loss_log.jsonl" "$STEP_FILE" <<'EOF'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
steps = [(b["time"] - a["time"]) / (b["step"] - a["step"]) for a, b in zip(rows[1:], rows[2:])]
median = statistics.median(steps)
print(f"trial: {len(rows)} log rows, seconds per step median {median:.4f} (min {min(steps):.4f}, max {max(steps):.4f});",
      f"last loss {rows[-1]['loss']:.3f}")
open(sys.argv[2], "w").write(f"{median}\n")
EOF
  exit 0
fi

[ "$mode" = run ] || { echo "usage: $0 trial|run ..." >&2; exit 2; }
out=$4 seconds=$5
step_s=$(cat "$STEP_FILE")
# the corpus once through its Arrow cache and packing, as pretrain will read it, so the step count below counts
# only the time left
$PY - "$init" "$corpus" "$NUM_PROC" <<'EOF'
import sys, time
from zhbert.tokenizer import load_tokenizer
from zhbert.training.portable_corpus import load_portable_corpus
from zhbert.training.pretrain_data import pack
t = time.time()
tok = load_tokenizer(sys.argv[1])
blocks = pack(load_portable_corpus(sys.argv[2], tok, "wwm"), tok, 128, num_proc=int(sys.argv[3]))
print(f"corpus: {len(blocks):,} blocks of 128 in {time.time() - t:.0f} s")
EOF
now=$(date +%s)
left=$((start + seconds - now))
# 75 s for start-up, the final save and the copy out; 8% for the steps' spread
steps=$($PY -c "import sys; s=float(sys.argv[1]); n=min(int(sys.argv[2]) // ($BATCH * 128), int(0.92 * (int(sys.argv[3]) - 75) / s)); print(max(n // 500 * 500, 500))" \
    "$step_s" "$SLOTS_LEFT" "$left")
echo "run: $steps steps of $BATCH x 128 ($((steps * BATCH * 128)) token slots of $SLOTS_LEFT left), ${step_s} s/step measured, ${left} s left"
status=0
timeout --foreground -k 20 -s TERM $((left - 30)) $PY -m zhbert pretrain --corpus "$corpus" "${common[@]}" --learning-rate "$LR" --warmup "$WARMUP" \
    --max-steps "$steps" --save-steps 500 --logging-steps 100 --output-dir "$out" || status=$?
echo "pretrain exit status $status after $(($(date +%s) - start)) s"
exit $status
