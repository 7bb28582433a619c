#!/usr/bin/env bash
# Screens of the transformer recipe's untried levers at an equal budget: configs/lisa_trf.cfg
# as it is (the baseline) and with one lever each, same data, steps and seed, trained on the
# training documents outside the held-out share (scripts/split_heldout.py, 0.1) and scored
# at the last step on the held-out ones and on dev (own parse, predicted predicates,
# strict). Two runs at a time, one torch thread each: the next lever starts as soon as
# either run ends. A lever moves on if it gains at least RULE F1 (default 0.5) over the
# baseline on the held-out documents; dev is reported, not read.
#
#   [RULE=2.0] bash benchmarks/lever_screens.sh [STEPS] [LEVERS]
#
# LEVERS (default "baseline ema layer_mix"; layer-wise rate decay and first-piece pooling,
# screened here before, were removed from the tok2vec as not kept):
#   ema          parameter averages (Thinc's use_averages) for prediction
#   layer_mix    a softmax-weighted mix of all hidden states, fine-tuned with them
#   rate_0.2, rate_0.8  learn_rate_scale 0.2 or 0.8 instead of the config's 0.4 (chosen
#                on dev before the held-out rule: the held-out screen of that choice)
#   top_N        only the top N blocks fine-tuned, the rest frozen and their output cached
#                (trainable_layers N, cache_tokens 1,000,000)
#   mpnet        all-mpnet-base-v2 (assets/all-mpnet-base-v2: `spacy project run
#                encoder-mpnet`) instead of MiniLM, all 12 blocks fine-tuned at the config's
#                settings
#   mpnet_cut_N  the same cut to its lower N blocks (num_layers N)
#   warmup_N     N warm-up steps (the config's 300)
#   merge_X      a share X of the sentence boundaries read as none (the config's 0.15)
#   buckets      batches from length-sorted buffers of 2,048 sentences in random order
#                (spacy-lisa.shuffled_length_buckets.v1) and the encoder's calls cut at
#                1,024 padded wordpieces (max_batch_wordpieces): a tenth of the padding
# Output: training/lever_screens/<lever>/ and <lever>.log, metrics/lever_screens/<lever>-
# {train_heldout,dev}.json, and a table on stdout (gains against the baseline scored here,
# in this run or an earlier one).
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-1000}
levers=${2:-"baseline ema layer_mix"}
out=training/lever_screens
metrics=metrics/lever_screens
mkdir -p "$out" "$metrics"
if [ ! -f corpus/train_heldout.spacy ]; then
  python scripts/split_heldout.py corpus/train.spacy corpus/train_fit.spacy \
    corpus/train_heldout.spacy --share 0.1
fi
tok2vec=components.lisa_srl.model.tok2vec
mpnet=assets/all-mpnet-base-v2

overrides() {  # lever -> its spacy train overrides
  case $1 in
    baseline) ;;
    ema) echo "--training.optimizer.use_averages true" ;;
    layer_mix) echo "--$tok2vec.layer_mix true" ;;
    rate_*) echo "--$tok2vec.learn_rate_scale ${1#rate_}" ;;
    # only the top N blocks fine-tuned, the frozen part's output of each window cached
    top_*) echo "--$tok2vec.trainable_layers ${1#top_} --$tok2vec.cache_tokens 1000000" ;;
    warmup_*) echo "--training.optimizer.learn_rate.warmup_steps ${1#warmup_}" ;;
    merge_*) echo "--corpora.train.merge_sentences ${1#merge_}" ;;
    mpnet) echo "--paths.transformer_model $mpnet" ;;
    mpnet_cut_*) echo "--paths.transformer_model $mpnet --$tok2vec.num_layers ${1#mpnet_cut_}" ;;
    buckets) echo "--training.batcher.@batchers spacy-lisa.shuffled_length_buckets.v1" \
      "--training.batcher.buffer 2048 --$tok2vec.max_batch_wordpieces 1024" ;;
    *) echo "unknown lever $1" >&2; return 1 ;;
  esac
}

command_of() {  # lever -> its training and its two scores, as one command line
  local lever=$1 extra
  extra=$(overrides "$lever")
  echo "python -m spacy train configs/lisa_trf.cfg --output $out/$lever" \
    "--paths.train corpus/train_fit.spacy --paths.dev corpus/train_heldout.spacy --gpu-id -1" \
    "--system.seed 0 --training.max_steps $steps --training.eval_frequency $steps $extra" \
    "&& spacy-lisa evaluate $out/$lever/model-last corpus/train_heldout.spacy --parse model" \
    "--output $metrics/$lever-train_heldout.json" \
    "&& spacy-lisa evaluate $out/$lever/model-last corpus/dev.spacy --parse model" \
    "--output $metrics/$lever-dev.json"
}

for lever in $levers; do overrides "$lever" > /dev/null; done  # fail before training
# a pool of two (scripts/run_parallel.sh per lever: one thread, log in $out/<lever>.log);
# a failed run stops the other and the script
pids=()
stop_all() {
  kill "${pids[@]}" 2>/dev/null
  exit 1
}
running=0  # started and not yet waited for: each `wait -n` collects one
# shellcheck disable=SC2086  # the levers are words
for lever in $levers; do
  if [ "$running" -ge 2 ]; then
    wait -n || stop_all
    running=$(( running - 1 ))
  fi
  LOG_DIR=$out bash scripts/run_parallel.sh "$lever" "$(command_of "$lever")" &
  pids+=("$!")
  running=$(( running + 1 ))
done
while [ "$running" -gt 0 ]; do
  wait -n || stop_all
  running=$(( running - 1 ))
done
# the baseline of this run, or one an earlier run scored here (run it at the same STEPS)
# shellcheck disable=SC2086  # the levers are words
python benchmarks/screen_table.py "$metrics" $levers --rule "${RULE:-0.5}"
