"""``spacy-lisa evaluate``: score a trained ``lisa_srl`` pipeline on gold data (see
:mod:`spacy_lisa.evaluation`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import UserError
from ..evaluation import ConventionChoice, ParseChoice, evaluate
from ..scoring.props import CONLL_FILES
from ._app import app
from ._io import Input, check_output_paths, check_writable, fail, pipeline_dir

EvaluateModelArg = Annotated[
    str, typer.Argument(help="Trained pipeline (name or path) with a 'lisa_srl' component")
]
DataArg = Annotated[
    Path,
    typer.Argument(
        help="Gold data in .spacy format (DocBin with user data)", exists=True, dir_okay=False
    ),
]
ParseOpt = Annotated[
    Optional[ParseChoice],
    typer.Option(
        "--parse",
        "-p",
        help=(
            "Parse the syntactic head follows: the model's own, a parser's before it, or "
            "gold [default: model on gold tokens; with --raw, the pipeline's own setting]"
        ),
    ),
]
ParserOpt = Annotated[
    Optional[str],
    typer.Option(
        "--parser",
        help="With --parse doc: another spaCy pipeline whose parser (and tagger) runs first",
    ),
]
OutputOpt = Annotated[
    Optional[Path],
    typer.Option("--output", "-o", help="JSON file for the scores", dir_okay=False),
]
ConllDirOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--conll-dir",
        help="Directory for words.txt, gold.props and pred.props (CoNLL-2005, for srl-eval.pl)",
        file_okay=False,
    ),
]
ConventionOpt = Annotated[
    ConventionChoice,
    typer.Option(
        "--convention",
        help=(
            "strict: arguments of spurious predicted predicates are false positives; "
            "official: srl-eval.pl's counts (props paired by the predicate's first token, "
            "spurious predicates skipped)"
        ),
    ),
]
SenseBaselineOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--sense-baseline",
        help="Training data (.spacy): also score the lemma most-frequent-sense baseline",
        exists=True,
        dir_okay=False,
    ),
]
RawOpt = Annotated[
    bool,
    typer.Option(
        "--raw",
        help=(
            "Evaluate on raw text: the pipeline tokenises, segments and parses each gold "
            "document's text; frames are matched to gold by character offsets"
        ),
    ),
]
GoldPredicatesOpt = Annotated[
    bool,
    typer.Option(
        "--gold-predicates",
        help=(
            "Give the model the gold predicates: score the roles and rolesets of known "
            "predicates (the CoNLL-2005 setting) instead of predicates it finds itself"
        ),
    ),
]
EvaluateGpuIdOpt = Annotated[int, typer.Option("--gpu-id", "-g", help="GPU id, or -1 for CPU")]
BatchSizeOpt = Annotated[int, typer.Option("--batch-size", "-b", help="Docs per batch", min=1)]


@app.command("evaluate")
def evaluate_cli(
    model: EvaluateModelArg,
    data_path: DataArg,
    parse: ParseOpt = None,
    parser: ParserOpt = None,
    output: OutputOpt = None,
    conll_dir: ConllDirOpt = None,
    convention: ConventionOpt = ConventionChoice.strict,
    sense_baseline: SenseBaselineOpt = None,
    raw: RawOpt = False,
    gold_predicates: GoldPredicatesOpt = False,
    gpu_id: EvaluateGpuIdOpt = -1,
    batch_size: BatchSizeOpt = 64,
) -> None:
    """Evaluate SRL (CoNLL-2005 P/R/F, per role), predicate detection, the parse the
    model used (UAS/LAS, punctuation included) and POS accuracy, on gold tokenisation."""
    try:
        check_outputs(model, data_path, parser, sense_baseline, output, conll_dir)
        evaluate(
            model,
            data_path,
            parse=parse.value if parse is not None else None,
            parser=parser,
            output=output,
            conll_dir=conll_dir,
            convention=convention.value,
            sense_baseline=sense_baseline,
            raw=raw,
            gold_predicates=gold_predicates,
            gpu_id=gpu_id,
            batch_size=batch_size,
            silent=False,
        )
    except (UserError, FileNotFoundError) as err:
        fail(err)


def check_outputs(
    model: str,
    data_path: Path,
    parser: Optional[str],
    sense_baseline: Optional[Path],
    output: Optional[Path],
    conll_dir: Optional[Path],
) -> None:
    """Before the pipeline loads: no output over an input or another output (E037,
    E038, E039), every output writable (E318)."""
    inputs = [Input("DATA_PATH", data_path)]
    if sense_baseline is not None:
        inputs.append(Input("--sense-baseline", sense_baseline))
    for option, name in (("MODEL", model), ("--parser", parser)):
        folder = pipeline_dir(name) if name is not None else None
        if folder is not None:
            inputs.append(Input(option, folder))
    outputs = [("--output", output)]
    if conll_dir is not None:
        outputs += [("--conll-dir", conll_dir / name) for name in CONLL_FILES]
    check_output_paths(outputs, inputs)
    if output is not None:
        check_writable("--output", output)
    if conll_dir is not None:
        check_writable("--conll-dir", conll_dir, folder=True)


__all__ = ["evaluate_cli"]
