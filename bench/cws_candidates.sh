#!/bin/bash
# How the unbundled `cws` and `cws-fast` candidates of issue 36 are made on the 2-core CPU machine, one command
# (the forty-second to forty-fourth sessions ran these steps by hand; bench/LOG.md has every run's scores):
#   cws       the bundle's recipe from stage 6 of `base` (bench/earlier_base.sh) with a CRF and both standards as inputs (--criteria pku,weibo):
#             recorded PKU 96.52, NLPCC-2016 Weibo dev 95.25 (criterion weibo), CityU / AS 90.83 / 91.89;
#   cws-fast  a 1 x 64 CRF student of it: cws's embeddings projected (zhbert small-encoder), trained on the
#             gold text plus 5 M characters of the teacher's `pku` reading of the corpus: recorded PKU 96.08 at
#             2.67x pkuseg's chars/s (bench/peers.py, one thread).
# Against the bundled cws 95.82 / 93.32 and cws-fast 93.63. Each step is skipped once its output exists; a
# training stage saves every 200 steps, and rerunning the script resumes it from its last complete checkpoint.
# Times on this machine alone, two threads: teacher about 50 min, silver text 15, student 20, scoring 15, pos 20.
#
#   [ENCODER=FOLDER] bash bench/cws_candidates.sh [OUT]     # OUT defaults to runs/cws-candidates; trimmed exports in OUT/*-trim, pos in OUT/pos/model,
#                                          # both with their blended default reading in OUT/cws-blend, OUT/cws-fast-blend
#   python bench/traditional.py --zhbert OUT/cws-blend                            # CityU / AS
#   python bench/peers.py --zhbert cws cws-fast OUT/cws-fast-blend --no-pos          # speed beside pkuseg and the CRF
set -euo pipefail
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} TOKENIZERS_PARALLELISM=false
OUT=${1:-runs/cws-candidates}
source bench/earlier_base.sh
ENCODER=${ENCODER:-$BASE_STAGE6}  # the teacher's encoder: a bundled name or a folder
# the student's embeddings are projected from this segmenter: the bundled `cws` as recorded, else this teacher
if [ "$ENCODER" = "$BASE_STAGE6" ]; then STUDENT_FROM=cws; else STUDENT_FROM="$OUT/cws/model"; fi
COMMON="--dataset news+weibo --criteria pku,weibo --lexicon jieba --lexicon-dim 32 --crf --batch-size 64 --save-steps 200"

stage() {  # OUTPUT_DIR ARGS...: one training stage, skipped once finished
  [ -f "$1/metrics.json" ] && return 0
  zhbert train cws $COMMON --score-on dev --output-dir "$@"
}
score() {  # MODEL OUTPUT_DIR [--score-on dev]: PKU test under `pku`, NLPCC Weibo dev under `weibo` (or the dev splits)
  [ -f "$2/metrics.json" ] || zhbert train cws --dataset news+weibo --evaluate-only "$1" --output-dir "$2" "${@:3}"
}

# the teacher (seed 2: the recorded run)
stage "$OUT/cws" --encoder "$ENCODER" --epochs 4 --learning-rate 5e-4 --seed 2
score "$OUT/cws/model" "$OUT/cws-test"

# its `pku` reading of 5 M corpus characters, written aside and renamed so an interrupted run leaves no half file
if [ ! -f "$OUT/silver.txt" ]; then
  python corpora/silver_segmentation.py --teacher "$OUT/cws/model" --criterion pku --chars 5000000 --output "$OUT/silver.part"
  mv "$OUT/silver.part" "$OUT/silver.txt"
fi

# the student: 1 x 64, one stage on gold + silver (seed 3, LR 2e-3: the pooled dev split's pick)
[ -f "$OUT/student-enc/model.safetensors" ] || zhbert small-encoder --teacher "$STUDENT_FROM" --layers 1 --hidden 64 --heads 1 --seed 3 \
  --output "$OUT/student-enc"
stage "$OUT/cws-fast" --encoder "$OUT/student-enc" --extra-train "$OUT/silver.txt" --extra-train-criterion pku \
  --bigram-dim 16 --epochs 5 --learning-rate 2e-3 --seed 3
score "$OUT/cws-fast/model" "$OUT/cws-fast-test"
score "$OUT/cws-fast/model" "$OUT/cws-fast-dev" --score-on dev

# fp16 with the vocabulary trimmed to the characters the data uses, as a bundle would ship them
for m in cws cws-fast; do
  [ -f "$OUT/$m-trim/model.safetensors" ] || zhbert export "$OUT/$m/model" "$OUT/$m-trim" --trim-vocab
done
# both as shipped: read by default between the two standards (the reading bench/cws_default_criterion.py chose on
# the dev splits for both), `pku` and `weibo` kept by name
for m in cws cws-fast; do
  [ -f "$OUT/$m-blend/model.safetensors" ] || zhbert export "$OUT/$m/model" "$OUT/$m-blend" --trim-vocab --blend-criteria mixed
done
# `pos` reads cws's own features and is tied to its weights by SHA-256, so it is retrained on the shipped export
[ -f "$OUT/pos/model/metrics.json" ] || python -m zhbert.pos_on_segmenter --segmenter "$OUT/cws-blend" --epochs 3 --learning-rate 3e-3 \
  --output-dir "$OUT/pos"

python - "$OUT" <<'EOF'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
for name in ("cws-test", "cws-fast-test", "cws-fast-dev"):
    m = json.loads((out / name / "metrics.json").read_text())
    f1 = {k: round(100 * v["f1"], 2) for k, v in m["metrics"].items() if isinstance(v, dict) and "f1" in v}
    print(name, m["scored_on"], f1)
print("pos", json.loads((out / "pos" / "model" / "metrics.json").read_text())["metrics"])
for name in ("cws-blend", "cws-fast-blend", "pos/model"):
    print(name, sum(f.stat().st_size for f in (out / name).iterdir()), "bytes")
EOF
