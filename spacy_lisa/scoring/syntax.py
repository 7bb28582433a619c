"""The accuracy of the parse and POS tags the ``lisa_srl`` component used
(``srl_uas``, ``srl_las``, ``srl_pos_acc``; see :mod:`.scorer`), over the predicted
tokens that align one-to-one with reference tokens."""

from __future__ import annotations

from spacy.training import Example

from ..alignment import TokenMap
from ..errors import Errors
from .counts import SRLEvaluation


def score_parse(example: Example, token_map: TokenMap, result: SRLEvaluation) -> None:
    """Count ``predicted._.srl_parse``'s heads and labels against the reference's."""
    pred, ref = example.predicted, example.reference
    parse = pred._.srl_parse
    if parse is None or not ref.has_annotation("DEP"):
        return
    heads, deps = list(parse.get("heads") or ()), list(parse.get("deps") or ())
    if len(heads) != len(pred) or len(deps) != len(pred):
        raise ValueError(
            Errors.E252.format(
                doc=pred.text[:40], n_heads=len(heads), n_deps=len(deps), n_tokens=len(pred)
            )
        )
    for token in pred:
        if token.orth_.isspace():  # as spaCy's score_deps: whitespace is not a word
            continue
        gold_i = token_map.token(token.i)
        if gold_i is None:
            continue
        gold_token = ref[gold_i]
        if not gold_token.dep_:  # missing gold annotation
            continue
        head = int(heads[token.i])
        gold_head = token_map.token(head) if 0 <= head < len(pred) else None
        result.uas.total += 1
        result.las.total += 1
        if gold_head is not None and gold_head == gold_token.head.i:
            result.uas.correct += 1
            if str(deps[token.i]).lower() == gold_token.dep_.lower():
                result.las.correct += 1


def score_pos(example: Example, token_map: TokenMap, result: SRLEvaluation, pos_attr: str) -> None:
    """Count ``predicted._.srl_pos`` against the reference tokens' ``pos_attr``."""
    pred, ref = example.predicted, example.reference
    tags = pred._.srl_pos
    if tags is None:
        return
    for token in pred:
        gold_i = token_map.token(token.i)
        if gold_i is None or token.i >= len(tags):
            continue
        gold_tag = getattr(ref[gold_i], pos_attr)
        if not gold_tag:  # missing gold annotation
            continue
        result.pos.total += 1
        result.pos.correct += int(tags[token.i] == gold_tag)
