#!/usr/bin/env bash
# The host's ceiling before and after a change, in one run on one (idle) machine: the pace
# of lisa_trf training and lisa_cpu prediction with their encoders shrunk to almost nothing
# (`bench_gpu.py --devices cpu --shrink`: what is left is the host work of a step, the
# most any GPU can reach), and the training reader's words/s over the first 3,000
# training sentences, for the code at BEFORE (a git worktree) and for this checkout.
#
#   bash benchmarks/host_ceiling.sh BEFORE [OUT]
#
# Needs corpus/train.spacy, corpus/dev.spacy and training/minilm_vectors (`spacy project
# run convert vectors`). Output: OUT (default metrics/host_ceiling)/{before,after}.json
# and the tables on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:?usage: bash benchmarks/host_ceiling.sh BEFORE [OUT]}
out=${2:-metrics/host_ceiling}
here=$(pwd)
mkdir -p "$out"
tree=$(mktemp -d)/before
git worktree add --detach "$tree" "$before" > /dev/null
trap 'git worktree remove --force "$tree"' EXIT

measure() {  # name tree
  local name=$1 code=$2
  echo "== $name ($(git -C "$code" rev-parse --short HEAD))"
  (cd "$code" && PYTHONPATH="$code" python benchmarks/bench_gpu.py --devices cpu --shrink \
    --configs lisa_trf,lisa_cpu --train "$here/corpus/train.spacy" --dev "$here/corpus/dev.spacy" \
    --vectors "$here/training/minilm_vectors" --output "$here/$out/$name.json")
  (cd "$code" && PYTHONPATH="$code" python - "$here/corpus/train.spacy" <<'PY'
import sys, time
import spacy
from spacy_lisa.corpus.readers import SRLCorpus
nlp = spacy.blank("en")
start = time.perf_counter()
words = sum(len(eg.reference) for eg in SRLCorpus(sys.argv[1], gold_preproc=True, limit=3000)(nlp))
print(f"training reader: {words / (time.perf_counter() - start):,.0f} words/s over {words:,} words")
PY
  )
}

measure before "$tree"
measure after "$here"
