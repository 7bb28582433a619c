"""Raw-text evaluation (``spacy-lisa evaluate --raw``): documents rebuilt from sentence
Docs, frames matched by character offsets, gold spans the predicted tokenisation cannot
reach counted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from srl_testing import TINY_MODEL
from typer.testing import CliRunner

from spacy_lisa.cli import app
from spacy_lisa.corpus.docbin import DOC_ID_KEY
from spacy_lisa.frames import set_srl_frames
from spacy_lisa.scoring.preset_sentences import pipe_as_one_sentence, pipe_with_preset_starts
from spacy_lisa.scoring.raw_text import RawEvaluation, evaluate_raw, group_documents, score_document

NLP = spacy.blank("en")

Sentence = Tuple[str, List[str], List[bool], List[Dict[str, Any]]]


def fr(pred: Tuple[int, int], roleset: Optional[str], *roles: Any) -> Dict[str, Any]:
    return {"predicate": list(pred), "roleset": roleset, "roles": [list(r) for r in roles]}


def words(text: str) -> Tuple[List[str], List[bool]]:
    tokens = text.split(" ")
    return tokens, [True] * (len(tokens) - 1) + [False]


# (doc id, words, spaces, frames): "The U.S.-led force came ." is tokenised by EWT as
# The U.S. - led ..., but spaCy keeps "U.S.-led" whole: the ARG0 "U.S." of "led" (and
# "led" itself) cannot be matched by any prediction on spaCy's tokens.
SENTENCES: List[Sentence] = [
    ("a", *words("John sold the car to Mary ."),
     [fr((1, 2), "sell.01", (0, 1, "ARG0"), (2, 4, "ARG1"), (4, 6, "ARG2"))]),
    ("b", ["The", "U.S.", "-", "led", "force", "came", "."],
     [True, False, False, True, True, False, False],
     [fr((3, 4), "lead.01", (1, 2, "ARG0"), (4, 5, "ARG1")),
      fr((5, 6), "come.01", (0, 5, "ARG1"))]),
    ("a", *words("Mary bought a book yesterday ."),
     [fr((1, 2), "buy.01", (0, 1, "ARG0"), (2, 4, "ARG1"), (4, 5, "ARGM-TMP"))]),
    ("c", *words("The dog that barked ran away ."),
     [fr((3, 4), "bark.01", (0, 2, "ARG0"), (2, 3, "R-ARG0")),
      fr((4, 5), "run.02", (0, 4, "ARG0"), (5, 6, "ARGM-DIR"))]),
]  # fmt: skip


def sentence_doc(doc_id: str, ws: List[str], spaces: List[bool], frames: Any) -> Doc:
    doc = Doc(NLP.vocab, words=ws, spaces=spaces)
    set_srl_frames(doc, frames)
    doc.user_data[DOC_ID_KEY] = doc_id
    return doc


def gold_sentences() -> List[Doc]:
    return [sentence_doc(*s) for s in SENTENCES]


def test_documents_grouped_by_id_in_file_order() -> None:
    documents = group_documents(gold_sentences())
    assert [d.doc_id for d in documents] == ["a", "b", "c"]
    # sentences without trailing whitespace are joined with one space
    assert documents[0].text == "John sold the car to Mary . Mary bought a book yesterday ."
    assert documents[1].text == "The U.S.-led force came."
    assert documents[0].n_sentences == 2
    # gold frames in character offsets of the document text
    text = documents[0].text
    bought = documents[0].frames[1]
    assert text[slice(*bought.predicate)] == "bought"
    assert [(text[s:e], label) for s, e, label in bought.roles] == [
        ("Mary", "ARG0"),
        ("a book", "ARG1"),
        ("yesterday", "ARGM-TMP"),
    ]


def test_document_level_doc_is_one_document() -> None:
    doc = Doc(
        NLP.vocab,
        words=["Hi", "there", ".", "Bye", "."],
        sent_starts=[True, False, False, True, False],
    )
    set_srl_frames(doc, [])
    doc.user_data[DOC_ID_KEY] = "a"
    documents = group_documents([doc, *gold_sentences()[:1]])
    assert len(documents) == 2  # the "a" sentence is not merged into it
    assert documents[0].n_sentences == 2 and documents[1].n_sentences == 1


def predicted(text: str, frames: List[Dict[str, Any]]) -> Doc:
    doc = NLP.make_doc(text)
    set_srl_frames(doc, frames)
    return doc


def test_score_document_counts() -> None:
    document = group_documents(gold_sentences())[1]  # "The U.S.-led force came."
    doc = predicted(
        document.text,
        [
            # spaCy tokens: The U.S.-led force came .
            fr((1, 2), "lead.01", (0, 1, "ARG0"), (2, 3, "ARG1")),  # spurious predicate
            fr((3, 4), "come.02", (0, 3, "ARG1")),  # right argument, wrong sense
        ],
    )
    result = RawEvaluation()
    score_document(document, doc, result)
    scores = result.to_scores()
    # gold: led {ARG0 U.S., ARG1 force}, came {ARG1}; "U.S." and "led" unreachable
    assert scores["n_gold_args"] == 3
    assert scores["n_gold_args_unreachable"] == 1
    assert scores["n_gold_preds_unreachable"] == 1
    # strict: tp 1 (came ARG1), fp 2 (the spurious frame's), fn 2 (led's)
    srl = result.srl
    assert (srl.args.tp, srl.args.fp, srl.args.fn) == (1, 2, 2)
    assert (srl.predicates.tp, srl.predicates.fp, srl.predicates.fn) == (1, 1, 1)
    assert scores["srl_sense_acc"] == 0.0
    # official: the spurious predicate's arguments are skipped
    official = RawEvaluation()
    score_document(document, doc, official, convention="official")
    assert (official.srl.args.tp, official.srl.args.fp, official.srl.args.fn) == (1, 0, 2)


def test_text_changed_by_the_pipeline_is_an_error() -> None:
    document = group_documents(gold_sentences())[0]
    with pytest.raises(ValueError, match="without --raw"):
        score_document(document, NLP.make_doc("something else"), RawEvaluation())


def test_gold_sentences_run_each_sentence_alone_and_score_in_document_characters() -> None:
    """The segmentation oracle: the pipeline sees each gold sentence's text alone, and
    its frames are shifted into the document's characters. An annotator that knows the
    gold frames of each sentence text scores every reachable argument right with it;
    without it, it only recognises the one-sentence documents (not "a": two sentences)."""
    gold_by_text = {doc.text: doc for doc in gold_sentences()}
    nlp = spacy.blank("en")

    @spacy.Language.component("oracle_frames_by_sentence_text")
    def oracle(doc: Doc) -> Doc:
        gold = gold_by_text.get(doc.text)
        frames = []
        for frame in gold._.srl_frames if gold is not None else []:
            pred = doc.char_span(frame.predicate.start_char, frame.predicate.end_char)
            roles = [(doc.char_span(r.start_char, r.end_char), r.label_) for r in frame.roles]
            if pred is not None:
                frames.append(
                    fr((pred.start, pred.end), frame.roleset,
                       *[(span.start, span.end, label) for span, label in roles if span])
                )  # fmt: skip
        set_srl_frames(doc, frames)
        return doc

    nlp.add_pipe("oracle_frames_by_sentence_text")
    whole = evaluate_raw(nlp, gold_sentences()).to_scores()
    by_sentence = evaluate_raw(nlp, gold_sentences(), gold_sentences=True).to_scores()
    # b: "came" ("led" is unreachable), c: "barked", "ran"; a's "sold", "bought" added
    assert (whole["n_pred_frames"], by_sentence["n_pred_frames"]) == (3, 5)
    assert whole["n_pred_sentences"] == 3  # a blank pipeline: one sentence per document
    assert by_sentence["n_pred_sentences"] == by_sentence["n_sentences"] == len(SENTENCES)
    # 13 gold arguments: "U.S." is unreachable, and so is "led", so its ARG1 "force" too
    assert by_sentence["n_gold_args"] - by_sentence["n_gold_args_unreachable"] == 12
    counts = by_sentence["srl_per_type_counts"].values()
    assert sum(c["correct"] for c in counts) == 11
    assert sum(c["excess"] for c in counts) == 0


def test_gold_sentences_hold_each_sentence_text_to_one_sentence() -> None:
    """In the oracle, a segmenter in the pipeline cannot cut a gold sentence's text (here a
    sentencizer that ends a sentence at "that"): what it costs to cut one belongs to the
    segmentation share, not to the tokenisation one."""
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer", config={"punct_chars": ["that"]})
    whole = evaluate_raw(nlp, gold_sentences()).to_scores()
    by_sentence = evaluate_raw(nlp, gold_sentences(), gold_sentences=True).to_scores()
    # three documents, "c" cut after "that" when the pipeline segments it
    assert whole["n_pred_sentences"] == 4
    assert by_sentence["n_pred_sentences"] == by_sentence["n_sentences"] == len(SENTENCES)


def test_preset_starts_are_kept_and_the_rest_left_to_the_segmenter() -> None:
    """What the segmentation diagnostics rely on: a start preset True or False before
    the segmenter stays; one left None is the segmenter's to set."""
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    text = "Cats purr . Dogs bark and fish swim . Birds sing"

    def preset(doc: Doc, i: int) -> Doc:
        assert i == 0
        for token in doc[1:]:
            token.is_sent_start = {"fish": True, "Birds": False}.get(token.text)
        return doc

    (doc,) = pipe_with_preset_starts(nlp, [text], preset, batch_size=8)
    assert [s.text for s in doc.sents] == [
        "Cats purr .",
        "Dogs bark and",
        "fish swim . Birds sing",
    ]


def test_preset_pipe_runs_each_function_component_once_in_its_place() -> None:
    """A component without ``pipe`` (a plain function, as ``lisa_split_its`` is) runs
    where it stands, not replaced by a later component."""
    seen: List[str] = []

    @Language.component("test_mark_first")
    def mark_first(doc: Doc) -> Doc:
        seen.append("first")
        return doc

    @Language.component("test_mark_last")
    def mark_last(doc: Doc) -> Doc:
        seen.append("last:" + str(doc.has_annotation("SENT_START")))
        return doc

    nlp = spacy.blank("en")
    for name in ("test_mark_first", "sentencizer", "test_mark_last"):
        nlp.add_pipe(name)
    list(pipe_as_one_sentence(nlp, ["A b . C d ."], batch_size=8))
    assert seen == ["first", "last:True"]


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Path]:
    root = tmp_path_factory.mktemp("raw")
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl", config={"model": TINY_MODEL})
    train = [Example(nlp.make_doc(d.text), d) for d in gold_sentences()]
    optimizer = nlp.initialize(lambda: train)
    for _ in range(40):
        nlp.update(train, sgd=optimizer, drop=0.0)
    nlp.to_disk(root / "lisa")
    doc_bin = DocBin(store_user_data=True)
    for doc in gold_sentences():
        doc_bin.add(doc)
    doc_bin.to_disk(root / "dev.spacy")
    return {"root": root, "lisa": root / "lisa", "data": root / "dev.spacy"}


def run(*args: Any) -> Any:
    return CliRunner().invoke(app, ["evaluate", *[str(a) for a in args]])


@pytest.mark.slow
def test_evaluate_raw_cli(paths: Dict[str, Path]) -> None:
    out = paths["root"] / "raw.json"
    result = run(paths["lisa"], paths["data"], "--raw", "--output", out)
    assert result.exit_code == 0, result.output
    assert "Results on raw text" in result.output and "UNREACHABLE" in result.output
    scores = json.loads(out.read_text(encoding="utf8"))
    assert scores["raw"] is True and scores["n_docs"] == 3
    # without --parse the component keeps its configured source: what nlp(text) does
    assert scores["parse"] == "auto"
    assert scores["n_sentences"] == len(SENTENCES)
    assert scores["n_gold_args"] == 13 and scores["n_gold_frames"] == 6
    assert scores["n_gold_args_unreachable"] == 1
    assert scores["n_gold_preds_unreachable"] == 1
    # every gold argument is counted once, as correct or missed
    gold = sum(c["gold"] for c in scores["srl_per_type_counts"].values())
    assert gold == scores["n_gold_args"]
    for key in ("srl_p", "srl_r", "srl_f", "srl_pred_p", "srl_pred_r", "srl_pred_f"):
        assert 0.0 <= scores[key] <= 1.0, key
    # the same counts from the Python API
    nlp = spacy.load(paths["lisa"])
    docs = list(DocBin().from_disk(paths["data"]).get_docs(nlp.vocab))
    api = evaluate_raw(nlp, docs).to_scores()
    assert api["srl_per_type_counts"] == scores["srl_per_type_counts"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "extra,message",
    [(["--parse", "gold"], "--parse gold"), (["--conll-dir", "x"], "--conll-dir")],
)
def test_evaluate_raw_rejects_gold_token_options(
    paths: Dict[str, Path], extra: Sequence[str], message: str
) -> None:
    result = run(paths["lisa"], paths["data"], "--raw", *extra)
    assert result.exit_code == 1 and message in result.output
