"""Options that several commands take alike, declared once. Typer reads an option from
the ``Annotated`` type of a command's parameter, and its default from the parameter's."""

from typing import Annotated

import typer

ModelArg = Annotated[
    str, typer.Argument(metavar="MODEL", help="Trained pipeline: a directory or package name")
]
GPU_ID_HELP = "GPU to run on; -1 for the CPU"
GpuIdOpt = Annotated[int, typer.Option("--gpu-id", "-g", help=GPU_ID_HELP)]

__all__ = ["GPU_ID_HELP", "GpuIdOpt", "ModelArg"]
