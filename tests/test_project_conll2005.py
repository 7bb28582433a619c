"""The project's conll2005 workflow (convert, vectors, train, evaluate, package) on
hand-written CoNLL-2005 words/props files, with a tiny parser for the trees and a handful
of training steps: every step's outputs exist, apart from EWT's."""

from __future__ import annotations

from pathlib import Path

import pytest
import srsly
from project_testing import run_corpus_workflow
from spacy.tokens import DocBin
from spacy.vocab import Vocab

REPO = Path(__file__).resolve().parents[1]
CONLL2005 = REPO / "tests" / "fixtures" / "conll2005"


@pytest.mark.slow
def test_conll2005_workflow(tmp_path: Path) -> None:
    project = run_corpus_workflow(tmp_path, "conll2005", CONLL2005)

    # the three splits, PropBank's labels (A0 read as ARG0), the parser's trees
    train = list(DocBin().from_disk(project / "corpus/conll2005/train.spacy").get_docs(Vocab()))
    assert len(train) == 4 and all(doc.has_annotation("DEP") for doc in train)
    assert [r.label_ for r in train[0]._.srl_frames[0].roles] == ["ARG0", "ARG1", "ARG2"]
    for split in ("dev", "test"):
        assert srsly.read_json(project / f"corpus/conll2005/{split}.stats.json")["sentences"] == 2
    assert not (project / "corpus/train.spacy").exists()  # EWT's files untouched
    best = project / "training/conll2005/lisa_cpu/model-best"
    assert 'dev = "corpus/conll2005/dev.spacy"' in (best / "config.cfg").read_text()
    # test scored with srl-eval.pl's counting, and its input files written
    scores = srsly.read_json(project / "metrics/conll2005/lisa_cpu-model.json")
    assert scores["convention"] == "official" and scores["n_docs"] == 2
    conll = project / "metrics/conll2005/lisa_cpu-conll"
    assert sorted(p.name for p in conll.iterdir()) == ["gold.props", "pred.props", "words.txt"]
    assert "| SRL F1 |" in (project / "metrics/conll2005/lisa_cpu.md").read_text()
    wheels = list((project / "packages").glob("en_lisa_srl_conll2005_cpu-*/dist/*.whl"))
    assert len(wheels) == 1, wheels
