"""``spacy-lisa render``: label text with a trained pipeline and write a standalone HTML
page of its frames, parse and label attention (see :mod:`spacy_lisa.render`)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Annotated, Any, List, Mapping, Optional

import typer

from ..device import select_device
from ..errors import Errors, UserError
from ..input_docs import InputFormat, InputSource, iter_docs, skip_report
from ..loading import load_pipeline
from ..predict import load_and_scan, open_output, output_name
from ..render import render
from ._app import app
from ._io import fail, stderr
from .options import GpuIdOpt, ModelArg, PredicatePosOpt, srl_options

RENDER_HELP = (
    "Render the frames the model finds in TEXT, or in each document of --input, as a "
    "standalone HTML page: one row per frame, the dependency arcs the model used and, "
    "for models with a label attention layer, a heatmap per label head. The page loads "
    "nothing from the network."
)


TextArg = Annotated[
    Optional[str], typer.Argument(metavar="TEXT", help="The text to render (or use --input)")
]
InputOpt = Annotated[
    Optional[str],
    typer.Option(
        "--input",
        "-i",
        help="Text or JSONL file of documents (as for predict), or - for stdin",
    ),
]
OutputOpt = Annotated[
    Optional[Path],
    typer.Option("--output", "-o", help="HTML file to write (default: stdout)", dir_okay=False),
]
InputFormatOpt = Annotated[
    InputFormat, typer.Option("--input-format", help="Format of --input (as for predict)")
]
LimitOpt = Annotated[
    Optional[int],
    typer.Option("--limit", min=1, help="Render at most this many documents of --input"),
]
MinifyOpt = Annotated[bool, typer.Option("--minify", help="Minify the HTML")]
SkipInvalidOpt = Annotated[
    bool, typer.Option("--skip-invalid", help="Skip invalid lines of --input instead of failing")
]


@app.command("render", help=RENDER_HELP)
def render_cli(
    model: ModelArg,
    text: TextArg = None,
    input_path: InputOpt = None,
    output: OutputOpt = None,
    input_format: InputFormatOpt = InputFormat.auto,
    limit: LimitOpt = None,
    minify: MinifyOpt = False,
    gpu_id: GpuIdOpt = -1,
    skip_invalid: SkipInvalidOpt = False,
    predicate_pos: PredicatePosOpt = None,
) -> None:
    """The ``render`` command (see :data:`RENDER_HELP`)."""
    try:
        render_page(
            model,
            text,
            input_path=input_path,
            output=output,
            input_format=input_format,
            limit=limit,
            minify=minify,
            gpu_id=gpu_id,
            skip_invalid=skip_invalid,
            srl_options=srl_options(predicate_pos),
        )
    except (UserError, FileNotFoundError) as err:
        fail(err)


def render_page(
    model: str,
    text: Optional[str] = None,
    *,
    input_path: Optional[str] = None,
    output: Optional[Path] = None,
    input_format: InputFormat = InputFormat.auto,
    limit: Optional[int] = None,
    minify: bool = False,
    gpu_id: int = -1,
    skip_invalid: bool = False,
    srl_options: Optional[Mapping[str, Any]] = None,
) -> int:
    """The ``render`` command as a function; returns the number of documents rendered.
    ``srl_options``: ``lisa_srl`` options of this run (``--predicate-pos``).
    A document longer than the pipeline's ``nlp.max_length`` is an invalid line of
    ``--input`` (``too_long``, as for ``predict``), and a ``text`` too long is refused
    (E355), both before anything is labelled."""
    if (text is None) == (input_path is None):
        raise UserError(Errors.E315)
    select_device(gpu_id)  # a GPU that cannot be used stops before the input is read
    texts: List[str]
    summary = None
    if input_path is not None:
        source = InputSource(input_path)
        nlp, summary = load_and_scan(model, gpu_id, source, input_format, skip_invalid, srl_options)
        documents = iter_docs(source, summary.format, max_length=int(nlp.max_length))
        texts = [item.text for item in itertools.islice(documents, limit)]
    else:
        texts = [str(text)]
        nlp = load_pipeline(model, gpu_id, srl_options)
        if len(texts[0]) > nlp.max_length:
            raise UserError(Errors.E355.format(n=len(texts[0]), max_length=nlp.max_length))
    docs = list(nlp.pipe(texts))
    name = nlp.meta.get("name") or "pipeline"
    html = render(
        docs, page=True, minify=minify, jupyter=False, title=f"spacy-lisa · {nlp.lang}_{name}"
    )
    with open_output(output) as out:
        out.write(html)
    n_frames = sum(len(doc._.srl_frames) for doc in docs)
    stderr(f"✔ Rendered {len(docs)} doc(s) with {n_frames} frame(s) → {output_name(output)}")
    if summary is not None:
        for line in skip_report(summary.skipped, summary.problems):
            stderr(line)
    return len(docs)


__all__ = ["render_cli", "render_page"]
