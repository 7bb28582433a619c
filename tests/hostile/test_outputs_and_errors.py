"""Hostile outputs and inputs: no command writes over what it reads or over another of
its outputs, and an output that cannot be written is refused before the work (numbered
errors, no traceback, the inputs untouched); an ensemble of an ensemble, a file that is
not a DocBin, an empty DocBin, partly annotated gold and bad transformer directories each
get a numbered message. Every case is generated here, from tiny files and models."""

from __future__ import annotations

import copy
import hashlib
import os
import shutil
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest
import spacy
from encoder_testing import build_encoder
from spacy.tokens import DocBin
from spacy.util import fix_random_seed, registry
from srl_testing import TEXT_SENTENCES, TINY_MODEL, gold_examples, train_tiny_pipeline
from thinc.api import ConfigValidationError
from typer.testing import CliRunner

from spacy_lisa.cli import app
from spacy_lisa.frames import PREDICATES_COMPLETE_KEY

TOK2VEC = "spacy-lisa.TransformerTok2Vec.v1"


def invoke(*args: Any) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args])


def refused(result: Any, code: str) -> None:
    """Exit status 1, the numbered message last on stderr, no traceback."""
    assert result.exit_code == 1, result.output
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"✘ [{code}]"), result.stderr
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)


def fingerprint(path: Path) -> Dict[str, str]:
    """Every file under ``path`` (or ``path`` itself) -> the hash of its bytes."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


# --- convert: every format ------------------------------------------------------------------

UD = (
    "# newdoc id = answers-d1\n# sent_id = answers-d1-0001\n"
    "1\tI\tI\tPRON\tPRP\t_\t2\tnsubj\t_\t_\n"
    "2\tlike\tlike\tVERB\tVBP\t_\t0\troot\t_\t_\n"
    "3\tcats\tcat\tNOUN\tNNS\t_\t2\tobj\t_\t_\n\n"
)
CONLL2012 = "".join(
    f"google/ewt/answers/00/d1.xml\t0\t{i}\t{word}\t{tag}\t*\t{lemma}\t{sense}\t{role}\n"
    for i, (word, tag, lemma, sense, role) in enumerate(
        [("I", "PRP", "-", "-", "(ARG0*)"), ("like", "VBP", "like", "like.01", "(V*)"),
         ("cats", "NNS", "-", "-", "(ARG1*)")]
    )
) + "\n"  # fmt: skip
WORDS, PROPS = "I\nlike\ncats\n\n", "-\t(A0*)\nlike\t(V*)\n-\t(A1*)\n\n"
UP = (
    "1\tI\tI\tPRON\tPRP\t_\t2\tnsubj\t_\t_\t_\tA0\n"
    "2\tlike\tlike\tVERB\tVBP\t_\t0\troot\t_\t_\tlike.01\tV\n"
    "3\tcats\tcat\tNOUN\tNNS\t_\t2\tobj\t_\t_\t_\tA1\n\n"
)
FRAME = (
    "<?xml version='1.0' encoding='utf-8'?>\n<frameset><predicate lemma='{verb}'>"
    "<roleset id='{verb}.01' name=''><example><text>They {verb} it .</text><propbank>"
    "<rel relloc='1'>{verb}</rel><arg type='ARG0' start='0' end='0'>They</arg>"
    "</propbank></example></roleset></predicate></frameset>\n"
)


def convert_args(fmt: str, root: Path) -> Tuple[List[Any], Dict[str, Path]]:
    """The ``convert FMT`` arguments without the outputs, and its inputs by option, on
    small valid files written under ``root``."""
    files: Dict[str, Path] = {}

    def write(name: str, text: str) -> Path:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf8")
        return path

    if fmt == "ewt":
        files["--ud"] = write("ud.conllu", UD)
        files["--propbank"] = write("propbank/answers/00/d1.xml.gold_skel", CONLL2012).parents[2]
        args = ["--ud", files["--ud"], "--propbank", files["--propbank"]]
    elif fmt == "conll2012":
        files["FILES"] = write("d1.gold_conll", CONLL2012)
        args = [files["FILES"]]
    elif fmt == "conll2005":
        files["--words"], files["--props"] = write("w.txt", WORDS), write("p.txt", PROPS)
        args = ["--words", files["--words"], "--props", files["--props"]]
    elif fmt == "up":
        files["FILE"] = write("up.conllu", UP)
        args = [files["FILE"]]
    else:
        for verb in ("eat", "see", "hold"):
            write(f"frames/{verb}.xml", FRAME.format(verb=verb))
        files["--frames"] = root / "frames"
        files["--exclude-lemmas"] = write("exclude.txt", "hold\n")
        args = ["--frames", files["--frames"], "--exclude-lemmas", files["--exclude-lemmas"]]
        args += ["--heldout-output", root / "out" / "heldout.spacy", "--heldout-share", "0.3"]
    return ["convert", fmt, *args], files


FORMATS = ["ewt", "conll2012", "conll2005", "up", "frames"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_convert_with_its_inputs_writes(fmt: str, tmp_path: Path) -> None:
    """The cases below are refused for their outputs, not for their inputs."""
    args, _ = convert_args(fmt, tmp_path)
    result = invoke(*args, "--output", tmp_path / "out" / "t.spacy", "--stats-json", tmp_path / "s")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("fmt", FORMATS)
def test_convert_refuses_an_output_that_is_another_output(fmt: str, tmp_path: Path) -> None:
    """Before: exit 0 with the DocBin replaced by the stats JSON (E131 compared only
    --output with --heldout-output)."""
    args, _ = convert_args(fmt, tmp_path)
    out = tmp_path / "out" / "t.spacy"
    refused(invoke(*args, "--output", out, "--stats-json", out), "E039")
    assert not out.exists()
    # the same file through a link or a roundabout relative path
    (tmp_path / "link").symlink_to(tmp_path / "out", target_is_directory=True)
    roundabout = Path(os.path.relpath(tmp_path / "out" / ".." / "out" / "t.spacy"))
    refused(
        invoke(*args, "--output", roundabout, "--stats-json", tmp_path / "link/t.spacy"), "E039"
    )
    assert not out.exists()


@pytest.mark.parametrize("fmt", FORMATS)
def test_convert_refuses_an_output_over_an_input(fmt: str, tmp_path: Path) -> None:
    args, inputs = convert_args(fmt, tmp_path)
    before = {option: fingerprint(path) for option, path in inputs.items()}
    for option, path in inputs.items():
        if path.is_dir():  # a folder: the files of it the command reads
            path = next(p for p in sorted(path.rglob("*")) if p.is_file())
        link = tmp_path / f"link-{option.strip('-')}"
        link.symlink_to(path)
        for output, stats in ((path, None), (tmp_path / "t.spacy", link)):
            extra = ["--stats-json", stats] if stats is not None else []
            refused(invoke(*args, "--output", output, *extra), "E037")
    assert {option: fingerprint(path) for option, path in inputs.items()} == before


def test_convert_output_beside_its_inputs_is_fine(tmp_path: Path) -> None:
    """Outputs inside an input folder that the command does not read are written."""
    args, inputs = convert_args("frames", tmp_path)
    out = inputs["--frames"] / "frames.spacy"
    assert invoke(*args, "--output", out).exit_code == 0 and out.is_file()


def test_convert_frames_refuses_an_unwritable_output_before_the_work(tmp_path: Path) -> None:
    """Before: NotADirectoryError after the training DocBin was already written."""
    args, _ = convert_args("frames", tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    out = tmp_path / "train.spacy"
    args = [a if a != tmp_path / "out" / "heldout.spacy" else blocker / "h.spacy" for a in args]
    result = invoke(*args, "--output", out)
    refused(result, "E318")
    assert "--heldout-output" in result.stderr and not out.exists()
    refused(invoke(*convert_args("up", tmp_path)[0], "-o", blocker / "t.spacy"), "E318")


# --- ensemble ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def members(tmp_path_factory: pytest.TempPathFactory) -> List[Path]:
    """Two pipelines of the same labels: one tiny pipeline, barely trained, and a copy
    (only their files and labels matter here)."""
    root = tmp_path_factory.mktemp("members")
    fix_random_seed(0)
    train_tiny_pipeline(TEXT_SENTENCES, TINY_MODEL, steps=1).to_disk(root / "a")
    shutil.copytree(root / "a", root / "b")
    return [root / "a", root / "b"]


@pytest.mark.slow  # trains a tiny pipeline (once per module)
def test_ensemble_refuses_to_write_over_a_member(members: List[Path], tmp_path: Path) -> None:
    """Before: `ensemble A B -o A` turned member A into the ensemble without a word."""
    a, b = members
    before = fingerprint(a)
    (tmp_path / "link").symlink_to(a, target_is_directory=True)
    for output in (a, a / "lisa_srl", tmp_path / "link", tmp_path / "link" / ".." / a.name):
        refused(invoke("ensemble", a, b, "--output", output), "E038")
    assert fingerprint(a) == before


def test_ensemble_refuses_an_unwritable_output_before_loading(tmp_path: Path) -> None:
    """Checked before the members load: these members are no pipelines at all (loading
    them would be E317). Before: the members were joined, then FileExistsError."""
    fake = [tmp_path / "m1", tmp_path / "m2"]
    for path in fake:
        path.mkdir()
    (tmp_path / "a-file").write_text("x")
    refused(invoke("ensemble", *fake, "--output", tmp_path / "a-file" / "e"), "E318")


@pytest.mark.slow  # trains a tiny pipeline (once per module)
def test_an_ensemble_is_no_member(members: List[Path], tmp_path: Path) -> None:
    """Before: ValueError: dictionary update sequence element #0 ..."""
    assert invoke("ensemble", *members, "-o", tmp_path / "e").exit_code == 0
    result = invoke("ensemble", tmp_path / "e", members[0], "-o", tmp_path / "e2")
    refused(result, "E040")
    assert "original members" in result.stderr and not (tmp_path / "e2").exists()


# --- evaluate ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gold(tmp_path_factory: pytest.TempPathFactory, members: List[Path]) -> Path:
    nlp = spacy.load(members[0])
    path = tmp_path_factory.mktemp("gold") / "dev.spacy"
    references = [eg.reference for eg in gold_examples(nlp, TEXT_SENTENCES)]
    DocBin(docs=references, store_user_data=True).to_disk(path)
    return path


@pytest.mark.slow  # trains a tiny pipeline (once per module)
def test_evaluate_refuses_outputs_over_its_inputs(
    members: List[Path], gold: Path, tmp_path: Path
) -> None:
    model = members[0]
    before = {**fingerprint(model), **fingerprint(gold)}
    (tmp_path / "data-link").symlink_to(gold)
    refused(invoke("evaluate", model, gold, "-o", tmp_path / "data-link"), "E037")
    refused(invoke("evaluate", model, gold, "--sense-baseline", gold, "-o", gold), "E037")
    refused(invoke("evaluate", model, gold, "-o", model / "meta.json"), "E038")
    refused(invoke("evaluate", model, gold, "--conll-dir", model / "conll"), "E038")
    conll = tmp_path / "conll"
    refused(
        invoke("evaluate", model, gold, "-o", conll / "gold.props", "--conll-dir", conll), "E039"
    )
    assert {**fingerprint(model), **fingerprint(gold)} == before
    assert not conll.exists()


def test_evaluate_refuses_an_unwritable_output_before_loading(tmp_path: Path) -> None:
    """Checked before the pipeline loads (this one is none: loading it would be E317).
    Before: the whole evaluation ran, then NotADirectoryError."""
    (tmp_path / "model").mkdir()
    data, blocker = tmp_path / "dev.spacy", tmp_path / "a-file"
    DocBin().to_disk(data)
    blocker.write_text("x")
    refused(invoke("evaluate", tmp_path / "model", data, "-o", blocker / "s.json"), "E318")
    refused(invoke("evaluate", tmp_path / "model", data, "--conll-dir", blocker / "c"), "E318")


@pytest.mark.slow  # trains a tiny pipeline (once per module)
@pytest.mark.parametrize(
    "content, code",
    [
        (b"", "E002"),
        (b"John sold the car .\n", "E262"),
        (b"\x78\x9c" + os.urandom(64), "E262"),
        (DocBin().to_bytes(), "E263"),
    ],
    ids=["zero-bytes", "text", "zlib-garbage", "empty-docbin"],
)
def test_evaluate_names_data_that_is_no_docbin(
    members: List[Path], tmp_path: Path, content: bytes, code: str
) -> None:
    """Before: spaCy's E1014 under a zlib traceback; for an empty DocBin, E257 'no
    document carries SRL annotation (for all 0 docs)'."""
    data = tmp_path / "dev.spacy"
    data.write_bytes(content)
    result = invoke("evaluate", members[0], data)
    refused(result, code)
    assert str(data) in " ".join(result.stderr.split())


@pytest.mark.slow  # trains a tiny pipeline (once per module)
def test_evaluate_warns_on_partly_annotated_gold(
    members: List[Path], gold: Path, tmp_path: Path
) -> None:
    """Before: predicate precision printed with no warning."""
    docs = list(DocBin().from_disk(gold).get_docs(spacy.blank("en").vocab))
    for doc in docs:
        doc.user_data[PREDICATES_COMPLETE_KEY] = False
    partial = tmp_path / "frames.spacy"
    DocBin(docs=docs, store_user_data=True).to_disk(partial)
    with pytest.warns(UserWarning, match=r"\[W007\].*--gold-predicates"):
        assert invoke("evaluate", members[0], partial).exit_code == 0
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert invoke("evaluate", members[0], partial, "--gold-predicates").exit_code == 0
    assert not [w for w in record if "W007" in str(w.message)]


# --- export -----------------------------------------------------------------------------------


@pytest.mark.slow  # trains a tiny pipeline (once per module)
def test_export_refuses_outputs_over_its_inputs_and_bad_files(gold: Path, tmp_path: Path) -> None:
    out = tmp_path / "conll"
    out.mkdir()
    (out / "words.txt").symlink_to(gold)
    before = fingerprint(gold)
    refused(invoke("export", gold, "--output", out), "E037")
    assert fingerprint(gold) == before
    (tmp_path / "a-file").write_text("x")
    refused(invoke("export", gold, "--output", tmp_path / "a-file" / "conll"), "E318")
    folder = tmp_path / "data"
    folder.mkdir()
    shutil.copy(gold, folder / "a.spacy")
    (folder / "b.spacy").write_text("not a DocBin")
    result = invoke("export", folder, "--output", tmp_path / "out")
    refused(result, "E262")
    assert "b.spacy" in result.stderr
    (tmp_path / "empty").mkdir()
    refused(invoke("export", tmp_path / "empty", "--output", tmp_path / "out"), "E041")


# --- bad transformer directories ------------------------------------------------------------


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_encoder("bert", tmp_path_factory.mktemp("encoder") / "bert")


def _break(path: Path) -> None:
    config = path / "config.json"
    config.write_text(config.read_text().replace('"model_type": "bert"', '"model_type": "x-y"'))


BAD_ENCODERS: Dict[str, Tuple[Callable[[Path], Any], str, str]] = {
    "no-config": (lambda p: (p / "config.json").unlink(), "E187", "no config.json"),
    "unknown-type": (_break, "E188", "model_type 'x-y'"),
    "bad-json": (lambda p: (p / "config.json").write_text("{"), "E188", "not readable JSON"),
    "no-tokenizer": (
        # transformers 5 saves the tokenizer.json only
        lambda p: [(p / name).unlink(missing_ok=True) for name in ("tokenizer.json", "vocab.txt")],
        "E189",
        "no tokenizer files",
    ),
    "no-weights": (lambda p: (p / "model.safetensors").unlink(), "E190", "no PyTorch weights"),
}


def _bad_encoder(encoder: Path, tmp_path: Path, case: str) -> Path:
    bad = tmp_path / case
    shutil.copytree(encoder, bad)
    BAD_ENCODERS[case][0](bad)
    return bad


@pytest.mark.parametrize("case", sorted(BAD_ENCODERS))
def test_bad_encoder_directories_are_numbered(encoder: Path, tmp_path: Path, case: str) -> None:
    """Before: `Unrecognized model ...` listing every model type, `TypeError: stat: path
    should be string ... not NoneType`, `OSError ... pytorch_model.bin`."""
    bad = _bad_encoder(encoder, tmp_path, case)
    model = registry.resolve({"m": {"@architectures": TOK2VEC, "name": str(bad)}})["m"]
    _, code, what = BAD_ENCODERS[case]
    with pytest.raises(ConfigValidationError) as info:
        model.initialize()
    message = " ".join(str(info.value).split())
    assert f"[{code}]" in message and str(bad) in message and what in message
    assert len(message) < 800  # not a list of every model type transformers knows


def test_spacy_train_prints_a_bad_encoder_without_a_traceback(
    encoder: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from spacy.cli.train import train

    bad = _bad_encoder(encoder, tmp_path, "no-tokenizer")
    nlp = spacy.blank("en")
    corpus = tmp_path / "train.spacy"
    references = [eg.reference for eg in gold_examples(nlp, TEXT_SENTENCES)]
    DocBin(docs=references, store_user_data=True).to_disk(corpus)
    model = copy.deepcopy(TINY_MODEL)
    model["tok2vec"] = {"@architectures": TOK2VEC, "name": str(bad)}
    nlp.add_pipe("lisa_srl", config={"model": model})
    nlp.config.to_disk(tmp_path / "config.cfg")
    with pytest.raises(SystemExit) as exit_info:
        train(
            tmp_path / "config.cfg",
            overrides={"paths.train": str(corpus), "paths.dev": str(corpus)},
        )
    assert exit_info.value.code == 1
    out = capsys.readouterr()
    printed = " ".join((out.out + out.err).split())
    assert "[E189]" in printed and "Traceback" not in printed
