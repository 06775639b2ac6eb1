#!/bin/bash
# Recipe rows of bench/LOG.md run on one GPU machine, several recipes at a time (a mini encoder
# leaves the GPU mostly idle; the CPU-side data work is what takes the time). JOBS holds one run per
# line, "NAME RECIPE ARGS...", longest first; each run writes OUTDIR/NAME/ (metrics.json, model/
# unless --no-save-model) and OUTDIR/NAME.log.
#   ZHBERT_SHARED=/path/to/shared bash bench/recipe_rows_gpu.sh bench/gpu_jobs/rows.txt OUTDIR [PARALLEL]
# With DEADLINE set (seconds since the epoch), a run still going then is stopped (rc=124), so a
# caller with a fixed budget keeps time for what comes after.
set -uo pipefail
JOBS=$1; OUTDIR=$2; PARALLEL=${3:-4}
export PY=${PYTHON:-python3} OUTDIR OMP_NUM_THREADS=${OMP_NUM_THREADS:-3}
mkdir -p "$OUTDIR"

one() {  # one() NAME RECIPE ARGS...: run it, print name, exit status and wall time
  local name=$1; shift
  local start=$SECONDS
  local limit=()
  [ -n "${DEADLINE:-}" ] && limit=(timeout $(( DEADLINE - $(date +%s) )))
  "${limit[@]}" $PY recipes/"$@" --output-dir "$OUTDIR/$name" > "$OUTDIR/$name.log" 2>&1
  echo "$name rc=$? $((SECONDS - start))s"
}
export -f one

xargs -P "$PARALLEL" -L 1 bash -c 'one "$@"' _ < "$JOBS"
