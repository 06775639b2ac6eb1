#!/bin/bash
# Stage 4 of the bundled default encoder (bench/default_model.sh has stages 1-3): whole-word masking
# on one GPU, continued from stage 3, sized to fit a fixed wall-clock budget.
#
# Prepared on the 2-core machine (the jieba pass is the slow, CPU-bound part; the GPU machine needs
# neither jieba nor the raw text):
#   zhbert prepare-corpus --corpus runs/corpus --masking wwm --output runs/corpus.wwm.zhcorpus   # 6 min, 48.7 MB
#   cp -r zhbert/pretrained/base DATA/base          # stage 3, the default bundled until then
# The full file and stage 3 (17.6 MB) together exceed the 64 MiB that travels to the GPU machine, so the
# run of 2026-11-22 used the first 90% of the documents (prepare() had shuffled them: a random 90%):
#   python -c 'from zhbert.tokenizer import build_tokenizer as b; from zhbert.training.portable_corpus import *
#   t = b(); d = load_portable_corpus("runs/corpus.wwm.zhcorpus", t, "wwm")
#   save_portable_corpus(d.select(range(int(0.9 * len(d)))), t, "DATA/corpus.wwm.zhcorpus", "wwm")'   # 40.4 MB
# On the GPU machine, from the repository root:
#   bash bench/default_model_gpu.sh DATA OUTPUT SECONDS
# A 200-step probe measures steps/s with the real settings; the main run then gets as many steps as
# fit in SECONDS (minus start-up and saving), so its linear schedule decays to zero inside the budget.
set -euo pipefail
DATA=$1; OUTPUT=$2; BUDGET=${3:-480}
START=$(date +%s); PY=${PYTHON:-python3}
COMMON=(--corpus "$DATA/corpus.wwm.zhcorpus" --init "$DATA/base" --masking wwm --max-length 128
        --batch-size 256 --learning-rate 1e-3 --logging-steps 100 --num-proc 16 --dataloader-workers 12)

$PY -m zhbert pretrain "${COMMON[@]}" --max-steps 200 --warmup 20 --save-steps 100000 --seed 1 --output "$OUTPUT/probe"
PROBE_S=$($PY - "$OUTPUT/probe/loss_log.jsonl" <<'EOF'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]  # logged at steps 100 and 200
print(round((rows[-1]["time"] - rows[-2]["time"]) / (rows[-1]["step"] - rows[-2]["step"]) * 200, 2))  # s per 200 steps, warm
EOF
)
ELAPSED=$(( $(date +%s) - START ))
STEPS=$($PY -c "print(int(($BUDGET - $ELAPSED - 60) * 200 / $PROBE_S) // 100 * 100)")
echo "probe: ${PROBE_S}s per 200 steps once warm; ${ELAPSED}s used; main run: $STEPS steps" | tee "$OUTPUT/plan.txt"

$PY -m zhbert pretrain "${COMMON[@]}" --max-steps "$STEPS" --warmup 0.05 --save-steps 100000 --seed 44 --output "$OUTPUT/stage4"
$PY -m zhbert export "$OUTPUT/stage4/final" "$OUTPUT/stage4-export"   # fp16 safetensors, as bundled
echo "done in $(( $(date +%s) - START ))s" | tee -a "$OUTPUT/plan.txt"
