#!/bin/bash
# Issue 36 on one GPU machine, in one call of BUDGET seconds: candidates for the bundled `ner` and
# `cws` (word features; settings chosen on the dev split, never on test) and recipe rows.
#   bash bench/word_features_gpu.sh bench/gpu_jobs/word_features.txt WORKDIR BUDGET PARALLEL RETURNDIR
# 1. every job of the list trains, several at a time, until BUDGET - 100 s (bench/recipe_rows_gpu.sh);
#    the ner/cws candidates score on --score-on dev;
# 2. each saved candidate is scored on test (ner: the SOURCES.md MSRA split and msra_test_bio.txt;
#    cws: PKU test and the NLPCC-2016 dev file);
# 3. the best candidate of each task by its dev score is exported in fp16 (as bundled) and its
#    weights split into 15 MB parts for the GPU machine's file limit; logs and scores go in runs.tgz.
# Back on the CPU machine: cat PARTS > model.safetensors beside the tgz's export folder.
# What the GPU machine needs besides the repository (wheels, jieba, datasets): bench/gpu_carry.sh.
set -uo pipefail
JOBS=$1; WORK=$2; BUDGET=${3:-575}; PARALLEL=${4:-7}; RET=${5:-$WORK/return}
START=$(date +%s); PY=${PYTHON:-python3}
export PY DEADLINE=$(( START + BUDGET - 100 ))
mkdir -p "$WORK" "$RET"
bash bench/recipe_rows_gpu.sh "$JOBS" "$WORK" "$PARALLEL"

echo "test scores at $(( $(date +%s) - START ))s"; mkdir -p "$WORK/test"
for model in "$WORK"/*/model; do
  [ -d "$model" ] || continue
  name=$(basename "$(dirname "$model")"); task=${name%%-*}
  case $task in ner) sets="msra msra-bio";; cws) sets="news+weibo";; *) continue;; esac
  for s in $sets; do
    timeout $(( START + BUDGET - 30 - $(date +%s) )) $PY recipes/$task.py --dataset $s --evaluate-only "$model" \
      --output-dir "$WORK/test/$name-$s" > "$WORK/test/$name-$s.log" 2>&1 &
  done
done; wait

$PY - "$WORK" <<'PYEOF' > "$WORK/summary.txt"
import json, pathlib, sys
work = pathlib.Path(sys.argv[1])
rows = []
for m in sorted(work.glob("*/metrics.json")):
    if m.parent.name == "test":
        continue
    r = json.loads(m.read_text())
    # the test sets by exact name: a prefix glob would give run "a" the scores of run "a-lr2e-4" too
    names = {f"{m.parent.name}-{s}" for s in ("msra", "msra-bio", "news+weibo")}
    tests = {t.parent.name: json.loads(t.read_text())["score"] for t in work.glob("test/*/metrics.json") if t.parent.name in names}
    rows.append((m.parent.name, r["scored_on"], r["score"], tests))
    print(f"{m.parent.name:24s} {r['scored_on']:5s} {r['score']:.4f} {tests}")
for task in ("ner", "cws"):
    cands = [r for r in rows if r[0].startswith(task + "-") and r[1] == "dev" and (work / r[0] / "model").is_dir()]
    if cands:
        print("best", task, max(cands, key=lambda r: r[2])[0])
PYEOF
cat "$WORK/summary.txt"
for task in ner cws; do
  best=$(awk -v t=$task '$1 == "best" && $2 == t {print $3}' "$WORK/summary.txt")
  [ -n "$best" ] || continue
  $PY -m zhbert export "$WORK/$best/model" "$WORK/export-$task" > "$WORK/export-$task.log" 2>&1 &&
    split -b 15000000 -d "$WORK/export-$task/model.safetensors" "$RET/$task-$best.safetensors.part"
done
tar czf "$RET/runs.tgz" --exclude='*.safetensors' --exclude='checkpoint-*' -C "$WORK" .
echo "done in $(( $(date +%s) - START ))s"; ls -la "$RET"
