"""Where a model's roleset (sense) errors come from (BENCHMARKS.md, Senses), on the
predicates it found: EWT dev with gold tokens and sentences, the model's own parse (what
``spacy-lisa evaluate MODEL DEV --parse model`` scores as ``srl_sense_acc``). Each
predicted predicate that starts where a gold predicate with a roleset starts falls in one
bucket:

- right: the predicted roleset is the gold one;
- wrong lemma: the predicted roleset's lemma part differs from the gold one's (the lemma
  chose the candidates), split by whether the gold roleset is a candidate of the gold
  lemma at all (if not, no lemma could have saved it);
- right lemma, wrong sense, gold roleset among the candidates (the classifier chose);
- right lemma, gold roleset not a candidate (never seen with that lemma in training).

Also printed: the accuracy if every found predicate took its gold lemma's most frequent
training roleset (the lemma-MFS baseline on the same predicates), and the commonest
confusions.

    python benchmarks/sense_errors.py training/lisa_cpu/model-best corpus/dev.spacy
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import spacy
from machine import describe
from spacy.tokens import DocBin

from spacy_lisa.loading import srl_component
from spacy_lisa.pipeline.senses import roleset_lemma
from spacy_lisa.scoring.gold_docs import gold_preproc_doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a trained pipeline with lisa_srl")
    parser.add_argument("dev", type=Path, help="gold data (.spacy), never trained on")
    parser.add_argument("--top", type=int, default=15, help="confusions to list")
    args = parser.parse_args()

    nlp = spacy.load(args.model)
    srl = srl_component(nlp)
    srl.parse_source = "model"
    candidates = srl.cfg.get("sense_candidates") or {}
    gold_docs = list(DocBin().from_disk(args.dev).get_docs(nlp.vocab))
    pred_docs = nlp.pipe((gold_preproc_doc(nlp.vocab, g) for g in gold_docs), batch_size=64)
    buckets: Counter = Counter()
    confusions: Counter = Counter()
    mfs_right = 0
    for gold, pred in zip(gold_docs, pred_docs, strict=True):
        gold_by_start = {f.predicate.start: f for f in gold._.srl_frames if f.roleset}
        for frame in pred._.srl_frames:
            gold_frame = gold_by_start.get(frame.predicate.start)
            if gold_frame is None:
                continue
            want, got = gold_frame.roleset, frame.roleset or ""
            want_lemma = roleset_lemma(want).lower()
            listed = candidates.get(want_lemma, [])
            mfs_right += int(bool(listed) and listed[0] == want)
            if got == want:
                buckets["right"] += 1
                continue
            confusions[(want, got)] += 1
            if roleset_lemma(got).lower() != want_lemma:
                reachable = "gold roleset a candidate of its lemma"
                buckets[f"wrong lemma ({reachable if want in listed else 'unreachable'})"] += 1
            elif want in listed:
                buckets["right lemma, wrong sense among the candidates"] += 1
            else:
                buckets["right lemma, gold roleset never seen with it"] += 1
    total = sum(buckets.values())
    print(f"found predicates with a gold roleset: {total}")
    for name, n in buckets.most_common():
        print(f"  {name:<62} {n:6d}  {100 * n / total:6.2f}%")
    print(f"  {'gold lemma + its most frequent roleset (oracle-lemma MFS)':<62} "
          f"{mfs_right:6d}  {100 * mfs_right / total:6.2f}%")  # fmt: skip
    print("commonest confusions (gold -> predicted):")
    for (want, got), n in confusions.most_common(args.top):
        print(f"  {n:4d}  {want} -> {got}")
    print(describe())


if __name__ == "__main__":
    main()
