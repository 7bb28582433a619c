"""Every Python example of README.md and docs/*.md runs, against tiny trained pipelines,
and does what it says: an example that sets an option is checked to have changed what
the component reads, so one that silently does nothing fails here.

Each ```python block runs on its own (a fresh namespace, the working directory a
temporary folder laid out as the project, with a ``training/`` folder), with the
pipelines it names replaced by tiny ones (:data:`MODELS`).
A block that cannot run here carries a marker on the line before it,
``<!-- example: not run (the reason) -->``; those are skipped with their reason (pytest's
``-rs`` lists them) and kept to a few (:data:`MOST_NOT_RUN`)."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from srl_testing import TAGGED_SENTENCES

from spacy_lisa.loading import srl_component
from spacy_lisa.pipeline.options import OPTION_NAMES
from spacy_lisa.pipeline.senses import ptb_upos
from spacy_lisa.pipeline.srl_component import LisaSRL

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SAVED_PIPELINE = ROOT / "tests" / "fixtures" / "saved_pipeline" / "pipeline"
NOT_RUN = re.compile(r"<!-- example: not run \((?P<reason>[^)]+)\) -->")
MOST_NOT_RUN = 3

# The pipelines the examples name -> the tiny one each runs with instead:
# - "lisa": the saved-pipeline fixture (sentencizer + a tiny lisa_srl), for the packaged
#   pipelines (raw text in) and a trained lisa_srl alone alike;
# - "parser": a spaCy tagger + parser trained here on srl_testing.TAGGED_SENTENCES;
# - "ensemble": the fixture joined with itself by spacy-lisa ensemble.
MODELS: Dict[str, str] = {
    "training/pipelines/lisa_cpu": "lisa",
    "training/pipelines/lisa_trf": "lisa",
    "training/pipelines/lisa_trf_short": "lisa",
    "en_lisa_srl_ewt_trf_short": "lisa",
    "training/lisa_trf_short/model-best": "lisa",
    "en_lisa_srl_ewt_cpu": "lisa",
    "en_lisa_srl_ewt_trf": "lisa",
    "training/lisa_cpu/model-best": "lisa",
    "training/lisa_trf/model-best": "lisa",
    "training/parser/model-best": "parser",
    "training/ensemble": "ensemble",
}


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository
    index: int  # the page's n-th python block
    line: int  # where its code starts
    code: str
    not_run: Optional[str]  # the marker's reason

    @property
    def id(self) -> str:
        return f"{self.page}#{self.index}"


def python_blocks(path: Path) -> Iterator[Block]:
    """The ```python blocks of a Markdown page, with the marker before each, if any."""
    lines = path.read_text(encoding="utf8").splitlines()
    page = path.relative_to(ROOT).as_posix()
    index, i = 0, 0
    while i < len(lines):
        fence = lines[i].strip()
        if not fence.startswith("```"):
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        if fence == "```python":
            before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            marker = NOT_RUN.fullmatch(before.strip())
            code = "\n".join(lines[i + 1 : end]) + "\n"
            reason = marker["reason"] if marker else None
            yield Block(page, index, i + 2, code, reason)
            index += 1
        i = end + 1


BLOCKS: List[Block] = [block for page in PAGES for block in python_blocks(page)]


# ------------------------------------------------------------------ the pipelines -------
@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Path]:
    """The tiny pipelines of :data:`MODELS`, in a folder of their own (an example that
    writes into the one it loads cannot change the committed fixture)."""
    root = tmp_path_factory.mktemp("docs_models")
    lisa = root / "lisa"
    shutil.copytree(SAVED_PIPELINE, lisa)
    parser_nlp = spacy.blank("en")
    parser_nlp.add_pipe("tagger")
    # min_action_freq=1: with the default (30) every label of a few sentences collapses
    # into "dep" and spaCy cannot find gold transitions (E1031)
    parser_nlp.add_pipe("parser", config={"min_action_freq": 1})
    examples = [
        Example.from_dict(
            parser_nlp.make_doc(" ".join(words)),
            {"words": words, "tags": tags, "heads": heads, "deps": deps},
        )
        for words, tags, heads, deps, _ in TAGGED_SENTENCES
    ]
    optimizer = parser_nlp.initialize(lambda: examples)
    for _ in range(10):
        parser_nlp.update(examples, sgd=optimizer)
    parser_nlp.to_disk(root / "parser")
    from spacy_lisa.ensemble.join import join_pipelines

    join_pipelines([str(lisa), str(lisa)]).to_disk(root / "ensemble")
    return {name: root / name for name in ("lisa", "parser", "ensemble")}


def with_models(code: str, models: Dict[str, Path]) -> str:
    """``code`` with each quoted pipeline name of :data:`MODELS` replaced by its tiny one."""
    for name, tiny in MODELS.items():
        for quote in ('"', "'"):
            code = code.replace(f"{quote}{name}{quote}", repr(str(models[tiny])))
    return code


# ------------------------------------------------------------------ the effects ---------
def has_srl(nlp: Language) -> bool:
    return any(nlp.get_pipe_meta(name).factory == "lisa_srl" for name in nlp.pipe_names)


def components(namespace: Dict[str, Any]) -> List[LisaSRL]:
    """The lisa_srl components an example made: pipelines and components it named."""
    found: List[LisaSRL] = []
    for value in namespace.values():
        if isinstance(value, Language) and has_srl(value):
            found.append(srl_component(value))
        elif isinstance(value, LisaSRL):
            found.append(value)
    return found


def options_read(namespace: Dict[str, Any]) -> None:
    """Every example: no component keeps an option among its cfg's data, where the
    component would never read it (the options are in ``srl.options``)."""
    for component in components(namespace):
        stored = [key for key in dict.keys(component.cfg) if key in OPTION_NAMES]
        assert not stored, f"cfg keeps {stored}, which lisa_srl never reads: no effect"


def pipeline(namespace: Dict[str, Any]) -> Language:
    """The one pipeline with a lisa_srl an example made."""
    (nlp,) = [v for v in namespace.values() if isinstance(v, Language) and has_srl(v)]
    return nlp


def only_verbs(ns: Dict[str, Any]) -> None:
    srl = srl_component(pipeline(ns))
    assert srl.options.predicate_pos == ("VERB",)
    doc = ns["doc"]
    assert doc._.srl_frames, "nothing labelled: the filter cannot be seen"
    assert all(ptb_upos(doc._.srl_pos[f.predicate.start]) == "VERB" for f in doc._.srl_frames)


def marked_predicate(ns: Dict[str, Any]) -> None:
    assert srl_component(pipeline(ns)).options.predicate_source == "doc"
    assert [f.predicate.start for f in ns["doc"]._.srl_frames] == [1]


def followed_the_parser(ns: Dict[str, Any]) -> None:
    assert ns["doc"].has_annotation("DEP") and ns["doc"]._.srl_parse_source == "doc"


def sourced_behind_the_parser(ns: Dict[str, Any]) -> None:
    nlp = pipeline(ns)
    assert nlp.pipe_names[-1] == "lisa_srl" and "parser" in nlp.pipe_names
    assert nlp("John sold the car to Mary.")._.srl_parse_source == "doc"


def saved_greedy(ns: Dict[str, Any]) -> None:
    for nlp in (pipeline(ns), spacy.load("training/lisa_cpu_greedy")):
        options = srl_component(nlp).options
        assert options.decoding == "greedy" and options.transition_weight == 0.5


def an_ensemble(ns: Dict[str, Any]) -> None:
    srl = srl_component(pipeline(ns))
    assert isinstance(srl.cfg["model_dims"], list) and len(srl.cfg["model_dims"]) == 2


def spans_linked(ns: Dict[str, Any]) -> None:
    doc = ns["doc"]
    predicates = {(f.predicate.start, f.predicate.end) for f in doc._.srl_frames}
    spans = list(doc.spans["srl"])
    assert spans and all(
        (s._.srl_predicate.start, s._.srl_predicate.end) in predicates for s in spans
    )


def trained(ns: Dict[str, Any]) -> None:
    assert srl_component(pipeline(ns)).is_initialized


def rendered(ns: Dict[str, Any]) -> None:
    assert isinstance(ns["html"], str) and "sold" in ns["html"]


def labelled(ns: Dict[str, Any]) -> None:
    assert any(doc._.srl_frames for doc in ns.values() if isinstance(doc, Doc))


# What the examples must have done, by a piece of their code (each piece is in some
# example): the options they set reached the component (OPTION_EFFECTS; every example
# that sets one, SETS_AN_OPTION, has one of these), and the results they show are there
OPTION_EFFECTS: Dict[str, Callable[[Dict[str, Any]], None]] = {
    '.cfg["predicate_pos"] = ["VERB"]': only_verbs,
    'srl.predicate_source = "doc"': marked_predicate,
    '"decoding": "greedy"': saved_greedy,
}
EFFECTS: Dict[str, Callable[[Dict[str, Any]], None]] = {
    **OPTION_EFFECTS,
    "doc._.srl_parse_source": followed_the_parser,
    'add_pipe("lisa_srl", source=': sourced_behind_the_parser,
    'spacy.load("training/ensemble")': an_ensemble,
    "span._.srl_predicate": spans_linked,
    "nlp.update(examples": trained,
    "spacy_lisa.render(doc)": rendered,
    "for frame in doc._.srl_frames": labelled,
}
SETS_AN_OPTION = re.compile(rf"\.cfg\[|\.options\b|config=|\.({'|'.join(OPTION_NAMES)})\s*=[^=]")


# -------------------------------------------------------------------- the tests ---------
@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_example_runs_and_does_what_it_says(
    block: Block, models: Dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if block.not_run is not None:
        pytest.skip(f"{block.id} not run: {block.not_run}")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "training").mkdir()  # where the project's pipelines are, and go
    namespace: Dict[str, Any] = {"__name__": "__docs_example__"}
    code = compile(with_models(block.code, models), f"{block.page}:{block.line}", "exec")
    exec(code, namespace)
    options_read(namespace)
    for piece, check in EFFECTS.items():
        if piece in block.code:
            check(namespace)


def test_every_example_that_sets_an_option_checks_its_effect() -> None:
    unchecked = [
        b.id
        for b in BLOCKS
        if SETS_AN_OPTION.search(b.code) and not any(piece in b.code for piece in OPTION_EFFECTS)
    ]
    assert unchecked == []


def test_every_effect_check_has_its_example() -> None:
    """A check whose example changed would pass without checking anything."""
    assert [piece for piece in EFFECTS if not any(piece in b.code for b in BLOCKS)] == []


def test_the_examples_not_run_are_few_and_named() -> None:
    not_run = [f"{b.id}: {b.not_run}" for b in BLOCKS if b.not_run is not None]
    assert len(not_run) <= MOST_NOT_RUN, "\n".join(not_run)
    # a marker must stand right before a python block, where it is read
    for page in PAGES:
        text = page.read_text(encoding="utf8")
        markers = len(NOT_RUN.findall(text))
        name = page.relative_to(ROOT).as_posix()
        assert markers == sum(1 for b in BLOCKS if b.page == name and b.not_run), name
    assert len(BLOCKS) >= 10  # README.md and docs/: the blocks were found
