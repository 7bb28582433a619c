#!/usr/bin/env bash
# Install a packaged pipeline wheel into a fresh virtualenv and label one sentence.
# Usage: scripts/smoke_package.sh packages/en_lisa_srl_ewt_cpu-0.1.0
set -euo pipefail
package_dir=$1
wheel=$(ls "$package_dir"/dist/*.whl | head -n 1)
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=$(mktemp -d)/venv
python3 -m venv "$venv"
# spacy-lisa comes from this checkout (no index has it); torch pinned in the same command
"$venv/bin/pip" install -q torch==2.13.0 "$repo" "$wheel"
name=$(basename "$wheel" | cut -d- -f1)
"$venv/bin/python" - "$name" <<'PY'
import sys
import spacy

nlp = spacy.load(sys.argv[1])
doc = nlp("The company sold its shares to investors last year.")
assert isinstance(doc._.srl_frames, list)
for frame in doc._.srl_frames:
    print(frame.predicate.text, frame.roleset, [(r.label_, r.text) for r in frame.roles])
print("smoke OK:", sys.argv[1], len(doc._.srl_frames), "frames")
PY
rm -rf "$(dirname "$venv")"
