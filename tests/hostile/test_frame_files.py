"""Hostile PropBank frame files: ``spacy-lisa convert frames`` and ``lisa_srl``'s
``propbank_frames`` initialize setting read every ``*.xml`` entry of a folder, skip and
count what they cannot use (unsupported encodings, links to nothing, symlink loops,
folders named ``x.xml``, FIFOs), keep skip messages bounded, and stop on a bad folder
with a numbered error printed without a traceback. Every case is generated here."""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
import spacy
from spacy.tokens import DocBin
from srl_testing import TEXT_SENTENCES, TINY_MODEL, gold_examples
from thinc.api import ConfigValidationError
from typer.testing import CliRunner

from spacy_lisa.cli import app
from spacy_lisa.corpus import CorpusFormatError, SentenceRecord
from spacy_lisa.corpus.docbin import read_docbin
from spacy_lisa.corpus.propbank_frames import FramesReport, read_frame_examples
from spacy_lisa.pipeline.senses import add_frame_file_candidates


def frame_file(roleset_id: str, examples: str = "", encoding: str = "utf-8") -> str:
    return (
        f"<?xml version='1.0' encoding='{encoding}'?>\n<frameset><predicate lemma='x'>"
        f"<roleset id='{roleset_id}' name=''>{examples}</roleset></predicate></frameset>\n"
    )


def example(text: str, relloc: str, rel: str, args: str = "") -> str:
    return (
        f"<example><text>{text}</text><propbank><rel relloc='{relloc}'>{rel}</rel>"
        f"{args}</propbank></example>"
    )


SIT = example("A cat sat .", "2", "sat", "<arg type='ARG1' start='0' end='1'>A cat</arg>")


def frames_dir(tmp_path: Path, files: Dict[str, str]) -> Path:
    folder = tmp_path / "frames"
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def read(folder: Path) -> Tuple[List[SentenceRecord], FramesReport]:
    report = FramesReport()
    return list(read_frame_examples(folder, report=report)), report


def add_bad_entries(folder: Path) -> None:
    """A link to nothing, a symlink loop, a folder named x.xml and a FIFO."""
    os.symlink(folder / "gone.xml", folder / ".#sit.xml")  # an editor's lock file
    os.symlink(folder / "loop.xml", folder / "loop.xml")
    (folder / "dir.xml").mkdir()
    os.mkfifo(folder / "pipe.xml")  # opened, it would block the reading forever


def convert(tmp_path: Path, folder: Path, *extra: str):
    out = tmp_path / "out"
    args = ["convert", "frames", "--frames", str(folder), "--output", str(out / "t.spacy"),
            "--heldout-output", str(out / "h.spacy"), "--heldout-share", "0", *extra]  # fmt: skip
    return CliRunner().invoke(app, args), out


# --- convert frames ----------------------------------------------------------------------


def test_unknown_and_multibyte_encodings_are_skipped_and_counted(tmp_path):
    folder = frames_dir(
        tmp_path,
        {
            "sit.xml": frame_file("sit.01", SIT),
            "a.xml": frame_file("a.01", SIT, encoding="x-foo-bar"),
            "b.xml": frame_file("b.01", SIT, encoding="shift_jis"),
            "c.xml": frame_file("c.01", SIT, encoding="x" * 100_000),
        },
    )
    records, report = read(folder)
    assert len(records) == 1 and (report.files, report.files_read) == (4, 1)
    assert dict(report.skipped_files) == {"file_encoding_unsupported": 3}
    assert max(len(item["detail"]) for item in report.skipped_items) < 300
    result, _ = convert(tmp_path, folder)
    assert result.exit_code == 0, result.output
    assert "skipped: file_encoding_unsupported" in result.output


def test_every_xml_entry_is_read_or_counted_as_skipped(tmp_path):
    folder = frames_dir(
        tmp_path,
        {"sit.xml": frame_file("sit.01", SIT), "UPPER.XML": frame_file("stand.01", SIT)},
    )
    add_bad_entries(folder)
    records, report = read(folder)
    assert sorted(r.predicates[0].roleset for r in records) == ["sit.01", "stand.01"]
    assert dict(report.skipped_files) == {
        "file_broken_symlink": 1,
        "file_symlink_loop": 1,
        "file_not_regular": 2,
    }
    assert report.files == 6 == report.files_read + sum(report.skipped_files.values())


def test_a_nested_roleset_counts_its_example_once(tmp_path):
    inner = f"<roleset id='sit.02' name=''>{SIT}</roleset>"
    folder = frames_dir(tmp_path, {"sit.xml": frame_file("sit.01", SIT + inner)})
    records, report = read(folder)
    assert [r.predicates[0].roleset for r in records] == ["sit.01", "sit.02"]
    assert (report.rolesets, report.examples_read, report.examples_kept) == (2, 2, 2)
    assert report.notes["rolesets_nested"] == 1


def test_ptb_escapes_become_what_ewt_writes(tmp_path):
    # EWT's UD words (what convert ewt writes) have ( ) [ ] { } and " for both quotes
    text = "`` -LRB- A -LSB- cat -LCB- sat -RCB- -RSB- -RRB- '' ."
    args = "<arg type='ARG1' start='1' end='4'>-LRB- A -LSB- cat</arg>"
    sat = example(text, "6", "sat", args)
    (record,), report = read(frames_dir(tmp_path, {"sit.xml": frame_file("sit.01", sat)}))
    assert record.words == '" ( A [ cat { sat } ] ) " .'.split()
    assert [(a.start, a.end) for a in record.predicates[0].arguments] == [(1, 5)]
    assert report.notes['ptb_escape_mapped: `` -> "'] == 1
    assert report.notes["ptb_escape_mapped: -LRB- -> ("] == 1
    assert report.notes["ptb_escape_mapped: -RCB- -> }"] == 1


def test_a_huge_roleset_id_keeps_the_skips_and_the_stats_small(tmp_path):
    """A 200,000-character roleset id over 300 bad examples: today each skip copies the
    id (where and detail), 120 MB of memory and of stats; bounded excerpts instead."""
    huge = "z" * 200_000
    bad = example("A cat sat .", "9", "sat") * 300  # rel out of range
    folder = frames_dir(
        tmp_path,
        {
            "sit.xml": frame_file("sit.01", SIT),
            "z.xml": frame_file(huge, bad),
            "zz.xml": frame_file(huge + ".01", SIT),
        },
    )
    tracemalloc.start()
    try:
        records, report = read(folder)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16_000_000, f"{peak:,} bytes at peak"
    assert len(json.dumps(report.to_dict())) < 200_000
    item = report.skipped_items[0]
    assert "(200,000 characters)" in item["where"] and len(item["where"]) < 300
    # the id with a sense number is past any real length: skipped too
    assert len(records) == 1 and report.skipped_examples == {"invalid_roleset_id": 301}
    stats = tmp_path / "stats.json"
    result, _ = convert(tmp_path, folder, "--stats-json", str(stats))
    assert result.exit_code == 0, result.output
    assert len(result.output) < 50_000 and stats.stat().st_size < 200_000


def test_a_folder_without_a_usable_file_is_a_numbered_error(tmp_path):
    folder = frames_dir(tmp_path, {"a.xml": "<frameset>", "b.xml": frame_file("b.01", "", "x")})
    add_bad_entries(folder)
    with pytest.raises(CorpusFormatError, match=r"\[E134\] .*none of the 6 .*file_not_regular: 2"):
        read(folder)
    result, out = convert(tmp_path, folder)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr.strip().splitlines()[-1].startswith("✘ [E134]")
    assert not out.exists()  # nothing written


def test_a_folder_without_a_usable_example_is_a_numbered_error(tmp_path):
    folder = frames_dir(tmp_path, {"a.xml": frame_file("a.01", example("A b .", "7", "b"))})
    result, out = convert(tmp_path, folder)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "[E135]" in result.stderr and "rel_out_of_range: 1" in result.stderr
    assert not out.exists()


def test_a_folder_that_cannot_be_listed_is_a_numbered_error(tmp_path, monkeypatch):
    folder = frames_dir(tmp_path, {"sit.xml": frame_file("sit.01", SIT)})

    def refuse(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "iterdir", refuse)
    with pytest.raises(CorpusFormatError, match=r"\[E136\] .*Permission denied"):
        read(folder)
    with pytest.raises(ConfigValidationError, match=r"E136"):
        add_frame_file_candidates({}, str(folder))


# --- the propbank_frames initialize setting ----------------------------------------------


def test_initialize_skips_bad_frame_files_with_one_warning(tmp_path):
    folder = frames_dir(
        tmp_path,
        {
            "sit.xml": frame_file("sit.01"),
            "UPPER.XML": frame_file("stand.01"),
            "enc.xml": frame_file("enc.01", encoding="x-foo-bar"),
            "sj.xml": frame_file("sj.01", encoding="shift_jis"),
            "long.xml": frame_file("z" * 100_000 + ".01"),
        },
    )
    add_bad_entries(folder)
    candidates: Dict[str, List[str]] = {}
    with pytest.warns(UserWarning, match=r"W006") as warned:
        assert add_frame_file_candidates(candidates, str(folder)) == 2
    assert candidates == {"sit": ["sit.01"], "stand": ["stand.01"]}
    message = str(warned[0].message)
    assert "6 of the 9" in message and "file_encoding_unsupported: 2" in message
    assert "file_not_regular: 2" in message and "file_symlink_loop: 1" in message


@pytest.mark.parametrize("case", ["missing", "a file", "no frame file", "none usable"])
def test_a_bad_propbank_frames_path_is_a_config_error(tmp_path, case):
    path = tmp_path / "frames"
    if case == "a file":
        path.write_text("sit.xml")
    elif case != "missing":
        path.mkdir()
        (path / "notes.txt").write_text("no frame file")
        if case == "none usable":
            add_bad_entries(path)
    code = "E134" if case == "none usable" else "E028"
    with pytest.raises(ConfigValidationError, match=code):
        add_frame_file_candidates({}, str(path))


@pytest.mark.parametrize("usable", [False, True])
def test_spacy_train_prints_frame_file_errors_without_a_traceback(tmp_path, capsys, usable):
    """`spacy train` initialises lisa_srl inside spaCy's show_validation_error: a bad
    propbank_frames folder is one numbered message and exit 1; bad files in a good
    folder are skipped (here training then runs for no step)."""
    from spacy.cli.train import train

    folder = tmp_path / "frames"
    folder.mkdir()
    add_bad_entries(folder)
    if usable:
        (folder / "sit.xml").write_text(frame_file("sit.01"), encoding="utf-8")
    nlp = spacy.blank("en")
    corpus = tmp_path / "train.spacy"
    references = [eg.reference for eg in gold_examples(nlp, TEXT_SENTENCES[:4])]
    DocBin(docs=references, store_user_data=True).to_disk(corpus)
    nlp.add_pipe("lisa_srl", config={"model": TINY_MODEL})
    nlp.config["initialize"]["components"] = {"lisa_srl": {"propbank_frames": str(folder)}}
    config_path = tmp_path / "config.cfg"
    nlp.config.to_disk(config_path)
    overrides = {"paths.train": str(corpus), "paths.dev": str(corpus),
                 "training.max_steps": 1, "training.eval_frequency": 1}  # fmt: skip
    if usable:
        with pytest.warns(UserWarning, match=r"W006"):
            train(config_path, tmp_path / "out", overrides=overrides)
        assert (tmp_path / "out" / "model-last").is_dir()
        return
    with pytest.raises(SystemExit) as exit_info:
        train(config_path, overrides=overrides)
    assert exit_info.value.code == 1
    out = capsys.readouterr()
    printed = " ".join((out.out + out.err).split())
    assert "[E134]" in printed and "file_broken_symlink: 1" in printed
    assert "Traceback" not in printed


def test_docs_of_a_conversion_keep_short_sent_ids(tmp_path):
    """A roleset id past any real length is skipped, so no Doc carries a huge id."""
    folder = frames_dir(
        tmp_path,
        {"sit.xml": frame_file("sit.01", SIT), "z.xml": frame_file("z" * 5000 + ".01", SIT)},
    )
    result, out = convert(tmp_path, folder)
    assert result.exit_code == 0, result.output
    (doc,) = read_docbin(out / "t.spacy")
    assert [f.roleset for f in doc._.srl_frames] == ["sit.01"]
