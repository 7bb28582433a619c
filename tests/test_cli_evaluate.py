"""End-to-end test of ``spacy-lisa evaluate``: train a tiny ``lisa_srl`` pipeline (and a
tiny spaCy parser), save them, evaluate through the typer app."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from srl_testing import TINY_MODEL, overfit
from typer.testing import CliRunner

from spacy_lisa.cli import app
from spacy_lisa.frames import set_srl_frames

pytestmark = pytest.mark.slow

# words, tags, heads (absolute), deps, frames: (predicate index, [(start, end, label)])
SENTENCES: List[Tuple[List[str], List[str], List[int], List[str], List[Any]]] = [
    (
        "John sold the car to Mary .".split(),
        ["NNP", "VBD", "DT", "NN", "IN", "NNP", "."],
        [1, 1, 3, 1, 5, 1, 1],
        ["nsubj", "ROOT", "det", "obj", "case", "obl", "punct"],
        [(1, [(0, 1, "ARG0"), (2, 4, "ARG1"), (4, 6, "ARG2")])],
    ),
    (
        "Mary bought a book yesterday .".split(),
        ["NNP", "VBD", "DT", "NN", "NN", "."],
        [1, 1, 3, 1, 1, 1],
        ["nsubj", "ROOT", "det", "obj", "obl:tmod", "punct"],
        [(1, [(0, 1, "ARG0"), (2, 4, "ARG1"), (4, 5, "ARGM-TMP")])],
    ),
    (
        "The dog that barked ran away .".split(),
        ["DT", "NN", "WDT", "VBD", "VBD", "RB", "."],
        [1, 4, 3, 1, 4, 4, 4],
        ["det", "nsubj", "nsubj", "acl:relcl", "ROOT", "advmod", "punct"],
        [
            (3, [(0, 2, "ARG0"), (2, 3, "R-ARG0")]),
            (4, [(0, 4, "ARG0"), (5, 6, "ARGM-DIR")]),
        ],
    ),
    (
        "The car , John said , was sold .".split(),
        ["DT", "NN", ",", "NNP", "VBD", ",", "VBD", "VBN", "."],
        [1, 7, 4, 4, 7, 4, 7, 7, 7],
        ["det", "nsubj:pass", "punct", "nsubj", "parataxis", "punct", "aux:pass", "ROOT", "punct"],
        # "said" has a discontinuous ARG1: "The car" ... "was sold"
        [(4, [(0, 2, "ARG1"), (3, 4, "ARG0"), (6, 8, "C-ARG1")]), (7, [(0, 2, "ARG1")])],
    ),
    (
        "Nice weather today .".split(),
        ["JJ", "NN", "NN", "."],
        [1, 1, 1, 1],
        ["amod", "ROOT", "obl:tmod", "punct"],
        [],
    ),
]


SCORE_KEYS = ("srl_p", "srl_r", "srl_f", "srl_pred_p", "srl_pred_r", "srl_pred_f")
ACCURACY_KEYS = ("srl_uas", "srl_las", "srl_pos_acc")


# gold lemmas: the props files' target column; pred.props must repeat them
LEMMAS = {"sold": "sell", "bought": "buy", "barked": "bark", "ran": "run", "said": "say"}


UPOS = {"NNP": "PROPN", "VBD": "VERB", "VBN": "VERB", "NN": "NOUN", "JJ": "ADJ"}


def gold_doc(nlp: Language, sentence: Tuple[Any, ...]) -> Doc:
    words, tags, heads, deps, frames = sentence
    pos = [UPOS.get(t, "X") for t in tags]
    lemmas = [LEMMAS.get(w, w.lower()) for w in words]
    doc = Doc(nlp.vocab, words=words, tags=tags, pos=pos, lemmas=lemmas, heads=heads, deps=deps)
    set_srl_frames(
        doc,
        [
            {
                "predicate": [p, p + 1],
                "lemma": LEMMAS[words[p]],
                "roleset": f"{LEMMAS[words[p]]}.01",
                "roles": [list(r) for r in roles],
            }
            for p, roles in frames
        ],
    )
    return doc


def examples(nlp: Language) -> List[Example]:
    return [Example(nlp.make_doc(" ".join(s[0])), gold_doc(nlp, s)) for s in SENTENCES]


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Path]:
    root = tmp_path_factory.mktemp("evaluate")
    # the lisa_srl pipeline
    nlp = spacy.blank("en")
    nlp.add_pipe("lisa_srl", config={"model": TINY_MODEL})
    overfit(nlp, examples(nlp), steps=40).to_disk(root / "lisa")
    # a plain spaCy tagger + parser pipeline, for --parser
    parser_nlp = spacy.blank("en")
    parser_nlp.add_pipe("tagger")
    # min_action_freq=1: with the default (30) every label of 5 sentences collapses into
    # "dep" and spaCy cannot find gold transitions (E1031)
    parser_nlp.add_pipe("parser", config={"min_action_freq": 1})
    parser_train = examples(parser_nlp)
    optimizer = parser_nlp.initialize(lambda: parser_train)
    for _ in range(10):
        parser_nlp.update(parser_train, sgd=optimizer)
    parser_nlp.to_disk(root / "parser")
    # gold data, plus one doc without SRL annotation (no gold: not evaluated)
    doc_bin = DocBin(store_user_data=True)
    for sentence in SENTENCES:
        doc_bin.add(gold_doc(nlp, sentence))
    doc_bin.add(Doc(nlp.vocab, words=["No", "SRL", "here"]))
    doc_bin.to_disk(root / "dev.spacy")
    unannotated = DocBin(store_user_data=True)
    unannotated.add(Doc(nlp.vocab, words=["No", "SRL", "here"]))
    unannotated.to_disk(root / "plain.spacy")
    return {
        "root": root,
        "lisa": root / "lisa",
        "parser": root / "parser",
        "data": root / "dev.spacy",
        "plain": root / "plain.spacy",
    }


def run(*args: Any) -> Any:
    return CliRunner().invoke(app, ["evaluate", *[str(a) for a in args]])


def check_scores(scores: Dict[str, Any], parse: str) -> None:
    for key in SCORE_KEYS + ACCURACY_KEYS:
        assert isinstance(scores[key], float), key
        assert 0.0 <= scores[key] <= 1.0, key
    assert scores["speed"] > 0
    assert scores["parse"] == parse
    assert scores["n_docs"] == len(SENTENCES)  # the unannotated doc is not evaluated
    assert scores["n_gold_frames"] == sum(len(s[4]) for s in SENTENCES)
    per_type = scores["srl_per_type"]
    counts = scores["srl_per_type_counts"]
    assert set(per_type) == set(counts)
    # the discontinuous ARG1 of "said" is one ARG1; C-ARG1 is never its own type
    assert "C-ARG1" not in counts and "V" not in counts
    gold_args = sum(len(roles) for s in SENTENCES for _, roles in s[4]) - 1
    assert sum(c["gold"] for c in counts.values()) == gold_args
    for label, prf in per_type.items():
        assert set(prf) == {"p", "r", "f"}
        assert all(0.0 <= v <= 1.0 for v in prf.values()), label


def read_blocks(path: Path) -> List[List[List[str]]]:
    """Sentences of a CoNLL column file: lists of rows of whitespace-split columns."""
    blocks: List[List[List[str]]] = [[]]
    for line in path.read_text(encoding="utf8").splitlines():
        if line.strip():
            blocks[-1].append(line.split())
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


def check_props(path: Path, n_frames_per_sentence: List[int]) -> None:
    blocks = read_blocks(path)
    assert [len(b) for b in blocks] == [len(s[0]) for s in SENTENCES]
    for block, n_frames in zip(blocks, n_frames_per_sentence, strict=True):
        # first column: the predicate ("-" elsewhere); one column per predicate after it
        targets = [row[0] for row in block]
        assert sum(t != "-" for t in targets) == n_frames
        assert all(len(row) == 1 + n_frames for row in block)
        for column in range(1, 1 + n_frames):
            tags = "".join(row[column] for row in block)
            assert tags.count("(") == tags.count(")")  # brackets balance
            assert "(V*" in tags  # the predicate's own V


def test_evaluate_model_parse_writes_json_and_props(paths: Dict[str, Path]) -> None:
    out = paths["root"] / "model.json"
    conll = paths["root"] / "conll"
    result = run(paths["lisa"], paths["data"], "--parse", "model", "--output", out,
                 "--conll-dir", conll, "--batch-size", 2)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "SRL F" in result.output and "ARG0" in result.output
    scores = json.loads(out.read_text(encoding="utf8"))
    check_scores(scores, "model")
    words = read_blocks(conll / "words.txt")
    assert [[row[0] for row in b] for b in words] == [s[0] for s in SENTENCES]
    check_props(conll / "gold.props", [len(s[4]) for s in SENTENCES])
    pred_blocks = read_blocks(conll / "pred.props")
    n_pred = [sum(row[0] != "-" for row in block) for block in pred_blocks]
    check_props(conll / "pred.props", n_pred)
    assert sum(n_pred) == scores["n_pred_frames"]
    # a predicted predicate carries the gold file's target string (srl-eval.pl pairs
    # props by position and counts every gold argument as missed if the targets differ)
    gold_blocks = read_blocks(conll / "gold.props")
    for gold_block, pred_block in zip(gold_blocks, pred_blocks, strict=True):
        for gold_row, pred_row in zip(gold_block, pred_block, strict=True):
            if gold_row[0] != "-" and pred_row[0] != "-":
                assert pred_row[0] == gold_row[0]


def test_evaluate_gold_parse(paths: Dict[str, Path]) -> None:
    out = paths["root"] / "gold.json"
    result = run(paths["lisa"], paths["data"], "--parse", "gold", "--output", out)
    assert result.exit_code == 0, result.output
    scores = json.loads(out.read_text(encoding="utf8"))
    check_scores(scores, "gold")
    # the model followed the injected gold parse, so the parse it used is the gold one
    assert scores["srl_uas"] == 1.0 and scores["srl_las"] == 1.0


def test_evaluate_external_parser(paths: Dict[str, Path]) -> None:
    out = paths["root"] / "doc.json"
    result = run(paths["lisa"], paths["data"], "--parse", "doc", "--parser", paths["parser"],
                 "--output", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    scores = json.loads(out.read_text(encoding="utf8"))
    check_scores(scores, "doc")
    assert scores["parser"] == str(paths["parser"])


def test_evaluate_with_gold_predicates(paths: Dict[str, Path]) -> None:
    out = paths["root"] / "gold-predicates.json"
    result = run(paths["lisa"], paths["data"], "--gold-predicates", "--output", out)
    assert result.exit_code == 0, result.output
    scores = json.loads(out.read_text(encoding="utf8"))
    check_scores(scores, "model")
    # the model labels exactly the gold predicates: none found, none missed
    assert scores["predicates"] == "gold"
    assert scores["srl_pred_p"] == 1.0 and scores["srl_pred_r"] == 1.0
    assert scores["n_pred_frames"] == scores["n_gold_frames"]
    # raw text has no gold tokens to put the predicates on
    result = run(paths["lisa"], paths["data"], "--gold-predicates", "--raw")
    assert result.exit_code == 1 and "E259" in result.output


def test_evaluate_reports_input_errors(paths: Dict[str, Path]) -> None:
    # --parse doc, but the pipeline has no parser before lisa_srl
    result = run(paths["lisa"], paths["data"], "--parse", "doc")
    assert result.exit_code == 1 and "E254" in result.output
    # --parser only makes sense with --parse doc
    result = run(paths["lisa"], paths["data"], "--parse", "model", "--parser", paths["parser"])
    assert result.exit_code == 1 and "E258" in result.output
    # a pipeline without lisa_srl
    result = run(paths["parser"], paths["data"])
    assert result.exit_code == 1 and "E314" in result.output
    # data without any SRL annotation
    result = run(paths["lisa"], paths["plain"])
    assert result.exit_code == 1 and "E257" in result.output


SRL_EVAL = Path(__file__).resolve().parents[2] / "shared" / "tools" / "srl-eval.pl"


def test_evaluate_official_convention_matches_srl_eval(paths: Dict[str, Path]) -> None:
    if not SRL_EVAL.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"srl-eval.pl not found at {SRL_EVAL}: CI must run this check")
        pytest.skip(f"srl-eval.pl not found at {SRL_EVAL}")
    out = paths["root"] / "official.json"
    conll = paths["root"] / "conll-official"
    result = run(paths["lisa"], paths["data"], "--convention", "official", "--output", out,
                 "--conll-dir", conll, "--sense-baseline", paths["data"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "convention: official" in result.output and "SENSE ACC" in result.output
    scores = json.loads(out.read_text(encoding="utf8"))
    assert scores["convention"] == "official"
    perl = subprocess.run(
        ["perl", str(SRL_EVAL), str(conll / "gold.props"), str(conll / "pred.props")],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    expected = {}
    for line in perl.splitlines():
        cols = line.split()
        if len(cols) == 7 and cols[1].isdigit() and cols[0] not in ("Overall", "V"):
            expected[cols[0]] = (int(cols[1]), int(cols[2]), int(cols[3]))
    counts = {
        label: (c["correct"], c["excess"], c["missed"])
        for label, c in scores["srl_per_type_counts"].items()
    }
    assert counts == expected
    # senses: the model's and the lemma-MFS baseline's (trained on the same data: all right)
    assert 0.0 <= scores["srl_sense_acc"] <= 1.0
    assert scores["srl_sense_acc_mfs"] == 1.0
    assert set(scores["srl_pred_per_pos"]) <= {"VERB", "AUX", "NOUN", "ADJ", "other"}


def test_evaluate_rejects_unknown_convention(paths: Dict[str, Path]) -> None:
    result = run(paths["lisa"], paths["data"], "--convention", "perl")
    assert result.exit_code != 0 and "perl" in result.output
