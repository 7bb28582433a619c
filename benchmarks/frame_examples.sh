#!/usr/bin/env bash
# The PropBank frame files as data for lisa_cpu: their rolesets as sense candidates
# (initialize's propbank_frames) and their examples as extra training sentences (one
# annotated predicate each: no predicate loss for the rest of the sentence), against the
# project's lisa_cpu recipe at the same steps and seed. Every model-best is chosen on the
# held-out EWT training documents; each run is scored on the held-out frame-file examples
# (lemmas never trained on, the gold predicate given) and on dev (own parse).
#
#   bash benchmarks/frame_examples.sh [STEPS] [VARIANTS]
#
# VARIANTS (default "candidates examples both"): candidates = the rolesets only;
# examples = the examples only; both. The baseline is the project's lisa_cpu
# (training/lisa_cpu, `spacy project run all`); run this from the project after it.
# Needs corpus/train_fit.spacy, corpus/train_heldout.spacy (`convert`),
# training/minilm_vectors (`vectors`) and FRAMES_DIR (../shared/data/propbank-frames/frames).
# Output: training/frame_examples/<variant>/, metrics/frame_examples/<variant>-{frames,dev}.json
# and the baseline's; two runs at a time, one thread each.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-2800}
variants=${2:-"candidates examples both"}
frames_dir=${FRAMES_DIR:-../shared/data/propbank-frames/frames}
out=training/frame_examples
metrics=metrics/frame_examples
mkdir -p "$out" "$metrics" corpus/frames
if [ ! -f corpus/frames/heldout.spacy ]; then
  # the examples of lemmas EWT trains on are left out, so the held-out lemmas are new
  spacy-lisa convert frames --frames "$frames_dir" --output corpus/frames/train.spacy \
    --heldout-output corpus/frames/heldout.spacy --heldout-share 0.1 --seed 0 \
    --exclude-lemmas corpus/train.spacy --stats-json corpus/frames/stats.json
fi
# the EWT training documents and the frame-file examples, read as one corpus
mkdir -p corpus/frames/with_ewt
ln -sf ../../train_fit.spacy corpus/frames/with_ewt/ewt.spacy
ln -sf ../train.spacy corpus/frames/with_ewt/frames.spacy
# lisa_cpu's config with the frame files as sense candidates at initialize
python - "$frames_dir" "$out/lisa_cpu_frames.cfg" <<'EOF'
import sys
from pathlib import Path
from spacy.util import load_config
config = load_config(Path("configs/lisa_cpu.cfg"), interpolate=False)
config["initialize"].setdefault("components", {})["lisa_srl"] = {
    "propbank_frames": str(Path(sys.argv[1]).resolve())
}
config.to_disk(sys.argv[2])
EOF

run() {  # variant
  local variant=$1 config=configs/lisa_cpu.cfg train=corpus/train_fit.spacy
  case $variant in
    candidates) config=$out/lisa_cpu_frames.cfg ;;
    examples) train=corpus/frames/with_ewt ;;
    both) config=$out/lisa_cpu_frames.cfg; train=corpus/frames/with_ewt ;;
    *) echo "unknown variant $variant" >&2; return 1 ;;
  esac
  OMP_NUM_THREADS=1 python -m spacy train "$config" --output "$out/$variant" \
    --paths.train "$train" --paths.dev corpus/train_heldout.spacy \
    --paths.vectors training/minilm_vectors --gpu-id -1 --system.seed 0 \
    --training.max_steps "$steps" > "$out/$variant.log" 2>&1
  score "$out/$variant/model-best" "$variant" >> "$out/$variant.log" 2>&1
}

score() {  # model name
  OMP_NUM_THREADS=1 spacy-lisa evaluate "$1" corpus/frames/heldout.spacy --gold-predicates \
    --convention official --output "$metrics/$2-frames.json"
  OMP_NUM_THREADS=1 spacy-lisa evaluate "$1" corpus/dev.spacy --parse model \
    --output "$metrics/$2-dev.json"
}

score training/lisa_cpu/model-best baseline > "$out/baseline.log" 2>&1
# shellcheck source=benchmarks/in_pairs.sh
source benchmarks/in_pairs.sh
# shellcheck disable=SC2086  # the variants are words
in_pairs run $variants
for variant in baseline $variants; do
  python - "$metrics/$variant-frames.json" "$metrics/$variant-dev.json" "$variant" <<'EOF'
import json, sys
frames, dev = (json.load(open(p)) for p in sys.argv[1:3])
print(f"{sys.argv[3]}: frame examples role F1 {100 * frames['srl_f']:.2f}, roleset "
      f"{100 * frames['srl_sense_acc']:.2f}; dev SRL F1 {100 * dev['srl_f']:.2f}")
EOF
done
