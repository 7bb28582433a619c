"""Scoring a trained ``lisa_srl`` pipeline on gold data (``spacy-lisa evaluate`` as a
function, :func:`evaluate`), and the gold-token docs and props files it builds.

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
:mod:`spacy_lisa.pipeline.scorer`): ``strict`` (default: the arguments of spurious
predicted predicates are false positives) or ``official`` (the counts ``srl-eval.pl``
prints for the ``--conll-dir`` files: props paired by the predicate's first token,
spurious ones skipped). ``--sense-baseline TRAIN.spacy`` adds the lemma
most-frequent-sense accuracy on the same predicates as the model's ``srl_sense_acc``.

``--raw`` evaluates on raw text instead (:mod:`spacy_lisa.raw_evaluation`): the whole
pipeline reads each gold document's text (tokeniser, sentence splitter, parser
included) and frames are matched by character offsets. Without ``--parse`` the component
keeps its configured ``parse_source`` (an assembled pipeline's ``auto`` follows its
parser), so the figure is the one ``nlp(text)`` gives users.

Words/s times the ``lisa`` pipeline only (an external ``--parser`` is not counted).
"""

from __future__ import annotations

import tempfile
import time
import warnings
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

import spacy
import srsly
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab
from wasabi import Printer

if TYPE_CHECKING:
    from .pipeline.srl_component import LisaSRL

from .docbins import read_docs
from .errors import Errors, Warnings
from .frames import (
    doc_sentences,
    has_srl_annotation,
    predicate_starts,
    predicates_complete,
    set_srl_frames,
)
from .inputs import UserError
from .loading import load_pipeline, srl_component
from .models.types import PARSE_USED
from .pipeline.scorer import PREDICATE_POS, evaluate_srl, lemma_mfs, props_rows
from .raw_evaluation import evaluate_raw

# the CoNLL-2005 files --conll-dir receives (for srl-eval.pl gold.props pred.props)
CONLL_FILES = ("words.txt", "gold.props", "pred.props")
# pipeline components whose output an injected parse must not be overwritten by
_PARSE_ASSIGNS = ("token.dep", "token.head", "token.is_sent_start", "doc.sents")


# --parse: the parse the syntactic head follows, named as doc._.srl_parse_source names it
# (built from the shared names, which mypy cannot enumerate)
ParseChoice = StrEnum("ParseChoice", {name: name for name in PARSE_USED})  # type: ignore[misc]


class ConventionChoice(StrEnum):
    strict = "strict"
    official = "official"


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
    input raises :class:`~spacy_lisa.inputs.UserError`.

    ``parse=None``: the model's own parse on gold tokens; with ``raw``, the component's
    configured ``parse_source`` (what ``nlp(text)`` does for users). ``gold_predicates``:
    the gold predicates are given (``predicate_source="doc"``), so the scores are those of
    the roles and rolesets of known predicates (the CoNLL-2005 setting); without it, gold
    docs that annotate only some of their predicates warn W007."""
    msg = Printer(no_print=silent)
    for value, option, enum in (
        (parse, "--parse", ParseChoice),
        (convention, "--convention", ConventionChoice),
    ):
        choices = [c.value for c in enum]
        if value is not None and value not in choices:
            raise UserError(Errors.E024.format(value=value, option=option, choices=choices))
    if parser is not None and parse != "doc":
        raise UserError(Errors.E258.format(parse=parse or "model"))
    nlp = load_pipeline(model, gpu_id)
    srl = srl_component(nlp, model)
    docs = read_docs(data_path, nlp.vocab)  # E002, E262, E263
    # the docs that carry SRL annotation (the others have no gold)
    gold_docs = [doc for doc in docs if has_srl_annotation(doc)]
    if not gold_docs:
        raise UserError(Errors.E257.format(path=data_path, n=len(docs)))
    if raw and gold_predicates:
        raise UserError(Errors.E259.format(option="--gold-predicates"))
    partial = sum(not predicates_complete(doc) for doc in gold_docs)
    if partial and not gold_predicates:
        message = Warnings.W007.format(n=partial, total=len(gold_docs), path=data_path)
        warnings.warn(message, stacklevel=2)
    if raw:
        return _evaluate_raw(
            nlp, srl, model, docs, parse, parser, conll_dir, sense_baseline,
            convention, output, batch_size, msg,
        )  # fmt: skip
    parse = parse or "model"
    mfs = _sense_table(nlp, sense_baseline) if sense_baseline is not None else None
    disable: List[str] = []
    if parse == "model":
        pred_docs = [gold_preproc_doc(nlp.vocab, gold) for gold in gold_docs]
        parse_source = "model"
    elif parse == "gold":
        missing = [g for g in gold_docs if len(g) and not g.has_annotation("DEP")]
        if missing:
            raise UserError(
                Errors.E256.format(n=len(missing), path=data_path, doc=missing[0].text[:40])
            )
        # gold heads and labels only: gold tags would be extra gold input
        pred_docs = [with_parse(nlp.vocab, gold, gold, tags=False) for gold in gold_docs]
        disable = _parse_writers(nlp, srl.name, before_only=False)
        parse_source = "doc"
    elif parser is not None:
        parsed = _run_external_parser(parser, gold_docs, batch_size)
        pred_docs = [
            with_parse(nlp.vocab, gold, doc) for gold, doc in zip(gold_docs, parsed, strict=True)
        ]
        disable = _parse_writers(nlp, srl.name, before_only=False)
        parse_source = "doc"
    else:
        if not _parse_writers(nlp, srl.name, before_only=True):
            raise UserError(Errors.E254.format(model=model, pipes=nlp.pipe_names))
        pred_docs = [gold_preproc_doc(nlp.vocab, gold) for gold in gold_docs]
        parse_source = "doc"
    srl.parse_source = parse_source
    if gold_predicates:
        srl.predicate_source = "doc"
        for pred, gold in zip(pred_docs, gold_docs, strict=True):
            pred._.srl_predicates = sorted(set(predicate_starts(gold)))
    msg.info(
        f"Evaluating {len(gold_docs)} docs, parse: {parse}"
        + (", gold predicates" if gold_predicates else "")
        + (f" ({parser})" if parser else "")
        + (f", disabled: {', '.join(disable)}" if disable else "")
    )
    start = time.perf_counter()
    pred_docs = list(nlp.pipe(pred_docs, batch_size=batch_size, disable=disable))
    seconds = time.perf_counter() - start
    n_words = sum(len(doc) for doc in pred_docs)
    examples = [Example(pred, gold) for pred, gold in zip(pred_docs, gold_docs, strict=True)]
    result = evaluate_srl(examples, convention=convention, sense_baseline=mfs)
    scores: Dict[str, Any] = result.to_scores()
    scores["convention"] = convention
    scores["speed"] = n_words / seconds if seconds > 0 else None
    scores["srl_per_type_counts"] = result.per_type_counts()
    scores["parse"] = parse
    scores["parser"] = parser
    scores["predicates"] = "gold" if gold_predicates else "model"
    scores["n_docs"] = len(gold_docs)
    scores["n_words"] = n_words
    scores["n_gold_frames"] = result.n_gold_frames
    scores["n_pred_frames"] = result.n_pred_frames
    _print_scores(msg, scores)
    if conll_dir is not None:
        n_dropped = write_props(Path(conll_dir), gold_docs, pred_docs)
        if n_dropped:
            msg.warn(
                f"{n_dropped} predicted role(s) lie outside their predicate's sentence and "
                "are not in pred.props (the scores above count them as false positives)"
            )
        msg.good(f"Wrote words.txt, gold.props and pred.props to {conll_dir}")
    _save_scores(msg, output, scores)
    return scores


def _evaluate_raw(
    nlp: Language,
    srl: LisaSRL,
    model: str,
    docs: List[Doc],
    parse: Optional[str],
    parser: Optional[str],
    conll_dir: Optional[Path],
    sense_baseline: Optional[Path],
    convention: str,
    output: Optional[Path],
    batch_size: int,
    msg: Printer,
) -> Dict[str, Any]:
    """``raw``: the pipeline reads each gold document's text (see raw_evaluation)."""
    for given, option in (
        (parse == "gold", "--parse gold"),
        (parser is not None, "--parser"),
        (conll_dir is not None, "--conll-dir"),
        (sense_baseline is not None, "--sense-baseline"),
    ):
        if given:
            raise UserError(Errors.E259.format(option=option))
    if parse == "doc" and not _parse_writers(nlp, srl.name, before_only=True):
        raise UserError(Errors.E254.format(model=model, pipes=nlp.pipe_names))
    if parse is None:  # as the pipeline is configured: the figure users of nlp(text) get
        parse = str(srl.parse_source)
    srl.parse_source = parse
    msg.info(f"Evaluating on raw text, parse: {parse}, pipeline: {', '.join(nlp.pipe_names)}")
    result = evaluate_raw(nlp, docs, convention=convention, batch_size=batch_size)
    scores = result.to_scores()
    scores.update(raw=True, parse=parse, parser=None, convention=convention)
    _print_raw_scores(msg, scores)
    _save_scores(msg, output, scores)
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


def _sent_starts(gold: Doc) -> Optional[List[Union[bool, int, None]]]:
    if len(gold) == 0 or not gold.has_annotation("SENT_START"):
        return None
    return [t.is_sent_start for t in gold]


def gold_preproc_doc(vocab: Vocab, gold: Doc) -> Doc:
    """A fresh doc in ``vocab`` with the gold words, spaces and sentence boundaries only
    (what the pipeline reads in an evaluation on gold tokens)."""
    return Doc(
        vocab,
        words=[t.text for t in gold],
        spaces=[bool(t.whitespace_) for t in gold],
        sent_starts=_sent_starts(gold),
    )


def with_parse(vocab: Vocab, gold: Doc, parsed: Doc, *, tags: bool = True) -> Doc:
    """A fresh doc in ``vocab`` with the gold words and ``parsed``'s heads, labels (and
    tags): the input of ``lisa_srl`` following another parse (``parse_source="doc"``)."""
    if len(gold) == 0:
        return Doc(vocab, words=[])
    tag_list = [t.tag_ for t in parsed] if tags and parsed.has_annotation("TAG") else None
    return Doc(
        vocab,
        words=[t.text for t in gold],
        spaces=[bool(t.whitespace_) for t in gold],
        heads=[t.head.i for t in parsed],
        deps=[t.dep_ for t in parsed],
        tags=tag_list,
    )


def _run_external_parser(path: str, gold_docs: Sequence[Doc], batch_size: int) -> List[Doc]:
    """Parse the gold words with another pipeline's parser (and tagger), in that
    pipeline's own vocab (its label strings live there)."""
    other = spacy.load(path)
    names = other.pipe_names
    wanted = [i for i, n in enumerate(names) if other.get_pipe_meta(n).factory == "parser"]
    if not wanted:
        raise UserError(Errors.E255.format(path=path, pipes=names))
    wanted += [i for i, n in enumerate(names) if other.get_pipe_meta(n).factory == "tagger"]
    # run everything up to the last wanted component: tok2vec/transformer listeners
    # they depend on come before them; later components (ner, ...) are not needed
    disable = names[max(wanted) + 1 :]
    docs = [gold_preproc_doc(other.vocab, gold) for gold in gold_docs]
    return list(other.pipe(docs, batch_size=batch_size, disable=disable))


def write_props(conll_dir: Path, gold_docs: Sequence[Doc], pred_docs: Sequence[Doc]) -> int:
    """Write ``words.txt``, ``gold.props`` and ``pred.props`` (CoNLL-2005) for
    ``srl-eval.pl gold.props pred.props``. The predicted frames are written over copies
    of the gold docs, so both files have the same sentences, line for line. Returns the
    number of predicted roles left out because they lie outside their predicate's
    sentence (the format cannot hold them; the JSON scores still count them)."""
    from .corpus.conll2005 import write_conll2005

    conll_dir.mkdir(parents=True, exist_ok=True)
    pred_on_gold = []
    n_dropped = 0
    for gold, pred in zip(gold_docs, pred_docs, strict=True):
        doc = gold_preproc_doc(gold.vocab, gold)
        frames, dropped = _pred_frames_for_props(gold, pred)
        n_dropped += dropped
        # gold tokenisation: the predicted token offsets are the gold ones
        set_srl_frames(doc, frames, spans_key=None)
        pred_on_gold.append(doc)
    words, gold_props, pred_props = (conll_dir / name for name in CONLL_FILES)
    write_conll2005(gold_docs, words, gold_props)
    with tempfile.TemporaryDirectory() as tmp:
        # the words are the same; write_conll2005 always writes both files
        write_conll2005(pred_on_gold, Path(tmp) / "words.txt", pred_props)
    return n_dropped


def _pred_frames_for_props(gold: Doc, pred: Doc) -> Tuple[List[Dict[str, Any]], int]:
    """The predicted frames (stored form) ready for the props file: each takes the
    lemma of the gold frame written on the same props row (srl-eval.pl pairs props by
    row and counts all gold arguments as missed, and the predicted ones not at all,
    when the lemma strings differ: "props do not match"; the lemma is not what is
    scored), else its first token's lemma; roles outside the predicate's gold sentence
    are dropped and counted."""
    sentences = [(s.start, s.end) for s in doc_sentences(gold)] or [(0, len(gold))]
    gold_frames = sorted(gold._.srl_frame_data or [], key=_predicate_key)
    pred_frames = sorted(pred._.srl_frame_data or [], key=_predicate_key)
    gold_lemma: Dict[Tuple[int, int], Optional[str]] = {}  # (sentence, row) -> lemma
    for s, (lo, hi) in enumerate(sentences):
        in_sent = [f for f in gold_frames if lo <= int(f["predicate"][0]) < hi]
        rows = props_rows([_local(f, lo) for f in in_sent], hi - lo)
        for row, frame in zip(rows, in_sent, strict=True):
            gold_lemma[(s, row if row is not None else -1)] = frame.get("lemma")
    frames = []
    n_dropped = 0
    for s, (lo, hi) in enumerate(sentences):
        in_sent = [f for f in pred_frames if lo <= int(f["predicate"][0]) < hi]
        rows = props_rows([_local(f, lo) for f in in_sent], hi - lo)
        for row, data in zip(rows, in_sent, strict=True):
            start = int(data["predicate"][0])
            roles = [r for r in data["roles"] if lo <= int(r[0]) and int(r[1]) <= hi]
            n_dropped += len(data["roles"]) - len(roles)
            key = (s, row if row is not None else -1)
            lemma = gold_lemma[key] if key in gold_lemma else gold[start].lemma_ or None
            frames.append({**data, "roles": roles, "lemma": lemma})
    return frames, n_dropped


def _predicate_key(frame: Dict[str, Any]) -> Tuple[int, int]:
    return int(frame["predicate"][0]), int(frame["predicate"][1])


def _local(frame: Dict[str, Any], offset: int) -> Tuple[int, int]:
    start, end = _predicate_key(frame)
    return start - offset, end - offset


def _pct(value: Optional[float]) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def _srl_rows(scores: Dict[str, Any]) -> List[Tuple[str, str]]:
    """The rows both tables start with: SRL and predicate P/R/F, sense accuracy."""
    keys = ("srl_p", "srl_r", "srl_f", "srl_pred_p", "srl_pred_r", "srl_pred_f")
    names = ("SRL P", "SRL R", "SRL F", "PRED P", "PRED R", "PRED F")
    rows = [(name, _pct(scores[key])) for name, key in zip(names, keys, strict=True)]
    return [*rows, ("SENSE ACC", _pct(scores["srl_sense_acc"]))]


def _print_scores(msg: Printer, scores: Dict[str, Any]) -> None:
    speed = scores.get("speed")
    rows: List[Tuple[str, str]] = [
        *_srl_rows(scores),
        *(
            [("SENSE ACC (lemma MFS)", _pct(scores["srl_sense_acc_mfs"]))]
            if "srl_sense_acc_mfs" in scores
            else []
        ),
        ("UAS", _pct(scores["srl_uas"])),
        ("LAS", _pct(scores["srl_las"])),
        ("POS ACC", _pct(scores["srl_pos_acc"])),
        ("WORDS/S", "-" if speed is None else f"{speed:.0f}"),
    ]
    msg.table(rows, title=f"Results (parse: {scores['parse']}, convention: {scores['convention']})")
    per_pos = scores.get("srl_pred_per_pos") or {}
    if per_pos:
        msg.table(
            [
                (pos, _pct(per_pos[pos]["p"]), _pct(per_pos[pos]["r"]), _pct(per_pos[pos]["f"]))
                for pos in PREDICATE_POS
                if pos in per_pos
            ],
            header=("Predicate UPOS", "P", "R", "F"),
            aligns=("l", "r", "r", "r"),
            title="Predicates by the gold UPOS of their first token",
        )
    _print_per_role(msg, scores)


def _print_raw_scores(msg: Printer, scores: Dict[str, Any]) -> None:
    speed = scores.get("speed")
    args, preds = scores["n_gold_args"], scores["n_gold_frames"]
    rows: List[Tuple[str, str]] = [
        *_srl_rows(scores),
        ("GOLD ARGS UNREACHABLE", f"{scores['n_gold_args_unreachable']} / {args}"),
        ("GOLD PREDS UNREACHABLE", f"{scores['n_gold_preds_unreachable']} / {preds}"),
        ("SENTENCES (GOLD / PRED)", f"{scores['n_sentences']} / {scores['n_pred_sentences']}"),
        ("WORDS/S", "-" if speed is None else f"{speed:.0f}"),
    ]
    msg.table(
        rows,
        title=f"Results on raw text (parse: {scores['parse']}, convention: {scores['convention']})",
    )
    _print_per_role(msg, scores)


def _print_per_role(msg: Printer, scores: Dict[str, Any]) -> None:
    counts = scores["srl_per_type_counts"]
    per_type = scores["srl_per_type"] or {}
    if counts:
        table = [
            (
                label,
                c["correct"],
                c["excess"],
                c["missed"],
                _pct(per_type.get(label, {}).get("p")),
                _pct(per_type.get(label, {}).get("r")),
                _pct(per_type.get(label, {}).get("f")),
            )
            for label, c in counts.items()
        ]
        msg.table(
            table,
            header=("Role", "Correct", "Excess", "Missed", "P", "R", "F"),
            aligns=("l", "r", "r", "r", "r", "r", "r"),
            title="SRL per role (CoNLL-2005: C- joined to its role, V not scored)",
        )


__all__ = [
    "CONLL_FILES",
    "ConventionChoice",
    "ParseChoice",
    "evaluate",
    "gold_preproc_doc",
    "with_parse",
    "write_props",
]
