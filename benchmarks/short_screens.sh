#!/usr/bin/env bash
# Screens of the short schedule (the `all` workflow's transformer model) at an equal
# wall-clock budget: configs/lisa_trf.cfg as it is (the baseline) and with one lever each,
# trained for MINUTES of updates (benchmarks/wall_budget.py: the config's warm-up, then the
# rate decays to zero at the budget), one screen at a time with both cores, as `all`
# trains alone, on the training documents outside the held-out share; model-last scored on
# the held-out documents and on dev (own parse, predicted predicates, strict). The rule,
# stated before the screens run: a lever moves the short schedule only if it gains at least
# 0.5 F1 on the held-out documents over the baseline of the same run (dev is reported,
# never chosen on). The steps the chosen screen reached become short_max_steps.
# Run it on an otherwise idle box: the budget is wall time.
#
#   bash benchmarks/short_screens.sh [MINUTES] [LEVERS]
#
# LEVERS (default "baseline rate_0.002 warmup_100 batch_1000 batch_2500 merge_0"):
#   rate_X     peak rate X (the config's 0.001; the encoder learns at learn_rate_scale x it)
#   warmup_N   N warm-up steps (the config's 300)
#   batch_N    batches of N padded words (the config's 1500)
#   merge_X    a share X of the sentence boundaries read as none (the config's 0.15)
# Output: training/short_screens/<lever>/ (model-last, summary.json), <lever>.log,
# metrics/short_screens/<lever>-{train_heldout,dev}.json and a table on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-45}
levers=${2:-"baseline rate_0.002 warmup_100 batch_1000 batch_2500 merge_0"}
out=training/short_screens
metrics=metrics/short_screens
mkdir -p "$out" "$metrics"

settings() {  # lever -> its wall_budget.py --set overrides
  case $1 in
    baseline) ;;
    rate_*) echo "--set training.optimizer.learn_rate.initial_rate=${1#rate_}" ;;
    warmup_*) echo "--set training.optimizer.learn_rate.warmup_steps=${1#warmup_}" ;;
    batch_*) echo "--set training.batcher.size=${1#batch_}" ;;
    merge_*) echo "--set corpora.train.merge_sentences=${1#merge_}" ;;
    *) echo "unknown lever $1" >&2; return 1 ;;
  esac
}

for lever in $levers; do settings "$lever" > /dev/null; done  # fail before training
# spacy train evaluates after its first update: on 20 held-out sentences, so that the
# budget goes to training (model-last is scored in full afterwards)
python -c "import sys, spacy; from spacy.tokens import DocBin
docs = list(DocBin().from_disk(sys.argv[1]).get_docs(spacy.blank('en').vocab))[:20]
DocBin(docs=docs, store_user_data=True).to_disk(sys.argv[2])" \
  corpus/train_heldout.spacy "$out/probe.spacy"
for lever in $levers; do
  # shellcheck disable=SC2046  # the settings are words
  python benchmarks/wall_budget.py "$minutes" configs/lisa_trf.cfg "$out/$lever" \
    --set paths.train=corpus/train_fit.spacy --set paths.dev="$out/probe.spacy" \
    --set system.seed=0 $(settings "$lever") > "$out/$lever.log" 2>&1
  for data in train_heldout dev; do
    spacy-lisa evaluate "$out/$lever/model-last" "corpus/$data.spacy" --parse model \
      --output "$metrics/$lever-$data.json" >> "$out/$lever.log" 2>&1
  done
done
# the baseline of this run, or one an earlier run scored here (at the same MINUTES)
# shellcheck disable=SC2086  # the levers are words
python benchmarks/screen_table.py "$metrics" $levers --rule 0.5 --summaries "$out"
