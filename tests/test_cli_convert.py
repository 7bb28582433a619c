"""``spacy-lisa convert ...`` and ``spacy-lisa export`` through typer's CliRunner, on
small hand-written files."""

import re
import textwrap
from pathlib import Path
from typing import List

import pytest
import srsly
from spacy.tokens import DocBin
from spacy.vocab import Vocab
from typer.testing import CliRunner

from spacy_lisa.cli import app

runner = CliRunner()


def _tabs(text: str) -> str:
    lines = textwrap.dedent(text).strip("\n").split("\n")
    rows = [row if row.startswith("#") else re.sub(r" +", "\t", row.strip()) for row in lines]
    return "\n".join(rows) + "\n"


def _cols(text: str) -> str:
    return textwrap.dedent(text).strip("\n") + "\n"


UD = _tabs(
    """
    # newdoc id = answers-d1
    # sent_id = answers-d1-0001
    1  I     I     PRON   PRP  _  2  nsubj   _  _
    2  like  like  VERB   VBP  _  0  root    _  _
    3  cats  cat   NOUN   NNS  _  2  obj     _  SpaceAfter=No
    4  .     .     PUNCT  .    _  2  punct   _  _

    # sent_id = answers-d1-0002
    1  Yes  yes  INTJ  UH  _  0  root  _  _

    # newdoc id = email-d2
    # sent_id = email-d2-0001
    1  Hi  hi  INTJ  UH  _  0  root  _  _
    """
)

SKEL = _cols(
    """
    google/ewt/answers/00/d1.xml  0  0  [WORD]  PRP  (TOP(S(NP*)  -     -        (ARG0*)
    google/ewt/answers/00/d1.xml  0  1  [WORD]  VBP  (VP*         like  like.01  (V*)
    google/ewt/answers/00/d1.xml  0  2  [WORD]  NNS  (NP*))       -     -        (ARG1*)
    google/ewt/answers/00/d1.xml  0  3  [WORD]  .    *))          -     -        *

    google/ewt/answers/00/d1.xml  1  0  [WORD]  UH   (TOP*)       -     -
    google/ewt/answers/00/d1.xml  1  1  [WORD]  .    *)           -     -
    """
)

WORDS = "I\nlike\ncats\n\nYes\n"
PROPS = "-    (A0*)\nlike (V*)\n-    (A1*)\n\n-\n"

UP = _tabs(
    """
    1  I     I     PRON  PRP  _  2  nsubj  _  _  _        A0
    2  like  like  VERB  VBP  _  0  root   _  _  like.01  V
    3  cats  cat   NOUN  NNS  _  2  obj    _  _  _        A1
    """
)


@pytest.fixture
def ewt(tmp_path: Path):
    ud = tmp_path / "ud.conllu"
    ud.write_text(UD, encoding="utf-8")
    propbank = tmp_path / "propbank"
    (propbank / "answers/00").mkdir(parents=True)
    (propbank / "answers/00/d1.xml.gold_skel").write_text(SKEL, encoding="utf-8")
    return ud, propbank


def _flat(text: str) -> str:
    """The output on one line (wasabi wraps long messages at spaces)."""
    return " ".join(text.split())


def _docs(path: Path) -> list:
    return list(DocBin().from_disk(path).get_docs(Vocab()))


def _invoke(args: List[str]):
    return runner.invoke(app, [str(a) for a in args])


def test_convert_ewt(ewt, tmp_path):
    ud, propbank = ewt
    out, stats_json = tmp_path / "out/train.spacy", tmp_path / "out/stats.json"
    result = _invoke(
        ["convert", "ewt", "--ud", ud, "--propbank", propbank, "--output", out,
         "--stats-json", stats_json]
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    # the summary table
    for row in ["documents", "sentences", "tokens", "predicates", "argument spans", "role labels"]:
        assert row in result.output
    # the misaligned sentence is skipped and listed
    assert "token_count_mismatch" in result.output
    assert "answers-d1-0002: 1 UD words, 2 PropBank tokens" in _flat(result.output)
    stats = srsly.read_json(stats_json)
    assert {k: stats[k] for k in ["sentences", "tokens", "predicates", "arguments", "skipped"]} == {
        "sentences": 2,
        "tokens": 5,
        "predicates": 1,
        "arguments": 2,
        "skipped": 1,
    }
    assert stats["documents"] == 2 and stats["role_labels"] == 2
    assert stats["skipped_by_reason"] == {"token_count_mismatch": 1}
    assert stats["sentences_with_srl"] == 1  # email-d2 has no PropBank file
    first, second = _docs(out)
    assert [(f.predicate.text, [r.label_ for r in f.roles]) for f in first._.srl_frames] == [
        ("like", ["ARG0", "ARG1"])
    ]
    assert second._.srl_frame_data is None


def test_convert_ewt_n_sents_and_limit(ewt, tmp_path):
    ud, propbank = ewt
    out = tmp_path / "x.spacy"
    base = ["convert", "ewt", "--ud", ud, "--propbank", propbank, "--output", out]
    assert _invoke([*base, "--n-sents", "5"]).exit_code == 0
    # d1 and d2 are different documents (and d2 has no SRL): two Docs
    assert [len(d) for d in _docs(out)] == [4, 1]
    assert _invoke([*base, "--limit", "1"]).exit_code == 0
    assert len(_docs(out)) == 1


def test_convert_conll2012_with_and_without_trees(ewt, tmp_path):
    ud, propbank = ewt
    skel = propbank / "answers/00/d1.xml.gold_skel"
    out = tmp_path / "x.spacy"
    # .gold_skel has no words: without trees that is an error, cleanly reported
    result = _invoke(["convert", "conll2012", skel, "--output", out])
    assert result.exit_code == 1
    assert "--trees" in _flat(result.output) and "Traceback" not in result.output
    result = _invoke(["convert", "conll2012", propbank, "--trees", ud, "--output", out])
    assert result.exit_code == 0, result.output
    (doc,) = _docs(out)
    assert doc.text == "I like cats. " and doc[1].dep_ == "ROOT"
    # a .gold_conll with words needs no trees
    words = iter(["I", "like", "cats", ".", "Yes", "!"])
    conll = tmp_path / "d1.gold_conll"
    conll.write_text(re.sub(r"\[WORD\]", lambda m: next(words), SKEL), encoding="utf-8")
    result = _invoke(["convert", "conll2012", conll, "--output", out])
    assert result.exit_code == 0, result.output
    assert [d.text for d in _docs(out)] == ["I like cats . ", "Yes ! "]


def test_convert_conll2005_and_up(tmp_path):
    words, props, up = tmp_path / "w.txt", tmp_path / "p.txt", tmp_path / "up.conllu"
    words.write_text(WORDS)
    props.write_text(PROPS)
    up.write_text(UP)
    out = tmp_path / "x.spacy"
    result = _invoke(["convert", "conll2005", "--words", words, "--props", props, "--output", out])
    assert result.exit_code == 0, result.output
    assert [len(d._.srl_frames) for d in _docs(out)] == [1, 0]
    result = _invoke(["convert", "up", up, "--output", out, "--argument-spans", "subtree"])
    assert result.exit_code == 0, result.output
    (doc,) = _docs(out)
    assert [(r.text, r.label_) for r in doc._.srl_frames[0].roles] == [("I", "A0"), ("cats", "A1")]
    result = _invoke(["convert", "up", up, "--output", out, "--argument-spans", "phrase"])
    assert result.exit_code == 1 and "head, subtree" in _flat(result.output)


def test_export(ewt, tmp_path):
    ud, propbank = ewt
    data = tmp_path / "x.spacy"
    _invoke(["convert", "ewt", "--ud", ud, "--propbank", propbank, "--output", data])
    result = _invoke(["export", data, "--output", tmp_path / "export"])
    assert result.exit_code == 0, result.output
    assert "docs left out (no SRL annotation)" in result.output
    # only the annotated doc: the doc of email-d2 has no SRL
    assert (tmp_path / "export/words.txt").read_text() == "I\nlike\ncats\n.\n\n"
    assert (
        tmp_path / "export/props.txt"
    ).read_text() == "-    (ARG0*)\nlike (V*)\n-    (ARG1*)\n-    *\n\n"
    result = _invoke(["export", data, "--output", tmp_path / "all", "--include-unannotated"])
    assert result.exit_code == 0
    assert (tmp_path / "all/words.txt").read_text().endswith("\n\nHi\n\n")


# --- bad input: a clean error naming file and line, exit code 1, no traceback --------


def _bad_cases(tmp_path: Path):
    """(name, args, path, line) per malformed input."""
    cases = []

    def up_case(name, old, new, line):
        path = tmp_path / f"{name}.conllu"
        text = UP.replace(old, new)
        assert text != UP
        path.write_text(text)
        cases.append((name, ["convert", "up", path], path, line))

    up_case("column_count", "\tobj\t_\t_\t_\tA1", "\tobj\t_\t_\tA1", 3)
    up_case("token_id", "3\tcats", "three\tcats", 3)
    up_case("head", "NNS\t_\t2", "NNS\t_\t7", 3)
    up_case("cycle", "VBP\t_\t0", "VBP\t_\t3", 2)

    skel = tmp_path / "unbalanced.gold_conll"
    skel.write_text("d 0 0 I PRP * - - (A0*\nd 0 1 go VB * go go.01 (V*)\n")
    cases.append(("unbalanced_bracket", ["convert", "conll2012", skel], skel, 1))

    words, props = tmp_path / "w.txt", tmp_path / "p.txt"
    words.write_text(WORDS)
    props.write_text(PROPS.replace("-    (A1*)", "cat  (A1*)"))
    cases.append(
        ("props_count", ["convert", "conll2005", "--words", words, "--props", props], props, 1)
    )

    empty = tmp_path / "empty.conllu"
    empty.write_text("")
    cases.append(("empty_file", ["convert", "up", empty], empty, None))

    latin = tmp_path / "latin1.conllu"
    latin.write_bytes(UP.replace("cats", "caf\xe9").encode("latin-1"))
    cases.append(("invalid_utf8", ["convert", "up", latin], latin, 3))
    return cases


CASE_NAMES = [
    "column_count",
    "token_id",
    "head",
    "cycle",
    "unbalanced_bracket",
    "props_count",
    "empty_file",
    "invalid_utf8",
]


@pytest.mark.parametrize("name", CASE_NAMES)
def test_bad_input_is_a_clean_error(tmp_path, name):
    (case,) = [c for c in _bad_cases(tmp_path) if c[0] == name]
    _, args, path, line = case
    result = _invoke([*args, "--output", tmp_path / "x.spacy"])
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    where = str(path) if line is None else f"{path}:{line}:"
    assert where in _flat(result.output)
    assert not (tmp_path / "x.spacy").exists()


@pytest.mark.parametrize("name", CASE_NAMES)
def test_skip_invalid_counts_the_skip(tmp_path, name):
    (case,) = [c for c in _bad_cases(tmp_path) if c[0] == name]
    _, args, path, _ = case
    stats_json = tmp_path / "stats.json"
    result = _invoke(
        [*args, "--output", tmp_path / "x.spacy", "--skip-invalid", "--stats-json", stats_json]
    )
    assert result.exit_code == 0, result.output
    stats = srsly.read_json(stats_json)
    assert stats["skipped"] == 1
    (item,) = stats["skipped_items"]
    assert item["where"].startswith(str(path))
    assert "skipped" in result.output and item["reason"] in result.output


def test_skip_invalid_in_ewt_keeps_the_rest(ewt, tmp_path):
    ud, propbank = ewt
    ud.write_text(UD.replace("NNS\t_\t2", "NNS\t_\t9"))
    stats_json = tmp_path / "stats.json"
    args = ["convert", "ewt", "--ud", ud, "--propbank", propbank, "--output", tmp_path / "x.spacy"]
    result = _invoke(args)
    assert result.exit_code == 1 and f"{ud}:5:" in _flat(result.output)
    result = _invoke([*args, "--skip-invalid", "--stats-json", stats_json])
    assert result.exit_code == 0, result.output
    stats = srsly.read_json(stats_json)
    assert stats["skipped_by_reason"] == {"head": 1, "token_count_mismatch": 1}
    assert stats["sentences"] == 1


@pytest.mark.parametrize(
    "args",
    [
        ["convert", "conll2005", "--words", "{tmp}/w", "--props", "{tmp}/p", "-o", "{tmp}/o"],
        ["convert", "up", "{tmp}/w", "--output", "{tmp}/o.spacy", "--argument-spans", "x"],
        ["export", "{tmp}", "--output", "{tmp}/conll"],
        ["evaluate", "{tmp}", "{tmp}/w"],
        ["predict", "{missing}", "John sold the car ."],
        ["render", "{missing}", "John sold the car ."],
    ],
)
def test_every_command_fails_the_same_way(args, tmp_path):
    """Bad input: exit status 1 and one "✘ message" on stderr, whatever the command."""
    missing = tmp_path / "missing"
    (tmp_path / "w").write_text("John\nslept\n.\n\n", encoding="utf8")
    (tmp_path / "p").write_text("-\tX\nsleep\t(V*)\n", encoding="utf8")  # rows and columns off
    args = [a.format(missing=missing, tmp=tmp_path) for a in args]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    last = result.stderr.strip().splitlines()[-1]  # after any progress bar
    assert last.startswith("✘ ") and "✘" not in result.stdout, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
