"""``spacy-lisa convert ewt|conll2012|conll2005|up|frames``: SRL corpora to ``.spacy``
DocBins with gold frames. Each shows a progress bar and ends with a summary table; malformed
input stops with the file, line and problem (exit code 1) unless ``--skip-invalid``
counts it as a skip instead. ``frames`` (the PropBank frame files' examples) always
skips and counts what it cannot use: those files are hand-edited and have defects.
``conll2012`` and ``conll2005`` read no dependency trees: they take them from ``--trees``
(conll2012) or ``--parser``, else they warn (W008) with the counts."""

from pathlib import Path
from typing import (
    Annotated,
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
)

import srsly
import typer
from tqdm import tqdm
from wasabi import msg

from ..corpus._io import CorpusFormatError, OnInvalid
from ..corpus.conll2005 import read_conll2005
from ..corpus.conll2012 import read_conll2012
from ..corpus.docbin import convert_to_docbin
from ..corpus.ewt import PROPBANK_SUFFIXES, join_ewt, join_trees
from ..corpus.parsing import parse_records
from ..corpus.propbank_frames import FramesReport
from ..corpus.propbank_frames_split import (
    check_heldout_share,
    check_outputs,
    convert_frames,
    read_lemma_list,
)
from ..corpus.records import SentenceRecord
from ..corpus.stats import MAX_SKIPS_SHOWN, CorpusStats
from ..corpus.universal_propbank import ArgumentSpans, read_universal_propbank
from ..errors import Errors, UserError, Warnings
from ..loading import load_parser
from ._app import convert_app
from ._io import Input, check_output_paths, check_writable, fail

CONLL2012_SUFFIXES = ("gold_conll", "gold_skel")

# options shared by every conversion
OutputOpt = Annotated[
    Path, typer.Option("--output", "-o", help="The .spacy file to write", dir_okay=False)
]
StatsJsonOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--stats-json", help="Also write the summary numbers to this JSON file", dir_okay=False
    ),
]
SkipInvalidOpt = Annotated[
    bool,
    typer.Option(
        "--skip-invalid",
        help="Skip (and count) malformed sentences and files instead of stopping at the first",
    ),
]
NSentsOpt = Annotated[int, typer.Option("--n-sents", "-n", min=1, help="Sentences per Doc")]
LimitOpt = Annotated[
    int, typer.Option("--limit", min=0, help="Convert at most this many sentences (0: all)")
]
ParserOpt = Annotated[
    Optional[str],
    typer.Option(
        "--parser",
        help="A spaCy pipeline with a dependency parser (path or package name): its parse "
        "of the gold tokens becomes each sentence's tree",
    ),
]


def _convert(
    title: str,
    read: Callable[[CorpusStats, OnInvalid], Iterable[SentenceRecord]],
    output: Path,
    stats_json: Optional[Path],
    skip_invalid: bool,
    n_sents: int,
    limit: int,
    inputs: Sequence[Input],
    treeless: Optional[str] = None,
) -> None:
    """Convert the records ``read(stats, on_invalid)`` gives with a progress bar, print
    the summary, write the stats JSON. Format errors end the command cleanly with exit
    code 1; so do outputs that would write over ``inputs`` or each other, or cannot be
    written, before anything is read. ``treeless``: the records come without dependency
    trees, from these files (W008 and the note ``sentences_without_tree``)."""
    _refuse_bad_outputs([("--output", output), ("--stats-json", stats_json)], inputs)
    stats = CorpusStats()
    on_invalid = stats.skip_error if skip_invalid else None
    records = _guard(read(stats, on_invalid), on_invalid)
    try:
        progress = tqdm(records, desc=title, unit=" sents", mininterval=0.5)
        convert_to_docbin(
            progress,
            output,
            stats=stats,
            n_sents=n_sents,
            limit=limit,
            skip_invalid=skip_invalid,
        )
        progress.close()
    except CorpusFormatError as err:
        fail(err)
    if treeless is not None and stats.sentences:
        stats.note("sentences_without_tree", stats.sentences)
    print_summary(stats, title=f"{title} -> {output}")
    if treeless is not None and stats.sentences:
        warning = Warnings.W008.format(
            n=stats.sentences, predicates=stats.predicates, output=output, source=treeless
        )
        msg.warn(warning)
    _write_stats(stats_json, stats.to_dict())


def _parsed(
    records: Iterable[SentenceRecord], parser: Optional[str], stats: CorpusStats
) -> Iterable[SentenceRecord]:
    """``records`` with the trees of ``--parser``'s parse, where given (loaded here, once
    the outputs are known to be writable; E317/E255 end the command)."""
    if parser is None:
        return records
    try:
        nlp, disable = load_parser(parser)
    except UserError as err:
        fail(err)
    return parse_records(records, nlp, disable=disable, stats=stats)


def _write_stats(path: Optional[Path], stats: Dict[str, Any]) -> None:
    """``--stats-json``: the summary numbers, where given."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path, stats)
        msg.info(f"Stats written to {path}")


def _refuse_bad_outputs(
    outputs: Sequence[Tuple[str, Optional[Path]]], inputs: Sequence[Input]
) -> None:
    """Before any work: no output over an input or another output (E037, E039), and
    each writable (E318); else the command ends with the numbered error."""
    try:
        check_output_paths(outputs, inputs)
        for option, path in outputs:
            if path is not None:
                check_writable(option, path)
    except UserError as err:
        fail(err)


def _guard(records: Iterable[SentenceRecord], on_invalid: OnInvalid) -> Iterator[SentenceRecord]:
    """The ``records`` (a reader's generator); a whole-file error (empty, not UTF-8: the
    only ones that reach here when the readers count sentence errors) goes to
    ``on_invalid`` (``--skip-invalid``) or stops the command."""
    try:
        yield from records
    except CorpusFormatError as err:
        if on_invalid is None:
            raise
        on_invalid(err)


def print_summary(stats: CorpusStats, *, title: str) -> None:
    """The summary table and the first skips (all of them go to --stats-json)."""
    msg.table(stats.table_rows(), header=("", "count"), aligns=("l", "r"), divider=True, max_col=60)
    if stats.skipped_items:
        msg.warn(f"Skipped {stats.skipped} sentence(s) or file(s):")
        for item in stats.skipped_items[:MAX_SKIPS_SHOWN]:
            msg.text(f"  [{item['reason']}] {item['where']}: {item['detail']}")
        more = len(stats.skipped_items) - MAX_SKIPS_SHOWN
        if more > 0:
            msg.text(f"  ... and {more} more (all of them in --stats-json)")
    msg.good(f"{title}: {stats.docs_written} Docs, {stats.sentences} sentences")


@convert_app.command("ewt")
def convert_ewt_cli(
    ud: Annotated[
        Path,
        typer.Option(
            "--ud",
            exists=True,
            dir_okay=False,
            help="UD CoNLL-U file (e.g. en_ewt-ud-train.conllu)",
        ),
    ],
    propbank: Annotated[
        Path,
        typer.Option(
            "--propbank",
            exists=True,
            file_okay=False,
            help="PropBank EWT folder holding <genre>/00/<doc>.xml.gold_skel",
        ),
    ],
    output: OutputOpt,
    stats_json: StatsJsonOpt = None,
    skip_invalid: SkipInvalidOpt = False,
    n_sents: NSentsOpt = 1,
    limit: LimitOpt = 0,
) -> None:
    """Join UD trees with PropBank EWT roles (by document, sentence and token).

    Sentences that do not line up are skipped and listed; UD documents without a
    PropBank file are written without SRL annotation."""

    def read(stats: CorpusStats, on_invalid: OnInvalid) -> Iterable[SentenceRecord]:
        return join_ewt(ud, propbank, stats=stats, on_invalid=on_invalid)

    inputs = [Input("--ud", ud), Input("--propbank", propbank, PROPBANK_SUFFIXES)]
    _convert("EWT", read, output, stats_json, skip_invalid, n_sents, limit, inputs)


def _conll2012_files(paths: List[Path]) -> List[Path]:
    """The given files, and the ``*gold_conll``/``*gold_skel`` files under given folders."""
    files: List[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(
                p
                for p in sorted(path.rglob("*"))
                if p.is_file() and p.name.endswith(CONLL2012_SUFFIXES)
            )
        else:
            files.append(path)
    return files


def _conll2012_records(files: List[Path], on_invalid: OnInvalid) -> Iterator[SentenceRecord]:
    for path in files:
        for record in _guard(read_conll2012(path, on_invalid=on_invalid), on_invalid):
            if not record.has_words:  # stops even with --skip-invalid
                fail(Errors.E111.format(path=path))
            yield record


@convert_app.command("conll2012")
def convert_conll2012_cli(
    files: Annotated[
        List[Path],
        typer.Argument(
            exists=True, help="CoNLL-2012 .gold_conll/.gold_skel files or folders of them"
        ),
    ],
    output: OutputOpt,
    trees: Annotated[
        Optional[Path],
        typer.Option(
            "--trees",
            exists=True,
            dir_okay=False,
            help="UD CoNLL-U trees of the same sentences (needed for .gold_skel files)",
        ),
    ] = None,
    parser: ParserOpt = None,
    stats_json: StatsJsonOpt = None,
    skip_invalid: SkipInvalidOpt = False,
    n_sents: NSentsOpt = 1,
    limit: LimitOpt = 0,
) -> None:
    """Convert CoNLL-2012 bracket-column files (.gold_conll, or .gold_skel with --trees).

    The files hold constituency brackets, no dependency tree: --trees joins the
    sentences with UD trees (by document where the document ids match the trees'
    '# newdoc id', else sentence by sentence), --parser parses the gold tokens with a
    spaCy pipeline; with neither, the sentences have no tree (warning W008)."""
    if trees is not None and parser is not None:
        fail(Errors.E137)
    paths = _conll2012_files(files)

    def read(stats: CorpusStats, on_invalid: OnInvalid) -> Iterable[SentenceRecord]:
        if trees is None:
            return _parsed(_conll2012_records(paths, on_invalid), parser, stats)
        return join_trees(trees, list(paths), stats=stats, on_invalid=on_invalid)

    inputs = [Input("FILES", path) for path in paths]
    inputs += [Input("--trees", trees)] if trees is not None else []
    treeless = "CoNLL-2012 files" if trees is None and parser is None else None
    _convert("CoNLL-2012", read, output, stats_json, skip_invalid, n_sents, limit, inputs, treeless)


@convert_app.command("conll2005")
def convert_conll2005_cli(
    words: Annotated[Path, typer.Option("--words", exists=True, dir_okay=False, help="Words file")],
    props: Annotated[Path, typer.Option("--props", exists=True, dir_okay=False, help="Props file")],
    output: OutputOpt,
    parser: ParserOpt = None,
    stats_json: StatsJsonOpt = None,
    skip_invalid: SkipInvalidOpt = False,
    n_sents: NSentsOpt = 1,
    limit: LimitOpt = 0,
) -> None:
    """Convert a CoNLL-2005 words file and props file (no trees, no rolesets).

    --parser parses the gold tokens with a spaCy pipeline for the trees; without it the
    sentences have none (warning W008). Role labels are read in PropBank's spelling
    (A0 as ARG0, AM-TMP as ARGM-TMP)."""

    def read(stats: CorpusStats, on_invalid: OnInvalid) -> Iterable[SentenceRecord]:
        return _parsed(read_conll2005(words, props, on_invalid=on_invalid), parser, stats)

    inputs = [Input("--words", words), Input("--props", props)]
    treeless = "CoNLL-2005 files" if parser is None else None
    _convert("CoNLL-2005", read, output, stats_json, skip_invalid, n_sents, limit, inputs, treeless)


@convert_app.command("up")
def convert_up_cli(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="CoNLL-U Plus file")],
    output: OutputOpt,
    argument_spans: Annotated[
        str,
        typer.Option(
            "--argument-spans",
            help="'head': an argument is its head word; 'subtree': the head's subtree around it",
        ),
    ] = "head",
    stats_json: StatsJsonOpt = None,
    skip_invalid: SkipInvalidOpt = False,
    n_sents: NSentsOpt = 1,
    limit: LimitOpt = 0,
) -> None:
    """Convert Universal PropBank (CoNLL-U Plus with role labels on argument heads).

    Columns: the 10 UD columns, the roleset (or '_'), then one column per predicate
    with the role labels on argument head words and 'V' on the predicate."""
    if argument_spans not in ("head", "subtree"):
        fail(
            Errors.E024.format(
                value=argument_spans, option="--argument-spans", choices="head, subtree"
            )
        )
    spans: ArgumentSpans = "subtree" if argument_spans == "subtree" else "head"

    def read(_: CorpusStats, on_invalid: OnInvalid) -> Iterable[SentenceRecord]:
        return read_universal_propbank(file, argument_spans=spans, on_invalid=on_invalid)

    inputs = [Input("FILE", file)]
    _convert("Universal PropBank", read, output, stats_json, skip_invalid, n_sents, limit, inputs)


def print_frames_report(report: FramesReport) -> None:
    """The frame files' counts and the first skips (all of them go to --stats-json)."""
    msg.table(
        report.table_rows(), header=("", "count"), aligns=("l", "r"), divider=True, max_col=60
    )
    if report.skipped_items:
        msg.warn(
            f"Skipped or dropped {len(report.skipped_items)} file(s), example(s), argument(s):"
        )
        for item in report.skipped_items[:MAX_SKIPS_SHOWN]:
            msg.text(f"  [{item['kind']}: {item['reason']}] {item['where']}: {item['detail']}")
        more = len(report.skipped_items) - MAX_SKIPS_SHOWN
        if more > 0:
            msg.text(f"  ... and {more} more (all of them in --stats-json)")


FramesOpt = Annotated[
    Path,
    typer.Option("--frames", help="The 'frames' folder of PropBank frame files (<lemma>.xml)"),
]
HeldoutOutputOpt = Annotated[
    Path,
    typer.Option(
        "--heldout-output", help="The .spacy file for the held-out lemmas", dir_okay=False
    ),
]
HeldoutShareOpt = Annotated[
    float, typer.Option("--heldout-share", help="Share of the lemmas held out, in [0, 1)")
]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the choice of held-out lemmas")]
ExcludeLemmasOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--exclude-lemmas",
        dir_okay=False,
        help="Leave out the examples of these lemmas: a .spacy file (its frames' lemmas) "
        "or a text file with one lemma per line",
    ),
]


@convert_app.command("frames")
def convert_frames_cli(
    frames: FramesOpt,
    output: OutputOpt,
    heldout_output: HeldoutOutputOpt,
    heldout_share: HeldoutShareOpt = 0.1,
    seed: SeedOpt = 0,
    exclude_lemmas: ExcludeLemmasOpt = None,
    stats_json: StatsJsonOpt = None,
) -> None:
    """Convert the annotated examples of PropBank frame files, split by lemma.

    Each example is one sentence with one annotated predicate (the others are not
    annotated: its Doc is marked so). A share of the lemmas goes to --heldout-output,
    so no held-out lemma is in --output. Examples that cannot be used are skipped and
    counted by reason."""
    try:
        check_heldout_share(heldout_share)
        check_outputs(output, heldout_output)
        excluded = read_lemma_list(exclude_lemmas) if exclude_lemmas is not None else set()
    except ValueError as err:  # numbered input errors (E129, E131, E130)
        fail(err)
    frame_inputs = [Input("--frames", frames, (".xml",))]
    frame_inputs += [Input("--exclude-lemmas", exclude_lemmas)] if exclude_lemmas else []
    outputs = [("--output", output), ("--heldout-output", heldout_output)]
    _refuse_bad_outputs([*outputs, ("--stats-json", stats_json)], frame_inputs)
    try:
        result = convert_frames(
            frames,
            output,
            heldout_output,
            heldout_share=heldout_share,
            seed=seed,
            exclude_lemmas=excluded,
        )
    except CorpusFormatError as err:  # no frames folder or no frame files in it
        fail(err)
    print_frames_report(result.report)
    split = result.split
    msg.info(
        f"Lemmas: {len(split.train_lemmas)} in training, {len(split.heldout_lemmas)} held "
        f"out (share {heldout_share}, seed {seed})"
    )
    print_summary(result.train, title=f"PropBank frames (training) -> {output}")
    print_summary(result.heldout, title=f"PropBank frames (held out) -> {heldout_output}")
    _write_stats(stats_json, result.to_dict())
