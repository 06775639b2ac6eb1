#!/usr/bin/env bash
# The long pretraining run of the objective the pilot chose (ELECTRA, bench/objective_pilot.sh): 100,000 steps
# of 32 x 128 token slots (409.6 M) continuing every part of the pilot's ELECTRA run from its last checkpoint,
# LR 2e-4 after 2,000 warm-up steps, linear decay. Rerun this same command after any stop: it resumes
# bit-identically from the last complete checkpoint (one every 500 steps, about 20 minutes on one thread).
#
#   bash bench/encoder_long_run.sh            # one thread (THREADS=1) from start to end
#   python bench/encoder_curve.py --run runs/long/electra   # the dev-probe curve, one point per call
#
# Keep THREADS as the run began: with another thread count a step's loss is the same but its gradients are
# summed in another order, so the run would go on with other rounding, no longer bit for bit.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
THREADS=${THREADS:-1}
INIT=runs/pilot/electra/checkpoint-2750
OUT=runs/long/electra
if ! ls -d "$OUT"/checkpoint-* >/dev/null 2>&1 && [ ! -f "$INIT/config.json" ]; then
  # a fresh machine: the pilot's ELECTRA run again, on one thread; its start is seeded, so every rerun on the
  # same kind of CPU reaches the same weights (the first pilot, before 19eede8, drew its generator unseeded)
  source bench/pilot_settings.sh
  source bench/earlier_base.sh
  OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $PY -m zhbert pretrain "${pilot_common[@]}" --init "$BASE_STAGE6" --objective electra \
      --max-steps "$PILOT_ELECTRA_STEPS" --output-dir runs/pilot/electra
fi
mkdir -p "$OUT"
OMP_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS exec $PY -m zhbert pretrain --corpus runs/corpus.wwm.zhcorpus --init "$INIT" \
    --objective electra --masking wwm --max-length 128 --batch-size 32 --learning-rate 2e-4 --warmup 2000 \
    --max-steps 100000 --save-steps 500 --logging-steps 50 --num-proc 1 --seed 43 --output-dir "$OUT"
