#!/usr/bin/env bash
# The raw-text scores of screens already trained by lever_screens.sh: each screen's
# model-last assembled behind a senter + lemmatiser pipeline (configs/senter.cfg, e.g. the
# `all` workflow's training/senter/model-best), as `all` assembles its pipeline, then scored
# from the raw text of the held-out training documents and of dev (spacy-lisa evaluate
# --raw: the pipeline splits the sentences itself). A lever that changes what the model
# sees of sentence boundaries (merge_X) shows its effect here, not on gold sentences.
#
#   bash benchmarks/raw_screens.sh SENTER [LEVERS]
#
# Output: training/lever_screens/<lever>-pipeline/, metrics/lever_screens/<lever>-
# {train_heldout,dev}-raw.json and a table on stdout (gains against the baseline).
set -euo pipefail
cd "$(dirname "$0")/.."
senter=${1:?usage: $0 SENTER [LEVERS]}
levers=${2:-"baseline"}
out=training/lever_screens
metrics=metrics/lever_screens
for lever in $levers; do
  [ -d "$out/$lever/model-last" ] || { echo "no screen $out/$lever/model-last" >&2; exit 1; }
done
for lever in $levers; do
  python scripts/assemble_pipeline.py "$out/$lever/model-last" "$senter" \
    "$out/$lever-pipeline" --name "screen_$lever" --parse-source model
  for data in train_heldout dev; do
    spacy-lisa evaluate "$out/$lever-pipeline" "corpus/$data.docs.spacy" --raw \
      --output "$metrics/$lever-$data-raw.json" > "$out/$lever-$data-raw.log" 2>&1
  done
done
# shellcheck disable=SC2086  # the levers are words
python benchmarks/screen_table.py "$metrics" $levers --suffix -raw --label ", raw text"
