#!/usr/bin/env bash
# A longer masked-LM run for fill-mask (stage 7 of bench/default_model.sh): stage 6 of `base` continued with `mixed` masking (each jieba word
# whole or split into characters, at even odds) and SOP on ../shared/corpora less 2,000 documents held out
# for bench/fill_mask_probe.py. 16,000 steps of 32 x 128 token slots (65.5 M, 1.5 passes), LR 2e-4 after
# 1,000 warm-up steps, linear decay. Rerun this same command after any stop: it resumes bit-identically
# from the last complete checkpoint (one every 500 steps).
#
#   bash bench/fill_mask_long_run.sh              # THREADS=2 when the machine is otherwise idle
#   python bench/fill_mask_probe.py --heldout runs/fm/heldout.txt --model base --model run=runs/fm/run/checkpoint-N
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
THREADS=${THREADS:-1}
SHARED=${ZHBERT_SHARED:-../shared}
OUT=runs/fm
source bench/earlier_base.sh
export TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS
if [ ! -f "$OUT/train.mixed.zhcorpus" ]; then
  $PY bench/corpus_sample.py --corpus "$SHARED/corpora" --train "$OUT/train.txt" --heldout "$OUT/heldout.txt" \
      --n-train 107286 --n-heldout 2000 --seed 0
  $PY -m zhbert prepare-corpus --corpus "$OUT/train.txt" --masking mixed --tokenizer-from "$BASE_STAGE6_TRIM" \
      --num-proc 1 --output "$OUT/train.mixed.zhcorpus"
fi
exec $PY -m zhbert pretrain --corpus "$OUT/train.mixed.zhcorpus" --init "$BASE_STAGE6_TRIM" --masking mixed --sop \
    --max-length 128 --batch-size 32 --learning-rate 2e-4 --warmup 1000 --max-steps 16000 \
    --save-steps 500 --logging-steps 50 --num-proc 1 --seed 45 --output-dir "$OUT/run"
