#!/usr/bin/env bash
# Self-training for Weibo segmentation (issue 36, item 5): teacher -> silver labels -> student.
#
# The teacher is a lexicon segmenter trained on NLPCC-2016 Weibo gold at the recipes' standard
# budget; it segments the corpus's Weibo posts (weibo_senti_sample, never a dev/test sentence);
# the student is the same recipe, seed and budget with those silver sentences added. Both are
# scored on the NLPCC-2016 dev file (the recipe's test: the test file has no gold). Keep
# self-training only if the student gains >= 0.3 F1 there.
#
# TEACHER=cws takes the bundled segmenter (trained on all of NLPCC-2016 Weibo and People's Daily,
# a stronger model than the student) as the teacher instead of the same-budget one; MIN_WORD_SCORE=0.5
# keeps only the silver sentences whose every word the teacher scores at 0.5 or more; WEIGHT=0.5 makes
# each silver sentence's loss count half a gold sentence's (--extra_train_weight). SOURCES="weibo_senti_sample
# zhihu_archive reviews_sophonplus" CHARS=450000 takes more social-web text than the Weibo posts alone
# (CHARS shared equally among the SOURCES; the Weibo sample holds 150 k characters).
#
#   bash bench/self_training.sh [SEEDS...]      # default: 1; about 12 min per seed on one CPU thread
#   TEACHER=cws bash bench/self_training.sh 1 2
#   TEACHER=cws MIN_WORD_SCORE=0.5 bash bench/self_training.sh 1 2
#   TEACHER=cws WEIGHT=0.5 bash bench/self_training.sh 1 2
#   TEACHER=cws WEIGHT=0.5 SOURCES="weibo_senti_sample zhihu_archive reviews_sophonplus" CHARS=450000 bash bench/self_training.sh 1 2
set -euo pipefail
OUT=runs/self-training
SEEDS=("${@:-1}")
TEACHER=${TEACHER:-}
MIN_WORD_SCORE=${MIN_WORD_SCORE:-0}
WEIGHT=${WEIGHT:-1}
SOURCES=${SOURCES:-weibo_senti_sample}
CHARS=${CHARS:-200000}
read -ra SOURCE_LIST <<< "$SOURCES"
COMMON=(--dataset weibo --encoder base --lexicon jieba --lexicon_dim 32 --max_train_samples 8000 --epochs 2 --learning_rate 2e-4)
# runs are named by what differs: student-s1, student-cws-s1, student-cws-min0.5-s1, student-cws-w0.5-s1
SILVER_SUFFIX=${TEACHER:+-$(basename "$TEACHER")}$([ "$MIN_WORD_SCORE" = 0 ] || echo "-min$MIN_WORD_SCORE")
[ "$SOURCES $CHARS" = "weibo_senti_sample 200000" ] || SILVER_SUFFIX+="-${#SOURCE_LIST[@]}src-$CHARS"
SUFFIX=$SILVER_SUFFIX$([ "$WEIGHT" = 1 ] || echo "-w$WEIGHT")
for seed in "${SEEDS[@]}"; do
  T=$OUT/teacher-s$seed  # the gold-only run: the baseline, and the teacher unless TEACHER is set
  [ -f "$T/metrics.json" ] || python recipes/cws.py "${COMMON[@]}" --seed "$seed" --output_dir "$T"
  S=$OUT/student$SUFFIX-s$seed
  if [ -n "$TEACHER" ]; then SILVER=$OUT/silver$SILVER_SUFFIX.txt; else SILVER=$OUT/silver-s$seed$SILVER_SUFFIX.txt; fi  # a fixed teacher: one silver file
  [ -s "$SILVER" ] || python corpora/silver_segmentation.py --teacher "${TEACHER:-$T/model}" \
    "${SOURCE_LIST[@]/#/--source=}" --chars "$CHARS" --min-word-score "$MIN_WORD_SCORE" --output "$SILVER"
  [ -f "$S/metrics.json" ] || python recipes/cws.py "${COMMON[@]}" --seed "$seed" --extra_train "$SILVER" \
    --extra_train_weight "$WEIGHT" --no_save_model --output_dir "$S"
done
python - "$OUT" "$SUFFIX" "${SEEDS[@]}" <<'EOF'
import json, sys
out, suffix, seeds = sys.argv[1], sys.argv[2], sys.argv[3:]
student = f"student{suffix}"
print(f"| seed | gold only | {student} (gold + silver) | change |\n|---|---:|---:|---:|")
for s in seeds:
    t, st = (json.load(open(f"{out}/{w}-s{s}/metrics.json"))["score"] for w in ("teacher", student))
    print(f"| {s} | {100 * t:.2f} | {100 * st:.2f} | {100 * (st - t):+.2f} |")
EOF
