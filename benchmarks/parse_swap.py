"""How much of a ``lisa_srl`` model's loss from the gold parse to its own is the parse's
accuracy (BENCHMARKS.md, Accuracy): the roles of one model (ROLES) over the own parse of
another (PARSE), on gold words and gold sentences, beside ROLES over its own parse.

``spacy-lisa evaluate --parse doc --parser`` takes a spaCy parser's parse; this takes the
parse a ``lisa_srl`` model predicts for itself (``overwrite_parse``), e.g. the single
pass's (UAS about 89.6 on EWT dev) under the predicate-aware model's role layers.

    python benchmarks/parse_swap.py training/lisa_trf/model-best \
        training/lisa_trf_marked/model-best [--data corpus/dev.spacy]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Dict, List

import spacy
from machine import describe
from spacy.language import Language
from spacy.tokens import DocBin
from spacy.training import Example

from spacy_lisa.evaluation import gold_preproc_doc, with_parse

REPO = Path(__file__).resolve().parents[1]


def scores(nlp: Language, examples: List[Example]) -> Dict[str, float]:
    result = nlp.evaluate(examples, batch_size=64)
    return {k: result[k] for k in ("srl_f", "srl_p", "srl_r", "srl_pred_f", "srl_uas")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("parse", help="the lisa_srl model whose own parse is used")
    parser.add_argument("roles", help="the lisa_srl model whose roles are scored")
    parser.add_argument("--data", type=Path, default=REPO / "corpus" / "dev.spacy")
    args = parser.parse_args()
    own = {"components": {"lisa_srl": {"parse_source": "model", "overwrite_parse": True}}}
    parse_nlp = spacy.load(args.parse, config=own)
    roles_own = spacy.load(
        args.roles, config={"components": {"lisa_srl": {"parse_source": "model"}}}
    )
    roles_doc = spacy.load(args.roles, config={"components": {"lisa_srl": {"parse_source": "doc"}}})
    gold = list(DocBin().from_disk(args.data).get_docs(roles_doc.vocab))
    parsed = list(
        parse_nlp.pipe((gold_preproc_doc(parse_nlp.vocab, g) for g in gold), batch_size=64)
    )
    rows = {
        "ROLES over its own parse": scores(
            roles_own, [Example(gold_preproc_doc(roles_own.vocab, g), g) for g in gold]
        ),
        "ROLES over PARSE's own parse": scores(
            roles_doc,
            [
                Example(with_parse(roles_doc.vocab, g, p), g)
                for g, p in zip(gold, parsed, strict=True)
            ],
        ),
    }
    print(f"{'condition':<32} {'F1':>6} {'P':>6} {'R':>6} {'pred F1':>8} {'UAS':>6}")
    for name, s in rows.items():
        print(
            f"{name:<32} {100 * s['srl_f']:6.2f} {100 * s['srl_p']:6.2f} {100 * s['srl_r']:6.2f} "
            f"{100 * s['srl_pred_f']:8.2f} {100 * s['srl_uas']:6.2f}"
        )
    print(describe())


if __name__ == "__main__":
    main()
