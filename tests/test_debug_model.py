"""`spacy debug model` runs on the lisa_srl component: the LISA model takes a
plain list of Docs as well as the component's LisaBatch."""

from __future__ import annotations

import subprocess
import sys

import spacy
from spacy.tokens import Doc, DocBin
from srl_testing import TINY_MODEL

from spacy_lisa.frames import set_srl_frames


def test_spacy_debug_model_runs_on_lisa_srl(tmp_path):
    nlp = spacy.blank("en")
    docs = []
    for words, heads, deps, frames in [
        (
            "John sold the car .".split(),
            [1, 1, 3, 1, 1],
            ["nsubj", "ROOT", "det", "obj", "punct"],
            [
                {
                    "predicate": [1, 2],
                    "roleset": "sell.01",
                    "roles": [[0, 1, "ARG0"], [2, 4, "ARG1"]],
                }
            ],
        ),
        (
            "Mary left .".split(),
            [1, 1, 1],
            ["nsubj", "ROOT", "punct"],
            [{"predicate": [1, 2], "roleset": "leave.01", "roles": [[0, 1, "ARG0"]]}],
        ),
    ]:
        doc = Doc(nlp.vocab, words=words, heads=heads, deps=deps, tags=["X"] * len(words))
        set_srl_frames(doc, frames)
        docs.append(doc)
    DocBin(docs=docs * 4, store_user_data=True).to_disk(tmp_path / "train.spacy")
    nlp.add_pipe("lisa_srl", config={"model": TINY_MODEL})
    config = nlp.config
    config["paths"]["train"] = str(tmp_path / "train.spacy")
    config["paths"]["dev"] = str(tmp_path / "train.spacy")
    config["corpora"] = {
        name: {
            "@readers": "spacy-lisa.SRLCorpus.v1",
            "path": f"${{paths.{name}}}",
            "gold_preproc": True,
        }
        for name in ("train", "dev")
    }
    config.to_disk(tmp_path / "config.cfg")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "spacy",
            "debug",
            "model",
            str(tmp_path / "config.cfg"),
            "lisa_srl",
            "-P3",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Initialized the model with the training corpus" in proc.stdout
    assert "STEP 3" in proc.stdout
