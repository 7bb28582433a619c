"""PropBank frame-file examples: the reader, its skip counts, the split by lemma and
``spacy-lisa convert frames``, on small frame files written here (invented sentences:
the real files are CC BY-SA and stay out of the repository)."""

from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import pytest
import srsly
from corpus_helpers import frames_of
from oracles import records_to_docs
from spacy.vocab import Vocab
from typer.testing import CliRunner

from spacy_lisa.cli import app
from spacy_lisa.corpus import CorpusFormatError, SentenceRecord
from spacy_lisa.corpus.docbin import (
    read_docbin,
    records_to_doc,
    write_docbin,
)
from spacy_lisa.corpus.frame_files import roleset_head_lemma
from spacy_lisa.corpus.propbank_frames import (
    FramesReport,
    normalize_label,
    read_frame_examples,
)
from spacy_lisa.corpus.propbank_frames_split import (
    convert_frames,
    heldout_lemmas,
    read_lemma_list,
    split_by_lemma,
)
from spacy_lisa.frames import predicates_complete

Arg = Tuple[str, str, str, str]  # type, start, end, text


def example(
    text: Optional[str],
    relloc: Optional[str] = None,
    args: Sequence[Arg] = (),
    rel_text: str = "",
    propbank: bool = True,
) -> str:
    """One <example>; ``relloc=None`` leaves out the <rel>."""
    parts = ["<example name='t' src=''>"]
    if text is not None:
        parts.append(f"<text>{text}</text>")
    if propbank:
        parts.append("<propbank>")
        if relloc is not None:
            parts.append(f"<rel relloc='{relloc}'>{rel_text}</rel>")
        for label, start, end, words in args:
            parts.append(f"<arg type='{label}' start='{start}' end='{end}'>{words}</arg>")
        parts.append("</propbank>")
    parts.append("</example>")
    return "".join(parts)


def frame_file(rolesets: Sequence[Tuple[str, Sequence[str]]], lemma: str = "x") -> str:
    """A frame file with the given rolesets, each with its <example> elements."""
    body = "".join(
        f"<roleset id='{rid}' name=''><roles><role n='0' descr='agent'/></roles>"
        + "".join(examples)
        + "</roleset>"
        for rid, examples in rolesets
    )
    return (
        "<?xml version='1.0' encoding='utf-8'?>\n"
        f"<frameset><predicate lemma='{lemma}'>{body}</predicate></frameset>\n"
    )


SELL = example(
    "The farmer sold two old cows at the market .",
    "2",
    [("ARG0", "0", "1", "The farmer"), ("ARG1", "3", "5", "two old cows"),
     ("ARGM-LOC", "6", "8", "at the market")],
    rel_text="sold",
)  # fmt: skip


def _read(folder: Path, **kwargs) -> Tuple[List[SentenceRecord], FramesReport]:
    report = FramesReport()
    return list(read_frame_examples(folder, report=report, **kwargs)), report


def _frames_dir(tmp_path: Path, files: dict) -> Path:
    folder = tmp_path / "frames"
    folder.mkdir(exist_ok=True)
    for name, content in files.items():
        (folder / name).write_text(content, encoding="utf-8")
    return folder


def test_good_example_round_trips_through_the_docbin(tmp_path):
    folder = _frames_dir(tmp_path, {"sell.xml": frame_file([("sell.01", [SELL])])})
    (record,), report = _read(folder)
    assert frames_of(record) == [
        ((2, 3), "sell", "sell.01", [(0, 2, "ARG0"), (3, 6, "ARG1"), (6, 9, "ARGM-LOC")])
    ]
    assert record.predicates_complete is False
    assert record.heads is None and record.deprels is None and record.upos is None
    assert (report.files, report.rolesets, report.examples_read, report.examples_kept) == (
        1, 1, 1, 1
    )  # fmt: skip
    assert report.lemmas == {"sell"} and not report.skipped_examples
    path = tmp_path / "x.spacy"
    write_docbin(records_to_docs([record]), path)
    (doc,) = read_docbin(path)
    assert doc.text.split() == "The farmer sold two old cows at the market .".split()
    (frame,) = doc._.srl_frames
    assert (frame.predicate.text, frame.roleset, frame.lemma) == ("sold", "sell.01", "sell")
    assert [(r.text, r.label_) for r in frame.roles] == [
        ("The farmer", "ARG0"), ("two old cows", "ARG1"), ("at the market", "ARGM-LOC")
    ]  # fmt: skip
    assert predicates_complete(doc) is False
    assert not doc.has_annotation("DEP") and doc.has_annotation("SENT_START")


def test_other_records_stay_complete_and_never_share_a_doc_with_incomplete_ones():
    complete = SentenceRecord(words=["Hi"], spaces=[True], predicates=[])
    assert predicates_complete(records_to_doc(Vocab(), [complete])) is True
    incomplete = SentenceRecord(
        words=["Yo"], spaces=[True], predicates=[], predicates_complete=False
    )
    docs = list(records_to_docs([complete, incomplete], n_sents=5))
    assert [predicates_complete(d) for d in docs] == [True, False]


def test_multiword_rels(tmp_path):
    files = {
        "act.xml": frame_file([("act_out.03", [example(
            "Kim acted out the scene .", "1 2", [("ARG0", "0", "0", "Kim"),
            ("ARG1", "3", "4", "the scene")], rel_text="acted out")])]),
        "leave.xml": frame_file([("leave_alone.02", [example(
            "Lee left the dog alone .", "1 4", [("ARG1", "2", "3", "the dog")],
            rel_text="left alone")])]),
        # listed out of order, the lemma's word second in the sentence
        "aftermath.xml": frame_file([("aftermath.01", [example(
            "in the storm 's aftermath", "4 0", [("ARG1", "1", "3", "the storm 's")],
            rel_text="aftermath in")])]),
    }  # fmt: skip
    records, report = _read(_frames_dir(tmp_path, files))
    assert [frames_of(r)[0] for r in records] == [
        ((1, 3), "act", "act_out.03", [(0, 1, "ARG0"), (3, 5, "ARG1")]),
        ((4, 5), "aftermath", "aftermath.01", [(0, 1, "C-V"), (1, 4, "ARG1")]),
        ((1, 2), "leave", "leave_alone.02", [(2, 4, "ARG1"), (4, 5, "C-V")]),
    ]
    assert report.notes["predicates_multiword"] == 1
    assert report.notes["predicates_split_with_c_v"] == 2


OK = "A cat sat ."
OK_ARGS = [("ARG1", "0", "1", "A cat")]

SKIPS = {
    "no_text": example(None, "2", OK_ARGS),
    "irregular_whitespace": example("A cat  sat .", "3", OK_ARGS),
    "no_rel": example(OK, None, OK_ARGS),
    "several_rels": example(OK, "2", OK_ARGS).replace("<rel", "<rel relloc='1'/><rel", 1),
    "rel_index_invalid": example(OK, "?", OK_ARGS),
    "rel_index_repeated": example(OK, "2 2", OK_ARGS),
    "rel_out_of_range": example(OK, "4", OK_ARGS),
    "rel_text_mismatch": example(OK, "2", OK_ARGS, rel_text="cat"),
    "rel_on_trace": example("A cat *PRO* sat .", "2", OK_ARGS),
    "unknown_label": example(OK, "2", [("ARGM-TOP", "0", "1", "A cat")]),
    "argument_position_unknown": example(OK, "2", [("ARG1", "?", "?", "A cat")]),
    "argument_out_of_range": example(OK, "2", [("ARG1", "3", "4", "")]),
    "argument_text_mismatch": example(OK, "2", [("ARG1", "0", "1", "The dog")]),
    "argument_overlaps_predicate": example(OK, "2", [("ARG1", "1", "2", "cat sat")]),
}


@pytest.mark.parametrize("reason", sorted(SKIPS))
def test_each_skip_reason_is_counted(tmp_path, reason):
    text = frame_file([("sit.01", [example(OK, "2", OK_ARGS, rel_text="sat"), SKIPS[reason]])])
    records, report = _read(_frames_dir(tmp_path, {"sit.xml": text}))
    assert len(records) == 1 and report.examples_read == 2 and report.examples_kept == 1
    assert dict(report.skipped_examples) == {reason: 1}
    (item,) = report.skipped_items
    assert item["kind"] == "example" and item["where"].endswith("sit.01 example 2")
    assert report.to_dict()["skipped_examples"] == {reason: 1}


def test_roleset_and_excluded_lemma_skips(tmp_path):
    text = frame_file([("sit-4", [example(OK, "2", OK_ARGS)]), ("sit.01", [example(OK, "2")])])
    folder = _frames_dir(tmp_path, {"sit.xml": text})
    records, report = _read(folder)
    assert len(records) == 1 and dict(report.skipped_examples) == {"invalid_roleset_id": 1}
    records, report = _read(folder, exclude_lemmas={"SIT"})
    assert records == [] and report.skipped_examples == {
        "invalid_roleset_id": 1,
        "lemma_excluded": 1,
    }


def test_traces_are_removed_and_trace_arguments_dropped(tmp_path):
    # tokens: [Mr.(0) Lee]-1(1) wants(2) *-1(3) to(4) [*](5) sell(6) the(7) car(8) for(9)
    # repairs(10) .(11)
    ex = example(
        "[Mr. Lee]-1 wants *-1 to [*] sell the car for repairs .",
        "6",
        [("ARG0", "3", "3", "*-1"), ("ARG1", "7", "8", "the car"),
         ("ARGM-PNC", "9", "10", "for repairs"), ("R-ARG0", "?", "?", "*T*-2"),
         ("ARGM-ADV", "4", "5", "to [*]")],
        rel_text="sell",
    )  # fmt: skip
    (record,), report = _read(_frames_dir(tmp_path, {"sell.xml": frame_file([("sell.01", [ex])])}))
    assert record.words == "Mr. Lee wants to sell the car for repairs .".split()
    assert frames_of(record) == [
        ((4, 5), "sell", "sell.01", [(3, 4, "ARGM-ADV"), (5, 7, "ARG1"), (7, 9, "ARGM-PRP")])
    ]
    assert dict(report.dropped_arguments) == {"argument_trace": 2}
    assert report.notes["trace_tokens_removed"] == 2
    assert report.notes["label_mapped: ARGM-PNC -> ARGM-PRP"] == 1
    assert report.notes["examples_coindex_brackets_removed"] == 1


def test_labels():
    assert roleset_head_lemma("take_into_account.04") == "take"
    assert roleset_head_lemma("up_creek-13") is None
    assert [normalize_label(x) for x in ["ARG0", "C-ARG1", "R-ARGM-LOC", "ARG1-DSP"]] == [
        "ARG0", "C-ARG1", "R-ARGM-LOC", "ARG1-DSP"
    ]  # fmt: skip
    assert normalize_label("C-ARGM-PNC") == "C-ARGM-PRP"
    assert [normalize_label(x) for x in ["ARGM-TOP", "ARGM-DSP", "ARG9", "", "rel"]] == [None] * 5


def test_malformed_and_empty_files_are_counted_not_fatal(tmp_path):
    folder = _frames_dir(
        tmp_path,
        {
            "a.xml": frame_file([("sell.01", [SELL])]),
            "b.xml": "<frameset><predicate lemma='b'><roleset id='b.01'></predicate>",
            "c.xml": "",
            "notes.txt": "not a frame file",
        },
    )
    records, report = _read(folder)
    assert len(records) == 1
    assert (report.files, report.files_read) == (3, 1)
    assert dict(report.skipped_files) == {"file_not_well_formed": 2}
    assert {i["where"] for i in report.skipped_items} == {
        str(folder / "b.xml"),
        str(folder / "c.xml"),
    }


def test_no_frames_folder_is_a_numbered_error(tmp_path):
    with pytest.raises(CorpusFormatError, match=r"\[E127\]"):
        _read(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusFormatError, match=r"\[E128\]"):
        _read(tmp_path / "empty")


def _lemma_records(lemmas: Sequence[str]) -> List[SentenceRecord]:
    from spacy_lisa.corpus.records import Predicate

    return [
        SentenceRecord(words=["w"], spaces=[True], predicates=[Predicate(0, (0, 1), lemma=lemma)])
        for lemma in lemmas
        for _ in range(2)
    ]


def test_lemma_split_is_disjoint_and_deterministic():
    lemmas = [f"lemma{i}" for i in range(40)]
    records = _lemma_records(lemmas + ["Take", "take"])  # case does not part a lemma
    split = split_by_lemma(records, share=0.25, seed=0)
    assert len(split.heldout_lemmas) == 10
    assert split.train_lemmas.isdisjoint(split.heldout_lemmas)
    assert split.train_lemmas | split.heldout_lemmas == {*lemmas, "take"}
    assert len(split.train) + len(split.heldout) == len(records)
    assert {r.predicates[0].lemma.lower() for r in split.heldout} == split.heldout_lemmas
    again = split_by_lemma(list(reversed(records)), share=0.25, seed=0)
    assert again.heldout_lemmas == split.heldout_lemmas
    assert split_by_lemma(records, share=0.25, seed=1).heldout_lemmas != split.heldout_lemmas
    assert heldout_lemmas(lemmas, share=0.0, seed=0) == set()
    assert len(heldout_lemmas(["a", "b"], share=0.1, seed=0)) == 1  # at least one
    with pytest.raises(ValueError, match=r"\[E129\]"):
        heldout_lemmas(lemmas, share=1.0, seed=0)


def _cli_frames(tmp_path: Path) -> Path:
    files = {
        f"{verb}.xml": frame_file([(f"{verb}.01", [example(
            f"They {verb} it .", "1", [("ARG0", "0", "0", "They"), ("ARG1", "2", "2", "it")],
            rel_text=verb)])])
        for verb in ["eat", "see", "hold", "move", "push", "pull", "read", "wash", "fold", "cut"]
    }  # fmt: skip
    files["bad.xml"] = "<frameset>"
    files["odd.xml"] = frame_file([("odd.01", [example("It is odd .", None)])])
    return _frames_dir(tmp_path, files)


def test_cli_writes_both_parts_and_reports_the_skips(tmp_path):
    folder = _cli_frames(tmp_path)
    train, heldout, stats = (
        tmp_path / "o/train.spacy",
        tmp_path / "o/heldout.spacy",
        tmp_path / "s.json",
    )
    args = ["convert", "frames", "--frames", folder, "--output", train, "--heldout-output",
            heldout, "--heldout-share", "0.2", "--seed", "3", "--stats-json", stats]  # fmt: skip
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    assert "skipped: file_not_well_formed" in result.output
    assert "skipped: no_rel" in result.output
    train_docs, heldout_docs = read_docbin(train), read_docbin(heldout)
    assert (len(train_docs), len(heldout_docs)) == (8, 2)
    train_lemmas = {f.lemma for d in train_docs for f in d._.srl_frames}
    held = {f.lemma for d in heldout_docs for f in d._.srl_frames}
    assert train_lemmas.isdisjoint(held) and len(held) == 2
    assert not any(predicates_complete(d) for d in train_docs + heldout_docs)
    numbers = srsly.read_json(stats)
    assert numbers["frames"]["skipped_files"] == {"file_not_well_formed": 1}
    assert numbers["frames"]["skipped_examples"] == {"no_rel": 1}
    assert numbers["frames"]["examples_read"] == 11 and numbers["frames"]["examples_kept"] == 10
    assert sorted(numbers["heldout_lemmas"]) == sorted(held)
    assert numbers["train"]["sentences"] == 8 and numbers["heldout"]["sentences"] == 2
    # the same seed gives the same part; --exclude-lemmas leaves lemmas out (counted)
    exclude = tmp_path / "exclude.txt"
    exclude.write_text("# verbs\nEAT\n\nsee\n", encoding="utf-8")
    result = CliRunner().invoke(app, [str(a) for a in [*args, "--exclude-lemmas", exclude]])
    assert result.exit_code == 0, result.output
    assert srsly.read_json(stats)["frames"]["skipped_examples"] == {
        "no_rel": 1,
        "lemma_excluded": 2,
    }
    assert "skipped: lemma_excluded" in result.output


def test_lemma_list_from_a_docbin(tmp_path):
    take_off = example("Planes take off .", "1 2", [("ARG0", "0", "0", "Planes")], "take off")
    folder = _frames_dir(tmp_path, {"take.xml": frame_file([("take_off.02", [take_off])])})
    result = convert_frames(folder, tmp_path / "a.spacy", tmp_path / "b.spacy", heldout_share=0)
    assert result.report.examples_kept == 1 and result.split.heldout == []
    assert read_lemma_list(tmp_path / "a.spacy") == {"take"}
    with pytest.raises(CorpusFormatError, match=r"\[E130\]"):
        read_lemma_list(tmp_path / "missing.txt")


@pytest.mark.parametrize(
    "change, code",
    [
        ({"--frames": "{tmp}/missing"}, "E127"),
        ({"--frames": "{tmp}"}, "E128"),
        ({"--heldout-share": "1.5"}, "E129"),
        ({"--exclude-lemmas": "{tmp}/missing.txt"}, "E130"),
        ({"--heldout-output": "{tmp}/train.spacy"}, "E131"),
    ],
)
def test_cli_bad_input_is_a_numbered_error(tmp_path, change, code):
    options = {
        "--frames": str(_cli_frames(tmp_path)),
        "--output": "{tmp}/train.spacy",
        "--heldout-output": "{tmp}/heldout.spacy",
    }
    options.update(change)
    args = ["convert", "frames"] + [
        part.format(tmp=tmp_path) for item in options.items() for part in item
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"✘ [{code}]") and "Traceback" not in result.output
    assert not (tmp_path / "train.spacy").exists()
