#!/bin/bash
# How the bundled default encoder (zhbert/pretrained/base) was made, stage by stage (seven in all). Stages 1-3 exactly as run on
# the 2-core CPU machine (2026-11-21/22; bench/LOG.md has the losses and timings). Each stage is a
# plain `zhbert pretrain` continued with --init; rerunning a stage resumes it from its last complete
# checkpoint. Two stages were cut short or extended while running; the lines below replay that.
set -euo pipefail
export TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
COMMON="--corpus runs/corpus --max-length 128 --batch-size 64 --learning-rate 5e-4 --logging-steps 25 --num-proc 2"
[ -d runs/corpus ] || python corpora/build_corpus.py --output runs/corpus

stop_after() {  # run a pretraining command in the background, stop it once checkpoint $2 is complete
  "${@:3}" & local pid=$!
  until [ -f "$1/checkpoint-$2/zhbert_complete.json" ]; do sleep 5; kill -0 $pid 2>/dev/null || break; done
  kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true
}

# stage 1: wwm from scratch with BERT's N(0, 0.02) position embeddings (the default then). Planned 8,000
# steps, cut to 3,000 at step 1,000 (the resume rebuilt the linear schedule). Ended on the bag-of-words
# plateau: loss 5.66, near-uniform attention, fill-mask at the unigram level.
stop_after runs/default-mini-wwm 1000 zhbert pretrain $COMMON --masking wwm --size mini --position-init normal \
  --seed 42 --save-steps 250 --max-steps 8000 --output runs/default-mini-wwm
zhbert pretrain $COMMON --masking wwm --size mini --position-init normal --seed 42 --save-steps 250 --max-steps 3000 \
  --output runs/default-mini-wwm

# stage 2: char masking with the position embeddings overwritten by sinusoids (zhbert/training/positions.py),
# planned 800 steps; stopped once neighbour attention had begun to form, and continued from its step 400.
stop_after runs/default-mini-char2 400 zhbert pretrain $COMMON --masking char --init runs/default-mini-wwm/final \
  --position-init sinusoidal --seed 42 --save-steps 200 --max-steps 800 --output runs/default-mini-char2

# stage 3: char masking from stage 2's step 400 with a fresh schedule and data order; planned 1,000 steps,
# extended to 1,400 at step 600.
stop_after runs/default-mini-char3 600 zhbert pretrain $COMMON --masking char --init runs/default-mini-char2/checkpoint-400 \
  --seed 43 --save-steps 200 --max-steps 1000 --output runs/default-mini-char3
zhbert pretrain $COMMON --masking char --init runs/default-mini-char2/checkpoint-400 \
  --seed 43 --save-steps 200 --max-steps 1400 --output runs/default-mini-char3

zhbert export runs/default-mini-char3/final zhbert/pretrained/base   # fp16 safetensors

# stage 4 (eighth session, one NVIDIA H100): whole-word masking continued from stage 3 for 16,500 steps of
# 256 x 128 tokens (540 M token slots, 10.8 passes over 90% of the corpus) in 6.2 minutes; the steps are
# sized by a probe to fit the machine's 10-minute command limit. Details in bench/default_model_gpu.sh.
#   zhbert prepare-corpus --corpus runs/corpus --masking wwm --output runs/corpus.wwm.zhcorpus   # here, on the CPU
#   bash bench/default_model_gpu.sh DATA runs/default-mini-wwm4 505                               # there, on the GPU
#   zhbert export runs/default-mini-wwm4/stage4/final zhbert/pretrained/base                      # fp16 safetensors

# stage 5 (2026-11-23, the 2-core CPU machine, 55 min): char masking at 512 tokens continued from the bundled
# stage 4, so that positions 128-511 are trained (BERT's last-10%-at-512 phase) and in-word characters are
# predicted again (stage 4's 540 M whole-word-masked slots never hid one character inside a visible word).
zhbert pretrain --corpus runs/corpus --masking char --init zhbert/pretrained/base --max-length 512 --batch-size 16 \
  --learning-rate 3e-4 --warmup 0.05 --max-steps 700 --save-steps 100 --logging-steps 20 --num-proc 2 --seed 45 \
  --output runs/default-mini-char512
zhbert export runs/default-mini-char512/final zhbert/pretrained/base   # fp16 safetensors; records max_length 512

# stage 6 (2026-11-24, the 2-core CPU machine, 13 + 38 min): char masking plus sentence-order prediction at 128
# tokens, continued from the bundled stage 5: the 1,200-step SOP run of the pair-objective comparison
# (bench/LOG.md, "Sentence order (SOP) against NSP"), then 3,600 steps more on 200,000 documents at LR 2e-4.
python bench/corpus_sample.py --corpus runs/corpus --train runs/corpus-sample40k/sample.txt --heldout runs/corpus-heldout/heldout.txt
python bench/corpus_sample.py --corpus runs/corpus --train runs/corpus-sample200k/sample.txt \
  --heldout runs/corpus-heldout200k/heldout.txt --n-train 200000
zhbert pretrain --corpus runs/corpus-sample40k --init zhbert/pretrained/base --masking char --sop --max-length 128 \
  --batch-size 32 --learning-rate 1e-4 --max-steps 1200 --save-steps 200 --output runs/sop-cont
zhbert pretrain --corpus runs/corpus-sample200k --init runs/sop-cont/final --masking char --sop --max-length 128 \
  --batch-size 32 --learning-rate 2e-4 --max-steps 3600 --save-steps 400 --output runs/sop-long
zhbert export runs/sop-long/final zhbert/pretrained/base   # fp16; BertForPreTraining (pooler and SOP head kept)

# stage 7 (2026-12-05/06, the 2-core CPU machine, about 9 CPU-hours over four sessions): stage 6, vocabulary
# trimmed, continued with `mixed` masking (each jieba word blanked whole or as characters, at even odds) and SOP
# for 16,000 steps of 32 x 128 (65.5 M token slots, 1.5 passes over ../shared/corpora less 2,000 documents held
# out for bench/fill_mask_probe.py). Held-out fill-mask rose on modern news (char 44.2% -> 47.6%, whole-word
# 23.1% -> 27.2%) and on People's Daily (38.3% -> 40.0%, 20.7% -> 22.8%); bench/LOG.md, "The fill-mask run".
bash bench/fill_mask_long_run.sh   # starts from stage 6 as bench/earlier_base.sh reads it from git history
zhbert export runs/fm/run/final zhbert/pretrained/base --trim-vocab --overwrite   # fp16
