#!/usr/bin/env bash
# The pretraining-objective pilot: masked LM (wwm) against ELECTRA (wwm generator), both continuing
# stage 6 of `base` (bench/earlier_base.sh) on the default corpus, same shape, batch, learning rate and seed, at equal CPU time
# (3,500 MLM steps and 2,750 ELECTRA steps: about 6,100 CPU-seconds each on this project's CPU), one
# thread each, side by side; then the fixed dev probes of both and of `base`. Every step is skipped once
# done and the runs resume bit-identically, so rerun this after any stop.
#
#   bash bench/objective_pilot.sh [OUT]        # OUT defaults to runs/pilot
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/pilot}
mkdir -p "$OUT"
source bench/pilot_settings.sh
source bench/earlier_base.sh
common=("${pilot_common[@]}")
pids=()
for run in "mlm 3500" "electra $PILOT_ELECTRA_STEPS"; do
  set -- $run
  if [ ! -f "$OUT/$1/final/config.json" ]; then
    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $PY -m zhbert pretrain "${common[@]}" --init "$BASE_STAGE6" --objective "$1" --max-steps "$2" \
        --output-dir "$OUT/$1" >> "$OUT/$1.log" 2>&1 &
    pids+=($!)
  fi
done
for pid in "${pids[@]}"; do wait "$pid"; done
# fill-mask from the encoder itself: a masked-LM head continued 300 steps on the discriminator
[ -f "$OUT/electra-mlm-head/final/config.json" ] || $PY -m zhbert pretrain "${common[@]}" --init "$OUT/electra/final" \
    --objective mlm --max-steps 300 --output-dir "$OUT/electra-mlm-head" >> "$OUT/electra-mlm-head.log" 2>&1
$PY bench/encoder_probes.py --encoder "$BASE_STAGE6" --encoder "$OUT/mlm/final" --encoder "$OUT/electra/final" \
    --fill-mask-model "$OUT/electra/final=$OUT/electra/final/generator" --output "$OUT/probes"
$PY bench/encoder_probes.py --encoder "$OUT/electra-mlm-head/final" --output "$OUT/probes-mlm-head" --only none   # fill-mask only
