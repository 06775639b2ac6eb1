# The objective pilot's shared settings, sourced by objective_pilot.sh and encoder_long_run.sh (which reruns
# the pilot's ELECTRA run on a fresh machine): the corpus, built once, and the flags both pilot runs share.
PY=${PY:-.venv/bin/python}
[ -d runs/corpus ] || $PY corpora/build_corpus.py --output runs/corpus
[ -f runs/corpus.wwm.zhcorpus ] || $PY -m zhbert prepare-corpus --corpus runs/corpus --masking wwm --output runs/corpus.wwm.zhcorpus
pilot_common=(--corpus runs/corpus.wwm.zhcorpus --masking wwm --max-length 128 --batch-size 32 --learning-rate 3e-4
              --save-steps 250 --logging-steps 25 --num-proc 1 --seed 42)
PILOT_ELECTRA_STEPS=2750
