#!/usr/bin/env bash
# Label-attention ablation (BENCHMARKS.md): train each config with the same budget and seed,
# each model-best chosen on the held-out training documents, evaluate on dev with the
# model's own parse and the gold parse, and write one markdown table.
# Usage: scripts/ablate.sh "TRAIN_OVERRIDES" CONFIG...
#   e.g. scripts/ablate.sh "--training.max_steps 600" sa_cpu lisa_cpu lisa_lan lisa_lal lisa_rel
set -euo pipefail
overrides=$1; shift
mkdir -p training/ablation metrics/ablation
files=(); names=()
for config in "$@"; do
  out=training/ablation/$config
  # shellcheck disable=SC2086  # the overrides are several words on purpose
  python -m spacy train "configs/$config.cfg" --output "$out" --paths.train corpus/train_fit.spacy \
    --paths.dev corpus/train_heldout.spacy $overrides
  for parse in model gold; do
    spacy-lisa evaluate "$out/model-best" corpus/dev.spacy --parse "$parse" \
      --output "metrics/ablation/$config-$parse.json"
    files+=("metrics/ablation/$config-$parse.json"); names+=(--names "$config/$parse")
  done
done
python scripts/metrics_table.py "${files[@]}" "${names[@]}" --output metrics/ablation/table.md
