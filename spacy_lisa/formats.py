"""Output formats for Docs carrying SRL frames: JSON lines, AllenNLP's SRL JSON and
CoNLL-2005 columns. Pure functions over Docs, shared by ``spacy-lisa predict``, the
server, the Ray workers and library users; nothing here loads a model.

Every format is *per sentence*: a Doc with sentence boundaries (a ``senter``, ``parser``
or hand-set ``is_sent_start``) gives one record per sentence, a Doc without gives one
record for the whole Doc. A frame belongs to the sentence holding its predicate.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple

from spacy.tokens import Doc, Span

from .decoding.bio import spans_to_bio
from .frames import SRLFrame, doc_sentences
from .input_docs import InputDoc, output_keys

Record = Dict[str, Any]
# (index of the frame in doc._.srl_frames, the frame)
IndexedFrame = Tuple[int, SRLFrame]


def frames_by_sentence(doc: Doc) -> List[Tuple[Span, List[IndexedFrame]]]:
    """Pair each sentence with the frames whose predicate starts in it (frame indices
    refer to ``doc._.srl_frames``, which is in predicate order)."""
    sentences = doc_sentences(doc)
    grouped: List[Tuple[Span, List[IndexedFrame]]] = [(sent, []) for sent in sentences]
    if not sentences:
        return grouped
    s = 0
    for i, frame in enumerate(doc._.srl_frames):
        start = frame.predicate.start
        # frames are sorted by predicate, so the sentence index only moves forward
        while s + 1 < len(sentences) and start >= sentences[s].end:
            s += 1
        grouped[s][1].append((i, frame))
    return grouped


def frame_bio_tags(sent: Span, frame: SRLFrame) -> Tuple[List[str], List[int]]:
    """BIO tags of ``frame`` over the tokens of ``sent`` (predicate ``B-V``) and the
    indices (into ``frame.roles``) of roles BIO cannot hold: roles overlapping an
    earlier one or reaching outside the sentence."""
    offset = sent.start
    roles = [(r.start - offset, r.end - offset, r.label_) for r in frame.roles]
    predicate = (frame.predicate.start - offset, frame.predicate.end - offset)
    tags, rejected = spans_to_bio(len(sent), roles, predicate=predicate)
    # map rejected spans back to role indices; a duplicate span is rejected once per copy
    untagged: List[int] = []
    pending = list(rejected)
    for i, role in enumerate(roles):
        if role in pending:
            pending.remove(role)
            untagged.append(i)
    return tags, untagged


def _span_offsets(span: Span, sent: Span) -> Dict[str, Any]:
    """Token and character offsets of ``span`` relative to the doc and to ``sent``."""
    return {
        "text": span.text,
        "start": span.start,
        "end": span.end,
        "start_char": span.start_char,
        "end_char": span.end_char,
        "sent_start": span.start - sent.start,
        "sent_end": span.end - sent.start,
        "sent_start_char": span.start_char - sent.start_char,
        "sent_end_char": span.end_char - sent.start_char,
    }


def _role_record(role: Span, sent: Span) -> Record:
    record: Record = {"label": role.label_, **_span_offsets(role, sent)}
    if role._.srl_score is not None:
        record["score"] = role._.srl_score
    return record


def doc_to_jsonl_records(
    doc: Doc, *, extra: Optional[Mapping[str, Any]] = None, tags: bool = True
) -> List[Record]:
    """One JSON-ready record per sentence::

        {**extra, "sentence": 0, "text": "John sold the car .",
         "start": 0, "end": 5, "start_char": 0, "end_char": 19,
         "tokens": ["John", "sold", "the", "car", "."],
         "frames": [{"frame": 0, "roleset": "sell.01", "lemma": "sell",
                     "predicate": {<offsets>}, "score": 0.99, "roleset_score": 0.87,
                     "roles": [{"label": "ARG0", <offsets>, "score": 0.93}, ...],
                     "tags": ["B-ARG0", "B-V", "B-ARG1", "I-ARG1", "O"],
                     "untagged_roles": []}]}

    ``<offsets>`` are ``text``, ``start``/``end`` (tokens, end exclusive) and
    ``start_char``/``end_char`` relative to the doc, and the same four prefixed with
    ``sent_`` relative to the sentence. ``frame`` is the frame's index in
    ``doc._.srl_frames``. ``tags`` are BIO tags over the sentence; ``untagged_roles``
    lists the indices of roles the tags cannot hold (overlapping or crossing the
    sentence boundary), which stay in ``roles``. ``extra`` keys (e.g. a line number or
    an input id) come first in every record. The scores (docs/usage.md, Confidence) are
    there where the frames have them (frames ``lisa_srl`` wrote, not gold ones).

    ``tags=False`` leaves ``tags`` and ``untagged_roles`` out: each frame's tags span
    the whole sentence, so with them a sentence's record grows with its length times
    its predicates; without them it grows linearly (the roles hold the same spans).
    """
    records: List[Record] = []
    for s, (sent, frames) in enumerate(frames_by_sentence(doc)):
        record: Record = dict(extra or {})
        record.update(
            sentence=s,
            text=sent.text,
            start=sent.start,
            end=sent.end,
            start_char=sent.start_char,
            end_char=sent.end_char,
            tokens=[t.text for t in sent],
            frames=[],
        )
        for i, frame in frames:
            item: Record = {
                "frame": i,
                "roleset": frame.roleset,
                "lemma": frame.lemma,
                "predicate": _span_offsets(frame.predicate, sent),
                "roles": [_role_record(r, sent) for r in frame.roles],
            }
            item.update(frame.scores())
            if tags:
                item["tags"], item["untagged_roles"] = frame_bio_tags(sent, frame)
            record["frames"].append(item)
        records.append(record)
    return records


def allennlp_description(words: List[str], tags: List[str]) -> str:
    """AllenNLP's ``make_srl_string``: ``[ARG0: John] [V: sold] [ARG1: the car] .``"""
    parts: List[str] = []
    chunk: List[str] = []
    for word, tag in zip(words, tags, strict=True):
        if tag.startswith("I-") and chunk:
            chunk.append(word)
            continue
        if chunk:
            parts.append("[" + " ".join(chunk) + "]")
            chunk = []
        if tag.startswith(("B-", "I-")):
            # an I- without its B- (never produced by spans_to_bio) opens a chunk
            chunk = [f"{tag[2:]}: {word}"]
        else:
            parts.append(word)
    if chunk:
        parts.append("[" + " ".join(chunk) + "]")
    return " ".join(parts)


def doc_to_allennlp(doc: Doc) -> List[Record]:
    """One ``{"words": [...], "verbs": [{"verb", "description", "tags"}]}`` object per
    sentence, the shape AllenNLP's ``SemanticRoleLabelerPredictor`` returns. ``verb`` is
    the predicate's text (words joined by a space for multi-word predicates)."""
    out: List[Record] = []
    for sent, frames in frames_by_sentence(doc):
        words = [t.text for t in sent]
        verbs = []
        for _, frame in frames:
            tags, _untagged = frame_bio_tags(sent, frame)
            verbs.append(
                {
                    "verb": " ".join(t.text for t in frame.predicate),
                    "description": allennlp_description(words, tags),
                    "tags": tags,
                }
            )
        out.append({"verbs": verbs, "words": words})
    return out


def doc_to_conll2005_text(doc: Doc) -> str:
    """The doc in CoNLL-2005 columns (word, lemma or ``-``, one bracket column per
    predicate), one token per line, columns padded to a common width per sentence as
    in the shared-task files, and a blank line after each sentence. The rows come from
    :func:`spacy_lisa.corpus.conll2005.doc_to_conll2005`; the first column alone is a
    words file and the others a props file for ``srl-eval.pl`` (``cut -c`` or
    :func:`~spacy_lisa.corpus.conll2005.write_conll2005` give them apart)."""
    # imported here so that the JSON formats work without the corpus readers loaded
    from .corpus.conll2005 import doc_to_conll2005, padded_lines

    lines: List[str] = []
    for rows in doc_to_conll2005(doc):
        lines.extend(padded_lines(rows))
        lines.append("")
    return "".join(line + "\n" for line in lines)


def jsonl_text(records: Iterable[Record]) -> str:
    """``records`` as JSON lines: one object a line, non-ASCII characters as they are."""
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


class OutputFormat(StrEnum):
    """The formats ``predict`` writes and the server returns, one record per sentence."""

    jsonl = "jsonl"
    conll2005 = "conll2005"
    allennlp = "allennlp"


# each format's text for one labelled Doc and the input it came from (JSON lines carry
# its line number and id, see :func:`spacy_lisa.input_docs.output_keys`)
FORMATTERS: Dict[OutputFormat, Callable[[Doc, InputDoc], str]] = {
    OutputFormat.jsonl: lambda doc, source: jsonl_text(
        doc_to_jsonl_records(doc, extra=output_keys(source.line, source.id))
    ),
    OutputFormat.conll2005: lambda doc, source: doc_to_conll2005_text(doc),
    OutputFormat.allennlp: lambda doc, source: jsonl_text(doc_to_allennlp(doc)),
}


def formatter_for(
    output_format: OutputFormat, *, tags: bool = True
) -> Callable[[Doc, InputDoc], str]:
    """The :data:`FORMATTERS` entry of ``output_format``; for JSON lines with
    ``tags=False``, one that leaves the per-frame BIO tags out (see
    :func:`doc_to_jsonl_records`)."""
    if output_format == OutputFormat.jsonl and not tags:
        return lambda doc, source: jsonl_text(
            doc_to_jsonl_records(doc, extra=output_keys(source.line, source.id), tags=False)
        )
    return FORMATTERS[OutputFormat(output_format)]
