"""Rolesets (senses), lemmas and predicate UPOS of ``lisa_srl``'s frames.

The LISA model has one classifier over every roleset seen in training, one over the edit
trees that turn a predicate's form into its PropBank lemma (the frame-file lemma, e.g.
"suck" for "sucked up", "decide" where a nominal predicate uses a verb's frame) and one
over the predicate's UPOS. This module collects their labels from gold frames, turns gold
into class indices for training, and decodes a frame's lemma and roleset:

- the lemma is the edit tree's output (the model's own lemmatiser); without that
  classifier, the doc's ``lemma_`` (a lemmatiser earlier in the pipeline), else the
  lower-cased form;
- the roleset is the best-scoring roleset among the *candidates of the lemma* (rolesets
  seen with that lemma in training, plus those of PropBank frame files when the
  component was initialised with them); a lemma with no scored candidate backs off to
  its frame files' first roleset, else ``lemma.01``.
"""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    FrozenSet,
    List,
    Optional,
    Sequence,
    Tuple,
)

import numpy as np

from ..corpus.frame_files import (
    MAX_ROLESET_ID_CHARS,
    ROLESET_ID,
    UnusableFrameFile,
    frame_file_paths,
    no_usable_file_message,
    parse_frame_file,
    roleset_head_lemma,
)
from ..errors import Errors, Warnings

if TYPE_CHECKING:
    from spacy.strings import StringStore
    from spacy.tokens import Doc

    from ..frames import SRLFrame


def roleset_lemma(roleset: str) -> str:
    """``"pick_up.01"`` -> ``"pick_up"`` (the part before the sense number)."""
    match = ROLESET_ID.match(roleset)
    return match.group("lemma") if match else roleset


def gold_lemma(frame: SRLFrame) -> str:
    """The lemma a gold frame's roleset is looked up under: its frame-file lemma, else
    the predicate token's ``lemma_``, else the lower-cased form (always lower case)."""
    first = frame.predicate[0]
    return (frame.lemma or first.lemma_ or first.text).lower()


class FrameLabelCollector:
    """Counts rolesets per lemma, lemma edit trees and predicate UPOS over gold frames."""

    def __init__(self, strings: StringStore) -> None:
        self.strings = strings
        self.candidates: Dict[str, Counter] = defaultdict(Counter)
        self.trees: Counter = Counter()  # (form, lemma) pairs
        self.pos: Counter = Counter()

    def add(self, frame: SRLFrame) -> None:
        lemma = gold_lemma(frame)
        first = frame.predicate[0]
        if frame.roleset:
            self.candidates[lemma][frame.roleset] += 1
            # the UD lemma too, so a doc lemmatiser's lemma finds the same candidates
            if first.lemma_ and first.lemma_.lower() != lemma:
                self.candidates[first.lemma_.lower()][frame.roleset] += 1
        self.trees[(first.text.lower(), lemma)] += 1
        if first.pos_:
            self.pos[first.pos_] += 1

    def label_data(self, *, min_tree_freq: int) -> Dict[str, Any]:
        from spacy.pipeline._edit_tree_internals.edit_trees import EditTrees

        senses = sorted({r for counts in self.candidates.values() for r in counts})
        # one representative (form, lemma) pair per edit tree seen min_tree_freq times;
        # re-adding the pairs in this order rebuilds the same trees (see LemmaTrees)
        trees = EditTrees(self.strings)
        tree_counts: Counter = Counter()
        example: Dict[int, Tuple[str, str]] = {}
        for (form, lemma), n in sorted(self.trees.items()):
            tree = trees.add(form, lemma)
            tree_counts[tree] += n
            example.setdefault(tree, (form, lemma))
        frequent = [t for t, n in tree_counts.most_common() if n >= min_tree_freq]
        return {
            "senses": senses,
            "sense_candidates": {
                lemma: [r for r, _ in counts.most_common()]
                for lemma, counts in sorted(self.candidates.items())
            },
            "lemma_trees": [list(example[t]) for t in frequent],
            "pred_pos_labels": sorted(self.pos),
        }


class LemmaTrees:
    """The lemma classes of a component: edit trees rebuilt from their saved
    representative (form, lemma) pairs, in class order."""

    def __init__(self, strings: StringStore, pairs: Sequence[Sequence[str]]) -> None:
        from spacy.pipeline._edit_tree_internals.edit_trees import EditTrees

        self.trees = EditTrees(strings)
        self.tree_ids = [self.trees.add(form, lemma) for form, lemma in pairs]
        self.class_of = {tree: i for i, tree in enumerate(self.tree_ids)}

    def __len__(self) -> int:
        return len(self.tree_ids)

    def target(self, form: str, lemma: str) -> int:
        """Class of the edit tree form -> lemma, -1 if it is not a class (masked)."""
        return self.class_of.get(self.trees.add(form.lower(), lemma), -1)

    def lemmas(self, scores: np.ndarray, form: str, k: int = 5) -> List[str]:
        """The lemmas of the ``k`` best-scoring trees that apply to ``form``, best first,
        without repeats."""
        form = form.lower()
        ranked: List[str] = []
        for tree in top_k(scores, k):
            lemma = self.trees.apply(self.tree_ids[int(tree)], form)
            if lemma and lemma not in ranked:
                ranked.append(lemma)
        return ranked


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` highest ``scores``, highest first, ties in index order:
    exactly ``np.argsort(-scores, kind="stable")[:k]``, without sorting every class (a
    full sort per predicted frame was ~3% of ``nlp.pipe`` on lisa_cpu)."""
    n = len(scores)
    if n <= k:
        return np.argsort(-scores, kind="stable")
    threshold = np.partition(scores, n - k)[n - k]  # the k-th highest value
    candidates = np.flatnonzero(scores >= threshold)  # ties at the threshold included
    return candidates[np.argsort(-scores[candidates], kind="stable")][:k]


def roleset_particles(roleset: str) -> Tuple[str, ...]:
    """The particle words of a phrasal roleset: ``"pick_up.01"`` -> ``("up",)``,
    ``"look_forward_to.01"`` -> ``("forward", "to")``, ``"pick.01"`` -> ``()``."""
    return tuple(roleset_lemma(roleset).split("_")[1:])


# a phrasal roleset's particles must stand among the predicate's tokens and the next
# PARTICLE_REACH tokens ("pick [the kids] up"): on EWT train, 3 keeps 97.3% of the gold
# phrasal rolesets (791 of 813) and rules phrasal candidates out for 97.5% of the frames
# whose gold roleset is plain
PARTICLE_REACH = 3
PARTICLE_DEP = "compound:prt"  # UD's verb particle ("picked up": up <-compound:prt- picked)


@dataclass(frozen=True)
class PredicateContext:
    """What a predicate's rolesets are checked against: the lower-cased words from the
    predicate to ``PARTICLE_REACH`` tokens after it (within its window), and the words
    of its particle dependents (``compound:prt``) in the parse it followed."""

    nearby: FrozenSet[str]
    particles: FrozenSet[str]

    @classmethod
    def of(
        cls, doc: Doc, predicate: Tuple[int, int], window_end: int, parse: Optional[Dict[str, Any]]
    ) -> PredicateContext:
        start, end = predicate
        nearby = frozenset(t.lower_ for t in doc[start : min(window_end, end + PARTICLE_REACH)])
        particles: FrozenSet[str] = frozenset()
        if parse is not None:
            particles = frozenset(
                doc[i].lower_
                for i in range(start + 1, window_end)
                if parse["heads"][i] == start and parse["deps"][i] == PARTICLE_DEP
            )
        return cls(nearby, particles)


class SenseDecoder:
    """Chooses a roleset among the candidates of a lemma from the sense scores."""

    def __init__(self, senses: Sequence[str], candidates: Dict[str, List[str]]) -> None:
        self.senses = list(senses)
        index = {s: i for i, s in enumerate(self.senses)}
        self.candidates = candidates
        # scored candidates per lemma (indices into the sense classifier)
        self.scored = {
            lemma: np.asarray([index[r] for r in rolesets if r in index], dtype="int64")
            for lemma, rolesets in candidates.items()
        }
        self.particles = [frozenset(roleset_particles(s)) for s in self.senses]

    def has_candidates(self, lemma: str) -> bool:
        return len(self.scored.get(lemma, ())) > 0

    def decode(
        self, scores: Optional[np.ndarray], lemma: str, context: Optional[PredicateContext] = None
    ) -> Tuple[str, Optional[float]]:
        """The roleset of a predicate with this lemma (scores [n_senses] or None) and its
        probability among the candidates it was chosen from (None where no classifier
        chose it: the frame files' first roleset, or ``lemma.01``).

        With a ``context``, a phrasal roleset ("pick_up.01") is a candidate only when its
        particles stand near the predicate, and when the predicate has particle
        dependents, the phrasal rolesets with those particles are preferred (the
        classifier still chooses among them; if the rules leave no candidate, all of
        the lemma's are kept)."""
        scored = self.scored.get(lemma)
        if scores is not None and scored is not None and len(scored):
            if context is not None:
                scored = self._in_context(scored, context)
            candidate = np.asarray(scores[scored], dtype=np.float64)
            best = int(np.argmax(candidate))
            probability = 1.0 / float(np.exp(candidate - candidate[best]).sum())
            return self.senses[int(scored[best])], probability
        listed = self.candidates.get(lemma)
        if listed:  # frame files only, or no sense scores: the first listed roleset
            return listed[0], None
        return f"{lemma}.01", None

    def _in_context(self, scored: np.ndarray, context: PredicateContext) -> np.ndarray:
        near = [i for i in scored.tolist() if self.particles[i] <= context.nearby]
        if context.particles:
            wanted = context.particles
            preferred = [i for i in near if self.particles[i] and self.particles[i] <= wanted]
            near = preferred or near
        return np.asarray(near, dtype="int64") if near else scored


def frame_lemma(
    doc: Doc,
    start: int,
    lemma_scores: Optional[np.ndarray],
    trees: Optional[LemmaTrees],
    known: Optional[Callable[[str], bool]] = None,
) -> str:
    """The lemma of the predicate starting at token ``start`` (lower case): the best edit
    tree's output, else the doc's ``lemma_``, else the lower-cased form.

    ``known`` (lemma -> has rolesets): prefer a lemma with rolesets, in this order: the
    best tree's, the doc lemmatiser's, the next trees' (up to the fifth), the form. The
    edit-tree head sometimes writes a non-word ("afflicte", "complet") where its second
    choice is right; such a lemma finds no roleset and the frame would fall back to
    "afflicte.01". Where none has rolesets (a lemma unseen in training), the doc
    lemmatiser's lemma, trained on every token, is the better guess for "lemma.01"."""
    token = doc[start]
    ranked: List[str] = []
    if lemma_scores is not None and trees is not None and len(trees):
        ranked = [lemma.lower() for lemma in trees.lemmas(lemma_scores, token.text)]
    first = ranked[0] if ranked else (token.lemma_ or token.text).lower()
    if known is not None and not known(first):
        doc_lemma = [token.lemma_.lower()] if token.lemma_ else []
        for lemma in doc_lemma + ranked[1:] + [token.text.lower()]:
            if known(lemma):
                return lemma
        return doc_lemma[0] if doc_lemma else first
    return first


def add_frame_file_candidates(candidates: Dict[str, List[str]], frames_dir: str) -> int:
    """Extend ``candidates`` (lemma -> rolesets, in place) with the rolesets of the
    PropBank frame files (``*.xml``, any case) in ``frames_dir``: a roleset ``sell.01`` is
    a candidate of the lemma ``sell``, ``pick_up.01`` of ``pick`` (the word a phrasal
    roleset is the lemma of, as in the training data's candidates). A file that cannot
    be used (not well-formed XML, as one file of real releases; an unsupported encoding;
    a link to nothing; a folder named ``x.xml``, ...) is left out with one warning that
    counts them by reason. Returns the number of rolesets read.

    A bad ``frames_dir`` (missing, not a folder, no frame file in it or none usable)
    raises ``ConfigValidationError`` (E028, E136, E134), which ``spacy train`` prints
    without a traceback."""
    from thinc.api import ConfigValidationError

    path = Path(frames_dir)
    try:
        files = frame_file_paths(path) if path.is_dir() else []
    except OSError as err:
        message = Errors.E136.format(path=frames_dir, detail=err.strerror or err)
        raise ConfigValidationError(title=message, desc="") from None
    if not files:
        raise ConfigValidationError(title=Errors.E028.format(path=frames_dir), desc="")
    n = 0
    skipped: List[Tuple[str, str, str]] = []  # name, reason, detail
    for file in files:
        try:
            root = parse_frame_file(file)
        except UnusableFrameFile as err:
            skipped.append((file.name, err.reason, err.detail))
            continue
        for roleset in root.iter("roleset"):
            name = roleset.get("id")
            # a defect: a real id has a few dozen characters
            if not name or len(name) > MAX_ROLESET_ID_CHARS:
                continue
            lemma = roleset_head_lemma(name)
            if lemma is None:  # not lemma.sense: no lemma to list it under
                continue
            listed = candidates.setdefault(lemma.lower(), [])
            if name not in listed:
                listed.append(name)
                n += 1
    if len(skipped) == len(files):
        message = no_usable_file_message(frames_dir, len(files), skipped)
        raise ConfigValidationError(title=message, desc="")
    if skipped:
        _warn_skipped_frame_files(skipped, len(files), frames_dir)
    return n


# the skipped frame files a warning names; the rest are counted
MAX_FILES_NAMED = 5


def _warn_skipped_frame_files(
    skipped: List[Tuple[str, str, str]], total: int, frames_dir: str
) -> None:
    """W006 with the skipped files counted by reason and the first few named."""
    reasons = Counter(reason for _, reason, _ in skipped)
    named = [f"{name} ({detail})" for name, _, detail in skipped[:MAX_FILES_NAMED]]
    if len(skipped) > MAX_FILES_NAMED:
        named.append(f"and {len(skipped) - MAX_FILES_NAMED} more")
    warnings.warn(
        Warnings.W006.format(
            n=len(skipped),
            total=total,
            path=frames_dir,
            reasons=", ".join(f"{reason}: {k}" for reason, k in reasons.most_common()),
            files="; ".join(named),
        ),
        stacklevel=3,
    )


# UPOS of a PTB tag, for predicate_pos when neither the doc nor the model gives a UPOS
# (pipelines saved before the predicate UPOS classifier); VB* may also be AUX in UD
_PTB_TO_UPOS = {"VB": "VERB", "MD": "AUX", "NN": "NOUN", "JJ": "ADJ"}


def ptb_upos(tag: str) -> str:
    """A UPOS for a PTB tag where no better one is known (VB* -> VERB, MD -> AUX, ...)."""
    return _PTB_TO_UPOS.get(tag[:2], "X")
