"""``--predicate-pos`` (the component's ``predicate_pos`` for one run) on ``predict``,
``render`` and ``serve``, with the saved-pipeline fixture: the tags given, all of them,
decide the frames; a tag that is no UPOS tag stops the command before the pipeline loads
(E042). (``predict --engine ray``: tests/test_ray_annotate.py; ``serve --engine ray``:
tests/test_serve_ray.py.)

The fixture's tiny model tags every predicate it finds as a verb, so ``NOUN`` keeps no
frame and ``VERB`` keeps them all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from serve_testing import post_json, request, start_server
from typer.testing import CliRunner

from spacy_lisa.cli import app

MODEL = Path(__file__).parent / "fixtures" / "saved_pipeline" / "pipeline"
TEXTS = ["John sold the car to Mary.", "They said the report was wrong. Mary picked up the car."]


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("predicate_pos") / "docs.txt"
    path.write_text("\n".join(TEXTS) + "\n", encoding="utf8")
    return path


def predicted(docs: Path, *options: str) -> List[Dict[str, Any]]:
    result = CliRunner().invoke(app, ["predict", str(MODEL), str(docs), *options])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def predicates(records: List[Dict[str, Any]]) -> List[str]:
    return [frame["predicate"]["text"] for record in records for frame in record["frames"]]


def test_predict_labels_only_the_types_given(docs: Path) -> None:
    every = predicted(docs)
    assert predicates(every) == ["sold", "said", "picked up"]
    nouns = predicted(docs, "--predicate-pos", "NOUN")
    assert predicates(nouns) == [] and len(nouns) == len(every)  # the sentences stay
    # repeated: every tag given counts, the first and the last alike
    for tags in (["NOUN", "VERB"], ["VERB", "NOUN"]):
        given = [arg for tag in tags for arg in ("--predicate-pos", tag)]
        assert predicted(docs, *given) == every
    # AllenNLP's "verbs" are the frames kept, whatever their type
    allennlp = predicted(docs, "-f", "allennlp", "--predicate-pos", "NOUN")
    assert [record["verbs"] for record in allennlp] == [[], [], []]


def test_render_labels_only_the_types_given() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["render", str(MODEL), TEXTS[0]])
    assert result.exit_code == 0 and result.stdout.count('class="lisa-row lisa-frame"') == 1
    result = runner.invoke(app, ["render", str(MODEL), TEXTS[0], "--predicate-pos", "NOUN"])
    assert result.exit_code == 0, result.output
    assert result.stdout.count('class="lisa-row lisa-frame"') == 0
    assert "with 0 frame(s)" in result.stderr


@pytest.mark.parametrize("command", ["predict", "render", "serve"])
def test_an_unknown_tag_stops_before_the_pipeline_loads(
    command: str, docs: Path, tmp_path: Path
) -> None:
    """E042 names the tag and the UPOS tags, for a pipeline that is not even there
    (E317 would come from loading it)."""
    args = {"predict": [str(docs)], "render": [TEXTS[0]], "serve": ["--port", "0"]}[command]
    missing = str(tmp_path / "no-model")
    result = CliRunner().invoke(app, [command, missing, *args, "--predicate-pos", "VERBS"])
    assert result.exit_code == 1
    assert "E042" in result.stderr and "'VERBS'" in result.stderr and "PROPN" in result.stderr


def test_serve_labels_only_the_types_given(docs: Path) -> None:
    server, url = start_server(MODEL, "--predicate-pos", "NOUN", "--predicate-pos", "ADJ")
    try:
        health = request(f"{url}/health").json()
        assert health["model"]["predicate_pos"] == ["NOUN", "ADJ"]
        reply = post_json(f"{url}/v1/annotate", {"texts": TEXTS})
        assert reply.status == 200, reply
        records = reply.json()["records"]
        assert records == predicted(docs, "--predicate-pos", "NOUN", "--predicate-pos", "ADJ")
        assert predicates(records) == [] and predicates(predicted(docs))
    finally:
        assert server.terminate() == 0, server.output()
