"""The one-to-one token map shared by the scorer and the component."""

from __future__ import annotations

import numpy as np
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_lisa.alignment import TokenMap, one_to_one

NLP = spacy.blank("en")


def mismatched() -> Example:
    # predicted "York-based" is three reference tokens, "Ann." two: no partners
    pred = Doc(NLP.vocab, words=["The", "New", "York-based", "firm", "hired", "Ann."])
    ref = Doc(
        NLP.vocab,
        words=["The", "New", "York", "-", "based", "firm", "hired", "Ann", "."],
        spaces=[True, True, False, False, True, True, True, False, False],
    )
    return Example(pred, ref)


def test_one_to_one_masks_split_and_merged_tokens() -> None:
    p2r, r2p = one_to_one(mismatched())
    assert p2r.tolist() == [0, 1, -1, 5, 6, -1]
    assert r2p.tolist() == [0, 1, -1, -1, -1, 3, 4, -1, -1]
    assert p2r.dtype == np.int32 and r2p.dtype == np.int32


def test_identity_when_the_words_are_the_same() -> None:
    doc = Doc(NLP.vocab, words=["a", "b", "c"])
    p2r, r2p = one_to_one(Example(doc, doc.copy()))
    assert p2r.tolist() == r2p.tolist() == [0, 1, 2]
    assert TokenMap(Example(doc, doc.copy())).span(1, 3) == (1, 3)


def test_span_mapping() -> None:
    token_map = TokenMap(mismatched())
    assert token_map.span(1, 4) == (1, 6)  # "New York-based firm" -> New ... firm
    assert token_map.span(2, 3) == (2, 5)  # "York-based" covers three reference tokens
    assert token_map.span(5, 6) == (7, 9)  # "Ann." covers "Ann" "."
    assert token_map.token(2) is None and token_map.token(3) == 5


def test_span_inside_a_reference_token_does_not_map() -> None:
    pred = Doc(NLP.vocab, words=["ice", "cream", "melts"])
    ref = Doc(NLP.vocab, words=["ice cream", "melts"])
    token_map = TokenMap(Example(pred, ref))
    assert token_map.span(0, 1) is None  # "ice" is half of a reference token
    assert token_map.span(0, 2) == (0, 1)
