"""Knowledge distillation (pipeline/teacher.py, scripts/teacher_labels.py): a trained
teacher's distributions stored on training docs, read back as soft targets by a student
whose labels are in another order, carried through DocBin and sentence cuts, and used in
training only when ``loss_weights.teacher`` asks for them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.tokens import Doc, DocBin
from srl_testing import TEXT_SENTENCES, TINY_MODEL, gold_examples, train_tiny_pipeline
from thinc.api import fix_random_seed

from spacy_lisa.corpus.docbin import write_docbin
from spacy_lisa.corpus.readers import SRLCorpus, sentence_doc
from spacy_lisa.pipeline.teacher import label_with_teacher, merge_teacher_data, soft_targets
from spacy_lisa.teacher_data import TEACHER_KEY

REPO = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def teacher():
    return train_tiny_pipeline(TEXT_SENTENCES, TINY_MODEL, steps=60)


def test_teacher_stores_a_distribution_per_gold_predicate_and_token(teacher):
    srl = teacher.get_pipe("lisa_srl")
    examples = gold_examples(teacher, TEXT_SENTENCES)
    n_frames = label_with_teacher(srl, examples, top_k=3)
    assert n_frames == sum(len(frames) for *_, frames in TEXT_SENTENCES)
    roles = srl.cfg["labels"]["roles"]
    for eg, (text, _, _, frames) in zip(examples, TEXT_SENTENCES, strict=True):
        data = eg.reference.user_data[TEACHER_KEY]
        n = len(text.split())
        # top 3, or all labels where there are fewer (no POS here: X and X:PREDICATE)
        assert data["tag_prob"].shape == (n, min(3, len(srl.cfg["labels"]["tags"])))
        numpy.testing.assert_allclose(data["tag_prob"].astype("f").sum(axis=1), 1.0, atol=2e-3)
        assert [t for t, _, _ in data["frames"]] == [p for p, _, _ in frames]
        for (_, index, prob), (_, _, gold_roles) in zip(data["frames"], frames, strict=True):
            numpy.testing.assert_allclose(prob.astype("f").sum(axis=1), 1.0, atol=2e-3)
            # the overfit teacher's most probable label is the gold one
            for start, end, label in gold_roles:
                assert [roles[i] for i in index[start:end, 0]] == [f"B-{label}"] + [
                    f"I-{label}"
                ] * (end - start - 1)


def test_soft_targets_follow_the_student_labels_through_docbin_and_sentence_cuts(teacher, tmp_path):
    srl = teacher.get_pipe("lisa_srl")
    examples = gold_examples(teacher, TEXT_SENTENCES)
    label_with_teacher(srl, examples, top_k=4)
    # two sentences in one doc: the reader's sentence cut must re-base the teacher data
    first, second = examples[0].reference, examples[2].reference
    joined = Doc(
        teacher.vocab,
        words=[t.text for t in first] + [t.text for t in second],
        sent_starts=[True] + [False] * (len(first) - 1) + [True] + [False] * (len(second) - 1),
    )
    joined.user_data[TEACHER_KEY] = {
        **first.user_data[TEACHER_KEY],
        "tag_index": numpy.concatenate(
            [first.user_data[TEACHER_KEY]["tag_index"], second.user_data[TEACHER_KEY]["tag_index"]]
        ),
        "tag_prob": numpy.concatenate(
            [first.user_data[TEACHER_KEY]["tag_prob"], second.user_data[TEACHER_KEY]["tag_prob"]]
        ),
        "frames": first.user_data[TEACHER_KEY]["frames"]
        + [[t + len(first), i, p] for t, i, p in second.user_data[TEACHER_KEY]["frames"]],
    }
    cut, _ = sentence_doc(list(joined.sents)[1])
    assert [t for t, _, _ in cut.user_data[TEACHER_KEY]["frames"]] == [1, 4]
    numpy.testing.assert_array_equal(
        cut.user_data[TEACHER_KEY]["tag_prob"], second.user_data[TEACHER_KEY]["tag_prob"]
    )

    write_docbin([eg.reference for eg in examples], tmp_path / "train.spacy")
    # a student whose role and tag labels are in reverse order
    student = spacy.blank("en")
    student_srl = student.add_pipe("lisa_srl", config={"model": TINY_MODEL})
    student_srl.cfg.update(srl.cfg)
    student_srl.cfg["labels"] = {k: list(reversed(v)) for k, v in srl.cfg["labels"].items()}
    read = list(SRLCorpus(tmp_path / "train.spacy", gold_preproc=True)(student))
    output = srl.model.predict(student_srl._train_batch(read))
    role_soft, tag_soft = soft_targets(read, output, srl.model.ops, student_srl.cfg)
    teacher_roles = srl.cfg["labels"]["roles"]
    student_roles = student_srl.cfg["labels"]["roles"]
    frames = output.frames
    for f, (s, pos) in enumerate(frames):
        doc_i, start, end = output.windows[int(s)]
        stored = read[doc_i].reference.user_data[TEACHER_KEY]
        (index, prob) = next((i, p) for t, i, p in stored["frames"] if t == start + int(pos))
        for t in range(end - start):
            expected = numpy.zeros(len(student_roles), dtype="float32")
            for label, value in zip(index[start + t], prob[start + t], strict=True):
                expected[student_roles.index(teacher_roles[label])] += float(value)
            numpy.testing.assert_allclose(role_soft[f, t], expected / expected.sum(), atol=1e-3)
        assert not role_soft[f, end - start :].any()  # padding: no teacher
    assert tag_soft.shape == (output.tag_scores.shape[0], len(student_srl.cfg["labels"]["tags"]))
    numpy.testing.assert_allclose(tag_soft.sum(axis=1), 1.0, atol=1e-3)


def test_teacher_share_changes_training_only_when_set(teacher):
    srl = teacher.get_pipe("lisa_srl")
    examples = gold_examples(teacher, TEXT_SENTENCES)
    label_with_teacher(srl, examples)

    def loss_after_init(share):
        fix_random_seed(0)
        nlp = spacy.blank("en")
        nlp.add_pipe("lisa_srl", config={"model": TINY_MODEL, "loss_weights": {"teacher": share}})
        nlp.initialize(lambda: examples)
        student = nlp.get_pipe("lisa_srl")
        output, _ = student.model.begin_update(student._train_batch(examples))
        return student.get_loss(examples, output)[0]

    plain = loss_after_init(0.0)
    assert loss_after_init(0.0) == plain  # same init (seeded): the teacher data is unused
    assert loss_after_init(1.0) != plain


def test_teacher_share_above_one_fails_at_construction():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="E027"):
        nlp.add_pipe("lisa_srl", config={"model": TINY_MODEL, "loss_weights": {"teacher": 1.5}})


def test_teacher_labels_script_writes_training_data(teacher, tmp_path):
    teacher.to_disk(tmp_path / "teacher")
    write_docbin(
        [eg.reference for eg in gold_examples(teacher, TEXT_SENTENCES)], tmp_path / "train.spacy"
    )
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "teacher_labels.py"),
            str(tmp_path / "teacher"),
            str(tmp_path / "train.spacy"),
            str(tmp_path / "train.teacher.spacy"),
            "--top-k",
            "2",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "5 sentences" in result.stdout
    docs = list(DocBin().from_disk(tmp_path / "train.teacher.spacy").get_docs(teacher.vocab))
    assert all(doc.user_data[TEACHER_KEY]["tag_prob"].shape[1] == 2 for doc in docs)
    assert all(doc._.srl_frames is not None for doc in docs)


def _dense(names, index, prob):
    """A stored distribution as {label: probability} per row."""
    return [
        {names[i]: round(float(p), 3) for i, p in zip(row_i, row_p, strict=True) if p > 0}
        for row_i, row_p in zip(index, prob, strict=True)
    ]


def test_merged_teachers_average_by_label_name_and_keep_predicates_of_either():
    # teacher A and B list their labels in different orders; B alone labels predicate 2
    a = {
        "roles": ["O", "B-ARG0", "B-ARG1"],
        "tags": ["X", "X:PREDICATE"],
        "tag_index": numpy.array([[0, 1], [1, 0], [0, 1]], dtype="uint16"),
        "tag_prob": numpy.array([[0.8, 0.2], [1.0, 0.0], [0.6, 0.4]], dtype="float16"),
        "frames": [
            [
                1,
                numpy.array([[1, 0], [0, 2], [2, 0]], dtype="uint16"),
                numpy.array([[0.9, 0.1], [1.0, 0.0], [0.5, 0.5]], dtype="float16"),
            ],
        ],
    }
    b = {
        "roles": ["B-ARG1", "O", "B-ARG0"],
        "tags": ["X:PREDICATE", "X"],
        "tag_index": numpy.array([[1, 0], [0, 1], [0, 1]], dtype="uint16"),
        "tag_prob": numpy.array([[0.6, 0.4], [0.5, 0.5], [1.0, 0.0]], dtype="float16"),
        "frames": [
            [
                1,
                numpy.array([[2, 1], [1, 0], [0, 1]], dtype="uint16"),
                numpy.array([[0.7, 0.3], [1.0, 0.0], [1.0, 0.0]], dtype="float16"),
            ],
            [
                2,
                numpy.array([[0, 1], [1, 0], [1, 0]], dtype="uint16"),
                numpy.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]], dtype="float16"),
            ],
        ],
    }
    merged = merge_teacher_data([a, b], top_k=2)
    tags = _dense(merged["tags"], merged["tag_index"], merged["tag_prob"])
    assert tags == [
        {"X": 0.7, "X:PREDICATE": 0.3},
        {"X:PREDICATE": 0.75, "X": 0.25},
        {"X:PREDICATE": 0.7, "X": 0.3},
    ]
    assert [t for t, _, _ in merged["frames"]] == [1, 2]
    _, index, prob = merged["frames"][0]
    assert _dense(merged["roles"], index, prob) == [
        {"B-ARG0": 0.8, "O": 0.2},
        {"O": 1.0},
        {"B-ARG1": 0.75, "O": 0.25},
    ]
    # the predicate only B labelled keeps B's distribution
    _, index, prob = merged["frames"][1]
    assert _dense(merged["roles"], index, prob) == [
        {"B-ARG1": 1.0},
        {"O": 1.0},
        {"O": 1.0},
    ]
    # weights: A counts three times as much as B
    weighted = merge_teacher_data([a, b], [3.0, 1.0], top_k=1)
    _, index, _ = weighted["frames"][0]
    assert [weighted["roles"][i] for i in index[:, 0]] == ["B-ARG0", "O", "B-ARG1"]
    with pytest.raises(ValueError, match="one positive weight per teacher"):
        merge_teacher_data([a, b], [1.0])


def test_merge_teacher_labels_script_merges_and_refuses_other_sentences(teacher, tmp_path):
    srl = teacher.get_pipe("lisa_srl")
    paths = []
    for name, temperature in (("sharp", 0.5), ("soft", 4.0)):
        examples = gold_examples(teacher, TEXT_SENTENCES)
        label_with_teacher(srl, examples, top_k=3, temperature=temperature)
        paths.append(tmp_path / f"{name}.spacy")
        write_docbin([eg.reference for eg in examples], paths[-1])
    script = [sys.executable, str(REPO / "scripts" / "merge_teacher_labels.py")]
    result = subprocess.run(
        [*script, *map(str, paths), str(tmp_path / "merged.spacy"), "--top-k", "3"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "5 sentences (5 with teacher data) from 2 teachers" in result.stdout
    read = [list(DocBin().from_disk(p).get_docs(teacher.vocab)) for p in paths]
    merged = list(DocBin().from_disk(tmp_path / "merged.spacy").get_docs(teacher.vocab))
    for doc, sharp, soft in zip(merged, *read, strict=True):
        assert doc._.srl_frames is not None  # the gold frames travel on
        data = doc.user_data[TEACHER_KEY]
        ends = [sharp.user_data[TEACHER_KEY], soft.user_data[TEACHER_KEY]]
        assert len(data["frames"]) == len(ends[0]["frames"])
        if not data["frames"]:  # "Nice weather today ." has no predicate
            continue
        top = [float(d["frames"][0][2][0, 0]) for d in (data, *ends)]
        # the ensemble's top probability lies between the sharp and the soft teacher's
        assert min(top[1:]) - 2e-3 <= top[0] <= max(top[1:]) + 2e-3
        assert top[1] != top[2]
    # another training file's sentences are refused, naming the sentence
    write_docbin(list(reversed(read[1])), tmp_path / "reversed.spacy")
    failed = subprocess.run(
        [*script, str(paths[0]), str(tmp_path / "reversed.spacy"), str(tmp_path / "bad.spacy")],
        capture_output=True,
        text=True,
    )
    assert failed.returncode == 1
    assert "sentence 0 of" in failed.stderr and "label the same training file" in failed.stderr
