"""SRL frames on spaCy Docs: the one representation shared by the converters, the
``lisa_srl`` component, the scorer and the exporters.

A frame is one predicate with its roleset and its role spans. Frames are *stored* in
plain, msgpack-serialisable form in ``doc.user_data`` (through the ``srl_frame_data``
extension), so they survive ``doc.to_bytes``/``from_bytes``, ``DocBin(store_user_data=True)``,
pickling and ``nlp.pipe(..., n_process=2)``. They are *read* through ``doc._.srl_frames``,
a getter that builds :class:`SRLFrame` objects holding real ``Span``s.

Stored form of one frame (token offsets, end exclusive)::

    {"predicate": [start, end], "roleset": "sell.01" | None, "lemma": "sell" | None,
     "roles": [[start, end, "ARG0"], [start, end, "C-ARG1", 0.93], ...],
     "score": 0.99, "roleset_score": 0.87}

The predicate's own ``V`` span is the ``predicate``; it is never among the ``roles``.
Frames that ``lisa_srl`` writes carry confidence scores (probabilities, docs/usage.md,
Confidence): a fourth element of each role, the predicate's ``score`` and the
``roleset_score``; gold frames have none (the keys are absent, the getters say ``None``).

Extensions (installed once by :func:`install_extensions`, which importing this module does):

- ``doc._.srl_frames``: list of :class:`SRLFrame` in sentence (predicate) order, or ``[]``.
  Assigning a list of frames or dicts stores them (same as :func:`set_srl_frames`).
- ``doc._.srl_frame_data``: the stored form (``None`` when the doc carries no SRL).
- ``doc._.srl_predicates``: user-marked predicates (token indices), read by the component
  when ``predicate_source="doc"``; assign token indices, Tokens or Spans.
- ``doc._.srl_parse_source``: which parse the syntactic head followed (``"model"``,
  ``"doc"`` or ``"gold"``), set by the component.
- ``doc._.srl_parse``: the parse the syntactic head followed, ``{"heads": [absolute head
  index per token, root = itself], "deps": [label per token]}``, set by the component
  (whether that parse was the model's own or the doc's, ``srl_parse_source`` says).
- ``doc._.srl_pos``: the joint POS/predicate classifier's POS tag per token.
- ``doc._.srl_label_attention``: per-head attention of a Label Attention Layer when the
  component stores it: ``{"heads": [name, ...], "weights": [[float per token], ...]}``.
- ``span._.srl_score``: a role span's score (``None`` for a span without one).
- ``span._.srl_predicate``: the predicate (a ``Span`` labelled ``V``) of a role span, from
  ``doc.spans["srl"]`` or ``frame.roles``; ``None`` for other spans. A role span's
  ``id_`` holds its predicate's token offsets (:func:`predicate_id`), which span groups
  keep through ``doc.to_bytes`` and ``DocBin``, so the link needs no ``user_data``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from spacy.tokens import Doc, Span, SpanGroup, Token

from .errors import Errors

SRL_SPANS_KEY = "srl"
_PREDICATES_KEY = "spacy_lisa.srl_predicates"
# a role span's id_: its predicate's token offsets, "V:start-end" (end exclusive)
_PREDICATE_ID = re.compile(r"V:(\d+)-(\d+)")

FrameDict = Dict[str, Any]


@dataclass
class SRLFrame:
    """One predicate of a doc with its roleset and role spans."""

    predicate: Span
    roleset: Optional[str] = None
    roles: List[Span] = field(default_factory=list)
    lemma: Optional[str] = None
    # the probability that the predicate is one, and of the roleset among its lemma's
    # candidates (None in gold frames); each role span's is span._.srl_score. Frames
    # compare by what they say, not how sure of it the model was
    score: Optional[float] = field(default=None, compare=False)
    roleset_score: Optional[float] = field(default=None, compare=False)

    @property
    def doc(self) -> Doc:
        return self.predicate.doc

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready view: token offsets (start inclusive, end exclusive), text and
        character offsets of the predicate and every role, and the scores where the frame
        has them (``score`` and ``roleset_score`` of the frame, ``score`` of each role)."""
        roles = []
        for role in self.roles:
            item = dict(label=role.label_, **_span_dict(role))
            score = role._.srl_score
            if score is not None:
                item["score"] = score
            roles.append(item)
        view: Dict[str, Any] = {
            "predicate": _span_dict(self.predicate),
            "roleset": self.roleset,
            "lemma": self.lemma,
            "roles": roles,
        }
        return {**view, **self.scores()}

    def scores(self) -> Dict[str, float]:
        """The frame's ``score`` and ``roleset_score``, those it has."""
        scores = {"score": self.score, "roleset_score": self.roleset_score}
        return {key: value for key, value in scores.items() if value is not None}

    def to_frame_data(self) -> FrameDict:
        """The form ``doc._.srl_frame_data`` stores (token offsets, msgpack-serialisable);
        :meth:`to_dict` is the JSON view for users (texts and character offsets too)."""
        roles = []
        for role in self.roles:
            score = role._.srl_score
            roles.append(
                [role.start, role.end, role.label_] + ([score] if score is not None else [])
            )
        return {
            "predicate": [self.predicate.start, self.predicate.end],
            "roleset": self.roleset,
            "lemma": self.lemma,
            "roles": roles,
            **self.scores(),
        }

    def __repr__(self) -> str:
        roles = ", ".join(f"{r.label_}={r.text!r}" for r in self.roles)
        rs = f" ({self.roleset})" if self.roleset else ""
        return f"<SRLFrame {self.predicate.text!r}{rs}: {roles}>"


def _span_dict(span: Span) -> Dict[str, Any]:
    return {
        "start": span.start,
        "end": span.end,
        "text": span.text,
        "start_char": span.start_char,
        "end_char": span.end_char,
    }


def predicate_id(start: int, end: int) -> str:
    """The ``id_`` of a role span whose predicate is tokens ``start`` to ``end``."""
    return f"V:{start}-{end}"


def role_span(doc: Doc, role: Sequence[Any], predicate: Sequence[Any]) -> Span:
    """A role ``[start, end, label]`` of the frame whose predicate is ``[start, end]``,
    as a ``Span`` linked to that predicate (``span._.srl_predicate``)."""
    link = predicate_id(int(predicate[0]), int(predicate[1]))
    return Span(doc, int(role[0]), int(role[1]), label=str(role[2]), span_id=link)


# The role scores of the stored frames last read, by (predicate start, end, role start,
# end, label), so that reading every role's span._.srl_score costs one pass over a doc's
# frames, not one per role. Keyed by the stored list itself (set_srl_frames stores a new
# one) and its length (frames appended in place are seen); a score edited in place inside
# a stored role is not: store the frames again with set_srl_frames.
_RoleKey = Tuple[int, int, int, int, str]
_last_role_scores: Tuple[Optional[List[FrameDict]], int, Dict[_RoleKey, float]] = (None, 0, {})


def _role_scores(data: List[FrameDict]) -> Dict[_RoleKey, float]:
    global _last_role_scores
    cached = _last_role_scores  # one read: another thread may replace it meanwhile
    if cached[0] is not data or cached[1] != len(data):
        scores: Dict[_RoleKey, float] = {}
        for item in data:
            pstart, pend = int(item["predicate"][0]), int(item["predicate"][1])
            for role in item.get("roles") or ():
                if len(role) > 3:
                    key = (pstart, pend, int(role[0]), int(role[1]), str(role[2]))
                    scores.setdefault(key, float(role[3]))
        cached = _last_role_scores = (data, len(data), scores)
    return cached[2]


def get_span_score(span: Span) -> Optional[float]:
    """The score of a role span (``span._.srl_score``): the one its frame stores for a
    role of the same offsets and label; ``None`` for other spans and unscored frames."""
    match = _PREDICATE_ID.fullmatch(span.id_)
    data = span.doc._.srl_frame_data
    if match is None or not data:
        return None
    key = (int(match[1]), int(match[2]), span.start, span.end, span.label_)
    return _role_scores(data).get(key)


def get_span_predicate(span: Span) -> Optional[Span]:
    """The predicate of a role span (``span._.srl_predicate``); ``None`` for a span that
    is not one, or whose link points outside its doc."""
    match = _PREDICATE_ID.fullmatch(span.id_)
    if match is None:
        return None
    start, end = int(match[1]), int(match[2])
    if not 0 <= start < end <= len(span.doc):
        return None
    return Span(span.doc, start, end, label="V")


def _doc_name(doc: Doc) -> str:
    text = doc.text
    return text[:40] + ("..." if len(text) > 40 else "")


def normalize_frame_data(doc: Doc, frame: Union[SRLFrame, FrameDict]) -> FrameDict:
    """Validate one frame (an :class:`SRLFrame`, a stored dict or a ``to_dict()`` dict)
    against ``doc`` and return its stored form. Raises ``ValueError`` (E010)."""
    if isinstance(frame, SRLFrame):
        return frame.to_frame_data()
    if not isinstance(frame, dict) or "predicate" not in frame:
        raise ValueError(Errors.E010.format(doc=_doc_name(doc), message=f"not a frame: {frame!r}"))
    n = len(doc)

    def offsets(value: Any, what: str) -> Tuple[int, int]:
        if isinstance(value, dict):  # the to_dict() form
            value = (value.get("start"), value.get("end"))
        try:
            start, end = int(value[0]), int(value[1])
        except (TypeError, ValueError, IndexError):
            raise ValueError(
                Errors.E010.format(
                    doc=_doc_name(doc), message=f"{what} {value!r} is not [start, end]"
                )
            ) from None
        if not 0 <= start < end <= n:
            raise ValueError(
                Errors.E010.format(
                    doc=_doc_name(doc),
                    message=f"{what} [{start}, {end}) is outside the doc's {n} tokens",
                )
            )
        return start, end

    pstart, pend = offsets(frame["predicate"], "predicate")
    roles: List[List[Any]] = []
    for role in frame.get("roles") or ():
        if isinstance(role, dict):
            label = role.get("label")
            start, end = offsets(role, "role")
            score = role.get("score")
        else:
            if len(role) not in (3, 4):
                raise ValueError(
                    Errors.E010.format(
                        doc=_doc_name(doc),
                        message=f"role {role!r} is not [start, end, label(, score)]",
                    )
                )
            start, end = offsets(role[:2], "role")
            label = role[2]
            score = role[3] if len(role) == 4 else None
        if not isinstance(label, str) or not label:
            raise ValueError(
                Errors.E010.format(doc=_doc_name(doc), message=f"role {role!r} has no label")
            )
        roles.append([start, end, label] + _score(doc, score, f"role {role!r}"))
    roleset = frame.get("roleset")
    lemma = frame.get("lemma")
    data: FrameDict = {
        "predicate": [pstart, pend],
        "roleset": str(roleset) if roleset not in (None, "", "-") else None,
        "lemma": str(lemma) if lemma not in (None, "", "-") else None,
        "roles": roles,
    }
    for key in ("score", "roleset_score"):
        for value in _score(doc, frame.get(key), key):
            data[key] = value
    return data


def _score(doc: Doc, value: Any, what: str) -> List[float]:
    """``[value]`` as a probability, ``[]`` for None; E010 for anything else."""
    if value is None:
        return []
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(
            Errors.E010.format(
                doc=_doc_name(doc), message=f"{what}: score {value!r} is not in [0, 1]"
            )
        )
    return [float(value)]


def get_srl_frames(doc: Doc) -> List[SRLFrame]:
    """Build :class:`SRLFrame` objects from the doc's stored frames (``[]`` if none)."""
    data = doc._.srl_frame_data
    if not data:
        return []
    frames = []
    for item in data:
        # after msgpack round trips lists may come back as tuples: index, don't unpack types
        pstart, pend = int(item["predicate"][0]), int(item["predicate"][1])
        roles = [role_span(doc, r, item["predicate"]) for r in item.get("roles") or ()]
        frames.append(
            SRLFrame(
                predicate=Span(doc, pstart, pend, label="V"),
                roleset=item.get("roleset"),
                roles=roles,
                lemma=item.get("lemma"),
                score=item.get("score"),
                roleset_score=item.get("roleset_score"),
            )
        )
    return frames


def predicate_starts(doc: Doc) -> List[int]:
    """The first token of each stored frame's predicate (no ``Span`` made)."""
    return [int(item["predicate"][0]) for item in doc._.srl_frame_data or ()]


def set_srl_frames(
    doc: Doc,
    frames: Optional[Iterable[Union[SRLFrame, FrameDict]]],
    *,
    spans_key: Optional[str] = SRL_SPANS_KEY,
) -> None:
    """Store ``frames`` on ``doc`` (sorted by predicate position) and mirror every role
    span into ``doc.spans[spans_key]``, linked to its predicate (``span._.srl_predicate``;
    skip the mirror with ``spans_key=None``).
    ``frames=None`` marks the doc as carrying no SRL annotation at all, which is
    different from ``[]`` (annotated, no predicates)."""
    if frames is None:
        doc._.srl_frame_data = None
        if spans_key is not None and spans_key in doc.spans:
            del doc.spans[spans_key]
        return
    data = [normalize_frame_data(doc, f) for f in frames]
    data.sort(key=lambda f: (f["predicate"][0], f["predicate"][1]))
    doc._.srl_frame_data = data
    if spans_key is not None:
        spans = [role_span(doc, r, f["predicate"]) for f in data for r in f["roles"]]
        doc.spans[spans_key] = SpanGroup(doc, name=spans_key, spans=spans)


def has_sentences(doc: Doc) -> bool:
    """Whether ``doc`` has sentence boundaries (from a parser, a senter, a sentencizer
    or set by hand; a one-token doc always has). An empty doc has none."""
    return len(doc) > 0 and doc.has_annotation("SENT_START")


def doc_sentences(doc: Doc) -> List[Span]:
    """The doc's sentences, or the whole doc as one span when it has no sentence
    boundaries (``doc.sents`` would raise E030 there). An empty doc has none. The one
    definition of a doc's sentences: the scorers, the formats, the transformer's windows
    and the component's encoder windows (which fall back further, see
    ``pipeline.batching.Windower``) all read it."""
    if has_sentences(doc):
        return list(doc.sents)
    return [doc[:]] if len(doc) else []


def sentence_bounds(doc: Doc) -> List[Tuple[int, int]]:
    """``[start, end)`` of each of :func:`doc_sentences`."""
    return [(sent.start, sent.end) for sent in doc_sentences(doc)]


def has_srl_annotation(doc: Doc) -> bool:
    """True when the doc carries SRL annotation (possibly with zero frames)."""
    return doc._.srl_frame_data is not None


def get_srl_predicates(doc: Doc) -> Optional[List[int]]:
    value = doc.user_data.get(_PREDICATES_KEY)
    return None if value is None else [int(i) for i in value]


def set_srl_predicates(doc: Doc, value: Optional[Sequence[Union[int, Token, Span]]]) -> None:
    """Mark predicates for ``predicate_source="doc"``: token indices, Tokens or Spans
    (a Span marks its root token). ``None`` removes the marking."""
    if value is None:
        doc.user_data.pop(_PREDICATES_KEY, None)
        return
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ValueError(Errors.E011.format(value=value))
    indices = set()
    for item in value:
        if isinstance(item, Token):
            if item.doc is not doc:
                raise ValueError(Errors.E011.format(value=value))
            indices.add(item.i)
        elif isinstance(item, Span):
            if item.doc is not doc or len(item) == 0:
                raise ValueError(Errors.E011.format(value=value))
            indices.add(item.root.i if doc.has_annotation("DEP") else item.start)
        elif isinstance(item, int) and not isinstance(item, bool) and 0 <= item < len(doc):
            indices.add(int(item))
        else:
            raise ValueError(Errors.E011.format(value=value))
    doc.user_data[_PREDICATES_KEY] = sorted(indices)


def install_extensions() -> None:
    """Register the Doc and Span extensions once (guarded, never ``force=True``)."""
    if not Doc.has_extension("srl_frame_data"):
        Doc.set_extension("srl_frame_data", default=None)
    if not Doc.has_extension("srl_frames"):
        Doc.set_extension("srl_frames", getter=get_srl_frames, setter=set_srl_frames)
    if not Doc.has_extension("srl_predicates"):
        Doc.set_extension("srl_predicates", getter=get_srl_predicates, setter=set_srl_predicates)
    if not Doc.has_extension("srl_parse_source"):
        Doc.set_extension("srl_parse_source", default=None)
    if not Doc.has_extension("srl_parse"):
        Doc.set_extension("srl_parse", default=None)
    if not Doc.has_extension("srl_pos"):
        Doc.set_extension("srl_pos", default=None)
    if not Doc.has_extension("srl_label_attention"):
        Doc.set_extension("srl_label_attention", default=None)
    if not Span.has_extension("srl_predicate"):
        Span.set_extension("srl_predicate", getter=get_span_predicate)
    if not Span.has_extension("srl_score"):
        Span.set_extension("srl_score", getter=get_span_score)


# False where only some predicates of the Doc are annotated; absent means all are
PREDICATES_COMPLETE_KEY = "spacy_lisa.predicates_complete"


def predicates_complete(doc: Doc) -> bool:
    """Whether every predicate of ``doc`` is annotated in its gold frames, so that the
    words without a frame are gold non-predicates. False for Docs that
    ``spacy-lisa convert`` marks so (the PropBank frame-file examples annotate one
    predicate per sentence); True for every other Doc, and for Docs written before the
    key existed."""
    return doc.user_data.get(PREDICATES_COMPLETE_KEY, True) is not False


install_extensions()
