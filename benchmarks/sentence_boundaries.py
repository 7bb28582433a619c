"""How well a pipeline splits raw text into sentences (BENCHMARKS.md, Raw text): precision,
recall and F1 of its sentence starts against EWT's on the dev documents' raw text.

Each gold document's text is rebuilt from its sentences as ``spacy-lisa evaluate --raw``
rebuilds it (:func:`spacy_lisa.scoring.raw_text.group_documents`), run through each
pipeline given (a tagger/parser pipeline such as ``training/parser/model-best``, or an
assembled ``lisa_srl`` pipeline: components after the parser are disabled), and each
predicted sentence start other than the document's first character is matched against
the gold starts by character offset. A false start cuts a gold sentence (and the roles
that span the cut); a missed one runs two sentences together.

    python benchmarks/sentence_boundaries.py training/parser/model-best [OTHER ...] \
        [--docs corpus/dev.docs.spacy]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import List, Set, Tuple

import spacy
from machine import describe
from spacy.tokens import DocBin

import spacy_lisa  # noqa: F401  (registers the factories an assembled pipeline needs)
from spacy_lisa.scoring.preset_sentences import SEGMENTER_FACTORIES
from spacy_lisa.scoring.raw_text import GoldDocument, group_documents

REPO = Path(__file__).resolve().parents[1]


def gold_starts(document: GoldDocument) -> Set[int]:
    """Character offsets of the document's sentence starts, its first one excluded."""
    return {start for start, _ in document.sentences if start > 0}


def predicted_starts(nlp: spacy.Language, documents: List[GoldDocument]) -> List[Set[int]]:
    segmenters = [
        name for name in nlp.pipe_names if nlp.get_pipe_meta(name).factory in SEGMENTER_FACTORIES
    ]
    keep = nlp.pipe_names[: nlp.pipe_names.index(segmenters[-1]) + 1] if segmenters else []
    disabled = [name for name in nlp.pipe_names if name not in keep]
    with nlp.select_pipes(disable=disabled):
        docs = nlp.pipe([d.text for d in documents], batch_size=16)
        return [{s.start_char for s in doc.sents if s.start_char > 0} for doc in docs]


def boundary_scores(gold: List[Set[int]], pred: List[Set[int]]) -> Tuple[float, float, float]:
    tp = sum(len(g & p) for g, p in zip(gold, pred, strict=True))
    n_pred = sum(len(p) for p in pred)
    n_gold = sum(len(g) for g in gold)
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pipelines", nargs="+", help="pipeline directories or package names")
    parser.add_argument("--docs", type=Path, default=REPO / "corpus" / "dev.docs.spacy")
    args = parser.parse_args()
    blank = spacy.blank("en")
    documents = group_documents(DocBin().from_disk(args.docs).get_docs(blank.vocab))
    gold = [gold_starts(d) for d in documents]
    print(f"{len(documents)} documents, {sum(len(g) for g in gold)} gold sentence starts")
    print(f"{'pipeline':50} {'P':>6} {'R':>6} {'F1':>6} {'starts':>7}")
    for path in args.pipelines:
        pred = predicted_starts(spacy.load(path), documents)
        p, r, f = boundary_scores(gold, pred)
        n_pred = sum(len(s) for s in pred)
        print(f"{path:50} {100 * p:6.2f} {100 * r:6.2f} {100 * f:6.2f} {n_pred:7d}")
    print(describe())


if __name__ == "__main__":
    main()
