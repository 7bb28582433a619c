"""The CoNLL-2005 files ``spacy-lisa evaluate --conll-dir`` writes, for ``srl-eval.pl
gold.props pred.props``: the words, the gold props and the predicted frames written over
the gold tokens and sentences, each predicted prop on the row of the gold prop it is to
be scored against (:func:`write_props`)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from spacy.tokens import Doc

from ..frames import doc_sentences, set_srl_frames
from .gold_docs import gold_preproc_doc
from .official import props_rows

# the CoNLL-2005 files --conll-dir receives (for srl-eval.pl gold.props pred.props)
CONLL_FILES = ("words.txt", "gold.props", "pred.props")

Frame = Dict[str, Any]  # a frame in its stored form (doc._.srl_frame_data)
Row = Tuple[int, int]  # (sentence, props row; -1 where the sentence has none left)


def write_props(conll_dir: Path, gold_docs: Sequence[Doc], pred_docs: Sequence[Doc]) -> int:
    """Write ``words.txt``, ``gold.props`` and ``pred.props`` (CoNLL-2005) for
    ``srl-eval.pl gold.props pred.props``. The predicted frames are written over copies
    of the gold docs, so both files have the same sentences, line for line. Returns the
    number of predicted roles left out because they lie outside their predicate's
    sentence (the format cannot hold them; the JSON scores still count them)."""
    from ..corpus.conll2005 import write_conll2005

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


def _pred_frames_for_props(gold: Doc, pred: Doc) -> Tuple[List[Frame], int]:
    """The predicted frames (stored form) ready for the props file: each takes the
    lemma of the gold frame written on the same props row (srl-eval.pl pairs props by
    row and counts all gold arguments as missed, and the predicted ones not at all,
    when the lemma strings differ: "props do not match"; the lemma is not what is
    scored), else its first token's lemma; roles outside the predicate's gold sentence
    are dropped and counted."""
    sentences = [(s.start, s.end) for s in doc_sentences(gold)] or [(0, len(gold))]
    gold_lemma: Dict[Row, Optional[str]] = {
        row: frame.get("lemma") for row, _, frame in _by_row(gold._.srl_frame_data or [], sentences)
    }
    frames = []
    n_dropped = 0
    for row, (lo, hi), data in _by_row(pred._.srl_frame_data or [], sentences):
        start = int(data["predicate"][0])
        roles = [r for r in data["roles"] if lo <= int(r[0]) and int(r[1]) <= hi]
        n_dropped += len(data["roles"]) - len(roles)
        lemma = gold_lemma[row] if row in gold_lemma else gold[start].lemma_ or None
        frames.append({**data, "roles": roles, "lemma": lemma})
    return frames, n_dropped


def _by_row(
    frames: Sequence[Frame], sentences: Sequence[Tuple[int, int]]
) -> Iterator[Tuple[Row, Tuple[int, int], Frame]]:
    """Each frame with its props row (as ``write_conll2005`` places the lemmas) and its
    sentence's tokens, sentence by sentence, frames sorted by predicate span."""
    ordered = sorted(frames, key=_predicate_key)
    for s, (lo, hi) in enumerate(sentences):
        in_sent = [f for f in ordered if lo <= int(f["predicate"][0]) < hi]
        local = [(start - lo, end - lo) for start, end in map(_predicate_key, in_sent)]
        for row, frame in zip(props_rows(local, hi - lo), in_sent, strict=True):
            yield (s, row if row is not None else -1), (lo, hi), frame


def _predicate_key(frame: Frame) -> Tuple[int, int]:
    return int(frame["predicate"][0]), int(frame["predicate"][1])
