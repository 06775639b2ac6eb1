#!/bin/bash
# How the `ner` bundle candidate of issue 36 was made wholly on the 2-core CPU machine (fifty-eighth and
# fifty-ninth sessions, 2026-12-02/03; bench/LOG.md has every run's scores): MSRA test 92.51,
# msra_test_bio.txt 92.13, 18.72 MB, against the bundled `ner`'s 90.44 / 89.91 / 19.12 MB. From the four runs
# kept on that machine, the soup and export steps below rebuilt it bit for bit (sixtieth session): its
# model.safetensors has SHA-256 4c03ae91c02cf73016f6538bcdf79326436674b5eda99453a1795a010af287c4.
#
# Four chains of two stages, then the uniform soup of the four second stages, exported to fp16 with the
# vocabulary trimmed to the characters the data uses:
#   A  the bundled `ner`'s recipe from stage 6 of `base` (bench/earlier_base.sh), without --mention-runs (about 25 min, two threads);
#   B  a 2 x 192 BiLSTM head and runs of person names, on A's model (about 30 min).
# One chain after another: about 4 h in all. Every stage saves every 200 steps; rerunning the script resumes
# an interrupted stage from its last complete checkpoint and skips finished ones (their metrics.json).
#
#   bash bench/ner_cpu_soup.sh [OUT]          # OUT defaults to runs/ner-cpu-soup; the model lands in OUT/soup-trim
#   CHAINS="11:11" OMP_NUM_THREADS=1 bash bench/ner_cpu_soup.sh OUT   # only these chains, no soup: a second process
#                                             # on the other core (run it on a chain the first process has not begun)
#   python bench/ner_split_overlap.py --dataset msra --models OUT/soup-trim       # dev, dev at test's mix, test
#   zhbert train ner --dataset msra-bio --evaluate-only OUT/soup-trim --output-dir OUT/bio   # msra_test_bio.txt
set -euo pipefail
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} TOKENIZERS_PARALLELISM=false
OUT=${1:-runs/ner-cpu-soup}
source bench/earlier_base.sh
COMMON="--dataset msra --lexicon jieba --lexicon-dim 32 --crf --batch-size 64 --init-seed 42 --score-on dev --save-steps 200"

stage() {  # OUTPUT_DIR ARGS...: one training stage, skipped once finished
  [ -f "$1/metrics.json" ] && return 0
  zhbert train ner $COMMON --output-dir "$@"
}

ALL_CHAINS="42:2 3:3 7:7 11:11"  # A's seed : B's seed (the first chain's B took seed 2)
CHAINS=${CHAINS:-$ALL_CHAINS}
runs=()
for pair in $CHAINS; do
  a=${pair%:*} b=${pair#*:}
  stage "$OUT/a-s$a" --encoder "$BASE_STAGE6" --epochs 4 --learning-rate 5e-4 --seed "$a"
  stage "$OUT/b-s$b" --encoder "$OUT/a-s$a/model" --bilstm-layers 2 --bilstm-hidden 192 --epochs 2 \
    --learning-rate 1e-4 --head-learning-rate 1e-3 --mention-runs PER --seed "$b"
  runs+=("$OUT/b-s$b/model")
done

if [ "$CHAINS" != "$ALL_CHAINS" ]; then
  echo "chains $CHAINS done; the soup needs all four: rerun without CHAINS" >&2
  exit 0
fi
zhbert soup "${runs[@]}" -o "$OUT/soup"             # checks that the runs share a recipe and a start
zhbert export "$OUT/soup" "$OUT/soup-trim" --trim-vocab
