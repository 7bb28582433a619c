#!/usr/bin/env bash
# How the predicate-aware architecture marks the predicate, on the MiniLM: token type 1
# against the learned indicator embedding that encoders without token types get
# (TransformerTok2Vec.v1's predicate_mark), same data, steps and seed:
# configs/lisa_trf_marked.cfg with its schedule over STEPS steps (warm-up 10%), trained on
# the training documents outside the held-out share (scripts/split_heldout.py, 0.1) and
# scored at its last step on the held-out ones and on dev (own parse, predicted
# predicates, strict). The two runs go side by side, one torch thread each.
#
#   bash benchmarks/predicate_mark.sh [STEPS]
#
# Output: training/predicate_mark/<mark>/ and <mark>.log, metrics/predicate_mark/<mark>-
# {train_heldout,dev}.json.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-300}
out=training/predicate_mark
mkdir -p "$out" metrics/predicate_mark
if [ ! -f corpus/train_heldout.spacy ]; then
  python scripts/split_heldout.py corpus/train.spacy corpus/train_fit.spacy \
    corpus/train_heldout.spacy --share 0.1
fi

command_of() {  # mark -> its training and its two scores, as one command line
  local mark=$1
  echo "python -m spacy train configs/lisa_trf_marked.cfg --output $out/$mark" \
    "--paths.train corpus/train_fit.spacy --paths.dev corpus/train_heldout.spacy --gpu-id -1" \
    "--system.seed 0 --training.max_steps $steps --training.eval_frequency $steps" \
    "--training.optimizer.learn_rate.warmup_steps $(( steps / 10 ))" \
    "--components.lisa_srl.model.tok2vec.predicate_mark $mark" \
    "&& spacy-lisa evaluate $out/$mark/model-last corpus/train_heldout.spacy --parse model" \
    "--output metrics/predicate_mark/$mark-train_heldout.json" \
    "&& spacy-lisa evaluate $out/$mark/model-last corpus/dev.spacy --parse model" \
    "--output metrics/predicate_mark/$mark-dev.json"
}

# side by side, one thread each (logs in $out/<mark>.log)
LOG_DIR=$out bash scripts/run_parallel.sh token_type "$(command_of token_type)" \
  indicator "$(command_of indicator)"
for mark in token_type indicator; do
  for data in train_heldout dev; do
    python -c "import json, sys; m = json.load(open(sys.argv[1])); print(sys.argv[2], sys.argv[3], \
      'SRL F1 %.2f (P %.2f / R %.2f), predicate F1 %.2f' % tuple(100 * m[k] for k in \
      ('srl_f', 'srl_p', 'srl_r', 'srl_pred_f')))" \
      "metrics/predicate_mark/$mark-$data.json" "$mark" "$data"
  done
done
