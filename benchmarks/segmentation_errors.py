"""Which sentence segmentation errors cost a pipeline's raw-text SRL F1 (BENCHMARKS.md,
Raw text): its missed sentence starts (two sentences run together) or its false ones (a
sentence cut).

Each gold document's text goes through the pipeline whole, as in ``spacy-lisa evaluate
--raw``, four ways; just before its segmenter (the parser), the gold sentence starts are
preset where the condition says, and the segmenter decides the rest:

- ``pipeline``: nothing preset (the raw-text figure);
- ``no missed starts``: every gold start preset (only the pipeline's false starts left);
- ``no false starts``: every token that is not a gold start preset as none (only its
  missed starts left);
- ``gold starts``: both (the segmentation of the gold sentences, in document context).

What a kind of error costs is the gain of the row without it over the first row.

    python benchmarks/segmentation_errors.py training/pipelines/lisa_trf \
        [--docs corpus/dev.docs.spacy]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable, List, Optional, Set

import spacy
from machine import describe
from sentence_boundaries import boundary_scores, gold_starts
from spacy.tokens import Doc, DocBin

from spacy_lisa.raw_evaluation import (
    GoldDocument,
    Prediction,
    RawEvaluation,
    group_documents,
    pipe_with_preset_starts,
    score_document,
)

REPO = Path(__file__).resolve().parents[1]

# (name, value preset on a gold start, value preset elsewhere); None: the segmenter's call
CONDITIONS = (
    ("pipeline", None, None),
    ("no missed starts", True, None),
    ("no false starts", None, False),
    ("gold starts", True, False),
)


def presetter(
    documents: List[GoldDocument], on_gold: Optional[bool], elsewhere: Optional[bool]
) -> Callable[[Doc, int], Doc]:
    starts: List[Set[int]] = [{start for start, _ in d.sentences} for d in documents]

    def preset(doc: Doc, i: int) -> Doc:
        for token in doc[1:]:
            token.is_sent_start = on_gold if token.idx in starts[i] else elsewhere
        return doc

    return preset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pipeline", help="an assembled pipeline (scripts/assemble_pipeline.py)")
    parser.add_argument("--docs", type=Path, default=REPO / "corpus" / "dev.docs.spacy")
    args = parser.parse_args()
    nlp = spacy.load(args.pipeline)
    docs = DocBin().from_disk(args.docs).get_docs(nlp.vocab)
    documents = [d for d in group_documents(docs) if d.scored]
    gold = [gold_starts(d) for d in documents]
    n_gold = sum(len(starts) for starts in gold)
    print(f"{len(documents)} documents, {n_gold} gold sentence starts after the first")
    print(f"{'condition':<18} {'P':>6} {'R':>6} {'F1':>6} {'gain':>6}   sentence starts P / R")
    baseline = None
    for name, on_gold, elsewhere in CONDITIONS:
        texts = (d.text for d in documents)
        preset = presetter(documents, on_gold, elsewhere)
        result = RawEvaluation()
        pred = []
        for document, doc in zip(
            documents, pipe_with_preset_starts(nlp, texts, preset, batch_size=64), strict=True
        ):
            score_document(document, Prediction.from_docs([doc], document.text), result)
            pred.append({sent.start_char for sent in doc.sents if sent.start_char > 0})
        start_p, start_r, _ = boundary_scores(gold, pred)
        scores = result.to_scores()
        f1 = 100 * scores["srl_f"]
        baseline = f1 if baseline is None else baseline
        print(
            f"{name:<18} {100 * scores['srl_p']:6.2f} {100 * scores['srl_r']:6.2f} {f1:6.2f} "
            f"{f1 - baseline:6.2f}   {100 * start_p:6.2f} / {100 * start_r:6.2f}",
            flush=True,
        )
    print(describe())


if __name__ == "__main__":
    main()
