"""``spacy-lisa ensemble MEMBER MEMBER ... --output DIR``: trained pipelines joined into
one whose ``lisa_srl`` averages their models (see :mod:`spacy_lisa.ensemble.join`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, List

import typer
from wasabi import msg

from ..ensemble.join import join_pipelines
from ..errors import UserError
from ._app import app
from ._io import Input, check_output_paths, check_writable, fail, pipeline_dir

ENSEMBLE_HELP = (
    "Join trained lisa_srl pipelines (the same labels: e.g. one config trained with "
    "different seeds) into one pipeline that averages their role, roleset and predicate "
    "distributions and decodes once. The first member gives the tokenizer, parser and "
    "options. Saved like any pipeline: spacy.load(DIR), spacy-lisa evaluate DIR ..."
)


@app.command("ensemble", help=ENSEMBLE_HELP)
def ensemble_cli(
    members: Annotated[
        List[str],
        typer.Argument(metavar="MEMBER...", help="Trained pipelines: directories or package names"),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", file_okay=False, help="Directory to save the joined pipeline to"
        ),
    ],
) -> None:
    """The ``ensemble`` command (see :data:`ENSEMBLE_HELP`)."""
    try:
        # before the members load: a refusal costs nothing and leaves them untouched
        folders = [pipeline_dir(member) for member in members]
        inputs = [Input("MEMBER", folder) for folder in folders if folder is not None]
        check_output_paths([("--output", output)], inputs)
        check_writable("--output", output, folder=True)
        nlp = join_pipelines(members)
    except UserError as err:
        fail(err)
    nlp.to_disk(output)
    msg.good(f"Saved a lisa_srl ensemble of {len(members)} models to {output}")
