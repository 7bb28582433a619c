"""Dependency trees for the formats that carry none (CoNLL-2012 ``.gold_conll``: a
constituency parse; CoNLL-2005: no syntax): ``convert --parser`` parses the gold tokens
with a spaCy pipeline, and without ``--parser`` (or ``--trees``) the conversion warns
(W008) with the counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List

import pytest
import spacy
import srsly
from parser_testing import train_tiny_parser
from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab
from typer.testing import CliRunner

from spacy_lisa.cli import app

FIXTURES = Path(__file__).parent / "fixtures"
ONTONOTES_TRAIN = (
    FIXTURES / "conll2012/train/data/english/annotations/nw/lisa/00/lisa_0001.v4_gold_conll"
)
NO_PARSER = FIXTURES / "saved_pipeline" / "pipeline"  # a sentencizer and lisa_srl


def _invoke(*args: Any) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args])


def _flat(text: str) -> str:
    return " ".join(text.split())


def _docs(path: Path) -> List[Doc]:
    return list(DocBin().from_disk(path).get_docs(Vocab()))


@pytest.fixture(scope="module")
def parsers(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("parsers")
    for name, sentencizer in (("parser", False), ("split", True)):
        train_tiny_parser(sentencizer=sentencizer).to_disk(root / name)
    return {"parser": root / "parser", "split": root / "split"}


def test_conll2012_without_trees_warns_with_counts(tmp_path: Path) -> None:
    out, stats = tmp_path / "train.spacy", tmp_path / "stats.json"
    result = _invoke("convert", "conll2012", ONTONOTES_TRAIN, "-o", out, "--stats-json", stats)
    assert result.exit_code == 0, result.output
    text = _flat(result.output)
    assert "[W008] The 2 sentences (3 predicates) written to" in text
    assert "CoNLL-2012 files carry none" in text and "--parser PIPELINE" in text
    assert srsly.read_json(stats)["notes"]["sentences_without_tree"] == 2
    docs = _docs(out)
    assert not any(doc.has_annotation("DEP") for doc in docs)
    # the OntoNotes rolesets: lemma and frameset number joined
    assert [f.roleset for doc in docs for f in doc._.srl_frames] == [
        "say.01",
        "close.01",
        "buy.01",
    ]


def test_conll2012_parser_gives_each_sentence_one_tree(tmp_path: Path, parsers: dict) -> None:
    out, stats = tmp_path / "train.spacy", tmp_path / "stats.json"
    args = ["-o", out, "--stats-json", stats, "--parser", parsers["parser"]]
    result = _invoke("convert", "conll2012", ONTONOTES_TRAIN, *args)
    assert result.exit_code == 0, result.output
    assert "W008" not in result.output
    assert srsly.read_json(stats)["notes"] == {"sentences_parsed": 2}
    nlp = spacy.load(parsers["parser"])
    for doc in _docs(out):
        words = [t.text for t in doc]
        # the gold tokens and POS are kept; the tree is the parser's, one per sentence
        assert doc.has_annotation("DEP") and len(list(doc.sents)) == 1
        assert doc[0].tag_ in {"JJ", "PRP"}
        expected = nlp(Doc(nlp.vocab, words=words, sent_starts=[i == 0 for i in range(len(doc))]))
        assert [(t.head.i, t.dep_) for t in doc] == [(t.head.i, t.dep_) for t in expected]


def test_a_sentence_the_pipeline_splits_stays_one_tree(tmp_path: Path, parsers: dict) -> None:
    """A sentencizer before the parser splits at the inner '.' all the same: the later root is
    attached to the first, so the doc keeps the file's one sentence (and its roles,
    which cross the split)."""
    conll = tmp_path / "x.gold_conll"
    rows = [
        ("Ann", "NNP", "-", "-", "(ARG0*"),
        ("left", "VBD", "-", "-", "*"),
        (".", ".", "-", "-", "*"),
        ("Bob", "NNP", "-", "-", "*)"),
        ("said", "VBD", "say", "01", "(V*)"),
        (".", ".", "-", "-", "*"),
    ]
    conll.write_text(
        "".join(
            f"d 0 {i} {w} {pos} * {lemma} {frameset} - - * {prop} -\n"
            for i, (w, pos, lemma, frameset, prop) in enumerate(rows)
        ),
        encoding="utf8",
    )
    out, stats = tmp_path / "x.spacy", tmp_path / "stats.json"
    args = ["-o", out, "--stats-json", stats, "--parser", parsers["split"]]
    result = _invoke("convert", "conll2012", conll, *args)
    assert result.exit_code == 0, result.output
    (doc,) = _docs(out)
    assert len(list(doc.sents)) == 1
    assert [t.dep_ for t in doc if t.head.i != t.i and t.dep_ == "parataxis"] == ["parataxis"]
    assert srsly.read_json(stats)["notes"]["parsed_roots_merged"] == 1
    assert [(r.text, r.label_) for r in doc._.srl_frames[0].roles] == [("Ann left . Bob", "ARG0")]


def test_conll2005_parser_and_warning(tmp_path: Path, parsers: dict) -> None:
    words, props = tmp_path / "w.txt", tmp_path / "p.txt"
    words.write_text("Ann\nsold\nthe\ncar\n.\n\n", encoding="utf8")
    props.write_text("-    (A0*)\nsell (V*)\n-    (A1*\n-    *)\n-    *\n\n", encoding="utf8")
    out = tmp_path / "x.spacy"
    base = ["convert", "conll2005", "--words", words, "--props", props, "-o", out]
    result = _invoke(*base)
    assert result.exit_code == 0, result.output
    assert "[W008] The 1 sentences (1 predicates)" in _flat(result.output)
    assert "CoNLL-2005 files carry none" in _flat(result.output)
    result = _invoke(*base, "--parser", parsers["parser"])
    assert result.exit_code == 0, result.output
    assert "W008" not in result.output
    (doc,) = _docs(out)
    assert doc.has_annotation("DEP") and [r.label_ for r in doc._.srl_frames[0].roles] == [
        "ARG0",
        "ARG1",
    ]


def test_parser_errors(tmp_path: Path, parsers: dict) -> None:
    out = tmp_path / "x.spacy"
    trees = tmp_path / "t.conllu"
    trees.write_text("1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n\n", encoding="utf8")
    both = ["--trees", trees, "--parser", parsers["parser"]]
    result = _invoke("convert", "conll2012", ONTONOTES_TRAIN, "-o", out, *both)
    assert result.exit_code == 1 and "[E137]" in result.output
    for parser, code in ((NO_PARSER, "[E255]"), (tmp_path / "nothing", "[E317]")):
        result = _invoke("convert", "conll2012", ONTONOTES_TRAIN, "-o", out, "--parser", parser)
        assert result.exit_code == 1 and code in result.output, result.output
        assert "Traceback" not in result.output
    assert not out.exists()
