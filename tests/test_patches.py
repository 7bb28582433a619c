"""Importing spacy_lisa patches nothing: srsly's msgpack registries, Thinc's ops and
torch shim, and torch's settings are as they were after the import, after every module
of the package is imported, after spaCy loads the package's entry points and builds
``lisa_srl``, and after a saved pipeline predicts (every patch of ``spacy_lisa.patches``
is applied inside a block or to one model only).

Each check runs in a fresh interpreter: other tests open the patches' blocks on purpose.
A control applies each patch process-wide right after the import and sees the check
catch it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

SAVED_PIPELINE = Path(__file__).parent / "fixtures" / "saved_pipeline" / "pipeline"

# what each patch would change if it were applied to the process and not to a block or
# a model: srsly's codec registries, the classes Thinc's ops and shims come from,
# torch's global settings
SCRIPT = r"""
import importlib, json, pkgutil, sys
from importlib.metadata import distribution

import catalogue, spacy, srsly, torch
from srsly import msgpack as srsly_msgpack
from thinc.api import NumpyOps, Ops, PyTorchShim, get_current_ops
from thinc.shims import Shim


def attributes(obj, own_state=()):
    return {name: id(value) for name, value in vars(obj).items() if name not in own_state}


def snapshot():
    state = {}
    for name in ("msgpack_encoders", "msgpack_decoders"):
        registry = getattr(srsly_msgpack, name)
        state[f"srsly.msgpack.{name}"] = attributes(registry)
        # other packages register codecs as spaCy loads them (spacy-transformers does)
        state[f"spacy_lisa's {name}"] = sorted(
            name
            for name, codec in registry.get_all().items()
            if getattr(codec, "__module__", "").startswith("spacy_lisa")
        )
    for module, names in (
        (srsly, ("msgpack_dumps", "msgpack_loads")),
        (srsly_msgpack, ("Packer", "Unpacker", "packb", "unpackb", "dumps", "loads")),
    ):
        for name in names:
            state[f"{module.__name__}.{name}"] = id(getattr(module, name))
    for cls in (catalogue.Registry, Ops, NumpyOps, Shim, PyTorchShim, torch.nn.Module):
        # Shim.global_id: Thinc's count of the shims made
        state[f"{cls.__module__}.{cls.__qualname__}"] = attributes(cls, ("global_id",))
    state["thinc current ops"] = type(get_current_ops()).__qualname__
    state["torch settings"] = [
        torch.get_num_threads(),
        torch.is_grad_enabled(),
        str(torch.get_default_dtype()),
        torch.are_deterministic_algorithms_enabled(),
    ]
    return state


def changed(before, after):
    return sorted(key for key in before.keys() | after.keys() if before.get(key) != after.get(key))


before = snapshot()
stages = {}
import spacy_lisa  # noqa: E402

if sys.argv[2] == "apply-at-import":  # the control: each patch made process-wide
    from spacy_lisa import patches

    block = patches.cached_msgpack_codecs()  # kept: a dropped block closes itself
    block.__enter__()
    PyTorchShim.use_params = patches.AveragedPyTorchShim.use_params
    NumpyOps.gemm = patches.TorchGemmOps.gemm
    torch.set_num_threads(torch.get_num_threads() + 1)
stages["import spacy_lisa"] = changed(before, snapshot())
if sys.argv[2] == "apply-at-import":
    print(json.dumps(stages))
    sys.exit(0)

for module in pkgutil.walk_packages(spacy_lisa.__path__, "spacy_lisa."):
    if not module.name.endswith("__main__"):
        importlib.import_module(module.name)
stages["every module imported"] = changed(before, snapshot())

loaded = []
for ep in distribution("spacy-lisa").entry_points:
    if ep.group.startswith("spacy_"):  # spaCy's registries, not the console script
        ep.load()
        loaded.append(ep.name)
assert "lisa_srl" in loaded, loaded
nlp = spacy.blank("en")
nlp.add_pipe("lisa_srl")  # the default model, resolved through the registry
stages["entry points and lisa_srl built"] = changed(before, snapshot())

nlp = spacy.load(sys.argv[1])
docs = list(nlp.pipe(["John sold the car to Mary.", "She ran."]))
spacy.tokens.Doc(nlp.vocab).from_bytes(docs[0].to_bytes())
stages["a saved pipeline predicts"] = changed(before, snapshot())
print(json.dumps(stages))
"""


def run_stages(mode: str) -> Dict[str, List[str]]:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(SAVED_PIPELINE), mode],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    stages: Dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return stages


def test_importing_and_running_spacy_lisa_patches_nothing() -> None:
    stages = run_stages("plain")
    assert stages == {
        "import spacy_lisa": [],
        "every module imported": [],
        "entry points and lisa_srl built": [],
        "a saved pipeline predicts": [],
    }


def test_the_check_sees_a_patch_applied_at_import() -> None:
    changed = run_stages("apply-at-import")["import spacy_lisa"]
    assert {
        "srsly.msgpack.msgpack_encoders",
        "srsly.msgpack.msgpack_decoders",
        "thinc.shims.pytorch.PyTorchShim",
        "thinc.backends.numpy_ops.NumpyOps",
        "torch settings",
    } <= set(changed), changed
