"""PropBank frame files (``frames/<lemma>.xml``): their annotated examples as sentence
records (the split by lemma and the conversion to DocBins:
:mod:`spacy_lisa.corpus.propbank_frames_split`).

Each ``<roleset id="sell.01">`` may hold ``<example>`` elements: ``<text>`` (tokens
separated by single spaces) and ``<propbank>`` with one ``<rel relloc="12">`` (the
predicate's token index; several indices for a multi-word predicate) and
``<arg type="ARG0" start="3" end="5">`` (inclusive token indices). One example gives one
:class:`SentenceRecord` with one predicate, following the conventions of
:mod:`spacy_lisa.corpus.records`:

- spans are ``[start, end)``; a multi-word ``rel`` whose tokens are contiguous is one
  ``V`` span ("acting out"); a split one is a ``V`` span (the run whose word is closest
  to the lemma) and a ``C-V`` argument for each other run, as EWT marks a split phrasal
  verb: "leave it alone" gives ``V`` "leave" and ``C-V`` "alone";
- the roleset is the predicate's sense and its lemma is the roleset's lemma up to the
  first ``_``: ``take_into_account.04`` has the lemma ``take``, as EWT gives phrasal
  rolesets (``check_out.05`` on the lemma ``check``) and as the component looks senses
  up (the word's lemma, not the multi-word roleset name);
- no POS, lemmas or trees (the records' token lists are ``None``, like CoNLL-2005);
- ``predicates_complete=False``: only the ``rel`` is annotated, other predicates of the
  sentence are not, so the words without a frame are no gold non-predicates.

The files are hand-edited and have defects. Nothing is dropped silently: a
:class:`FramesReport` counts files, rolesets and examples read and kept, and every
skipped file, skipped example and dropped argument under its reason:

- files (every ``*.xml``/``*.XML`` entry of the folder is read or skipped):
  ``file_not_well_formed`` (the XML does not parse), ``file_encoding_unsupported``,
  ``file_broken_symlink``, ``file_symlink_loop``, ``file_not_regular`` (a folder named
  ``x.xml``), ``file_too_large``, ``file_unreadable``
  (:mod:`spacy_lisa.corpus.frame_files`);
- examples (the whole example goes): ``invalid_roleset_id`` (not ``lemma.NN``, or
  longer than any real id),
  ``lemma_excluded`` (``exclude_lemmas``), ``no_text``, ``irregular_whitespace`` (not
  single-space separated tokens), ``no_rel`` (no ``<propbank>`` or no ``<rel>``),
  ``several_rels``, ``rel_index_invalid`` (``relloc`` not integers),
  ``rel_index_repeated`` (an index listed twice), ``rel_out_of_range``,
  ``rel_text_mismatch`` (the ``<rel>`` words are not the words at ``relloc``: the indices
  are off), ``rel_on_trace``, ``unknown_label`` (a label that is no PropBank role, e.g.
  ``ARGM-TOP``), ``argument_position_unknown`` (non-integer bounds on an argument with
  words: they would be gold ``O``), ``argument_out_of_range``,
  ``argument_text_mismatch``, ``argument_overlaps_predicate`` (an argument over the
  predicate's words cannot be BIO tagged, and the example's annotation is suspect);
- arguments (the argument goes, the example stays): ``argument_trace`` (non-integer
  bounds on an empty element such as ``*PRO*``, or bounds that cover trace tokens only).

Cleaned, and counted as notes: PTB empty elements in the text (``*PRO*``, ``*T*-1``,
``[*-2]``, ...) are removed and the indices shifted; co-indexing brackets glued to words
(``[Mr.`` ... ``Dang]-1``) are stripped from them; PTB bracket and quote escapes become
EWT's characters (:data:`PTB_ESCAPES`); ``ARGM-PNC`` (the older name) becomes
``ARGM-PRP`` as in EWT. A ``<roleset>`` nested in another is a roleset of its own: its
examples count once, under it. Skip messages show a bounded excerpt of long values.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Dict, Iterator, List, Optional, Set, Tuple

from ..errors import Errors
from ._io import CorpusFormatError, PathLike
from .frame_files import (
    MAX_ROLESET_ID_CHARS,
    UnusableFrameFile,
    excerpt,
    frame_file_paths,
    no_usable_file_message,
    parse_frame_file,
    roleset_head_lemma,
)
from .records import Argument, Predicate, SentenceRecord

# the longest detail a skip keeps (an excerpt beyond)
MAX_DETAIL_CHARS = 200
# PTB escapes in the examples' text -> the characters EWT's UD words have
_ESCAPED = "-LRB- -RRB- -LSB- -RSB- -LCB- -RCB- `` ''".split()
PTB_ESCAPES = dict(zip(_ESCAPED, '()[]{}""', strict=True))
# PTB empty elements as the examples write them: *, *PRO*, *-1, *T*-2, [*], [*-2]-1, ...
_TRACE = re.compile(r"^\[*\*(?:[A-Za-z0-9?]+\*)?(?:-\d+)?\]*(?:-\d+)?$")
# co-indexing brackets glued to words: "[Mr." ... "Dang]-1", "[who]-3"
_COINDEX_CLOSE = re.compile(r"^\[?(?P<word>[^\[\]]+)\]-[A-Za-z0-9]+$")
_COINDEX_OPEN = re.compile(r"^\[(?P<word>[^\[\]]+)$")
ARGM_TAGS = frozenset(
    "ADJ ADV CAU COM CXN DIR DIS EXT GOL LOC LVB MNR MOD NEG PRD PRP PRR REC TMP".split()
)
LABEL_MAP = {"ARGM-PNC": "ARGM-PRP"}
_LABEL = re.compile(
    r"^(?P<prefix>[CR]-)?(?:(?P<numbered>ARG[0-6]|ARGA)(?:-DSP)?|ARGM-(?P<tag>[A-Z]+))$"
)


def normalize_label(label: str) -> Optional[str]:
    """The role label as EWT writes it (``ARGM-PNC`` -> ``ARGM-PRP``, ``C-``/``R-``
    kept), or ``None`` for a label that is no PropBank role."""
    prefix = label[:2] if label[:2] in ("C-", "R-") else ""
    label = prefix + LABEL_MAP.get(label[len(prefix) :], label[len(prefix) :])
    match = _LABEL.match(label)
    if match is None or (match.group("tag") is not None and match.group("tag") not in ARGM_TAGS):
        return None
    return label


@dataclass
class FramesReport:
    """What a reading of the frame files found, kept, skipped and cleaned."""

    files: int = 0
    files_read: int = 0
    rolesets: int = 0
    examples_read: int = 0
    examples_kept: int = 0
    skipped_files: Counter = field(default_factory=Counter)
    skipped_examples: Counter = field(default_factory=Counter)
    dropped_arguments: Counter = field(default_factory=Counter)
    notes: Counter = field(default_factory=Counter)
    skipped_items: List[Dict[str, Any]] = field(default_factory=list)
    lemmas: Set[str] = field(default_factory=set)

    def skip(self, kind: str, reason: str, where: str, detail: str = "") -> None:
        """Count one skipped ``file``, ``example`` or ``argument`` under ``reason``
        (``detail`` kept as a bounded excerpt)."""
        counter = {
            "file": self.skipped_files,
            "example": self.skipped_examples,
            "argument": self.dropped_arguments,
        }[kind]
        counter[reason] += 1
        self.skipped_items.append(
            {
                "kind": kind,
                "reason": reason,
                "where": where,
                "detail": excerpt(detail, MAX_DETAIL_CHARS),
            }
        )

    def to_dict(self) -> Dict[str, Any]:
        return {
            "files": self.files,
            "files_read": self.files_read,
            "rolesets": self.rolesets,
            "examples_read": self.examples_read,
            "examples_kept": self.examples_kept,
            "examples_skipped": sum(self.skipped_examples.values()),
            "lemmas": len(self.lemmas),
            "skipped_files": dict(self.skipped_files.most_common()),
            "skipped_examples": dict(self.skipped_examples.most_common()),
            "dropped_arguments": dict(self.dropped_arguments.most_common()),
            "notes": dict(sorted(self.notes.items())),
            "skipped_items": list(self.skipped_items),
        }

    def table_rows(self) -> List[Tuple[str, Any]]:
        rows: List[Tuple[str, Any]] = [
            ("frame files", self.files),
            ("  read", self.files_read),
            *((f"  skipped: {r}", n) for r, n in self.skipped_files.most_common()),
            ("rolesets", self.rolesets),
            ("examples read", self.examples_read),
            ("examples kept", self.examples_kept),
            ("lemmas of the kept examples", len(self.lemmas)),
            ("examples skipped", sum(self.skipped_examples.values())),
            *((f"  skipped: {r}", n) for r, n in self.skipped_examples.most_common()),
            ("arguments dropped", sum(self.dropped_arguments.values())),
            *((f"  dropped: {r}", n) for r, n in self.dropped_arguments.most_common()),
        ]
        rows.extend((f"note: {key}", n) for key, n in sorted(self.notes.items()))
        return rows


class _Skip(Exception):
    """An example that cannot be used, with its reason."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.reason, self.detail = reason, detail


def frame_files(frames_dir: PathLike) -> List[Path]:
    """The ``*.xml`` (any case) entries of ``frames_dir``, sorted by name, the ones that
    cannot be read included (:func:`read_frame_file` counts them as skipped)."""
    path = Path(frames_dir)
    if not path.is_dir():
        raise CorpusFormatError(
            Errors.E127.format(path=path), path=path, line=None, reason="no_frames_dir"
        )
    try:
        files = frame_file_paths(path)
    except OSError as err:
        raise CorpusFormatError(
            Errors.E136.format(path=path, detail=err.strerror or err),
            path=path,
            line=None,
            reason="frames_dir_unreadable",
        ) from None
    if not files:
        raise CorpusFormatError(
            Errors.E128.format(path=path), path=path, line=None, reason="no_frame_files"
        )
    return files


def read_frame_examples(
    frames_dir: PathLike,
    *,
    report: Optional[FramesReport] = None,
    exclude_lemmas: Collection[str] = (),
) -> Iterator[SentenceRecord]:
    """The usable examples of the frame files in ``frames_dir`` as sentence records (one
    predicate each, ``predicates_complete=False``), in file, roleset and example order.
    What is skipped, dropped or cleaned is counted in ``report`` (see the module
    docstring); examples whose lemma (lower case) is in ``exclude_lemmas`` are skipped
    as ``lemma_excluded``. Raises :class:`CorpusFormatError` only for a folder without
    frame files (E127, E128, E136) or without one that can be read (E134)."""
    report = report if report is not None else FramesReport()
    excluded = {lemma.lower() for lemma in exclude_lemmas}
    files = frame_files(frames_dir)
    report.files += len(files)
    read_before, skipped_before = report.files_read, len(report.skipped_items)
    for path in files:
        yield from read_frame_file(path, report=report, exclude_lemmas=excluded)
    if report.files_read == read_before:  # every file skipped: no example read either
        skips = [
            (Path(item["where"]).name, item["reason"], item["detail"])
            for item in report.skipped_items[skipped_before:]
        ]
        message = no_usable_file_message(frames_dir, len(files), skips)
        raise CorpusFormatError(message, path=frames_dir, line=None, reason="no_usable_frame_file")


def read_frame_file(
    path: PathLike, *, report: FramesReport, exclude_lemmas: Collection[str] = ()
) -> Iterator[SentenceRecord]:
    """The usable examples of one frame file (see :func:`read_frame_examples`)."""
    try:
        root = parse_frame_file(Path(path))
    except UnusableFrameFile as err:
        report.skip("file", err.reason, str(path), err.detail)
        return
    path = str(path)
    report.files_read += 1
    n_examples = 0
    for roleset in root.iter("roleset"):
        report.rolesets += 1
        roleset_id = roleset.get("id") or ""
        too_long = len(roleset_id) > MAX_ROLESET_ID_CHARS
        lemma = None if too_long else roleset_head_lemma(roleset_id)
        shown = excerpt(roleset_id) if roleset_id else "(no roleset id)"
        examples = _own_examples(roleset, report)
        if not examples:
            report.notes["rolesets_without_examples"] += 1
        for k, example in enumerate(examples, start=1):
            report.examples_read += 1
            where = f"{path} {shown} example {k}"
            # the example's dropped arguments and notes count only if it is kept
            own = FramesReport()
            try:
                if lemma is None:
                    raise _Skip("invalid_roleset_id", repr(excerpt(roleset_id)))
                if lemma.lower() in exclude_lemmas:
                    raise _Skip("lemma_excluded", lemma)
                predicate, words = _example_frame(example, own, where, lemma)
            except _Skip as skip:
                report.skip("example", skip.reason, where, skip.detail)
                n_examples += 1
                continue
            report.dropped_arguments.update(own.dropped_arguments)
            report.skipped_items.extend(own.skipped_items)
            report.notes.update(own.notes)
            predicate.lemma, predicate.roleset = lemma, roleset_id
            report.examples_kept += 1
            report.lemmas.add(lemma.lower())
            yield SentenceRecord(
                words=words,
                spaces=[True] * len(words),
                predicates=[predicate],
                sent_id=f"{roleset_id}#{k}",
                sent_index=n_examples,
                path=path,
                predicates_complete=False,
            )
            n_examples += 1
    if n_examples == 0:
        report.notes["files_without_examples"] += 1


def _own_examples(roleset: ET.Element, report: FramesReport) -> List[ET.Element]:
    """The ``<example>``s inside ``roleset`` in document order, but not those of a
    ``<roleset>`` nested in it: they are that roleset's (``root.iter`` visits it too).
    Iterative, so a deeply nested file cannot exhaust the stack."""
    found: List[ET.Element] = []
    stack = list(reversed(roleset))
    while stack:
        element = stack.pop()
        if element.tag == "roleset":
            report.notes["rolesets_nested"] += 1
            continue
        if element.tag == "example":
            found.append(element)
        stack.extend(reversed(element))
    return found


def _element_text(element: Optional[ET.Element]) -> str:
    return "" if element is None else " ".join("".join(element.itertext()).split())


def _same_words(tokens: List[str], text: str) -> bool:
    """Whether the tokens are the words of an element's text (in any order: a ``relloc``
    may list a split predicate's parts out of order); an empty text says nothing."""
    return not text or sorted(t.lower() for t in tokens) == sorted(text.lower().split())


def _is_trace_text(text: str) -> bool:
    return all(_TRACE.match(word) for word in text.split())  # empty: an empty element


def _tokens(example: ET.Element) -> List[str]:
    text_element = example.find("text")
    text = "".join(text_element.itertext()) if text_element is not None else ""
    if not text.strip():
        raise _Skip("no_text")
    tokens = text.strip().split(" ")
    if tokens != text.split():
        raise _Skip("irregular_whitespace", "the tokens are not separated by single spaces")
    return tokens


def _rel(example: ET.Element, n: int) -> Tuple[ET.Element, List[int], ET.Element]:
    """The ``<propbank>``, the predicate's token indices (sorted) and the ``<rel>``."""
    annotations = example.findall("propbank")
    if len(annotations) > 1:
        raise _Skip("several_rels", f"{len(annotations)} <propbank> elements")
    if not annotations:
        raise _Skip("no_rel", "no <propbank> element")
    rels = annotations[0].findall("rel")
    if not rels:
        raise _Skip("no_rel", "no <rel> element")
    if len(rels) > 1:
        raise _Skip("several_rels", f"{len(rels)} <rel> elements")
    relloc = rels[0].get("relloc") or ""
    try:
        listed = [int(value) for value in relloc.split()]
    except ValueError:
        listed = []
    if not listed:
        raise _Skip("rel_index_invalid", f"relloc={relloc!r}")
    if len(set(listed)) < len(listed):
        raise _Skip("rel_index_repeated", f"relloc={relloc!r}")
    indices = sorted(listed)
    if indices[0] < 0 or indices[-1] >= n:
        raise _Skip("rel_out_of_range", f"relloc={relloc!r} in a sentence of {n} tokens")
    return annotations[0], indices, rels[0]


def _clean_words(tokens: List[str], report: FramesReport) -> Tuple[List[str], List[int]]:
    """The words without trace tokens and co-indexing brackets, and each token's new
    index (-1 for a removed trace)."""
    words = list(tokens)
    cleaned = False
    for j, token in enumerate(tokens):
        close = _COINDEX_CLOSE.match(token)
        if close is None or _TRACE.match(token):
            continue
        words[j] = close.group("word")
        cleaned = True
        if token.startswith("["):  # "[who]-3": both brackets on one word
            continue
        for i in range(j - 1, -1, -1):
            opening = _COINDEX_OPEN.match(words[i])
            if opening is not None and not _TRACE.match(words[i]):
                words[i] = opening.group("word")
                break
    if cleaned:
        report.notes["examples_coindex_brackets_removed"] += 1
    new_index: List[int] = []
    kept: List[str] = []
    for word in words:
        if _TRACE.match(word):
            new_index.append(-1)
        else:
            new_index.append(len(kept))
            kept.append(word)
    if len(kept) < len(words):
        report.notes["examples_with_traces"] += 1
        report.notes["trace_tokens_removed"] += len(words) - len(kept)
    return _unescape_ptb(kept, report), new_index


def _unescape_ptb(words: List[str], report: FramesReport) -> List[str]:
    """The words with PTB's bracket and quote escapes as EWT writes them (after the
    checks against the ``<rel>``/``<arg>`` texts, which escape them too), each mapping
    counted as a note."""
    unescaped = []
    for word in words:
        plain = PTB_ESCAPES.get(word)
        if plain is not None:
            report.notes[f"ptb_escape_mapped: {word} -> {plain}"] += 1
            word = plain
        unescaped.append(word)
    return unescaped


def _runs(indices: List[int]) -> List[Tuple[int, int]]:
    """Sorted token indices as contiguous ``[start, end)`` runs."""
    runs: List[Tuple[int, int]] = []
    for i in indices:
        if runs and runs[-1][1] == i:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs


def _common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _verb_run(runs: List[Tuple[int, int]], words: List[str], lemma: str) -> int:
    """Which run of a split predicate is its ``V``: the one whose word shares the longest
    prefix with the lemma ("Asking" for ``ask``, "aftermath" in "in ... aftermath"), the
    first on a tie ("went" ... "on" for ``go``)."""
    lemma = lemma.lower()

    def score(run: Tuple[int, int]) -> int:
        return max(_common_prefix(words[i].lower(), lemma) for i in range(*run))

    return max(range(len(runs)), key=lambda r: (score(runs[r]), -r))


def _example_frame(
    example: ET.Element, report: FramesReport, where: str, lemma: str
) -> Tuple[Predicate, List[str]]:
    """The example's predicate (without lemma and roleset) and words; raises
    :class:`_Skip` for an example that cannot be used."""
    tokens = _tokens(example)
    annotation, rel_indices, rel = _rel(example, len(tokens))
    if not _same_words([tokens[i] for i in rel_indices], _element_text(rel)):
        raise _Skip("rel_text_mismatch", f"<rel> {_element_text(rel)!r} at relloc")
    arguments: List[Tuple[int, int, str]] = []  # inclusive bounds in the raw tokens
    for arg in annotation.findall("arg"):
        raw_label = arg.get("type") or ""
        label = normalize_label(raw_label)
        if label is None:
            raise _Skip("unknown_label", repr(raw_label))
        if label != raw_label:
            report.notes[f"label_mapped: {raw_label} -> {label}"] += 1
        text = _element_text(arg)
        try:
            start, end = int(arg.get("start") or ""), int(arg.get("end") or "")
        except ValueError:
            if _is_trace_text(text):
                report.skip("argument", "argument_trace", where, f"{label} {text!r}")
                continue
            raise _Skip("argument_position_unknown", f"{label} {text!r}") from None
        if not 0 <= start <= end < len(tokens):
            raise _Skip("argument_out_of_range", f"{label} [{start}, {end}] of {len(tokens)}")
        if not _same_words(tokens[start : end + 1], text):
            raise _Skip("argument_text_mismatch", f"{label} {text!r}")
        if any(start <= i <= end for i in rel_indices):
            raise _Skip("argument_overlaps_predicate", f"{label} [{start}, {end}]")
        arguments.append((start, end, label))
    words, new_index = _clean_words(tokens, report)
    if any(new_index[i] < 0 for i in rel_indices):
        raise _Skip("rel_on_trace")
    runs = _runs([new_index[i] for i in rel_indices])
    span = runs.pop(_verb_run(runs, words, lemma))
    others = runs
    if others:
        report.notes["predicates_split_with_c_v"] += 1
    elif span[1] - span[0] > 1:
        report.notes["predicates_multiword"] += 1
    kept = [Argument(start, end, "C-V") for start, end in others]
    for start, end, label in arguments:
        inside = [new_index[i] for i in range(start, end + 1) if new_index[i] >= 0]
        if not inside:
            report.skip("argument", "argument_trace", where, f"{label} covers traces only")
            continue
        kept.append(Argument(inside[0], inside[-1] + 1, label))
    predicate = Predicate(index=span[0], span=span, arguments=kept)
    return predicate, words
