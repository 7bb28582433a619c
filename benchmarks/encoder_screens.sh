#!/usr/bin/env bash
# Screens of the base-size encoder at an equal wall-clock budget: all-mpnet-base-v2 with
# 0, 2 and 4 trainable top blocks (configs/lisa_trf_base.cfg with all 12 blocks, layer
# mix on, the frozen part cached) against lisa_trf (MiniLM fine-tuned), same data and
# seed, all trained at once (one torch thread each, so that they share the cores alike)
# for MINUTES of updates (benchmarks/wall_budget.py: the rate decays to zero at the
# budget), on the training documents outside the held-out share, then model-last scored
# on the held-out documents and on dev (own parse, predicted predicates, strict). The
# rule: the best MPNet screen moves on only if it beats lisa_trf by at least 1.0 F1 on
# the held-out documents.
#
#   bash benchmarks/encoder_screens.sh [MINUTES] [SCREENS]
#
# SCREENS (default "minilm mpnet_0 mpnet_2 mpnet_4"): minilm is lisa_trf as it is;
# mpnet_T is lisa_trf_base, whole, with trainable_layers T; minilm_T is lisa_trf with its
# top T blocks trained and the rest frozen and cached.
# Needs assets/all-mpnet-base-v2 (spacy project run encoder-mpnet) and the converted
# corpus. Output: training/encoder_screens/<screen>/ (model-last, summary.json, log),
# metrics/encoder_screens/<screen>-{train_heldout,dev}.json and a table on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-60}
screens=${2:-"minilm mpnet_0 mpnet_2 mpnet_4"}
out=training/encoder_screens
metrics=metrics/encoder_screens
mkdir -p "$out" "$metrics"
tok2vec=components.lisa_srl.model.tok2vec
# all 12 blocks under a layer mix, as these screens ran lisa_trf_base.cfg (its batcher has
# since become lisa_trf.cfg's length buckets)
whole_mixed="--set $tok2vec.num_layers=null --set $tok2vec.layer_mix=true"

settings() {  # screen -> its config and --set overrides
  case $1 in
    minilm) echo "configs/lisa_trf.cfg" ;;
    minilm_*) echo "configs/lisa_trf.cfg --set $tok2vec.trainable_layers=${1#minilm_}" \
      "--set $tok2vec.cache_tokens=1000000" ;;
    # all frozen: the pooled outputs of all 13 states per token are kept (float16,
    # 300,000 tokens x 13 x 768 x 2 bytes = 6 GB at most)
    mpnet_0) echo "configs/lisa_trf_base.cfg $whole_mixed --set $tok2vec.trainable_layers=0" \
      "--set $tok2vec.cache_tokens=300000" ;;
    mpnet_*) echo "configs/lisa_trf_base.cfg $whole_mixed" \
      "--set $tok2vec.trainable_layers=${1#mpnet_} --set $tok2vec.cache_tokens=1000000" ;;
    *) echo "unknown screen $1" >&2; return 1 ;;
  esac
}

run() {  # screen
  local screen=$1 args
  args=$(settings "$screen")
  # shellcheck disable=SC2086  # the settings are words
  OMP_NUM_THREADS=1 python benchmarks/wall_budget.py "$minutes" $args "$out/$screen" \
    --set paths.train=corpus/train_fit.spacy --set paths.dev="$out/probe.spacy" \
    --set system.seed=0 > "$out/$screen.log" 2>&1
  for data in train_heldout dev; do
    OMP_NUM_THREADS=1 spacy-lisa evaluate "$out/$screen/model-last" "corpus/$data.spacy" \
      --parse model --output "$metrics/$screen-$data.json" >> "$out/$screen.log" 2>&1
  done
}

for screen in $screens; do settings "$screen" > /dev/null; done  # fail before training
# spacy train evaluates after its first update: on 20 held-out sentences, so that the
# budget goes to training (model-last is scored in full afterwards)
python -c "import sys, spacy; from spacy.tokens import DocBin
docs = list(DocBin().from_disk(sys.argv[1]).get_docs(spacy.blank('en').vocab))[:20]
DocBin(docs=docs, store_user_data=True).to_disk(sys.argv[2])" \
  corpus/train_heldout.spacy "$out/probe.spacy"
[ -f assets/all-mpnet-base-v2/model.safetensors ] || case $screens in
  *mpnet*) echo "assets/all-mpnet-base-v2 missing: spacy project run encoder-mpnet" >&2; exit 1 ;;
esac
pids=()
for screen in $screens; do run "$screen" & pids+=($!); done
for pid in "${pids[@]}"; do wait "$pid"; done
python - "$out" "$metrics" $screens <<'PY'
import json, sys
from pathlib import Path
out, metrics, screens = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
def f1(screen, data):
    return 100 * json.loads((metrics / f"{screen}-{data}.json").read_text())["srl_f"]
print("| screen | held-out F1 | dev F1 | minutes | steps | words/s | peak RSS (GB) | cache hits |")
print("|---|---|---|---|---|---|---|---|")
for screen in screens:
    s = json.loads((out / screen / "summary.json").read_text())
    looked = s.get("cache_hits", 0) + s.get("cache_misses", 0)
    hits = f"{100 * s['cache_hits'] / looked:.1f}%" if looked else ""
    print(f"| {screen} | {f1(screen, 'train_heldout'):.2f} | {f1(screen, 'dev'):.2f} | "
          f"{s['seconds'] / 60:.1f} | {s['steps']} | {s['words_per_second']:.0f} | "
          f"{s['peak_rss_mb'] / 1024:.1f} | {hits} |")
if "minilm" in screens:
    base = f1("minilm", "train_heldout")
    mpnet = [s for s in screens if s.startswith("mpnet")]
    if mpnet:
        best = max(mpnet, key=lambda s: f1(s, "train_heldout"))
        gain = f1(best, "train_heldout") - base
        verdict = "moves on" if gain >= 1.0 else "does not move on"
        print(f"\nbest MPNet screen {best}: {gain:+.2f} held-out F1 over minilm: {verdict}")
PY
