"""Tests for the SRL scorer (CoNLL-2005 conventions), numbers computed by hand."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_lisa.frames import set_srl_frames
from spacy_lisa.scoring.scorer import evaluate_srl, make_srl_scorer, score_srl
from spacy_lisa.scoring.strict import lemma_mfs

NLP = spacy.blank("en")


def frame(pred: Sequence[int], *roles: Any) -> Dict[str, Any]:
    return {"predicate": list(pred), "roles": [list(r) for r in roles]}


def make_doc(
    words: Sequence[str],
    frames: Optional[List[Dict[str, Any]]],
    *,
    spaces: Optional[Sequence[bool]] = None,
    heads: Optional[Sequence[int]] = None,
    deps: Optional[Sequence[str]] = None,
    tags: Optional[Sequence[str]] = None,
) -> Doc:
    doc = Doc(
        NLP.vocab,
        words=list(words),
        spaces=list(spaces) if spaces is not None else None,
        heads=list(heads) if heads is not None else None,
        deps=list(deps) if deps is not None else None,
        tags=list(tags) if tags is not None else None,
    )
    set_srl_frames(doc, frames)
    return doc


def example(words: Sequence[str], pred_frames: Any, gold_frames: Any) -> Example:
    return Example(make_doc(words, pred_frames), make_doc(words, gold_frames))


# "The man , he said , left": ARG1 "The man" ... C-ARG1 "left", ARG0 "he"
DISC_WORDS = ["The", "man", ",", "he", "said", ",", "left"]
DISC_GOLD = [frame((4, 5), (0, 2, "ARG1"), (3, 4, "ARG0"), (6, 7, "C-ARG1"))]
# "the man who left": ARG0 "the man", R-ARG0 "who"
REL_WORDS = ["the", "man", "who", "left"]
REL_GOLD = [frame((3, 4), (0, 2, "ARG0"), (2, 3, "R-ARG0"))]


def test_continuation_counts_once_when_all_pieces_right() -> None:
    pred = [frame((4, 5), (0, 2, "ARG1"), (3, 4, "ARG0"), (6, 7, "C-ARG1"))]
    result = evaluate_srl([example(DISC_WORDS, pred, DISC_GOLD)])
    # 2 arguments (ARG1 = {"The man", "left"} counted once, ARG0): tp 2, fp 0, fn 0
    assert (result.args.tp, result.args.fp, result.args.fn) == (2, 0, 0)
    scores = score_srl([example(DISC_WORDS, pred, DISC_GOLD)])
    assert scores["srl_p"] == scores["srl_r"] == scores["srl_f"] == 1.0
    # the discontinuous argument is typed ARG1; there is no separate C-ARG1 type
    assert set(scores["srl_per_type"]) == {"ARG0", "ARG1"}


@pytest.mark.parametrize(
    "pred_roles",
    [
        [(0, 2, "ARG1"), (3, 4, "ARG0")],  # continuation missing
        [(0, 2, "ARG1"), (3, 4, "ARG0"), (5, 7, "C-ARG1")],  # continuation piece wrong
        [(0, 2, "ARG1"), (3, 4, "ARG0"), (6, 7, "ARG1")],  # "left" a separate ARG1
    ],
)
def test_continuation_wrong_if_any_piece_wrong(pred_roles: List[Any]) -> None:
    scores = score_srl([example(DISC_WORDS, [frame((4, 5), *pred_roles)], DISC_GOLD)])
    # ARG0 right (tp 1). Gold ARG1 {(0,2),(6,7)} missed (fn 1). Predicted ARG1s all
    # wrong: 1 piece-set in the first two cases (fp 1), two plain ARG1s in the third
    # (fp 2: (0,2) and (6,7) each a separate argument).
    n_fp = 2 if pred_roles[-1][2] == "ARG1" else 1
    p = 1 / (1 + n_fp)
    assert scores["srl_p"] == pytest.approx(p)
    assert scores["srl_r"] == pytest.approx(1 / 2)
    assert scores["srl_f"] == pytest.approx(2 * p * 0.5 / (p + 0.5))
    assert scores["srl_per_type"]["ARG1"] == {"p": 0.0, "r": 0.0, "f": 0.0}
    assert scores["srl_per_type"]["ARG0"]["f"] == pytest.approx(1.0)


def test_orphan_continuation_is_a_plain_argument() -> None:
    # srl-eval.pl turns a C-X with no X before it into an X
    gold = [frame((4, 5), (3, 4, "ARG0"), (6, 7, "ARG1"))]
    pred = [frame((4, 5), (3, 4, "ARG0"), (6, 7, "C-ARG1"))]
    scores = score_srl([example(DISC_WORDS, pred, gold)])
    assert scores["srl_f"] == 1.0


def test_reference_labels_are_their_own_type() -> None:
    pred = [frame((3, 4), (0, 2, "ARG0"), (2, 3, "ARG0"))]  # "who" as ARG0, not R-ARG0
    scores = score_srl([example(REL_WORDS, pred, REL_GOLD)])
    # tp 1 (ARG0 "the man"), fp 1 (ARG0 "who"), fn 1 (R-ARG0 "who"): P = R = F = 1/2
    assert scores["srl_p"] == pytest.approx(0.5)
    assert scores["srl_r"] == pytest.approx(0.5)
    assert scores["srl_f"] == pytest.approx(0.5)
    # ARG0: tp 1, fp 1, fn 0 -> p 1/2, r 1, f 2/3; R-ARG0: tp 0, fp 0, fn 1 -> all 0
    assert scores["srl_per_type"]["ARG0"] == pytest.approx({"p": 0.5, "r": 1.0, "f": 2 / 3})
    assert scores["srl_per_type"]["R-ARG0"] == {"p": 0.0, "r": 0.0, "f": 0.0}


def test_verb_span_is_not_scored() -> None:
    gold = [frame((3, 4), (0, 2, "ARG0"))]
    # a stray V role on the predicate itself is neither a tp nor an fp
    pred = [frame((3, 4), (0, 2, "ARG0"), (3, 4, "V"))]
    result = evaluate_srl([example(REL_WORDS, pred, gold)])
    assert (result.args.tp, result.args.fp, result.args.fn) == (1, 0, 0)
    assert "V" not in result.per_type


def test_partial_overlap_gets_no_credit() -> None:
    words = ["She", "sold", "the", "old", "car", "yesterday"]
    gold = [frame((1, 2), (0, 1, "ARG0"), (2, 5, "ARG1"))]
    pred = [frame((1, 2), (0, 1, "ARG0"), (3, 5, "ARG1"))]  # "old car" vs "the old car"
    scores = score_srl([example(words, pred, gold)])
    # tp 1, fp 1, fn 1
    assert scores["srl_p"] == pytest.approx(0.5)
    assert scores["srl_r"] == pytest.approx(0.5)
    assert scores["srl_per_type"]["ARG1"] == {"p": 0.0, "r": 0.0, "f": 0.0}


@pytest.mark.parametrize("pred_frames", [None, []])
def test_empty_predictions(pred_frames: Any) -> None:
    scores = score_srl([example(DISC_WORDS, pred_frames, DISC_GOLD)])
    # tp 0, fp 0, fn 2: P = 0 / (0 + 0) taken as 0 (as spaCy's PRFScore), R = 0, F = 0
    assert (scores["srl_p"], scores["srl_r"], scores["srl_f"]) == (0.0, 0.0, 0.0)
    assert (scores["srl_pred_p"], scores["srl_pred_r"], scores["srl_pred_f"]) == (0.0, 0.0, 0.0)


WORDS6 = ["A", "b", "c", "d", "e", "f", "g", "h"]
# gold predicates at 1 (two args) and 5 (one arg)
GOLD6 = [
    frame((1, 2), (0, 1, "ARG0"), (2, 4, "ARG1")),
    frame((5, 6), (4, 5, "ARG0")),
]
# predicted: predicate 1 with one right and one wrong arg; predicate 5 missed;
# spurious predicate 7 with two args
PRED6 = [
    frame((1, 2), (0, 1, "ARG0"), (2, 3, "ARG1")),
    frame((7, 8), (4, 5, "ARG0"), (6, 7, "ARG1")),
]


def test_missed_and_spurious_predicates() -> None:
    scores = score_srl([example(WORDS6, PRED6, GOLD6)])
    # args: tp 1; fp 1 (pred 1's ARG1) + 2 (spurious pred 7) = 3; fn 1 (pred 1's ARG1)
    # + 1 (missed pred 5's ARG0) = 2 -> P 1/4, R 1/3, F = 2 (1/12) / (7/12) = 2/7
    assert scores["srl_p"] == pytest.approx(1 / 4)
    assert scores["srl_r"] == pytest.approx(1 / 3)
    assert scores["srl_f"] == pytest.approx(2 / 7)
    # predicates: pred {1, 7} vs gold {1, 5}: tp 1, fp 1, fn 1
    assert scores["srl_pred_p"] == pytest.approx(0.5)
    assert scores["srl_pred_r"] == pytest.approx(0.5)
    assert scores["srl_pred_f"] == pytest.approx(0.5)


def test_spurious_predicates_skipped_like_srl_eval() -> None:
    scores = score_srl([example(WORDS6, PRED6, GOLD6)], count_spurious_predicates=False)
    # fp only 1 now: P 1/2, R 1/3, F = 2 (1/6) / (5/6) = 2/5; predicate scores unchanged
    assert scores["srl_p"] == pytest.approx(1 / 2)
    assert scores["srl_r"] == pytest.approx(1 / 3)
    assert scores["srl_f"] == pytest.approx(2 / 5)
    assert scores["srl_pred_f"] == pytest.approx(0.5)


def test_per_type_over_several_examples() -> None:
    examples = [
        example(DISC_WORDS, [frame((4, 5), (0, 2, "ARG1"), (3, 4, "ARG0"))], DISC_GOLD),
        example(REL_WORDS, [frame((3, 4), (0, 2, "ARG0"), (2, 3, "ARG0"))], REL_GOLD),
    ]
    result = evaluate_srl(examples)
    scores = result.to_scores()
    # doc 1: ARG0 tp; ARG1 (0,2) fp; gold ARG1 {(0,2),(6,7)} fn
    # doc 2: ARG0 (0,2) tp; ARG0 (2,3) fp; R-ARG0 fn
    # overall tp 2, fp 2, fn 2 -> 1/2 each
    assert scores["srl_p"] == scores["srl_r"] == pytest.approx(0.5)
    # ARG0: tp 2, fp 1, fn 0 -> p 2/3, r 1, f 0.8
    assert scores["srl_per_type"]["ARG0"] == pytest.approx({"p": 2 / 3, "r": 1.0, "f": 0.8})
    assert scores["srl_per_type"]["ARG1"] == {"p": 0.0, "r": 0.0, "f": 0.0}
    assert scores["srl_per_type"]["R-ARG0"] == {"p": 0.0, "r": 0.0, "f": 0.0}
    assert result.per_type_counts()["ARG0"] == {
        "correct": 2,
        "excess": 1,
        "missed": 0,
        "gold": 2,
        "pred": 3,
    }
    assert result.n_docs == 2 and result.n_gold_frames == 2 and result.n_pred_frames == 2


def test_docs_without_srl_annotation_are_skipped() -> None:
    # reference without SRL annotation: no gold, so its predictions are not scored
    eg = example(REL_WORDS, [frame((3, 4), (0, 2, "ARG0"))], None)
    scores = score_srl([eg])
    for key in ("srl_p", "srl_r", "srl_f", "srl_per_type", "srl_pred_p", "srl_pred_f"):
        assert scores[key] is None, key
    assert scores["srl_uas"] is None and scores["srl_las"] is None
    assert scores["srl_pos_acc"] is None
    # annotated with zero frames and nothing predicted: still nothing to score
    assert score_srl([example(REL_WORDS, [], [])])["srl_f"] is None
    assert score_srl([])["srl_f"] is None


def test_uas_las_and_pos_accuracy() -> None:
    words = ["She", "ate", "fish", "quickly", "."]
    gold = make_doc(
        words,
        [],
        heads=[1, 1, 1, 1, 1],
        deps=["nsubj", "ROOT", "obj", "advmod", "punct"],
        tags=["PRP", "VBD", "NN", "RB", "."],
    )
    pred = make_doc(words, [])
    pred._.srl_parse = {
        "heads": [1, 1, 1, 2, 2],
        "deps": ["nsubj", "root", "dobj", "advmod", "punct"],
    }
    pred._.srl_pos = ["PRP", "VBD", "NN", "RB", ","]
    scores = score_srl([Example(pred, gold)])
    # heads right for 0, 1 (root = itself), 2; wrong for 3 and 4 (punctuation counts):
    # UAS 3/5. Labels: 0 ok, 1 "root" = "ROOT" (case-insensitive), 2 dobj != obj:
    # LAS 2/5
    assert scores["srl_uas"] == pytest.approx(3 / 5)
    assert scores["srl_las"] == pytest.approx(2 / 5)
    # POS: all but the final "." right: 4/5
    assert scores["srl_pos_acc"] == pytest.approx(4 / 5)


def test_no_gold_parse_gives_none() -> None:
    words = ["She", "ate"]
    pred = make_doc(words, [])
    pred._.srl_parse = {"heads": [1, 1], "deps": ["nsubj", "ROOT"]}
    scores = score_srl([Example(pred, make_doc(words, []))])
    assert scores["srl_uas"] is None and scores["srl_las"] is None


def test_malformed_parse_raises() -> None:
    words = ["She", "ate"]
    pred = make_doc(words, [])
    pred._.srl_parse = {"heads": [1], "deps": ["ROOT"]}
    gold = make_doc(words, [], heads=[1, 1], deps=["nsubj", "ROOT"])
    with pytest.raises(ValueError, match="E252"):
        score_srl([Example(pred, gold)])


def test_different_tokenisation_compares_in_reference_offsets() -> None:
    # reference "New York" is one token; the prediction splits it
    ref_words = ["I", "visited", "New York", "today"]
    pred_words = ["I", "visited", "New", "York", "today"]
    gold = make_doc(
        ref_words,
        [frame((1, 2), (0, 1, "ARG0"), (2, 3, "ARG1"), (3, 4, "ARGM-TMP"))],
        spaces=[True, True, True, False],
        heads=[1, 1, 1, 1],
        deps=["nsubj", "ROOT", "obj", "obl:tmod"],
    )
    pred = make_doc(
        pred_words,
        [
            frame(
                (1, 2),
                (0, 1, "ARG0"),
                (2, 3, "ARG1"),  # "New" only: ends inside the reference token
                (4, 5, "ARGM-TMP"),  # "today": reference (3, 4)
            )
        ],
        spaces=[True, True, True, True, False],
    )
    pred._.srl_parse = {
        "heads": [1, 1, 3, 1, 3],
        "deps": ["nsubj", "ROOT", "compound", "obj", "obl:tmod"],
    }
    result = evaluate_srl([Example(pred, gold)])
    # ARG0 and ARGM-TMP right; "New" cannot match (fp) and gold ARG1 is missed (fn)
    assert (result.args.tp, result.args.fp, result.args.fn) == (2, 1, 1)
    # predicate "visited" pairs across tokenisations
    assert (result.predicates.tp, result.predicates.fp, result.predicates.fn) == (1, 0, 0)
    # parse: "New" and "York" are not one-to-one and are skipped; "I" and "visited"
    # right; "today" attached to "York" (not one-to-one) is wrong: UAS = LAS = 2/3
    assert result.uas.value == pytest.approx(2 / 3)
    assert result.las.value == pytest.approx(2 / 3)

    # a predicted span covering the split token exactly does match
    pred2 = make_doc(
        pred_words,
        [frame((1, 2), (0, 1, "ARG0"), (2, 4, "ARG1"), (4, 5, "ARGM-TMP"))],
        spaces=[True, True, True, True, False],
    )
    assert score_srl([Example(pred2, gold)])["srl_f"] == 1.0


def test_registered_scorer() -> None:
    scorer = spacy.registry.scorers.get("spacy-lisa.srl_scorer.v1")()
    assert scorer is score_srl
    assert make_srl_scorer() is score_srl
    # spaCy's Scorer passes its config (e.g. nlp) as keyword arguments
    scores = scorer([example(REL_WORDS, REL_GOLD, REL_GOLD)], nlp=NLP)
    assert scores["srl_f"] == 1.0


def test_registered_scorer_takes_the_convention() -> None:
    # gold "b c" (1, 3), predicted "b" (1, 2) plus a spurious predicate 7
    gold = [frame((1, 3), (0, 1, "ARG0"))]
    pred = [frame((1, 2), (0, 1, "ARG0")), frame((7, 8), (4, 5, "ARG1"))]
    eg = example(WORDS6, pred, gold)
    make = spacy.registry.scorers.get("spacy-lisa.srl_scorer.v1")
    # strict: no predicate pairs; 2 false positives, 1 miss
    assert make()([eg], nlp=NLP)["srl_p"] == 0.0
    # official (srl-eval.pl): the props share their row, the spurious one is skipped
    official = make(convention="official")([eg], nlp=NLP)
    assert official["srl_p"] == official["srl_r"] == 1.0
    # the predicate scores stay by exact span in both conventions
    assert official["srl_pred_p"] == 0.0
    with pytest.raises(ValueError, match="strict"):
        make(convention="conll")
    with pytest.raises(ValueError, match="official"):
        evaluate_srl([eg], convention="perl")


def test_sense_accuracy_and_predicates_by_upos() -> None:
    words = ["She", "will", "sell", "the", "sale", "cheap", "now"]
    pos = ["PRON", "AUX", "VERB", "DET", "NOUN", "ADJ", "ADV"]
    gold_doc = Doc(NLP.vocab, words=words, pos=pos, lemmas=[w.lower() for w in words])
    set_srl_frames(
        gold_doc,
        [
            {"predicate": [2, 3], "roleset": "sell.01", "roles": [[0, 1, "ARG0"]]},
            {"predicate": [4, 5], "roleset": "sale.01", "roles": []},
            {"predicate": [5, 6], "roleset": None, "roles": []},  # no roleset: not scored
        ],
    )
    pred_frames: List[Dict[str, Any]] = [
        {"predicate": [2, 3], "roleset": "sell.01", "roles": [[0, 1, "ARG0"]]},
        {"predicate": [4, 5], "roleset": "sale.02", "roles": []},  # wrong sense
        {"predicate": [5, 6], "roleset": "cheap.01", "roles": []},
        {"predicate": [1, 2], "roleset": "will.01", "roles": []},  # spurious (AUX)
        {"predicate": [6, 7], "roleset": None, "roles": []},  # spurious (ADV -> other)
    ]
    # no POS on the predicted doc: spurious predicates take the aligned gold UPOS
    pred_doc = make_doc(words, pred_frames)
    result = evaluate_srl([Example(pred_doc, gold_doc)])
    scores = result.to_scores()
    assert (result.senses.correct, result.senses.total) == (1, 2)
    assert scores["srl_sense_acc"] == 0.5
    per_pos = scores["srl_pred_per_pos"]
    assert list(per_pos) == ["VERB", "AUX", "NOUN", "ADJ", "other"]
    assert per_pos["VERB"] == per_pos["NOUN"] == per_pos["ADJ"] == {"p": 1.0, "r": 1.0, "f": 1.0}
    assert per_pos["AUX"]["p"] == per_pos["other"]["p"] == 0.0
    # with POS on the predicted doc, a spurious predicate takes the predicted UPOS
    tagged = make_doc(words, pred_frames)
    for token, tag in zip(tagged, ["X", "VERB", "X", "X", "X", "X", "NOUN"], strict=True):
        token.pos_ = tag
    per_pos = score_srl([Example(tagged, gold_doc)])["srl_pred_per_pos"]
    assert set(per_pos) == {"VERB", "NOUN", "ADJ"}
    assert per_pos["VERB"]["p"] == per_pos["NOUN"]["p"] == 0.5
    # the lemma MFS baseline on the same matched predicates
    train = Doc(NLP.vocab, words=["sales", "sell", "sale"], lemmas=["sale", "sell", "sale"])
    set_srl_frames(
        train,
        [
            {"predicate": [0, 1], "roleset": "sale.02"},
            {"predicate": [1, 2], "roleset": "sell.01"},
            {"predicate": [2, 3], "roleset": "sale.02"},
        ],
    )
    table = lemma_mfs([train])
    assert table == {"sale": "sale.02", "sell": "sell.01"}
    baseline = evaluate_srl([Example(pred_doc, gold_doc)], sense_baseline=table).to_scores()
    assert baseline["srl_sense_acc_mfs"] == 0.5  # sell.01 right, sale.02 wrong
    assert baseline["srl_sense_acc"] == 0.5
