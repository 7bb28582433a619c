#!/usr/bin/env bash
# Single pass vs predicate-aware encoding at an equal CPU budget, on EWT (configs/lisa_trf.cfg,
# MiniLM fine-tuned), one torch thread per run.
#
# Each encoding (single_pass: spacy-lisa.LISA.v1; marked: spacy-lisa.PredicateAwareLISA.v1;
# marked_upper: the same with reencode = false) trains for the number of steps it completes in the same CPU time:
# steps = budget x its training words/s (benchmarks/bench_trf_training.py --threads 1
# --encodings single_pass,marked,marked_upper, interleaved on the same batches) / ~1,013
# words per batch (batch_by_padded 1500 on corpus/train.spacy: 202 batches per epoch).
# The defaults use the ratios measured on an idle 2-core box (marked 0.21x, marked_upper
# 0.66x of the single pass; BENCHMARKS.md, Training cost): about 65 minutes of one
# thread for the single pass's 1,380 steps there, and as much for each of the others.
# Each run gets the whole schedule (warm-up 10% of its steps, linear decay to its last
# step), evaluates on dev four times and once more, at its end, with `spacy-lisa evaluate`
# (own parse, predicted predicates, strict).
#
#   bash benchmarks/predicate_encoding_budget.sh "single_pass:1380 marked:290 marked_upper:910"
#
# Output: training/encoding_budget/<encoding>/ (model-best, model-last), the training logs
# with a time stamp per line (training/encoding_budget/<encoding>.log) and
# metrics/encoding_budget/<encoding>.json. The runs go two at a time (one per core); NICE=10
# runs them at low priority beside other work (the step budgets keep the comparison fair).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-"single_pass:1380 marked:290 marked_upper:910"}
out=training/encoding_budget
mkdir -p "$out" metrics/encoding_budget

architecture() {  # encoding -> its config overrides
  local model=--components.lisa_srl.model
  case $1 in
    single_pass) echo "$model.@architectures spacy-lisa.LISA.v1" ;;
    marked) echo "$model.@architectures spacy-lisa.PredicateAwareLISA.v1" ;;
    marked_upper) echo "$model.@architectures spacy-lisa.PredicateAwareLISA.v1 $model.reencode false" ;;
    *) echo "unknown encoding: $1" >&2; exit 2 ;;
  esac
}

train() {  # encoding steps
  local encoding=$1 steps=$2
  local warmup=$(( steps / 10 )) every=$(( steps / 4 ))
  # shellcheck disable=SC2046  # the overrides are words
  set -- $(architecture "$encoding")
  OMP_NUM_THREADS=1 nice -n "${NICE:-0}" python -u -m spacy train configs/lisa_trf.cfg --output "$out/$encoding" \
    --paths.train corpus/train.spacy --paths.dev corpus/dev.spacy --gpu-id -1 --system.seed 0 \
    "$@" \
    --training.max_steps "$steps" --training.eval_frequency "$every" \
    --training.optimizer.learn_rate.warmup_steps "$warmup" 2>&1 \
    | while IFS= read -r line; do printf '%(%H:%M:%S)T %s\n' -1 "$line"; done > "$out/$encoding.log"
  OMP_NUM_THREADS=1 spacy-lisa evaluate "$out/$encoding/model-last" corpus/dev.spacy \
    --parse model --output "metrics/encoding_budget/$encoding.json" >> "$out/$encoding.log" 2>&1
}

running=0
for run in $runs; do
  train "${run%%:*}" "${run##*:}" &
  running=$(( running + 1 ))
  if [ "$running" -ge 2 ]; then wait -n; running=$(( running - 1 )); fi
done
wait
for run in $runs; do
  echo "== ${run%%:*} (${run##*:} steps): dev SRL F1 by step"
  python benchmarks/training_curve.py "$out/${run%%:*}.log" --score SRL_F
done
