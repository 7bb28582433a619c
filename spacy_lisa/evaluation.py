"""Scoring a trained ``lisa_srl`` pipeline on gold data: ``spacy-lisa evaluate`` as a
function, :func:`evaluate`.

Evaluation uses *gold tokenisation and sentence boundaries* (like ``spacy evaluate
--gold-preproc``): each predicted doc is built from the gold doc's words and spaces, so
SRL spans compare exactly and the CoNLL-2005 props files line up word for word.

Which parse the component's syntactic head follows (``--parse``):

- ``model`` (the default on gold tokens): the component's own parse
  (``parse_source="model"``).
- ``doc``: the parse of a parser that runs before ``lisa_srl``: the pipeline's own
  parser, or with ``--parser PATH`` the ``parser`` (and ``tagger``) of another spaCy
  pipeline, run first; the pipeline's own parser/senter are then disabled so they do
  not overwrite it.
- ``gold``: the reference heads and labels injected into the docs (the pipeline's own
  parser/senter disabled). UAS/LAS then measure the parse the model used, i.e. 100.

Which convention counts the arguments (``--convention``, see
:mod:`spacy_lisa.scoring.scorer`): ``strict`` (default: the arguments of spurious
predicted predicates are false positives) or ``official`` (the counts ``srl-eval.pl``
prints for the ``--conll-dir`` files: props paired by the predicate's first token,
spurious ones skipped). ``--sense-baseline TRAIN.spacy`` adds the lemma
most-frequent-sense accuracy on the same predicates as the model's ``srl_sense_acc``.

``--raw`` evaluates on raw text instead (:mod:`spacy_lisa.scoring.raw_text`): the whole
pipeline reads each gold document's text (tokeniser, sentence splitter, parser
included) and frames are matched by character offsets. Without ``--parse`` the component
keeps its configured ``parse_source`` (an assembled pipeline's ``auto`` follows its
parser), so the figure is the one ``nlp(text)`` gives users.

Words/s times the ``lisa`` pipeline only (an external ``--parser`` is not counted).

This module is the driver: it loads the pipeline (:mod:`spacy_lisa.loading`, above the
component) and hands docs to :mod:`spacy_lisa.scoring`, which imports neither, so the
component's scorer stays below the component.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import srsly
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from wasabi import Printer

if TYPE_CHECKING:
    from .pipeline.srl_component import LisaSRL

from .docbins import read_docs
from .errors import Errors, UserError, Warnings
from .frames import has_srl_annotation, predicate_starts, predicates_complete
from .loading import load_pipeline, srl_component
from .models.types import PARSE_USED
from .scoring.counts import OFFICIAL, STRICT
from .scoring.gold_docs import gold_preproc_doc, parse_gold_words, with_parse
from .scoring.props import write_props
from .scoring.raw_text import evaluate_raw
from .scoring.scorer import evaluate_srl
from .scoring.strict import lemma_mfs
from .scoring.tables import print_raw_scores, print_scores

# pipeline components whose output an injected parse must not be overwritten by
_PARSE_ASSIGNS = ("token.dep", "token.head", "token.is_sent_start", "doc.sents")


# --parse: the parse the syntactic head follows, named as doc._.srl_parse_source names it
# (built from the shared names, which mypy cannot enumerate)
ParseChoice = StrEnum("ParseChoice", {name: name for name in PARSE_USED})  # type: ignore[misc]


class ConventionChoice(StrEnum):
    """``--convention``: the scorer's conventions."""

    strict = STRICT
    official = OFFICIAL


@dataclass(frozen=True)
class _Options:
    """The options of one :func:`evaluate` call (see there)."""

    model: str
    data_path: Path
    parse: Optional[str]
    parser: Optional[str]
    conll_dir: Optional[Path]
    convention: str
    sense_baseline: Optional[Path]
    gold_predicates: bool
    batch_size: int


def evaluate(
    model: str,
    data_path: Path,
    *,
    parse: Optional[str] = None,
    parser: Optional[str] = None,
    output: Optional[Path] = None,
    conll_dir: Optional[Path] = None,
    convention: str = "strict",
    sense_baseline: Optional[Path] = None,
    raw: bool = False,
    gold_predicates: bool = False,
    gpu_id: int = -1,
    batch_size: int = 64,
    silent: bool = True,
) -> Dict[str, Any]:
    """Run the evaluation and return the scores (the dict written to ``output``);
    ``silent=False`` prints the tables of ``spacy-lisa evaluate``. A problem with the
    input raises :class:`~spacy_lisa.input_docs.UserError`.

    ``parse=None``: the model's own parse on gold tokens; with ``raw``, the component's
    configured ``parse_source`` (what ``nlp(text)`` does for users). ``gold_predicates``:
    the gold predicates are given (``predicate_source="doc"``), so the scores are those of
    the roles and rolesets of known predicates (the CoNLL-2005 setting); without it, gold
    docs that annotate only some of their predicates warn W007."""
    msg = Printer(no_print=silent)
    _check_choices(parse, parser, convention)
    options = _Options(
        model, data_path, parse, parser, conll_dir, convention, sense_baseline,
        gold_predicates, batch_size,
    )  # fmt: skip
    nlp = load_pipeline(model, gpu_id)
    srl = srl_component(nlp, model)
    docs = read_docs(data_path, nlp.vocab)  # E002, E262, E263
    gold_docs = _gold_docs(docs, options, raw)
    if raw:
        scores = _evaluate_raw(nlp, srl, docs, options, msg)
    else:
        scores = _evaluate_gold_tokens(nlp, srl, gold_docs, options, msg)
    _save_scores(msg, output, scores)
    return scores


def _check_choices(parse: Optional[str], parser: Optional[str], convention: str) -> None:
    for value, option, enum in (
        (parse, "--parse", ParseChoice),
        (convention, "--convention", ConventionChoice),
    ):
        choices = [c.value for c in enum]
        if value is not None and value not in choices:
            raise UserError(Errors.E024.format(value=value, option=option, choices=choices))
    if parser is not None and parse != "doc":
        raise UserError(Errors.E258.format(parse=parse or "model"))


def _gold_docs(docs: List[Doc], options: _Options, raw: bool) -> List[Doc]:
    """The docs that carry SRL annotation (the others have no gold)."""
    gold_docs = [doc for doc in docs if has_srl_annotation(doc)]
    if not gold_docs:
        raise UserError(Errors.E257.format(path=options.data_path, n=len(docs)))
    if raw and options.gold_predicates:
        raise UserError(Errors.E259.format(option="--gold-predicates"))
    partial = sum(not predicates_complete(doc) for doc in gold_docs)
    if partial and not options.gold_predicates:
        message = Warnings.W007.format(n=partial, total=len(gold_docs), path=options.data_path)
        warnings.warn(message, stacklevel=3)  # at evaluate's caller
    return gold_docs


def _evaluate_gold_tokens(
    nlp: Language, srl: LisaSRL, gold_docs: List[Doc], options: _Options, msg: Printer
) -> Dict[str, Any]:
    """The pipeline reads the gold words and sentences (see the module doc)."""
    parse = options.parse or "model"
    sense_baseline = options.sense_baseline
    mfs = _sense_table(nlp, sense_baseline) if sense_baseline is not None else None
    pred_docs, disable = _pipeline_inputs(nlp, srl, gold_docs, parse, options)
    if options.gold_predicates:
        srl.predicate_source = "doc"
        for pred, gold in zip(pred_docs, gold_docs, strict=True):
            pred._.srl_predicates = sorted(set(predicate_starts(gold)))
    msg.info(
        f"Evaluating {len(gold_docs)} docs, parse: {parse}"
        + (", gold predicates" if options.gold_predicates else "")
        + (f" ({options.parser})" if options.parser else "")
        + (f", disabled: {', '.join(disable)}" if disable else "")
    )
    start = time.perf_counter()
    pred_docs = list(nlp.pipe(pred_docs, batch_size=options.batch_size, disable=disable))
    seconds = time.perf_counter() - start
    n_words = sum(len(doc) for doc in pred_docs)
    examples = [Example(pred, gold) for pred, gold in zip(pred_docs, gold_docs, strict=True)]
    result = evaluate_srl(examples, convention=options.convention, sense_baseline=mfs)
    scores: Dict[str, Any] = result.to_scores()
    scores.update(
        convention=options.convention,
        speed=n_words / seconds if seconds > 0 else None,
        srl_per_type_counts=result.per_type_counts(),
        parse=parse,
        parser=options.parser,
        predicates="gold" if options.gold_predicates else "model",
        n_docs=len(gold_docs),
        n_words=n_words,
        n_gold_frames=result.n_gold_frames,
        n_pred_frames=result.n_pred_frames,
    )
    print_scores(msg, scores)
    if options.conll_dir is not None:
        _write_conll(msg, options.conll_dir, gold_docs, pred_docs)
    return scores


def _pipeline_inputs(
    nlp: Language, srl: LisaSRL, gold_docs: List[Doc], parse: str, options: _Options
) -> Tuple[List[Doc], List[str]]:
    """The docs the pipeline reads for ``parse`` and the components it runs without
    (those that would overwrite the injected parse); sets the component's
    ``parse_source``."""
    disable: List[str] = []
    parse_source = "doc"
    if parse == "model":
        pred_docs = [gold_preproc_doc(nlp.vocab, gold) for gold in gold_docs]
        parse_source = "model"
    elif parse == "gold":
        missing = [g for g in gold_docs if len(g) and not g.has_annotation("DEP")]
        if missing:
            raise UserError(
                Errors.E256.format(n=len(missing), path=options.data_path, doc=missing[0].text[:40])
            )
        # gold heads and labels only: gold tags would be extra gold input
        pred_docs = [with_parse(nlp.vocab, gold, gold, tags=False) for gold in gold_docs]
        disable = _parse_writers(nlp, srl.name, before_only=False)
    elif options.parser is not None:
        parsed = parse_gold_words(options.parser, gold_docs, options.batch_size)
        pred_docs = [
            with_parse(nlp.vocab, gold, doc) for gold, doc in zip(gold_docs, parsed, strict=True)
        ]
        disable = _parse_writers(nlp, srl.name, before_only=False)
    else:
        if not _parse_writers(nlp, srl.name, before_only=True):
            raise UserError(Errors.E254.format(model=options.model, pipes=nlp.pipe_names))
        pred_docs = [gold_preproc_doc(nlp.vocab, gold) for gold in gold_docs]
    srl.parse_source = parse_source
    return pred_docs, disable


def _write_conll(msg: Printer, conll_dir: Path, gold_docs: List[Doc], pred_docs: List[Doc]) -> None:
    n_dropped = write_props(Path(conll_dir), gold_docs, pred_docs)
    if n_dropped:
        msg.warn(
            f"{n_dropped} predicted role(s) lie outside their predicate's sentence and "
            "are not in pred.props (the scores above count them as false positives)"
        )
    msg.good(f"Wrote words.txt, gold.props and pred.props to {conll_dir}")


def _evaluate_raw(
    nlp: Language, srl: LisaSRL, docs: List[Doc], options: _Options, msg: Printer
) -> Dict[str, Any]:
    """``raw``: the pipeline reads each gold document's text (see scoring.raw_text)."""
    for given, option in (
        (options.parse == "gold", "--parse gold"),
        (options.parser is not None, "--parser"),
        (options.conll_dir is not None, "--conll-dir"),
        (options.sense_baseline is not None, "--sense-baseline"),
    ):
        if given:
            raise UserError(Errors.E259.format(option=option))
    parse = options.parse
    if parse == "doc" and not _parse_writers(nlp, srl.name, before_only=True):
        raise UserError(Errors.E254.format(model=options.model, pipes=nlp.pipe_names))
    if parse is None:  # as the pipeline is configured: the figure users of nlp(text) get
        parse = str(srl.parse_source)
    srl.parse_source = parse
    msg.info(f"Evaluating on raw text, parse: {parse}, pipeline: {', '.join(nlp.pipe_names)}")
    result = evaluate_raw(nlp, docs, convention=options.convention, batch_size=options.batch_size)
    scores = result.to_scores()
    scores.update(raw=True, parse=parse, parser=None, convention=options.convention)
    print_raw_scores(msg, scores)
    return scores


def _save_scores(msg: Printer, output: Optional[Path], scores: Dict[str, Any]) -> None:
    if output is not None:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        srsly.write_json(output, scores)
        msg.good(f"Saved scores to {output}")


def _sense_table(nlp: Language, path: Path) -> Dict[str, str]:
    """The lemma most-frequent-sense table of the training data at ``path``."""
    table = lemma_mfs(read_docs(path, nlp.vocab))
    if not table:
        raise UserError(Errors.E260.format(path=path))
    return table


def _parse_writers(nlp: Language, srl_name: str, *, before_only: bool) -> List[str]:
    """Components that write a parse or sentence boundaries (all, or only those that
    run before the ``lisa_srl`` component)."""
    names = nlp.pipe_names
    if before_only:
        names = names[: names.index(srl_name)]
    writers = []
    for name in names:
        if name == srl_name:
            continue
        assigns = nlp.get_pipe_meta(name).assigns
        if before_only and not {"token.dep", "token.head"} & set(assigns):
            continue  # --parse doc needs a real parser, not just a sentence splitter
        if any(a in assigns for a in _PARSE_ASSIGNS):
            writers.append(name)
    return writers


__all__ = ["ConventionChoice", "ParseChoice", "evaluate"]
