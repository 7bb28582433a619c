"""Options that several commands take alike, declared once. Typer reads an option from
the ``Annotated`` type of a command's parameter, and its default from the parameter's."""

from typing import Annotated, Any, Dict, List, Optional

import typer

from ..errors import UserError

ModelArg = Annotated[
    str, typer.Argument(metavar="MODEL", help="Trained pipeline: a directory or package name")
]
GPU_ID_HELP = "GPU to run on; -1 for the CPU"
GpuIdOpt = Annotated[int, typer.Option("--gpu-id", "-g", help=GPU_ID_HELP)]
# options of the lisa_srl component for one run (predict, render, serve, both engines)
PredicatePosOpt = Annotated[
    Optional[List[str]],
    typer.Option(
        "--predicate-pos",
        metavar="UPOS",
        help="Label only the predicates of this UPOS tag; repeat it for several "
        "(--predicate-pos VERB --predicate-pos AUX). Default: the pipeline's "
        "predicate_pos (the project's pipelines: every type, nouns too)",
    ),
]


def srl_options(predicate_pos: Optional[List[str]]) -> Dict[str, Any]:
    """The ``lisa_srl`` options given on the command line, as
    :func:`spacy_lisa.loading.load_pipeline` takes them (``{}``: the pipeline's own),
    checked before anything loads: E042 for a tag that is no UPOS tag."""
    if not predicate_pos:
        return {}
    from ..pipeline.options import check_predicate_pos

    try:
        return {"predicate_pos": list(check_predicate_pos(predicate_pos))}
    except ValueError as err:
        raise UserError(str(err)) from None


__all__ = ["GPU_ID_HELP", "GpuIdOpt", "ModelArg", "PredicatePosOpt", "srl_options"]
