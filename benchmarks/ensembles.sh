#!/usr/bin/env bash
# The ensemble option (spacy-lisa ensemble) for lisa_cpu: the project's model (seed 0,
# training/lisa_cpu of `spacy project run all-cpu`) and SEEDS more trained the same way (on
# the training documents outside the held-out share, model-best on the held-out ones),
# then the members averaged two and three at a time. Each single model and ensemble is
# scored on the held-out documents and on dev with its own parse (`evaluate` also prints
# words/s: the evaluations run one after another, alone), and, as the packaged pipeline
# behind the project's parser, on the raw dev text. The option ships if it gains at least
# 0.7 F1 on dev over the single model.
#
#   bash benchmarks/ensembles.sh [SEEDS] [STEPS]
#
# SEEDS default "1 2" (trained side by side, one thread each); STEPS default 2800 (the
# project's max_steps). Run from the project after `spacy project run all-cpu` (it needs
# corpus/train_fit.spacy, corpus/train_heldout.spacy, training/minilm_vectors,
# training/parser and training/lisa_cpu). Output: training/ensembles/, metrics/ensembles/
# and a table on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-"1 2"}
steps=${2:-2800}
out=training/ensembles
metrics=metrics/ensembles
mkdir -p "$out" "$metrics"

training=()  # NAME COMMAND pairs for scripts/run_parallel.sh (logs in $out/seedN.log)
for seed in $seeds; do
  [ -d "$out/seed$seed/model-best" ] || training+=("seed$seed" "python -m spacy train \
    configs/lisa_cpu.cfg --output $out/seed$seed --paths.train corpus/train_fit.spacy \
    --paths.dev corpus/train_heldout.spacy --paths.vectors training/minilm_vectors \
    --gpu-id -1 --system.seed $seed --training.max_steps $steps")
done
[ ${#training[@]} -eq 0 ] || LOG_DIR=$out bash scripts/run_parallel.sh "${training[@]}"

# the members as packaged pipelines (the project's parser in front, as `evaluate` builds)
member() {  # seed -> its lisa_srl training directory
  if [ "$1" = 0 ]; then echo training/lisa_cpu; else echo "$out/seed$1"; fi
}
for seed in 0 $seeds; do
  python scripts/assemble_pipeline.py "$(member "$seed")/model-best" training/parser/model-best \
    "$out/pipeline_seed$seed" --name "lisa_srl_ewt_cpu_seed$seed" > /dev/null
done
set -- 0 $seeds
runs=("seed0")
spacy-lisa ensemble "$out/pipeline_seed0" "$out/pipeline_seed$2" --output "$out/ensemble2"
runs+=("ensemble2")
if [ $# -ge 3 ]; then
  spacy-lisa ensemble "$out/pipeline_seed0" "$out/pipeline_seed$2" "$out/pipeline_seed$3" \
    --output "$out/ensemble3"
  runs+=("ensemble3")
fi
for seed in $seeds; do runs+=("seed$seed"); done

for run in "${runs[@]}"; do
  case $run in seed*) model="$out/pipeline_$run" ;; *) model="$out/$run" ;; esac
  for data in train_heldout dev; do
    spacy-lisa evaluate "$model" "corpus/$data.spacy" --parse model \
      --output "$metrics/$run-$data.json" > "$metrics/$run-$data.log" 2>&1
  done
  spacy-lisa evaluate "$model" corpus/dev.docs.spacy --raw --output "$metrics/$run-raw.json" \
    > "$metrics/$run-raw.log" 2>&1
done
python - "$metrics" "${runs[@]}" <<'PY'
import json, sys
from pathlib import Path
metrics, runs = Path(sys.argv[1]), sys.argv[2:]
def score(run, data, key="srl_f"):
    value = json.loads((metrics / f"{run}-{data}.json").read_text()).get(key)
    return "-" if value is None else (f"{value:,.0f}" if key == "speed" else f"{100 * value:.2f}")
print("| model | held-out F1 | dev F1 | raw-text F1 | dev predicate F1 | words/s (dev, evaluate) |")
print("|---|---|---|---|---|---|")
for run in runs:
    print(f"| {run} | {score(run, 'train_heldout')} | {score(run, 'dev')} | {score(run, 'raw')} "
          f"| {score(run, 'dev', 'srl_pred_f')} | {score(run, 'dev', 'speed')} |")
PY
