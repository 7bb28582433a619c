"""The SRL scorer: CoNLL-2005 argument P/R/F, predicate detection, and the accuracy of
the parse and POS tags the ``lisa_srl`` component used.

Conventions (those of the official ``srl-eval.pl`` of CoNLL-2005):

- An argument is right only if its label and its exact span match a gold argument of
  the same predicate. Partial overlaps get no credit.
- The predicate's own ``V`` span is not scored (frames keep it apart from the roles; a
  stray ``V`` role is ignored too).
- A ``C-X`` continuation joins the closest preceding ``X`` argument of its frame into one
  discontinuous argument of type ``X``: the argument is the set of its pieces, counted
  once, right only if every piece is right. A ``C-X`` with no ``X`` before it becomes a
  plain ``X`` argument (as ``srl-eval.pl`` does).
- ``R-X`` (reference) arguments are labels of their own.
- ``convention="strict"`` (the default, the usual end-to-end convention): frames are
  paired by predicate token span. A gold frame with no predicted frame counts all its
  arguments as missed; a predicted frame with no gold frame counts all its arguments as
  false positives (``count_spurious_predicates=False`` skips them instead, still pairing
  by span: the approximation of srl-eval.pl this scorer had before ``"official"``).
- ``convention="official"``: the counts ``srl-eval.pl`` prints for the props files
  ``spacy-lisa evaluate --conll-dir`` writes (see the notes in :mod:`.official`):
  props pair by their row, i.e. the predicate's *first token*, so a one-token "grow"
  predicted for a gold "grow up" is scored against it; props with no gold at their row
  are skipped.

Predicates: ``srl_pred_p/r/f`` by exact predicate span (both conventions), and by the
gold UPOS of the predicate's first token in ``srl_pred_per_pos`` (``VERB``, ``AUX``,
``NOUN``, ``ADJ``, ``other``; a spurious predicate takes its predicted token's UPOS when
the predicted doc has POS, else the aligned reference token's). ``srl_sense_acc``: the
share of predicted predicates matching a gold predicate (same span) that has a roleset
whose roleset is right; with ``sense_baseline`` (:func:`.strict.lemma_mfs`) also
``srl_sense_acc_mfs``, the lemma most-frequent-sense baseline on the same predicates.

Offsets are compared in *reference-token* offsets: predicted spans are mapped through
``example.alignment``; a predicted span whose boundaries fall inside a reference token
cannot equal any gold span and counts as a false positive (never silently dropped).

Parse accuracy (``srl_uas``/``srl_las``) compares ``predicted._.srl_parse`` with the
reference heads and labels over the tokens that align one-to-one (others are skipped),
punctuation included (unlike the PTB convention that excludes it); labels compare
case-insensitively (spaCy's ``ROOT`` equals UD's ``root``). ``srl_pos_acc`` compares
``predicted._.srl_pos`` with the reference ``tag_``. Reference docs with no SRL annotation
(``doc._.srl_frame_data is None``) are skipped for the SRL scores; parse and POS are scored
wherever the reference has them. As in spaCy's scorers, a score is ``None`` when there
was nothing to score (no gold and no prediction), else a float in [0, 1].

This module runs, per example, :mod:`.strict` (frames paired by predicate span),
:mod:`.official` (the port of srl-eval.pl) and :mod:`.syntax` (parse and POS), which
add to :mod:`.counts`; it holds the scorer spaCy finds as ``spacy-lisa.srl_scorer.v1``.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, Dict, Iterable, Mapping, Optional

import spacy
from spacy.training import Example

from ..alignment import TokenMap
from ..frames import has_srl_annotation
from .counts import OFFICIAL, STRICT, SRLEvaluation, check_convention
from .official import score_frames_official
from .strict import frames_by_predicate, score_arguments_strict, score_predicates
from .syntax import score_parse, score_pos


def _score_frames(
    example: Example,
    token_map: TokenMap,
    result: SRLEvaluation,
    convention: str,
    count_spurious_predicates: bool,
    sense_baseline: Optional[Mapping[str, str]],
) -> None:
    gold = frames_by_predicate(example.reference._.srl_frames, None)
    pred = frames_by_predicate(example.predicted._.srl_frames, token_map)
    result.count_frames(gold, pred)
    score_predicates(example, token_map, gold, pred, result, sense_baseline)
    if convention == OFFICIAL:
        score_frames_official(example, token_map, result)
    else:
        score_arguments_strict(token_map, gold, pred, result, count_spurious_predicates)


def evaluate_srl(
    examples: Iterable[Example],
    *,
    convention: str = STRICT,
    count_spurious_predicates: bool = True,
    pos_attr: str = "tag_",
    sense_baseline: Optional[Mapping[str, str]] = None,
) -> SRLEvaluation:
    """Count SRL, predicate, parse and POS agreement over ``examples`` (see module doc).
    ``convention``: ``"strict"`` (frames paired by predicate span; the arguments of
    spurious predicates are false positives unless ``count_spurious_predicates=False``)
    or ``"official"`` (srl-eval.pl's counts on the props files). ``sense_baseline``: a
    lemma -> roleset table (:func:`~.strict.lemma_mfs`) scored beside the model's senses."""
    check_convention(convention)
    result = SRLEvaluation()
    for example in examples:
        token_map = TokenMap(example)
        if has_srl_annotation(example.reference):
            _score_frames(
                example, token_map, result, convention, count_spurious_predicates, sense_baseline
            )
        score_parse(example, token_map, result)
        score_pos(example, token_map, result, pos_attr)
    return result


def score_srl(
    examples: Iterable[Example],
    *,
    convention: str = STRICT,
    count_spurious_predicates: bool = True,
    pos_attr: str = "tag_",
    **kwargs: Any,
) -> Dict[str, Any]:
    """Score ``examples``: ``srl_p/r/f``, ``srl_per_type``, ``srl_pred_p/r/f``,
    ``srl_uas``, ``srl_las``, ``srl_pos_acc`` (CoNLL-2005 conventions, see module doc).
    Other keyword arguments (spaCy's scorer config, e.g. ``nlp``) are ignored."""
    return evaluate_srl(
        examples,
        convention=convention,
        count_spurious_predicates=count_spurious_predicates,
        pos_attr=pos_attr,
    ).to_scores()


@spacy.registry.scorers("spacy-lisa.srl_scorer.v1")
def make_srl_scorer(convention: str = STRICT) -> Callable[..., Dict[str, Any]]:
    """The scorer of the ``lisa_srl`` component: ``score_srl`` in the given convention,
    ``"strict"`` (the arguments of spurious predicted predicates are false positives) or
    ``"official"`` (srl-eval.pl's)."""
    check_convention(convention)
    return score_srl if convention == STRICT else partial(score_srl, convention=convention)
