"""Predicate senses, lemmas and predicate types: the component's own roleset,
lemma and UPOS classifiers, the candidates of a lemma and the predicate_pos switch."""

from __future__ import annotations

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from srl_testing import TINY_MODEL, overfit

from spacy_lisa.formats import doc_to_jsonl_records
from spacy_lisa.frames import set_srl_frames
from spacy_lisa.pipeline.senses import (
    PARTICLE_DEP,
    PredicateContext,
    SenseDecoder,
    add_frame_file_candidates,
    roleset_particles,
)

# words, tags, UPOS, lemmas; frames (start, end, roleset, frame lemma, roles)
DATA = [
    (
        "John ran the company .",
        ["NNP", "VBD", "DT", "NN", "."],
        ["PROPN", "VERB", "DET", "NOUN", "PUNCT"],
        ["John", "run", "the", "company", "."],
        [(1, 2, "run.01", "run", [(0, 1, "ARG0"), (2, 4, "ARG1")])],
    ),
    (
        "John ran home .",
        ["NNP", "VBD", "NN", "."],
        ["PROPN", "VERB", "NOUN", "PUNCT"],
        ["John", "run", "home", "."],
        [(1, 2, "run.02", "run", [(0, 1, "ARG0"), (2, 3, "ARG4")])],
    ),
    (
        "Mary runs the shop .",
        ["NNP", "VBZ", "DT", "NN", "."],
        ["PROPN", "VERB", "DET", "NOUN", "PUNCT"],
        ["Mary", "run", "the", "shop", "."],
        [(1, 2, "run.01", "run", [(0, 1, "ARG0"), (2, 4, "ARG1")])],
    ),
    (
        "Mary runs away .",
        ["NNP", "VBZ", "RB", "."],
        ["PROPN", "VERB", "ADV", "PUNCT"],
        ["Mary", "run", "away", "."],
        [(1, 2, "run.02", "run", [(0, 1, "ARG0"), (2, 3, "ARGM-DIR")])],
    ),
    (
        "Their decision was wrong .",
        ["PRP$", "NN", "VBD", "JJ", "."],
        ["PRON", "NOUN", "AUX", "ADJ", "PUNCT"],
        ["their", "decision", "be", "wrong", "."],
        [
            (1, 2, "decide.01", "decide", [(0, 1, "ARG0")]),
            (2, 3, "be.01", "be", [(0, 2, "ARG1"), (3, 4, "ARG2")]),
        ],
    ),
    (
        "They picked up the kids .",
        ["PRP", "VBD", "RP", "DT", "NNS", "."],
        ["PRON", "VERB", "ADP", "DET", "NOUN", "PUNCT"],
        ["they", "pick", "up", "the", "kid", "."],
        [(1, 3, "pick_up.01", "pick", [(0, 1, "ARG0"), (3, 5, "ARG1")])],
    ),
]


def make_examples(nlp):
    examples = []
    for text, tags, pos, lemmas, frames in DATA:
        words = text.split()
        ref = Doc(nlp.vocab, words=words, tags=tags, pos=pos, lemmas=lemmas)
        set_srl_frames(
            ref,
            [
                {
                    "predicate": [s, e],
                    "roleset": rs,
                    "lemma": lem,
                    "roles": [list(r) for r in roles],
                }
                for s, e, rs, lem, roles in frames
            ],
        )
        examples.append(Example(nlp.make_doc(text), ref))
    return examples


@pytest.fixture(scope="module")
def trained():
    nlp = spacy.blank("en")
    nlp.add_pipe("lisa_srl", config={"model": TINY_MODEL})
    return overfit(nlp, make_examples(nlp), steps=150)


def test_label_data_has_senses_candidates_lemma_trees_and_pos(trained):
    data = trained.get_pipe("lisa_srl").label_data
    assert data["senses"] == ["be.01", "decide.01", "pick_up.01", "run.01", "run.02"]
    # candidates are keyed by the frame lemma, and by the UD lemma where it differs
    assert sorted(data["sense_candidates"]["run"]) == ["run.01", "run.02"]
    assert data["sense_candidates"]["decide"] == ["decide.01"]
    assert data["sense_candidates"]["decision"] == ["decide.01"]
    assert data["sense_candidates"]["pick"] == ["pick_up.01"]
    assert {"AUX", "NOUN", "VERB"} == set(data["pred_pos_labels"])
    assert ["ran", "run"] in data["lemma_trees"] or ["runs", "run"] in data["lemma_trees"]


def test_learned_sense_disambiguates_one_lemma(trained):
    """run.01 (run a company) vs run.02 (run home/away): the same lemma, two senses,
    told apart by context, which a most-frequent-sense table cannot do."""
    by_text = {}
    for doc in trained.pipe([d[0] for d in DATA]):
        by_text[doc.text] = {f.predicate.text: (f.roleset, f.lemma) for f in doc._.srl_frames}
    assert by_text["John ran the company ."]["ran"] == ("run.01", "run")
    assert by_text["John ran home ."]["ran"] == ("run.02", "run")
    assert by_text["Mary runs away ."]["runs"] == ("run.02", "run")
    # a nominal predicate gets its verb frame's roleset; its edit tree (decision ->
    # decide) was seen once, below MIN_LEMMA_TREE_FREQ, so the lemma is the form's
    assert by_text["Their decision was wrong ."]["decision"] == ("decide.01", "decision")


def test_every_predicted_frame_has_a_lemma_in_predict_records(trained):
    texts = ["Peter runs the bank .", "They picked up the kids .", "Zorgs blicketed ."]
    srl = trained.get_pipe("lisa_srl")
    srl.predicate_source = "doc"
    try:
        docs = []
        for text, predicates in zip(texts, [[1], [1], [1]], strict=True):
            doc = trained.make_doc(text)
            doc._.srl_predicates = predicates
            docs.append(srl(doc))
    finally:
        srl.predicate_source = "model"
    for doc in docs:
        records = doc_to_jsonl_records(doc)
        frames = [f for r in records for f in r["frames"]]
        assert frames and all(f["lemma"] for f in frames)
        assert all(f.to_dict()["lemma"] for f in doc._.srl_frames)
    # an unseen lemma backs off to lemma.01
    unseen = docs[2]._.srl_frames[0]
    assert unseen.roleset == f"{unseen.lemma}.01"


def test_doc_lemmatiser_lemma_is_used_when_the_model_lemma_has_no_candidates(trained):
    srl = trained.get_pipe("lisa_srl")
    srl.predicate_source = "doc"
    try:
        doc = Doc(
            trained.vocab,
            words="The decision stood .".split(),
            lemmas=["the", "decision", "stand", "."],
        )
        doc._.srl_predicates = [1]
        doc = srl(doc)
    finally:
        srl.predicate_source = "model"
    assert doc._.srl_frames[0].roleset == "decide.01"


def test_predicate_pos_switch_keeps_only_the_listed_types(trained):
    text = "Their decision was wrong ."
    all_frames = {f.predicate.text for f in trained(text)._.srl_frames}
    assert {"decision", "was"} <= all_frames
    srl = trained.get_pipe("lisa_srl")
    srl.options = srl.options.replace(predicate_pos=["VERB", "AUX"])
    try:
        kept = {f.predicate.text for f in trained(text)._.srl_frames}
    finally:
        srl.options = srl.options.replace(predicate_pos=None)
    assert "decision" not in kept and "was" in kept


def test_predicate_pos_is_a_factory_option(tmp_path):
    nlp = spacy.blank("en")
    srl = nlp.add_pipe("lisa_srl", config={"model": TINY_MODEL, "predicate_pos": ["VERB"]})
    assert srl.options.predicate_pos == ("VERB",)


def test_senses_survive_serialisation(trained, tmp_path):
    texts = [d[0] for d in DATA]
    expected = [[(f.roleset, f.lemma) for f in d._.srl_frames] for d in trained.pipe(texts)]
    trained.to_disk(tmp_path / "p")
    loaded = spacy.load(tmp_path / "p")
    assert [[(f.roleset, f.lemma) for f in d._.srl_frames] for d in loaded.pipe(texts)] == expected


def test_misspelt_loss_weight_fails_at_construction():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="E027.*sens"):
        nlp.add_pipe("lisa_srl", config={"model": TINY_MODEL, "loss_weights": {"sens": 1.0}})


def test_sense_decoder_restricts_to_the_lemma_candidates():
    import numpy as np

    decoder = SenseDecoder(["a.01", "b.01", "b.02"], {"b": ["b.02", "b.01"], "c": ["c.02"]})
    scores = np.array([10.0, 1.0, 2.0])  # a.01 scores best overall but is not a candidate
    assert decoder.decode(scores, "b")[0] == "b.02"
    assert decoder.decode(scores, "c")[0] == "c.02"  # frame files only: first listed
    assert decoder.decode(scores, "d")[0] == "d.01"  # unseen lemma
    # the chosen roleset's probability among the candidates it was chosen from
    assert decoder.decode(scores, "b")[1] == pytest.approx(np.exp(2) / (np.exp(1) + np.exp(2)))
    assert decoder.decode(scores, "c")[1] is None and decoder.decode(scores, "d")[1] is None


def test_phrasal_rolesets_need_their_particle_and_win_with_a_particle_dependent():
    """pick_up.01 is a candidate only where "up" stands near the predicate; with "up"
    as the predicate's compound:prt dependent, the phrasal rolesets are preferred."""
    import numpy as np

    nlp = spacy.blank("en")
    senses = ["pick.01", "pick_up.01", "pick_up.04"]
    decoder = SenseDecoder(senses, {"pick": senses})
    phrasal_best = np.array([1.0, 5.0, 2.0])
    plain_best = np.array([5.0, 1.0, 2.0])

    def context(text, parse=None):
        doc = nlp.make_doc(text)
        return doc, PredicateContext.of(doc, (1, 2), len(doc), parse)

    # "up" out of reach (4 tokens after the predicate): pick_up.* are no candidates
    _, far = context("They picked the kids at school up")
    assert decoder.decode(phrasal_best, "pick", far)[0] == "pick.01"
    assert decoder.decode(phrasal_best, "pick")[0] == "pick_up.01"  # no context: no rule
    # "up" within reach but no particle dependent: the classifier chooses
    doc, near = context("They picked up the kids")
    assert decoder.decode(phrasal_best, "pick", near)[0] == "pick_up.01"
    assert decoder.decode(plain_best, "pick", near)[0] == "pick.01"
    # "up" is the predicate's particle: the best phrasal roleset wins over pick.01
    parse = {"heads": [1, 1, 1, 4, 1], "deps": ["nsubj", "ROOT", PARTICLE_DEP, "det", "obj"]}
    _, particle = context(doc.text, parse)
    assert particle.particles == {"up"}
    assert decoder.decode(plain_best, "pick", particle)[0] == "pick_up.04"
    # the rules never leave a lemma without a roleset
    only_phrasal = SenseDecoder(["pick_up.01"], {"pick": ["pick_up.01"]})
    assert only_phrasal.decode(np.array([1.0]), "pick", far)[0] == "pick_up.01"
    assert roleset_particles("look_forward_to.01") == ("forward", "to")


def test_frame_files_extend_candidates(tmp_path):
    (tmp_path / "zorg.xml").write_text(
        '<frameset><predicate lemma="zorg"><roleset id="zorg.02" name="x"/>'
        '<roleset id="zorg.01" name="y"/></predicate></frameset>'
    )
    (tmp_path / "pick.xml").write_text(
        '<frameset><predicate lemma="pick_up"><roleset id="pick_up.01" name="z"/>'
        "</predicate></frameset>"
    )
    # a real release has a file that is not well-formed: left out with a warning naming it
    (tmp_path / "check.xml").write_text("<frameset><predicate></frameset>")
    candidates = {"run": ["run.01"], "pick": ["pick.01"]}
    with pytest.warns(UserWarning, match=r"W006.*1 of the 3 .*check\.xml"):
        assert add_frame_file_candidates(candidates, str(tmp_path)) == 3
    assert candidates["zorg"] == ["zorg.02", "zorg.01"]
    # a phrasal roleset is a candidate of the word it is the lemma of, as in training
    assert candidates["pick"] == ["pick.01", "pick_up.01"] and "pick_up" not in candidates
    with pytest.raises(ValueError, match="E028"):
        add_frame_file_candidates({}, str(tmp_path / "missing"))


def test_frame_lemma_prefers_a_lemma_with_rolesets():
    """The edit-tree head's first choice may be a non-word ("afflicte"): a later choice,
    the doc lemmatiser's lemma or the form itself is taken when it has rolesets; an
    unseen lemma keeps the doc lemmatiser's guess, else the first choice."""
    import numpy as np

    from spacy_lisa.pipeline.senses import LemmaTrees, frame_lemma

    vocab = spacy.blank("en").vocab
    # class 0 strips "d" (afflicted -> afflicte), class 1 strips "ed" (-> afflict)
    trees = LemmaTrees(vocab.strings, [["moved", "move"], ["walked", "walk"]])
    scores = np.array([2.0, 1.0])
    doc = Doc(vocab, words=["They", "afflicted", "us"])
    assert trees.lemmas(scores, "afflicted") == ["afflicte", "afflict"]
    assert frame_lemma(doc, 1, scores, trees) == "afflicte"  # no roleset knowledge
    assert frame_lemma(doc, 1, scores, trees, known={"afflict"}.__contains__) == "afflict"
    assert frame_lemma(doc, 1, scores, trees, known=set().__contains__) == "afflicte"
    with_lemmas = Doc(vocab, words=["They", "afflicted", "us"], lemmas=["they", "ail", "we"])
    known = {"ail", "afflict"}.__contains__
    assert frame_lemma(with_lemmas, 1, scores, trees, known) == "ail"  # doc lemma second
    assert frame_lemma(with_lemmas, 1, scores, trees, set().__contains__) == "ail"
    assert frame_lemma(doc, 1, scores, trees, {"afflicted"}.__contains__) == "afflicted"


def test_frame_label_tables_are_built_once_and_follow_cfg(trained):
    """The lemma trees and sense decoder are built once, not per batch (building the
    decoder's index arrays cost ~6% of prediction), and rebuilt when loading replaces
    the labels they came from."""
    srl = trained.get_pipe("lisa_srl")
    tables = srl._frame_label_tables()
    assert tables.trees is not None and tables.senses is not None
    list(trained.pipe(["John ran the company .", "Mary runs away ."], batch_size=1))
    assert srl._frame_label_tables() is tables
    srl.from_bytes(srl.to_bytes())
    reloaded = srl._frame_label_tables()
    assert reloaded is not tables
    assert reloaded.senses.senses == tables.senses.senses


def test_top_k_is_the_stable_argsort_prefix():
    from spacy_lisa.pipeline.senses import top_k

    rng = numpy.random.default_rng(0)
    for n, k in ((3, 5), (50, 5), (50, 1), (200, 5)):
        # few distinct values: many ties, also at the k-th place
        scores = rng.integers(0, 4, size=n).astype("float32")
        expected = numpy.argsort(-scores, kind="stable")[:k]
        numpy.testing.assert_array_equal(top_k(scores, k), expected)


SEPARATE = {"model": {**TINY_MODEL, "dropout": 0.1, "sense_head": "separate"}}


def train_separate(sense_weight: float, steps: int, **config):
    """A tiny pipeline with the separate sense head, trained with dropout from seed 0."""
    from thinc.api import fix_random_seed

    fix_random_seed(0)
    nlp = spacy.blank("en")
    weights = {"sense": sense_weight}
    nlp.add_pipe("lisa_srl", config={**SEPARATE, "loss_weights": weights, **config})
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(steps):
        nlp.update(examples, sgd=optimizer, drop=0.1)
    return nlp


def test_separate_sense_head_with_candidate_loss_disambiguates_one_lemma():
    """The project configs' sense head (separate, softmax over the lemma's rolesets)."""
    nlp = train_separate(1.0, 150, sense_loss="candidates")
    by_text = {}
    for doc in nlp.pipe([d[0] for d in DATA]):
        by_text[doc.text] = {f.predicate.text: f.roleset for f in doc._.srl_frames}
    assert by_text["John ran the company ."]["ran"] == "run.01"
    assert by_text["John ran home ."]["ran"] == "run.02"
    assert by_text["Mary runs away ."]["runs"] == "run.02"


def test_separate_sense_head_cannot_change_the_roles():
    """Trained with the sense loss or without it (weight 0), everything but the rolesets
    is the same to the bit: the roles' scores after 12 updates with dropout."""
    import numpy as np

    def role_scores(nlp):
        groups = nlp.get_pipe("lisa_srl").predict([nlp.make_doc(d[0]) for d in DATA]).groups
        return [
            np.asarray(getattr(g.output, name))
            for g in groups
            for name in ("role_scores", "tag_scores")
        ]

    with_sense = train_separate(1.0, 12, sense_loss="candidates")
    without = train_separate(0.0, 12, sense_loss="candidates")
    for ours, theirs in zip(role_scores(with_sense), role_scores(without), strict=True):
        np.testing.assert_array_equal(ours, theirs)
    texts = [d[0] for d in DATA]
    frames = [
        [(f.predicate.text, [(r.text, r.label_) for r in f.roles]) for f in doc._.srl_frames]
        for doc in with_sense.pipe(texts)
    ]
    assert frames == [
        [(f.predicate.text, [(r.text, r.label_) for r in f.roles]) for f in doc._.srl_frames]
        for doc in without.pipe(texts)
    ]
