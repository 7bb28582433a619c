"""Where the raw-text score of a packaged pipeline goes (BENCHMARKS.md, Raw text): SRL F1
on EWT dev with gold tokens and gold sentences, with the pipeline's tokens and gold sentences
(the segmentation oracle: each gold sentence's text through the pipeline alone), and on
raw document text (the pipeline tokenises, segments and parses), one after the other,
``lisa_srl`` following the same parse in all three: the pipeline's parser
(``parse_source="auto"`` of an assembled pipeline) or, in a pipeline assembled with
``--parse-source model``, its own.

- gold sentences = ``spacy-lisa evaluate PIPELINE corpus/dev.spacy --parse doc`` (or
  ``--parse model``);
- oracle segmentation = ``evaluate_raw(nlp, documents, gold_sentences=True)``;
- raw text = ``spacy-lisa evaluate PIPELINE corpus/dev.docs.spacy --raw``.

The first step down is what tokenisation (and parsing sentences the pipeline tokenised)
costs, the second what sentence segmentation costs.

    python benchmarks/raw_text_gap.py training/pipelines/lisa_cpu \
        [--dev corpus/dev.spacy] [--docs corpus/dev.docs.spacy]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import spacy
from machine import describe
from spacy.tokens import DocBin

from spacy_lisa.evaluation import evaluate
from spacy_lisa.loading import srl_component
from spacy_lisa.scoring.raw_text import evaluate_raw

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pipeline", help="an assembled pipeline (scripts/assemble_pipeline.py)")
    parser.add_argument("--dev", type=Path, default=REPO / "corpus" / "dev.spacy")
    parser.add_argument(
        "--docs",
        type=Path,
        default=REPO / "corpus" / "dev.docs.spacy",
        help="the same data as whole documents (the texts users pass)",
    )
    parser.add_argument("--convention", default="strict", choices=["strict", "official"])
    args = parser.parse_args()

    rows = []
    nlp = spacy.load(args.pipeline)
    # the parse the pipeline's lisa_srl follows in nlp(text), in all three conditions: the
    # parser's ("auto" behind a parser), or its own (the transformer pipeline's "model")
    parse = "model" if srl_component(nlp).parse_source == "model" else "doc"
    gold = evaluate(args.pipeline, args.dev, parse=parse, convention=args.convention)
    rows.append((f"gold tokens, gold sentences ({parse} parse)", gold))
    docs = list(DocBin().from_disk(args.docs).get_docs(nlp.vocab))
    for name, oracle in (("pipeline tokens, gold sentences", True), ("raw text", False)):
        result = evaluate_raw(nlp, docs, convention=args.convention, gold_sentences=oracle)
        rows.append((name, result.to_scores()))
    print(f"{'condition':<46} {'P':>6} {'R':>6} {'F1':>6} {'pred F1':>8} {'sentences':>10}")
    for name, scores in rows:
        sentences = scores.get("n_pred_sentences", "")
        print(
            f"{name:<46} {100 * scores['srl_p']:6.2f} {100 * scores['srl_r']:6.2f} "
            f"{100 * scores['srl_f']:6.2f} {100 * scores['srl_pred_f']:8.2f} {sentences!s:>10}"
        )
    gap = 100 * (rows[0][1]["srl_f"] - rows[2][1]["srl_f"])
    segmentation = 100 * (rows[1][1]["srl_f"] - rows[2][1]["srl_f"])
    print(f"gap gold sentences -> raw text: {gap:.2f} F1, of which segmentation {segmentation:.2f}")
    print(describe())


if __name__ == "__main__":
    main()
