"""Training sentences merged as a sentence segmenter that misses a start leaves them.

On raw text ``lisa_srl`` reads the sentences its pipeline's segmenter finds. Where the
segmenter misses a start, two sentences reach it as one, which a model trained on gold
sentences only has never seen: on EWT dev, the starts the parser misses cost the
transformer pipeline more F1 than its false starts (BENCHMARKS.md, Raw text). The
``merge_sentences`` option of ``spacy-lisa.SRLCorpus.v1`` shows the model such sentences
in training: each boundary between consecutive sentences of one document is removed with
that probability, drawn each time the corpus is read (``spacy train`` reads it once, unless
``max_epochs = -1`` streams it anew every epoch).

A merged sentence keeps every token annotation; its gold parse is one tree, each later
sentence's root attached to the first root as ``parataxis`` (UD's relation for sentences
side by side, what a parser makes of two sentences it reads as one), and its frames are
re-based on the merged tokens.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from spacy.tokens import Doc, Token

from ..errors import Errors
from ..frames import has_srl_annotation, set_srl_frames
from ..teacher_data import TEACHER_KEY
from .docbin import DOC_ID_KEY, SENT_IDS_KEY

# the relation of a later sentence's root to the first one in a merged sentence
MERGED_ROOT_DEP = "parataxis"


def merge_sentence_docs(docs: Sequence[Doc]) -> Doc:
    """One sentence Doc holding the tokens, annotations and frames of ``docs`` (each a
    sentence of one document, in order, all with SRL annotation or all without)."""
    if len(docs) == 1:
        return docs[0]
    for doc in docs:
        if TEACHER_KEY in doc.user_data:
            raise ValueError(Errors.E126.format(doc=repr(doc.text[:40])))
    words, spaces, heads, deps = _merged_tree(docs)
    parsed = all(doc.has_annotation("DEP") for doc in docs)
    merged = Doc(
        docs[0].vocab,
        words=words,
        spaces=spaces,
        heads=heads if parsed else None,
        deps=deps if parsed else None,
        sent_starts=None if parsed else [i == 0 for i in range(len(words))],
        pos=_token_column(docs, "POS", lambda token: token.pos_),
        tags=_token_column(docs, "TAG", lambda token: token.tag_),
        lemmas=_token_column(docs, "LEMMA", lambda token: token.lemma_),
        morphs=_token_column(docs, "MORPH", lambda token: str(token.morph)),
    )
    _merge_user_data(merged, docs)
    return merged


def _merged_tree(docs: Sequence[Doc]) -> Tuple[List[str], List[bool], List[int], List[str]]:
    """The words, spaces, heads and dependency labels of the sentences run together:
    each later sentence's root attached to the first root as ``MERGED_ROOT_DEP``."""
    words: List[str] = []
    spaces: List[bool] = []
    heads: List[int] = []
    deps: List[str] = []
    root = -1
    for doc in docs:
        offset = len(words)
        if spaces:
            spaces[-1] = True  # the sentences' texts joined by a space, as in a document
        for token in doc:
            words.append(token.text)
            spaces.append(bool(token.whitespace_))
            if token.head.i != token.i:
                heads.append(offset + token.head.i)
                deps.append(token.dep_)
            elif root < 0:
                root = offset + token.i
                heads.append(root)
                deps.append(token.dep_)
            else:
                heads.append(root)
                deps.append(MERGED_ROOT_DEP)
    return words, spaces, heads, deps


def _token_column(
    docs: Sequence[Doc], annotation: str, value: Callable[[Token], str]
) -> Optional[List[str]]:
    """``value`` of every token of ``docs``, or ``None`` unless all of them have
    ``annotation``."""
    if not all(doc.has_annotation(annotation) for doc in docs):
        return None
    return [value(token) for doc in docs for token in doc]


def _merge_user_data(merged: Doc, docs: Sequence[Doc]) -> None:
    """The document id, the sentence ids and the frames (re-based on the merged tokens)
    of ``docs`` on ``merged``."""
    first = docs[0]
    merged.user_data[DOC_ID_KEY] = first.user_data.get(DOC_ID_KEY)
    sent_ids = [i for doc in docs for i in doc.user_data.get(SENT_IDS_KEY) or ()]
    if sent_ids:
        merged.user_data[SENT_IDS_KEY] = sent_ids
    if has_srl_annotation(first):
        frames: List[Dict[str, Any]] = []
        offset = 0
        for doc in docs:
            frames.extend(_rebased(frame, offset) for frame in doc._.srl_frame_data or ())
            offset += len(doc)
        set_srl_frames(merged, frames)


def _rebased(frame: Dict[str, Any], offset: int) -> Dict[str, Any]:
    return {
        "predicate": [int(frame["predicate"][0]) + offset, int(frame["predicate"][1]) + offset],
        "roleset": frame.get("roleset"),
        "lemma": frame.get("lemma"),
        "roles": [[int(r[0]) + offset, int(r[1]) + offset, r[2]] for r in frame.get("roles") or ()],
    }


def merge_consecutive(
    sentences: Iterable[Doc],
    rate: float,
    *,
    max_tokens: int = 150,
    rng: random.Random | None = None,
) -> Iterator[Doc]:
    """``sentences`` (sentence Docs in document order), with each boundary between two
    consecutive sentences of the same document (same ``spacy_lisa.doc_id``) removed with
    probability ``rate``, as long as the merged sentence keeps at most ``max_tokens``
    tokens. Sentences without a document id are never merged, nor a sentence with SRL
    annotation with one without."""
    rng = rng if rng is not None else random.Random()
    group: List[Doc] = []
    for doc in sentences:
        doc_id = doc.user_data.get(DOC_ID_KEY)
        if (
            group
            and doc_id is not None
            and doc_id == group[-1].user_data.get(DOC_ID_KEY)
            and has_srl_annotation(doc) == has_srl_annotation(group[-1])
            and sum(len(d) for d in group) + len(doc) <= max_tokens
            and rng.random() < rate
        ):
            group.append(doc)
            continue
        if group:
            yield merge_sentence_docs(group)
        group = [doc]
    if group:
        yield merge_sentence_docs(group)
