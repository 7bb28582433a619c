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
from spacy_lisa.pipeline.teacher import TEACHER_KEY, label_with_teacher, soft_targets

REPO = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def teacher():
    return train_tiny_pipeline(TEXT_SENTENCES, TINY_MODEL, steps=60)


def test_teacher_stores_a_distribution_per_gold_predicate_and_token(teacher):
    srl = teacher.get_pipe("lisa_srl")
    examples = gold_examples(teacher, TEXT_SENTENCES)
    n_frames = label_with_teacher(srl.model, srl.cfg, examples, top_k=3)
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
    label_with_teacher(srl.model, srl.cfg, examples, top_k=4)
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
    label_with_teacher(srl.model, srl.cfg, examples)

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
