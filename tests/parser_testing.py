"""A tiny spaCy dependency parser trained in a few seconds, for the tests that need a
real pipeline with a parser (``convert --parser``, the CoNLL-2012 workflow)."""

from __future__ import annotations

import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

# what it learns from: "NAME VERB the NOUN ." (two per doc, so that it learns to split
# sentences, as a real parser does)
TRAIN = [
    ("Ann sold the car .", [1, 1, 3, 1, 1]),
    ("Bob found the key .", [1, 1, 3, 1, 1]),
    ("Kim saw the shop .", [1, 1, 3, 1, 1]),
]
DEPS = ["nsubj", "ROOT", "det", "obj", "punct"]


def train_tiny_parser(*, sentencizer: bool = False) -> Language:
    """A blank English pipeline with a parser (behind a sentencizer that overwrites the
    sentence boundaries it is given, with ``sentencizer``)."""
    nlp = spacy.blank("en")
    if sentencizer:
        nlp.add_pipe("sentencizer", config={"overwrite": True})
    # min_action_freq=1: with the default (30) every label of a few sentences collapses
    # into "dep" and spaCy cannot find gold transitions (E1031)
    nlp.add_pipe("parser", config={"min_action_freq": 1})
    examples = []
    for (first, first_heads), (second, second_heads) in zip(
        TRAIN, TRAIN[1:] + TRAIN[:1], strict=True
    ):
        words = first.split() + second.split()
        heads = first_heads + [h + len(first_heads) for h in second_heads]
        ref = Doc(nlp.vocab, words=words, heads=heads, deps=DEPS + DEPS)
        examples.append(Example(Doc(nlp.vocab, words=words), ref))
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(20):
        nlp.update(examples, sgd=optimizer)
    return nlp
