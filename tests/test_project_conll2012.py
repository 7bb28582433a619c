"""The project's conll2012 workflow (convert, vectors, train, evaluate, package) on the
hand-written OntoNotes-layout fixture, with a tiny parser for the trees and a handful of
training steps: every step's outputs exist, apart from EWT's."""

from __future__ import annotations

from pathlib import Path

import pytest
import srsly
from project_testing import run_corpus_workflow
from spacy.tokens import DocBin
from spacy.vocab import Vocab

REPO = Path(__file__).resolve().parents[1]
CONLL2012 = REPO / "tests" / "fixtures" / "conll2012"


@pytest.mark.slow
def test_conll2012_workflow(tmp_path: Path) -> None:
    project = run_corpus_workflow(tmp_path, "conll2012", CONLL2012)

    # the three splits, with the OntoNotes rolesets and the parser's trees
    train = list(DocBin().from_disk(project / "corpus/conll2012/train.spacy").get_docs(Vocab()))
    assert [f.roleset for doc in train for f in doc._.srl_frames] == [
        "say.01",
        "close.01",
        "buy.01",
    ]
    assert all(doc.has_annotation("DEP") for doc in train)
    for split in ("dev", "test"):
        assert srsly.read_json(project / f"corpus/conll2012/{split}.stats.json")["sentences"] == 2
    # EWT's files are not written over (nor written)
    assert not (project / "corpus/train.spacy").exists()
    # model-best chosen on development, the frame files' rolesets among its candidates
    best = project / "training/conll2012/lisa_cpu/model-best"
    assert 'dev = "corpus/conll2012/dev.spacy"' in (best / "config.cfg").read_text()
    assert srsly.read_json(best / "lisa_srl/cfg")["sense_candidates"]["zorble"] == ["zorble.01"]
    # test scored with srl-eval.pl's counting, and its input files written
    scores = srsly.read_json(project / "metrics/conll2012/lisa_cpu-model.json")
    assert scores["convention"] == "official" and 0.0 <= scores["srl_f"] <= 1.0
    assert scores["n_docs"] == 2
    conll = project / "metrics/conll2012/lisa_cpu-conll"
    assert sorted(p.name for p in conll.iterdir()) == ["gold.props", "pred.props", "words.txt"]
    assert "Tom\ngave\n" in (conll / "words.txt").read_text()
    assert "| SRL F1 |" in (project / "metrics/conll2012/lisa_cpu.md").read_text()
    # the packaged pipeline: the parser in front of lisa_srl
    meta = srsly.read_json(project / "training/pipelines/conll2012_lisa_cpu/meta.json")
    assert meta["pipeline"][-1] == "lisa_srl" and "parser" in meta["pipeline"]
    wheels = list((project / "packages").glob("en_lisa_srl_conll2012_cpu-*/dist/*.whl"))
    assert len(wheels) == 1, wheels
