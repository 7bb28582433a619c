"""``nlp.pipe`` with sentence starts set just before the pipeline's segmenter (one of
:data:`SEGMENTER_FACTORIES`): the segmentation oracle of raw-text evaluation, each gold
sentence held to one sentence (:func:`pipe_as_one_sentence`)."""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from spacy.language import Language
from spacy.tokens import Doc

# factories that set sentence starts and keep the ones a component before them preset
# (spaCy's parser always does; senter and sentencizer unless configured to overwrite)
SEGMENTER_FACTORIES = ("parser", "beam_parser", "senter", "sentencizer")


def pipe_as_one_sentence(
    nlp: Language, texts: Iterable[str], batch_size: int, disable: Sequence[str] = ()
) -> Iterable[Doc]:
    """``nlp.pipe`` with each text held to one sentence: just before the first component
    that segments, the first token starts a sentence and no other may, so the segmenter
    keeps the text whole (components before it, such as ``lisa_split_its``, may still
    change the tokens)."""
    return pipe_with_preset_starts(
        nlp, texts, lambda doc, _: _one_sentence(doc), batch_size, disable
    )


def pipe_with_preset_starts(
    nlp: Language,
    texts: Iterable[str],
    preset: Callable[[Doc, int], Doc],
    batch_size: int,
    disable: Sequence[str] = (),
) -> Iterable[Doc]:
    """``nlp.pipe`` with ``preset(doc, i)`` (``i``: the text's position in ``texts``)
    applied just before the first component that segments: the sentence starts it sets
    (``token.is_sent_start`` True or False) are kept, those it leaves ``None`` are the
    segmenter's to decide."""
    docs: Iterable[Doc] = (nlp.make_doc(text) for text in texts)
    held = False
    for name, component in nlp.pipeline:
        if name in disable:
            continue
        if not held and nlp.get_pipe_meta(name).factory in SEGMENTER_FACTORIES:
            docs = (preset(doc, i) for i, doc in enumerate(docs))
            held = True
        if hasattr(component, "pipe"):
            docs = component.pipe(docs, batch_size=batch_size)
        else:
            # map binds this component now (a generator expression would look the name
            # up when iterated, after the loop has moved on to the last component)
            docs = map(component, docs)
    return docs


def _one_sentence(doc: Doc) -> Doc:
    for token in doc:
        token.is_sent_start = token.i == 0
    return doc
