#!/usr/bin/env bash
# Out-of-fold teacher labels for the distilled lisa_cpu. `teacher-labels` lets the teacher
# label the very sentences it was trained on, where it is near gold (97.7 F1 on its own
# training sentences) and teaches little beyond the gold labels. Here the training
# documents outside the held-out share are cut into FOLDS folds by document; teacher k
# trains on the other folds and labels fold k only, so every label comes from a teacher
# that never saw the sentence. The student then trains as `train-distilled` trains it
# (same config, share and budget) on those labels, its model-best chosen on the held-out
# documents; it is scored on dev (own parse). It is kept if dev reaches 62.4 or more.
#
#   bash benchmarks/oof_teachers.sh [FOLDS] [TEACHER_STEPS] [STUDENT_STEPS]
#
# FOLDS default 2; TEACHER_STEPS 1600 (the teacher recipe's budget); STUDENT_STEPS 4400
# (project.yml's distill_max_steps). Environment: TEACHER_CONFIG (lisa_trf_marked, the
# project's teacher_config), TEACHER_SHARE (0.8, its teacher_share), GPU_ID (-1: on the
# CPU the teachers train two at a time, one thread each; on a GPU one after another),
# TRANSFORMER (paths.transformer_model, if the teacher's config has one).
# Every stage is skipped when its output exists, so a run cut short goes on where it
# stopped; a training cut mid-run starts again (train_once). Run it from the project after
# `convert` and `vectors` (corpus/train_fit.spacy, corpus/train_heldout.spacy, corpus/dev.spacy,
# training/minilm_vectors). Output: corpus/oof/, training/oof/, metrics/oof/ and a table
# (stdout and metrics/oof/table.md).
set -euo pipefail
cd "$(dirname "$0")/.."
folds=${1:-2}
teacher_steps=${2:-1600}
student_steps=${3:-4400}
teacher_config=${TEACHER_CONFIG:-lisa_trf_marked}
teacher_share=${TEACHER_SHARE:-0.8}
gpu_id=${GPU_ID:--1}
# torch threads per training: on the CPU one each (the teachers train two at a time, and the
# student as benchmarks/teacher_share.sh trained the project's), on a GPU two
threads=1
[ "$gpu_id" -ge 0 ] && threads=2
# the teachers are evaluated at half their budget (an even one) and at its end: spacy train
# scores only multiples of eval_frequency, and the config's 400 skips the end of most budgets
teacher_eval=$teacher_steps
[ $((teacher_steps % 2)) = 0 ] && teacher_eval=$((teacher_steps / 2))
corpus=corpus/oof
out=training/oof
metrics=metrics/oof
mkdir -p "$corpus/labels" "$out" "$metrics"
overrides=()
[ -n "${TRANSFORMER:-}" ] && overrides+=(--paths.transformer_model "$TRANSFORMER")

# the folds, by a stable hash of the document id (as scripts/split_heldout.py holds out)
if [ ! -f "$corpus/fold0.spacy" ]; then
  python - corpus/train_fit.spacy "$corpus" "$folds" <<'EOF'
import sys, zlib
from pathlib import Path
import spacy
from spacy.tokens import DocBin
from spacy_lisa.corpus.docbin import DOC_ID_KEY
source, out, folds = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
parts = [DocBin(store_user_data=True) for _ in range(folds)]
for doc in DocBin().from_disk(source).get_docs(spacy.blank("en").vocab):
    doc_id = doc.user_data.get(DOC_ID_KEY)
    if doc_id is None:
        sys.exit(f"{source}: a doc without {DOC_ID_KEY}: convert it with spacy-lisa convert")
    parts[zlib.crc32(doc_id.encode("utf8")) % folds].add(doc)
for k, part in enumerate(parts):
    part.to_disk(out / f"fold{k}.spacy")
    print(f"fold {k}: {len(part)} sentences")
EOF
fi
for k in $(seq 0 $((folds - 1))); do  # what teacher k trains on: every fold but k
  mkdir -p "$corpus/without$k"
  for j in $(seq 0 $((folds - 1))); do
    [ "$j" = "$k" ] || ln -sf "../fold$j.spacy" "$corpus/without$k/fold$j.spacy"
  done
done

train_once() {  # OUT LOG CONFIG ARGS...: spacy train into OUT.part, renamed OUT when it
  # ends, so that the model-best a cut run leaves behind is never taken for the end
  local dir=$1 log=$2
  shift 2
  [ -d "$dir" ] && return
  rm -rf "$dir.part"
  python -m spacy train "$@" --output "$dir.part" > "$log" 2>&1
  mv "$dir.part" "$dir"
}

teacher() {  # fold k: train teacher k, then label fold k (and teacher 0 the held-out docs)
  local k=$1
  OMP_NUM_THREADS=$threads train_once "$out/teacher$k" "$out/teacher$k.log" \
    "configs/$teacher_config.cfg" --paths.train "$corpus/without$k" \
    --paths.dev corpus/train_heldout.spacy --gpu-id "$gpu_id" --system.seed 0 \
    --training.max_steps "$teacher_steps" --training.eval_frequency "$teacher_eval" \
    "${overrides[@]}"
  if [ ! -f "$corpus/labels/fold$k.teacher.spacy" ]; then
    OMP_NUM_THREADS=$threads python scripts/teacher_labels.py "$out/teacher$k/model-best" \
      "$corpus/fold$k.spacy" "$corpus/fold$k.teacher.spacy.part" --gpu-id "$gpu_id" \
      >> "$out/teacher$k.log" 2>&1
    mv "$corpus/fold$k.teacher.spacy.part" "$corpus/labels/fold$k.teacher.spacy"
  fi
  if [ "$k" = 0 ] && [ ! -f "$corpus/heldout.teacher.spacy" ]; then
    OMP_NUM_THREADS=$threads python scripts/teacher_labels.py "$out/teacher0/model-best" \
      corpus/train_heldout.spacy "$corpus/heldout.teacher.spacy" --gpu-id "$gpu_id" \
      >> "$out/teacher0.log" 2>&1
  fi
}
# shellcheck source=benchmarks/in_pairs.sh
source benchmarks/in_pairs.sh
if [ "$gpu_id" -ge 0 ]; then
  for k in $(seq 0 $((folds - 1))); do teacher "$k"; done
else
  # shellcheck disable=SC2046  # the folds are words
  in_pairs teacher $(seq 0 $((folds - 1)))
fi

# the student, as train-distilled trains it, on the out-of-fold labels (a folder of files)
OMP_NUM_THREADS=$threads train_once "$out/student" "$out/student.log" configs/lisa_cpu.cfg \
  --paths.train "$corpus/labels" --paths.dev "$corpus/heldout.teacher.spacy" \
  --gpu-id "$gpu_id" --system.seed 0 --training.max_steps "$student_steps" \
  --components.lisa_srl.loss_weights.teacher "$teacher_share"
for data in train_heldout dev; do
  spacy-lisa evaluate "$out/student/model-best" "corpus/$data.spacy" --parse model \
    --gpu-id "$gpu_id" --output "$metrics/student-$data.json" > "$metrics/student-$data.log" 2>&1
done
python - "$metrics" <<'EOF' | tee "$metrics/table.md"
import json, sys
from pathlib import Path
metrics = Path(sys.argv[1])
f1 = {d: 100 * json.loads((metrics / f"student-{d}.json").read_text())["srl_f"]
      for d in ("train_heldout", "dev")}
print("| student | held-out F1 | dev F1 | kept (dev >= 62.4) |")
print("|---|---|---|---|")
print(f"| out-of-fold teachers | {f1['train_heldout']:.2f} | {f1['dev']:.2f} | "
      f"{'yes' if f1['dev'] >= 62.4 else 'no'} |")
EOF
