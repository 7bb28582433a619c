"""The lisa_srl component behaves like spaCy's own trainable components
(modelled on spacy/tests/pipeline/test_spancat.py and friends)."""

from __future__ import annotations

import pickle
import warnings
from typing import List

import numpy as np
import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from srl_testing import TAGGED_SENTENCES, TINY_MODEL, frame_scores, scoreless

from spacy_lisa.frames import set_srl_frames

SENTENCES = TAGGED_SENTENCES


def make_reference(nlp: Language, sentence) -> Doc:
    words, tags, heads, deps, frames = sentence
    doc = Doc(nlp.vocab, words=words, tags=tags, heads=heads, deps=deps)
    set_srl_frames(
        doc,
        [
            {"predicate": [p, p + 1], "roleset": rs, "roles": [list(r) for r in roles]}
            for p, rs, roles in frames
        ],
    )
    return doc


def make_examples(nlp: Language) -> List[Example]:
    return [Example(nlp.make_doc(" ".join(s[0])), make_reference(nlp, s)) for s in SENTENCES]


def make_nlp(**config) -> Language:
    nlp = spacy.blank("en")
    nlp.add_pipe("lisa_srl", config={"model": TINY_MODEL, **config})
    return nlp


def frames_of(doc: Doc):
    return scoreless([f.to_dict() for f in doc._.srl_frames])


@pytest.fixture(scope="module")
def trained_nlp() -> Language:
    nlp = make_nlp()
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(120):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    return nlp


def test_add_pipe():
    nlp = spacy.blank("en")
    srl = nlp.add_pipe("lisa_srl")
    assert nlp.pipe_names == ["lisa_srl"]
    assert srl.parse_source == "auto"
    assert srl.decoding == "viterbi"


def test_invalid_option_has_clear_error():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="parse_source"):
        nlp.add_pipe("lisa_srl", config={"parse_source": "gold-ish"})


def test_use_before_initialize_raises():
    nlp = make_nlp()
    with pytest.raises(ValueError, match="not initialized"):
        nlp("John sold the car .")


def test_initialize_without_examples_raises():
    nlp = make_nlp()
    # spaCy's own check (E930), as for its built-in components
    with pytest.raises(TypeError, match="E930"):
        nlp.initialize(lambda: [])
    # examples whose reference docs carry no SRL annotation at all are no help either
    eg = Example(nlp.make_doc("a b"), Doc(nlp.vocab, words=["a", "b"]))
    with pytest.raises(ValueError, match="gold SRL"):
        nlp.initialize(lambda: [eg])


def test_initialize_collects_labels(trained_nlp):
    srl = trained_nlp.get_pipe("lisa_srl")
    assert "B-ARG0" in srl.role_labels and "I-ARG1" in srl.role_labels
    assert "B-V" in srl.role_labels and "O" in srl.role_labels
    assert {"VBD:PREDICATE", "DT"} <= set(srl.label_data["labels"]["tags"])
    assert "nsubj" in srl.dep_labels
    assert {"ARG0", "R-ARG0", "ARGM-TMP"} <= set(srl.labels)
    data = srl.label_data
    assert "sell.01" in data["senses"]
    # label_data round-trips through initialize(labels=...)
    nlp2 = make_nlp()
    srl2 = nlp2.get_pipe("lisa_srl")
    srl2.initialize(lambda: make_examples(nlp2), nlp=nlp2, labels=data)
    assert srl2.role_labels == srl.role_labels and srl2.cfg["transitions"] == data["transitions"]


def test_overfits_and_predicts_frames(trained_nlp):
    doc = trained_nlp("John sold the car to Mary .")
    frames = doc._.srl_frames
    assert [f.predicate.text for f in frames] == ["sold"]
    assert frames[0].roleset == "sell.01"
    assert [(r.text, r.label_) for r in frames[0].roles] == [
        ("John", "ARG0"),
        ("the car", "ARG1"),
        ("to Mary", "ARG2"),
    ]
    assert [(s.text, s.label_) for s in doc.spans["srl"]] == [
        ("John", "ARG0"),
        ("the car", "ARG1"),
        ("to Mary", "ARG2"),
    ]
    assert doc._.srl_parse_source == "model"
    two = trained_nlp("The dog that barked ran away .")
    assert [f.predicate.text for f in two._.srl_frames] == ["barked", "ran"]
    assert ("that", "R-ARG0") in [(r.text, r.label_) for r in two._.srl_frames[0].roles]


def test_training_loss_decreases():
    nlp = make_nlp()
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    first = nlp.update(examples, sgd=optimizer)["lisa_srl"]
    for _ in range(30):
        last = nlp.update(examples, sgd=optimizer)["lisa_srl"]
    assert np.isfinite(first) and last < first * 0.5


TEXTS = [" ".join(s[0]) for s in SENTENCES]


def test_serialization_roundtrips(trained_nlp, tmp_path):
    expected = [frames_of(trained_nlp(t)) for t in TEXTS]
    trained_nlp.to_disk(tmp_path / "pipeline")
    from_disk = spacy.load(tmp_path / "pipeline")
    assert [frames_of(from_disk(t)) for t in TEXTS] == expected
    from_bytes = make_nlp().from_bytes(trained_nlp.to_bytes())
    assert [frames_of(from_bytes(t)) for t in TEXTS] == expected
    unpickled = pickle.loads(pickle.dumps(trained_nlp))
    assert [frames_of(unpickled(t)) for t in TEXTS] == expected
    # options are the config's (test_load_time_config_overrides_take_effect)


def test_frames_survive_doc_serialisation(trained_nlp):
    doc = trained_nlp(TEXTS[0])
    restored = Doc(trained_nlp.vocab).from_bytes(doc.to_bytes())
    assert frames_of(restored) == frames_of(doc)
    assert frames_of(pickle.loads(pickle.dumps(doc))) == frames_of(doc)


def test_pipe_equals_call(trained_nlp):
    one_by_one = [frames_of(trained_nlp(t)) for t in TEXTS]
    assert [frames_of(d) for d in trained_nlp.pipe(TEXTS)] == one_by_one
    # the scores too, up to float32 noise from the padding of a batch
    scores = [frame_scores(trained_nlp(t)) for t in TEXTS]
    batched = [frame_scores(d) for d in trained_nlp.pipe(TEXTS)]
    assert any(scores) and [len(s) for s in batched] == [len(s) for s in scores]
    assert np.allclose(sum(batched, []), sum(scores, []), atol=1e-4)
    assert [frames_of(d) for d in trained_nlp.pipe(TEXTS)] == one_by_one
    assert [frames_of(d) for d in trained_nlp.pipe(TEXTS, batch_size=2)] == one_by_one


def test_length_chunks_group_similar_windows_within_the_padding_budget():
    from spacy_lisa.pipeline.batching import length_chunks

    lengths = {0: 3, 1: 40, 2: 5, 3: 38, 4: 4, 5: 200}
    windows = {i: [(0, n)] for i, n in lengths.items()}
    chunks = length_chunks(list(lengths), windows, max_padded=100)
    # longest first; a window over the budget alone; then as many as fit padded to the longest
    assert [[i for i, _ in chunk] for chunk in chunks] == [[5], [1, 3], [2, 4, 0]]
    assert all(part == windows[i] for chunk in chunks for i, part in chunk)
    for chunk in chunks[1:]:
        assert len(chunk) * max(lengths[i] for i, _ in chunk) <= 100
    # a doc of many windows over the budget: runs of windows that fit, each a call, in order
    windows[6] = [(k, k + 30) for k in range(0, 300, 30)] + [(300, 310)]
    chunks = length_chunks([6, 1], windows, max_padded=100)
    assert chunks[:4] == [[(6, windows[6][k : k + 3])] for k in range(0, 12, 3)]
    assert chunks[4:] == [[(1, [(0, 40)])]]


def test_windows_are_the_doc_sentences_then_the_reference_then_rules():
    """The encoder windows: the doc's own sentences (frames.doc_sentences), else the
    reference's where the tokens match (training), else rule sentences at prediction,
    else the whole doc; each cut at max_length."""
    from spacy_lisa.pipeline.batching import Windower

    nlp = spacy.blank("en")
    words = ["Mary", "sold", "it", ".", "John", "ran", "."]
    plain = Doc(nlp.vocab, words=words)
    split = Doc(nlp.vocab, words=words, sent_starts=[True] + [False] * 3 + [True, False, False])
    windower = Windower()
    assert windower(split, 10) == [(0, 4), (4, 7)]
    assert windower(split, 3) == [(0, 3), (3, 4), (4, 7)]
    assert windower(plain, 10, split) == [(0, 4), (4, 7)]
    other = Doc(nlp.vocab, words=["Mary", "sold", "it", ".", "John", "ran", "!"])
    assert windower(plain, 10, other) == [(0, 7)]  # tokens differ: the whole doc
    assert windower(plain, 10) == [(0, 7)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert windower(plain, 10, segment=True) == [(0, 4), (4, 7)]
    assert windower(Doc(nlp.vocab, words=[]), 10, segment=True) == []


def test_prediction_in_length_chunks_equals_one_doc_at_a_time(trained_nlp, monkeypatch):
    import spacy_lisa.pipeline.batching as batching

    texts = TEXTS + [" ".join(TEXTS), "Mary ."]
    one_by_one = [frames_of(trained_nlp(t)) for t in texts]
    calls: List[List[str]] = []
    predict = batching._predict
    monkeypatch.setattr(batching, "PREDICT_CHUNK_TOKENS", 16)
    monkeypatch.setattr(
        batching,
        "_predict",
        lambda batch, *a: calls.append([d.text for d in batch.docs]) or predict(batch, *a),
    )
    assert [frames_of(d) for d in trained_nlp.pipe(texts, batch_size=64)] == one_by_one
    seen = [text for call in calls for text in call]
    assert len(calls) > 1 and set(seen) == set(texts)  # one pipe batch, several calls
    assert seen.count(" ".join(TEXTS)) > 1  # the doc of six sentences cut into runs of them


# one sentence of 600 tokens: 5 windows of max_length = 128
LONG = " ".join(["John sold the car to Mary she said she would come Tom gave Anna flowers"] * 40)


def _long_doc(nlp: Language, setting: str) -> Doc:
    words = LONG.split()
    if setting == "parse_source":  # its own parse, a chain across the windows
        heads = [max(i - 1, 0) for i in range(len(words))]
        return Doc(nlp.vocab, words=words, heads=heads, deps=["dep"] * len(words))
    doc = nlp.make_doc(LONG)
    if setting == "predicate_source":
        doc._.srl_predicates = [i for i, w in enumerate(words) if w in ("sold", "said", "gave")]
    return doc


def _annotations(doc: Doc):
    return (
        frames_of(doc),
        doc._.srl_parse,
        doc._.srl_pos,
        doc._.srl_parse_source,
        [(t.tag_, t.head.i, t.dep_) for t in doc],
    )


@pytest.mark.parametrize("setting", ["", "overwrite_parse", "parse_source", "predicate_source"])
def test_a_long_doc_in_bounded_calls_is_annotated_as_in_one(trained_nlp, monkeypatch, setting):
    """A doc of many windows is cut into model calls within the padding budget, each
    decoded before the next runs (its scores released), and gets exactly the frames,
    parse and POS of one call on all its windows."""
    import weakref

    import spacy_lisa.pipeline.batching as batching

    srl = trained_nlp.get_pipe("lisa_srl")
    values = {"overwrite_parse": True, "parse_source": "doc", "predicate_source": "doc"}
    before = getattr(srl, setting) if setting else None
    if setting:
        setattr(srl, setting, values[setting])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # W001: a window longer than max_length
            monkeypatch.setattr(batching, "PREDICT_CHUNK_TOKENS", 10**9)
            whole = srl(_long_doc(trained_nlp, setting))
            monkeypatch.setattr(batching, "PREDICT_CHUNK_TOKENS", 256)
            outputs: List[weakref.ref] = []
            alive: List[int] = []
            predict = batching._predict

            def recorded(batch, *args):
                alive.append(sum(ref() is not None for ref in outputs))
                output = predict(batch, *args)
                outputs.append(weakref.ref(output))
                assert len(output.windows) * output.role_scores.shape[1] <= 256
                return output

            monkeypatch.setattr(batching, "_predict", recorded)
            cut = srl(_long_doc(trained_nlp, setting))
    finally:
        if setting:
            setattr(srl, setting, before)
    assert len(outputs) == 3 and alive == [0, 0, 0]  # 2 + 2 + 1 windows, one at a time
    assert whole._.srl_frames and _annotations(cut) == _annotations(whole)


def test_multiprocessing(trained_nlp):
    expected = [frames_of(trained_nlp(t)) for t in TEXTS]
    assert [frames_of(d) for d in trained_nlp.pipe(TEXTS, n_process=2, batch_size=2)] == expected


def _with_heads(nlp: Language, words: List[str], heads: List[int]) -> Doc:
    return Doc(nlp.vocab, words=words, heads=heads, deps=["dep"] * len(words))


def test_parse_source_doc_follows_injected_parse(trained_nlp):
    srl = trained_nlp.get_pipe("lisa_srl")
    words, _, gold_heads, _, _ = SENTENCES[0]
    wrong_heads = [6] * 6 + [6]  # everything attached to the final full stop
    srl.parse_source = "doc"
    try:
        gold_doc = srl(_with_heads(trained_nlp, words, gold_heads))
        wrong_doc = srl(_with_heads(trained_nlp, words, wrong_heads))
        gold_scores = srl.predict([_with_heads(trained_nlp, words, gold_heads)]).groups[0]
        wrong_scores = srl.predict([_with_heads(trained_nlp, words, wrong_heads)]).groups[0]
    finally:
        srl.parse_source = "auto"
    assert gold_doc._.srl_parse_source == "doc"
    assert gold_doc._.srl_parse["heads"] == gold_heads
    assert wrong_doc._.srl_parse["heads"] == wrong_heads
    # the doc's own labels, not the model's (whose scorer is skipped on such docs)
    assert gold_doc._.srl_parse["deps"] == ["dep"] * len(words)
    assert not gold_scores.output.dep_scores.any()
    # a different parse changes what the layers above the syntactic head compute
    assert not np.allclose(gold_scores.output.role_scores, wrong_scores.output.role_scores)
    # and the gold parse gives the gold frames
    assert [(r.text, r.label_) for r in gold_doc._.srl_frames[0].roles] == [
        ("John", "ARG0"),
        ("the car", "ARG1"),
        ("to Mary", "ARG2"),
    ]


# PP attachment: the same words, two parses, two readings. Only the parse tells them apart,
# so a model trained with teacher forcing must follow whichever parse it is given.
PP_WORDS = "I saw the man with the telescope".split()
PP_VERB_ATTACHED = ([1, 1, 3, 1, 6, 6, 1], [(0, 1, "ARG0"), (2, 4, "ARG1"), (4, 7, "ARGM-MNR")])
PP_NOUN_ATTACHED = ([1, 1, 3, 1, 6, 6, 3], [(0, 1, "ARG0"), (2, 7, "ARG1")])
PP_DEPS = ["nsubj", "ROOT", "det", "obj", "case", "det", "obl"]


def test_injected_parse_changes_the_frames():
    nlp = make_nlp()
    examples = []
    for heads, roles in (PP_VERB_ATTACHED, PP_NOUN_ATTACHED):
        deps = PP_DEPS if heads[6] == 1 else PP_DEPS[:6] + ["nmod"]
        ref = Doc(
            nlp.vocab,
            words=PP_WORDS,
            tags=["PRP", "VBD", "DT", "NN", "IN", "DT", "NN"],
            heads=heads,
            deps=deps,
        )
        set_srl_frames(
            ref, [{"predicate": [1, 2], "roleset": "see.01", "roles": [list(r) for r in roles]}]
        )
        examples.append(Example(Doc(nlp.vocab, words=PP_WORDS), ref))
    examples += make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(150):
        nlp.update(examples, sgd=optimizer)
    srl = nlp.get_pipe("lisa_srl")
    srl.parse_source = "doc"
    readings = []
    for heads, roles in (PP_VERB_ATTACHED, PP_NOUN_ATTACHED):
        doc = srl(Doc(nlp.vocab, words=PP_WORDS, heads=heads, deps=["dep"] * 7))
        readings.append([(r.start, r.end, r.label_) for r in doc._.srl_frames[0].roles])
        assert readings[-1] == roles
    assert readings[0] != readings[1]


def test_parse_source_auto_uses_doc_parse_when_present(trained_nlp):
    words, _, heads, _, _ = SENTENCES[1]
    doc = trained_nlp(_with_heads(trained_nlp, words, heads))
    assert doc._.srl_parse_source == "doc"
    assert trained_nlp(" ".join(words))._.srl_parse_source == "model"


def test_parse_source_doc_without_parse_raises(trained_nlp):
    srl = trained_nlp.get_pipe("lisa_srl")
    srl.parse_source = "doc"
    try:
        with pytest.raises(ValueError, match="no dependency parse"):
            trained_nlp("John sold the car .")
    finally:
        srl.parse_source = "auto"


def _is_tree(doc: Doc) -> bool:
    for sent in doc.sents:
        roots = [t for t in sent if t.head.i == t.i]
        if len(roots) != 1:
            return False
        for token in sent:
            seen = set()
            while token.head.i != token.i:
                if token.i in seen:
                    return False
                seen.add(token.i)
                token = token.head
    return True


def test_overwrite_parse_always_yields_a_tree(trained_nlp):
    srl = trained_nlp.get_pipe("lisa_srl")
    srl.overwrite_parse = True
    try:
        texts = TEXTS + ["the the the the the the the the", "a", "Sold . Car car John to to Mary"]
        for doc in trained_nlp.pipe(texts):
            assert doc.has_annotation("DEP")
            assert _is_tree(doc), [(t.text, t.head.i) for t in doc]
        # the overwritten parse is the model's own: the training trees come back
        doc = trained_nlp(TEXTS[0])
        assert [t.head.i for t in doc] == SENTENCES[0][2]
        # the tree written is the parse the roles followed, with the labels scored for it
        for doc in trained_nlp.pipe(texts):
            assert doc._.srl_parse_source == "model"
            assert doc._.srl_parse["heads"] == [t.head.i for t in doc]
            assert doc._.srl_parse["deps"] == [t.dep_ for t in doc]
    finally:
        srl.overwrite_parse = False


def test_overwrite_parse_leaves_a_doc_parse_alone(trained_nlp):
    """With the doc's own parse followed (parse_source "auto"/"doc"), overwrite_parse
    writes nothing and srl_parse is the doc's parse, not a model tree."""
    srl = trained_nlp.get_pipe("lisa_srl")
    srl.overwrite_parse = True
    try:
        words, tags, heads, deps, _ = SENTENCES[1]
        doc = Doc(trained_nlp.vocab, words=words, heads=[0] * len(words), deps=["dep"] * 6)
        doc = srl(doc)
        assert doc._.srl_parse_source == "doc"
        assert [t.head.i for t in doc] == [0] * len(words)
        assert doc._.srl_parse == {"heads": [0] * len(words), "deps": ["dep"] * len(words)}
    finally:
        srl.overwrite_parse = False


def test_predicate_source_doc(trained_nlp):
    srl = trained_nlp.get_pipe("lisa_srl")
    srl.predicate_source = "doc"
    try:
        doc = trained_nlp.make_doc("John sold the car to Mary .")
        doc._.srl_predicates = [doc[3]]  # a Token; indices and Spans work too
        doc = srl(doc)
        assert [f.predicate.text for f in doc._.srl_frames] == ["car"]
        none_marked = trained_nlp.make_doc("John sold the car .")
        none_marked._.srl_predicates = []
        assert srl(none_marked)._.srl_frames == []
        punct = trained_nlp.make_doc("John sold the car .")
        punct._.srl_predicates = [4]  # predicates marked on punctuation: scored, no crash
        assert [f.predicate.text for f in srl(punct)._.srl_frames] == ["."]
        with pytest.raises(ValueError, match="no predicates marked"):
            srl(trained_nlp.make_doc("unmarked doc"))
    finally:
        srl.predicate_source = "model"


@pytest.mark.parametrize("text", ["", "   ", "\n\n", "Hello", "!"])
def test_degenerate_docs(trained_nlp, text):
    doc = trained_nlp(text)
    n = len(doc)
    frames = doc._.srl_frames
    assert doc._.srl_frame_data == [f.to_frame_data() for f in frames]  # annotated, never None
    assert all(0 <= f.predicate.start < f.predicate.end <= n for f in frames)
    assert all(0 <= r.start < r.end <= n for f in frames for r in f.roles)
    assert list(doc.spans["srl"]) == [r for f in frames for r in f.roles]
    if n == 0:  # nothing to encode: no parse, no POS
        assert frames == [] and doc._.srl_parse is None and doc._.srl_parse_source is None
    else:  # one parse head and one POS tag per token, heads inside the doc
        assert len(doc._.srl_parse["heads"]) == n and len(doc._.srl_pos) == n
        assert all(0 <= h < n for h in doc._.srl_parse["heads"])
        assert doc._.srl_parse_source == "model"


def test_doc_without_predicates(trained_nlp):
    doc = trained_nlp("Nice weather today .")
    assert doc._.srl_frames == []
    assert doc._.srl_frame_data == []


def test_very_long_doc_is_windowed_not_truncated(trained_nlp):
    # ~2,800 tokens, no sentence boundaries and no sentence-final punctuation either
    text = " ".join(t.replace(" .", "") for t in TEXTS * 90)
    doc = trained_nlp.make_doc(text)
    assert len(doc) > 2500
    srl = trained_nlp.get_pipe("lisa_srl")
    srl._windower.warned_long = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        doc = trained_nlp(text)
    assert sum("W001" in str(w.message) for w in caught) == 1
    assert len(doc._.srl_parse["heads"]) == len(doc)
    # frames are found all along the doc, not only in the first window
    assert doc._.srl_frames and doc._.srl_frames[-1].predicate.start > len(doc) - 200


def test_unsegmented_doc_is_split_into_sentences_with_one_warning(trained_nlp):
    """A paragraph with no sentence splitter in front: roles never cross the sentence
    boundaries the punctuation rules find, and W003 says what to add (once)."""
    text = " ".join(TEXTS * 4)
    srl = trained_nlp.get_pipe("lisa_srl")
    srl._windower.warned_unsegmented = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        docs = list(trained_nlp.pipe([text, text]))
    assert sum("W003" in str(w.message) for w in caught) == 1
    doc = docs[0]
    assert not doc.has_annotation("SENT_START")  # the doc itself is left as it was
    ends = {i + 1 for i, t in enumerate(doc) if t.text == "."}
    assert doc._.srl_frames
    for frame in doc._.srl_frames:
        sentence_end = min(e for e in ends if e > frame.predicate.start)
        sentence_start = max([0, *(e for e in ends if e <= frame.predicate.start)])
        for role in frame.roles:
            assert sentence_start <= role.start and role.end <= sentence_end
    # a one-sentence text needs no split and gets no warning
    srl._windower.warned_unsegmented = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trained_nlp(TEXTS[0])
    assert not any("W003" in str(w.message) for w in caught)


def test_a_doc_annotating_some_predicates_has_no_predicate_targets():
    """A doc whose gold annotates only some predicates (the PropBank frame-file examples,
    one predicate each) teaches nothing about which other words are predicates: its
    POS/predicate targets are masked, while its frame's roles are still learned."""
    from spacy_lisa.frames import PREDICATES_COMPLETE_KEY

    nlp = make_nlp()
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    srl = nlp.get_pipe("lisa_srl")
    ref = make_reference(nlp, SENTENCES[0])
    example = Example(nlp.make_doc("John sold the car to Mary ."), ref)
    complete = srl._targets([example], srl.model.predict(srl._train_batch([example])))
    assert (srl.model.ops.to_numpy(complete.tags) >= 0).all()
    ref.user_data[PREDICATES_COMPLETE_KEY] = False
    partial = srl._targets([example], srl.model.predict(srl._train_batch([example])))
    assert (srl.model.ops.to_numpy(partial.tags) == -1).all()
    roles = srl.model.ops.to_numpy(partial.roles)
    assert (roles == srl.model.ops.to_numpy(complete.roles)).all() and (roles >= 0).any()


def test_misaligned_gold_tokenisation_is_masked(trained_nlp):
    """Gold on tokens the predicted tokenisation splits ("Ma" "ry" for "Mary") is masked,
    not guessed: the targets there are -1, the aligned tokens keep their gold, and the
    loss equals that of the same example with those tokens' gold removed."""
    nlp = make_nlp()
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    srl = nlp.get_pipe("lisa_srl")
    ref = make_reference(nlp, SENTENCES[0])
    pred = Doc(nlp.vocab, words=["John", "sold", "the", "car", "to", "Ma", "ry", "."])
    example = Example(pred, ref)
    output = srl.model.predict(srl._train_batch([example]))
    targets = srl._targets([example], output)
    tags = srl.model.ops.to_numpy(targets.tags)
    assert list(tags[5:7]) == [-1, -1] and (tags[[0, 1, 2, 3, 4, 7]] >= 0).all()
    # the frame's ARG2 "to Mary" ends inside the split token: the whole frame is masked,
    # and counted, never dropped silently
    assert (srl.model.ops.to_numpy(targets.roles) == -1).all()
    assert srl.masked_gold["role_not_aligned"] == 1
    # two gold frames on one token: the second is counted, not silently merged
    twice = make_reference(nlp, SENTENCES[0])
    frames = [f.to_frame_data() for f in twice._.srl_frames]
    set_srl_frames(twice, frames + [dict(frames[0], roleset="sell.02")])
    same_doc = Example(nlp.make_doc("John sold the car to Mary ."), twice)
    srl._targets([same_doc], srl.model.predict(srl._train_batch([same_doc])))
    assert srl.masked_gold["frames_on_one_token"] == 1
    # an aligned frame keeps its role targets: the same sentence, tokenised like the gold
    same = Example(nlp.make_doc("John sold the car to Mary ."), ref)
    aligned = srl._targets([same], srl.model.predict(srl._train_batch([same])))
    assert (srl.model.ops.to_numpy(aligned.roles) >= 0).any()
    losses = nlp.update([example])
    assert np.isfinite(losses["lisa_srl"]) and losses["lisa_srl"] > 0


def test_scores_from_evaluate(trained_nlp):
    scores = trained_nlp.evaluate(make_examples(trained_nlp))
    for key in ("srl_p", "srl_r", "srl_f", "srl_pred_f"):
        assert 0.0 <= scores[key] <= 1.0
    assert scores["srl_f"] > 0.9


def test_transition_weight_scales_viterbi_transitions(trained_nlp):
    """transition_weight multiplies the transition log-probabilities: weight 0 decodes
    like hard constraints alone, a tiny weight barely moves a strong penalty, weight 1
    applies it in full (here: no ARG0 can start)."""
    srl = trained_nlp.get_pipe("lisa_srl")
    saved = (srl.options, srl.cfg["transitions"], srl.cfg["start"])
    roles = list(srl.role_labels)

    def arg0_count() -> int:
        docs = trained_nlp.pipe(TEXTS)
        return sum(r.label_ == "ARG0" for d in docs for f in d._.srl_frames for r in f.roles)

    def weight(value: float) -> None:
        srl.options = srl.options.replace(transition_weight=value)

    try:
        weight(0.0)
        weight_zero = [frames_of(d) for d in trained_nlp.pipe(TEXTS)]
        srl.cfg["transitions"] = srl.cfg["start"] = None  # hard BIO constraints only
        assert [frames_of(d) for d in trained_nlp.pipe(TEXTS)] == weight_zero
        # a penalty of 50 nats on entering B-ARG0, from any label or at the start
        n = len(roles)
        penalty = np.zeros((n, n), dtype="f")
        penalty[:, roles.index("B-ARG0")] = -50.0
        start = np.zeros(n, dtype="f")
        start[roles.index("B-ARG0")] = -50.0
        srl.cfg["transitions"], srl.cfg["start"] = penalty.tolist(), start.tolist()
        weight(0.0)
        assert arg0_count() > 0
        weight(1e-4)  # 0.005 nats: the model's choice stands
        assert arg0_count() > 0
        weight(1.0)
        assert arg0_count() == 0
    finally:
        srl.options, srl.cfg["transitions"], srl.cfg["start"] = saved


def test_analyze_pipes_with_tagger_and_parser():
    """assigns/requires are complete: behind a tagger and parser nothing is missing, and
    lisa_srl alone is told what it would like in front (sentences and a parse)."""
    nlp = spacy.blank("en")
    nlp.add_pipe("tagger")
    nlp.add_pipe("parser")
    nlp.add_pipe("lisa_srl", config={"model": TINY_MODEL})
    analysis = nlp.analyze_pipes()
    assert analysis["problems"]["lisa_srl"] == []
    summary = analysis["summary"]["lisa_srl"]
    assert {"doc.sents", "token.head", "token.dep"} <= set(summary["requires"])
    assert {"doc._.srl_frames", "doc.spans", "token.dep"} <= set(summary["assigns"])
    alone = spacy.blank("en")
    alone.add_pipe("lisa_srl", config={"model": TINY_MODEL})
    assert "token.dep" in alone.analyze_pipes()["problems"]["lisa_srl"]


def test_sa_baseline_without_syntactic_head_reports_no_parse():
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "lisa_srl",
        config={
            "model": {**TINY_MODEL, "parse_layer": 0},
            "loss_weights": {"head": 0.0, "dep": 0.0},
        },
    )
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(60):
        nlp.update(examples, sgd=optimizer)
    doc = nlp(TEXTS[0])
    assert [f.predicate.text for f in doc._.srl_frames] == ["sold"]
    # no syntactic head: no parse was followed, so none is reported (UAS/LAS are None)
    assert doc._.srl_parse is None and doc._.srl_parse_source is None
    words, _, heads, _, _ = SENTENCES[0]
    parsed = nlp(_with_heads(nlp, words, heads))  # a doc parse is simply not used
    assert frames_of(parsed) == frames_of(doc)
    scores = nlp.evaluate(examples)
    assert scores["srl_uas"] is None and 0.0 <= scores["srl_f"] <= 1.0


def test_default_sizes_are_declared_once():
    """Both architectures' keyword defaults, the torch module's and add_pipe's default
    model are LisaSizes' defaults, so a config that leaves a size out builds the same
    model as add_pipe."""
    import inspect
    from dataclasses import asdict

    from spacy_lisa.models.lisa import build_lisa_model
    from spacy_lisa.models.lisa_torch import LisaTorchModel
    from spacy_lisa.models.predicate_aware import build_predicate_aware_lisa
    from spacy_lisa.models.types import LisaSizes
    from spacy_lisa.pipeline.srl_component import DEFAULT_LISA_MODEL

    defaults = asdict(LisaSizes())
    for builder in (build_lisa_model, build_predicate_aware_lisa):
        parameters = inspect.signature(builder).parameters
        assert {k: parameters[k].default for k in defaults} == defaults
    torch_model = LisaTorchModel(8, 3, 2, 4)  # no sizes given: LisaSizes' defaults
    assert torch_model.width == defaults["width"]
    assert len(torch_model.layers) == defaults["depth"]
    assert torch_model.layers[0].ffn_in.out_features == defaults["ffn_width"]
    assert DEFAULT_LISA_MODEL["@architectures"] == "spacy-lisa.LISA.v1"
    assert {k: DEFAULT_LISA_MODEL[k] for k in defaults} == defaults
    srl = spacy.blank("en").add_pipe("lisa_srl")
    assert {k: srl.model.attrs["lisa_config"][k] for k in defaults} == defaults


def test_add_pipe_defaults_are_the_project_configs_settings():
    """Plain add_pipe("lisa_srl") gets what configs/lisa_cpu.cfg trains with: the same
    component options and model (the config states only what differs: its static
    vectors)."""
    from pathlib import Path

    from spacy.util import load_config

    config = load_config(Path(__file__).parents[2] / "configs" / "lisa_cpu.cfg")
    project = spacy.util.load_model_from_config(config, auto_fill=True).get_pipe("lisa_srl")
    nlp = spacy.blank("en")
    plain = nlp.add_pipe("lisa_srl")
    assert plain.options == project.options
    assert plain.model.attrs["lisa_config"] == project.model.attrs["lisa_config"]
    assert plain.model.attrs["lisa_config"]["sense_head"] == "separate_context"
    embed = config["components"]["lisa_srl"]["model"]["tok2vec"]["embed"]
    default_embed = nlp.config["components"]["lisa_srl"]["model"]["tok2vec"]["embed"]
    differs = {k for k in embed if embed[k] != default_embed.get(k)}
    assert differs == {"include_static_vectors", "vectors"}


def test_load_time_config_overrides_take_effect(trained_nlp: Language, tmp_path) -> None:
    """spacy.load(path, config=...) overrides of lisa_srl's options are what the loaded
    component runs, and what config.cfg says after saving again; a change made on the
    running component is not saved behind config.cfg's back."""
    trained_nlp.to_disk(tmp_path / "saved")
    overrides = {"components": {"lisa_srl": {"decoding": "greedy", "transition_weight": 0.1}}}
    nlp = spacy.load(tmp_path / "saved", config=overrides)
    srl = nlp.get_pipe("lisa_srl")
    assert srl.decoding == "greedy" and srl.options.transition_weight == 0.1
    plain = spacy.load(tmp_path / "saved").get_pipe("lisa_srl")
    assert plain.decoding == "viterbi"
    nlp.to_disk(tmp_path / "again")
    config = spacy.util.load_config(tmp_path / "again" / "config.cfg")
    assert config["components"]["lisa_srl"]["decoding"] == "greedy"
    srl.decoding = "viterbi"
    nlp.to_disk(tmp_path / "third")
    assert spacy.load(tmp_path / "third").get_pipe("lisa_srl").decoding == "greedy"


def test_two_threads_sharing_a_pipeline_get_the_single_thread_frames(
    trained_nlp: Language,
) -> None:
    """nlp.pipe in two threads at once on one pipeline gives each thread the frames it
    gets alone (nothing per call is kept on the shared model)."""
    import threading

    texts = [" ".join(s[0]) for s in SENTENCES] * 8
    expected = [frames_of(doc) for doc in trained_nlp.pipe(texts, batch_size=3)]
    results: dict = {}
    start = threading.Barrier(2)

    def run(name: str, batch_size: int) -> None:
        start.wait()
        results[name] = [
            frames_of(doc)
            for _ in range(3)
            for doc in trained_nlp.pipe(texts, batch_size=batch_size)
        ]

    threads = [threading.Thread(target=run, args=(n, b)) for n, b in (("a", 3), ("b", 5))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert results["a"] == expected * 3
    assert results["b"] == expected * 3


def test_write_parse_warns_about_generic_labels():
    """An arc the model has no label for is written as spaCy's 'dep', never silently."""
    from spacy_lisa.pipeline.annotate import write_parse

    doc = spacy.blank("en")("John slept .")
    with pytest.warns(UserWarning, match=r"W005.*1 arc"):
        write_parse(doc, [1, 1, 1], ["nsubj", "ROOT", ""])
    assert [t.dep_ for t in doc] == ["nsubj", "ROOT", "dep"]
    assert [t.head.i for t in doc] == [1, 1, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_parse(doc, [1, 1, 1], ["nsubj", "ROOT", "punct"])


def test_unique_core_roles_is_on_by_default_and_reaches_the_decoder(
    trained_nlp: Language, tmp_path, monkeypatch
) -> None:
    """Frames are decoded with one span per numbered argument unless the config turns it
    off."""
    from spacy_lisa.decoding import frames

    seen = []
    real = frames.decode_frames

    def recording(*args, **kwargs):
        seen.append(kwargs["unique_core"])
        return real(*args, **kwargs)

    monkeypatch.setattr(frames, "decode_frames", recording)
    assert trained_nlp.get_pipe("lisa_srl").options.unique_core_roles is True
    trained_nlp("John sold the car .")
    assert seen[-1] is True
    trained_nlp.to_disk(tmp_path / "saved")
    overrides = {"components": {"lisa_srl": {"unique_core_roles": False}}}
    off = spacy.load(tmp_path / "saved", config=overrides)
    assert off.get_pipe("lisa_srl").options.unique_core_roles is False
    off("John sold the car .")
    assert seen[-1] is False
