"""The PropBank frame-file examples split by lemma and converted to two DocBins.

The held-out part is a deterministic share of the *lemmas* (:func:`heldout_lemmas`), so
every held-out example is of a lemma the training part never has: it measures roles and
senses on predicates a model trained on the other part has not seen. The examples come
from :func:`spacy_lisa.corpus.propbank_frames.read_frame_examples`, which counts what it
skips; :func:`convert_frames` writes both parts (one sentence per Doc, each Doc marked as
having its predicates incomplete).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection, Dict, Iterable, List, Set

from ..errors import Errors
from ._io import CorpusFormatError, PathLike
from .docbin import convert_to_docbin, read_docbin
from .frame_files import roleset_head_lemma
from .propbank_frames import FramesReport, read_frame_examples
from .records import SentenceRecord
from .stats import CorpusStats


def check_heldout_share(share: float) -> None:
    """Raise ``ValueError`` (E129) unless ``0 <= share < 1``."""
    if not 0.0 <= share < 1.0:
        raise ValueError(Errors.E129.format(share=share))


def heldout_lemmas(lemmas: Iterable[str], *, share: float, seed: int) -> Set[str]:
    """A deterministic ``share`` of the distinct ``lemmas`` (lower case): the sorted
    lemmas shuffled with ``random.Random(seed)``, the first ``round(share * n)`` of them
    (at least one where ``share > 0``). The same lemmas, share and seed always give the
    same part."""
    check_heldout_share(share)
    ordered = sorted({lemma.lower() for lemma in lemmas})
    random.Random(seed).shuffle(ordered)
    k = round(share * len(ordered))
    if share > 0 and ordered:
        k = max(k, 1)
    return set(ordered[:k])


def record_lemma(record: SentenceRecord) -> str:
    """The (lower-case) lemma of a frame-file record's predicate."""
    if not record.predicates:
        return ""
    return (record.predicates[0].lemma or "").lower()


@dataclass
class LemmaSplit:
    """Records split by lemma: no lemma of ``heldout`` is a lemma of ``train``."""

    train: List[SentenceRecord]
    heldout: List[SentenceRecord]
    heldout_lemmas: Set[str]

    @property
    def train_lemmas(self) -> Set[str]:
        return {record_lemma(r) for r in self.train}


def split_by_lemma(records: Iterable[SentenceRecord], *, share: float, seed: int) -> LemmaSplit:
    """The records split by their predicate's lemma (:func:`heldout_lemmas`), each part
    in the records' order."""
    records = list(records)
    held = heldout_lemmas((record_lemma(r) for r in records), share=share, seed=seed)
    train = [r for r in records if record_lemma(r) not in held]
    heldout = [r for r in records if record_lemma(r) in held]
    return LemmaSplit(train=train, heldout=heldout, heldout_lemmas=held)


def read_lemma_list(path: PathLike) -> Set[str]:
    """Lemmas (lower case) to exclude: from a ``.spacy`` file, the lemma and the
    roleset's head lemma of every gold frame; from any other file, one lemma per line
    (blank lines and ``#`` comments ignored)."""
    path = Path(path)
    lemmas: Set[str] = set()
    try:
        if path.suffix == ".spacy":
            for doc in read_docbin(path):
                for frame in doc._.srl_frame_data or ():
                    head = roleset_head_lemma(frame.get("roleset") or "")
                    lemmas.update(x.lower() for x in (frame.get("lemma"), head) if x)
        else:
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip() and not line.lstrip().startswith("#"):
                    lemmas.add(line.strip().lower())
    except (OSError, ValueError) as err:
        raise CorpusFormatError(
            Errors.E130.format(path=path, detail=err), path=path, line=None, reason="lemma_list"
        ) from None
    return lemmas


# --- the conversion ------------------------------------------------------------------------


def check_outputs(output: PathLike, heldout_output: PathLike) -> None:
    """Raise ``ValueError`` (E131) where both outputs are the same file."""
    if Path(output).resolve() == Path(heldout_output).resolve():
        raise ValueError(Errors.E131.format(path=output))


@dataclass
class FramesConversion:
    """What :func:`convert_frames` read (``report``), how it split the lemmas and what it
    wrote to each part (``train``, ``heldout``)."""

    report: FramesReport
    split: LemmaSplit
    train: CorpusStats
    heldout: CorpusStats
    heldout_share: float
    seed: int

    def to_dict(self) -> Dict[str, Any]:
        """The numbers for ``--stats-json``."""
        return {
            "frames": self.report.to_dict(),
            "heldout_share": self.heldout_share,
            "seed": self.seed,
            "train_lemmas": len(self.split.train_lemmas),
            "heldout_lemmas": sorted(self.split.heldout_lemmas),
            "train": self.train.to_dict(),
            "heldout": self.heldout.to_dict(),
        }


def convert_frames(
    frames_dir: PathLike,
    output: PathLike,
    heldout_output: PathLike,
    *,
    heldout_share: float = 0.1,
    seed: int = 0,
    exclude_lemmas: Collection[str] = (),
) -> FramesConversion:
    """Read the frame files' examples, hold out ``heldout_share`` of their lemmas
    (:func:`split_by_lemma`) and write the two parts as DocBins of one sentence per Doc.
    Raises :class:`CorpusFormatError` before writing anything where no file can be read
    (:func:`read_frame_examples`) or no example kept (E135)."""
    check_heldout_share(heldout_share)
    check_outputs(output, heldout_output)
    report = FramesReport()
    records = read_frame_examples(frames_dir, report=report, exclude_lemmas=exclude_lemmas)
    split = split_by_lemma(records, share=heldout_share, seed=seed)
    if report.examples_kept == 0:
        skipped = report.skipped_examples.most_common()
        reasons = ", ".join(f"{reason}: {n}" for reason, n in skipped) or "no <example>"
        message = Errors.E135.format(path=frames_dir, files=report.files_read, reasons=reasons)
        raise CorpusFormatError(message, path=frames_dir, line=None, reason="no_usable_example")
    train = convert_to_docbin(split.train, output, stats=CorpusStats(), skip_invalid=True)
    heldout = convert_to_docbin(
        split.heldout, heldout_output, stats=CorpusStats(), skip_invalid=True
    )
    return FramesConversion(report, split, train, heldout, heldout_share, seed)
