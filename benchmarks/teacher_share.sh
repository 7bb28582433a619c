#!/usr/bin/env bash
# Choose the distilled lisa_cpu's teacher_share and training budget on EWT *train*: one
# student per share, trained on the documents outside the held-out share
# (corpus/train_fit.teacher.spacy, from `spacy project run teacher-labels`) and evaluated
# on the held-out documents (corpus/train_heldout.teacher.spacy) every 400 steps; dev is
# never looked at. The students train side by side, one thread each
# (scripts/run_parallel.sh).
#
#   bash benchmarks/teacher_share.sh "0.5 0.8" 4400 [CORPUS_DIR]
#
# CORPUS_DIR (default corpus) holds train_fit.teacher.spacy and train_heldout.teacher.spacy,
# so that the labels of several teachers can sit side by side.
# Output: training/teacher_share/<share>/ and training/logs/teacher_share_<share>.log; the
# script ends with each share's held-out curve (step, SRL F1) and its best step.
set -euo pipefail
cd "$(dirname "$0")/.."
shares=${1:-"0.5 0.8"}
steps=${2:-4400}
corpus=${3:-corpus}
args=()
for share in $shares; do
  args+=("teacher_share_$share" "python -m spacy train configs/lisa_cpu.cfg \
    --output training/teacher_share/$share --paths.train $corpus/train_fit.teacher.spacy \
    --paths.dev $corpus/train_heldout.teacher.spacy --gpu-id -1 --system.seed 0 \
    --training.max_steps $steps --training.eval_frequency 400 \
    --components.lisa_srl.loss_weights.teacher $share")
done
bash scripts/run_parallel.sh "${args[@]}"
for share in $shares; do
  echo "== teacher_share $share: held-out SRL F1 by step"
  python benchmarks/training_curve.py "training/logs/teacher_share_$share.log" --score SRL_F
done
