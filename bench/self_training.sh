#!/usr/bin/env bash
# Self-training for Weibo segmentation (issue 36, item 5): teacher -> silver labels -> student.
#
# The teacher is a lexicon segmenter trained on NLPCC-2016 Weibo gold at the recipes' standard
# budget; it segments the corpus's Weibo posts (weibo_senti_sample, never a dev/test sentence);
# the student is the same recipe, seed and budget with those silver sentences added. Both are
# scored on the NLPCC-2016 dev file (the recipe's test: the test file has no gold). Keep
# self-training only if the student gains >= 0.3 F1 there.
#
#   bash bench/self_training.sh [SEEDS...]      # default: 1; about 12 min per seed on one CPU thread
set -euo pipefail
OUT=runs/self-training
SEEDS=("${@:-1}")
COMMON=(--dataset weibo --encoder base --lexicon jieba --lexicon_dim 32 --max_train_samples 8000 --epochs 2 --learning_rate 2e-4)
for seed in "${SEEDS[@]}"; do
  T=$OUT/teacher-s$seed
  [ -f "$T/metrics.json" ] || python recipes/cws.py "${COMMON[@]}" --seed "$seed" --output_dir "$T"
  [ -s "$OUT/silver-s$seed.txt" ] || python corpora/silver_segmentation.py --teacher "$T/model" --source weibo_senti_sample \
    --chars 200000 --output "$OUT/silver-s$seed.txt"
  S=$OUT/student-s$seed
  [ -f "$S/metrics.json" ] || python recipes/cws.py "${COMMON[@]}" --seed "$seed" --extra_train "$OUT/silver-s$seed.txt" \
    --no_save_model --output_dir "$S"
done
python - "$OUT" "${SEEDS[@]}" <<'EOF'
import json, sys
out, seeds = sys.argv[1], sys.argv[2:]
print("| seed | teacher (gold only) | student (gold + silver) | change |\n|---|---:|---:|---:|")
for s in seeds:
    t, st = (json.load(open(f"{out}/{w}-s{s}/metrics.json"))["score"] for w in ("teacher", "student"))
    print(f"| {s} | {100 * t:.2f} | {100 * st:.2f} | {100 * (st - t):+.2f} |")
EOF
