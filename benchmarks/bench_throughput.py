"""CPU throughput of the project's CPU model (``configs/lisa_cpu.cfg``: spacy.Tok2Vec.v2
hash embeddings + spacy-lisa.LISA.v1), through the Thinc model as the component runs it.

    python benchmarks/bench_throughput.py [--config configs/lisa_cpu.cfg]
        [--batch-words 1000] [--batches 8]

Synthetic docs (random words, 10-40 tokens, 3 predicates each, random heads) in
batches of about --batch-words words. Figures, in words per second:

- forward: ``model.predict`` as at test time (own argmax parse; predicates given, so the
  role scorer's cost does not depend on what an untrained tagger happens to predict);
- forward + backward: ``begin_update`` with teacher forcing (given parse), ``lisa_loss``,
  backprop through LISA and the tok2vec, and an Adam update, i.e. one training step.

Label set sizes are those of an EWT-sized corpus: 60 joint POS/predicate tags, 50
dependency labels, 101 BIO role labels.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import List, Tuple

import numpy
import spacy
from machine import describe
from spacy.tokens import Doc
from spacy.util import load_config, registry
from thinc.api import Adam, Model, fix_random_seed

from spacy_lisa.models.loss import lisa_loss
from spacy_lisa.models.types import LisaBatch, LisaOutput, LisaTargets, LossWeights

N_TAGS, N_DEPS, N_ROLES = 60, 50, 101
PREDICATES_PER_DOC = 3

REPO = Path(__file__).resolve().parents[1]


def make_batches(n_batches: int, batch_words: int, seed: int = 0) -> List[LisaBatch]:
    rng = numpy.random.default_rng(seed)
    vocab = spacy.blank("en").vocab
    lexicon = [f"w{i}" for i in range(3000)] + [".", ",", "the", "of", "Ann", "USA"]
    batches = []
    for _ in range(n_batches):
        docs: List[Doc] = []
        while sum(len(doc) for doc in docs) < batch_words:
            length = int(rng.integers(10, 41))
            docs.append(
                Doc(vocab, words=[lexicon[i] for i in rng.integers(0, len(lexicon), length)])
            )
        batches.append(
            LisaBatch(
                docs=docs,
                windows=[[(0, len(doc))] for doc in docs],
                heads=[rng.integers(0, len(doc), len(doc)) for doc in docs],
                predicates=[
                    numpy.sort(rng.choice(len(doc), PREDICATES_PER_DOC, replace=False))
                    for doc in docs
                ],
                parse_mode="given",
            )
        )
    return batches


def random_targets(output: LisaOutput, rng: numpy.random.Generator) -> LisaTargets:
    S, T = output.head_scores.shape[:2]
    return LisaTargets(
        tags=rng.integers(0, N_TAGS, output.tag_scores.shape[0]),
        heads=rng.integers(0, T, (S, T)),
        deps=rng.integers(0, N_DEPS, (S, T)),
        roles=rng.integers(0, N_ROLES, output.role_scores.shape[:2]),
    )


def n_words(batch: LisaBatch) -> int:
    return sum(len(doc) for doc in batch.docs)


def time_predict(model: Model, batches: List[LisaBatch]) -> List[Tuple[int, float]]:
    results = []
    for batch in batches:
        test = LisaBatch(
            docs=batch.docs, windows=batch.windows, predicates=batch.predicates, parse_mode="argmax"
        )
        start = time.perf_counter()
        model.predict(test)
        results.append((n_words(batch), time.perf_counter() - start))
    return results


def time_train(model: Model, batches: List[LisaBatch], optimizer: Adam) -> List[Tuple[int, float]]:
    rng = numpy.random.default_rng(1)
    results = []
    for batch in batches:
        start = time.perf_counter()
        output, backprop = model.begin_update(batch)
        _, gradients = lisa_loss(model.ops, output, random_targets(output, rng), LossWeights())
        backprop(gradients)
        model.finish_update(optimizer)
        results.append((n_words(batch), time.perf_counter() - start))
    return results


def report(name: str, results: List[Tuple[int, float]]) -> None:
    words = sum(n for n, _ in results)
    seconds = sum(t for _, t in results)
    per_batch = [n / t for n, t in results]
    print(
        f"{name:<20} {words / seconds:>9,.0f} words/s overall, "
        f"median batch {statistics.median(per_batch):>9,.0f}, best batch {max(per_batch):>9,.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch-words", type=int, default=1000)
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument(
        "--config",
        type=Path,
        default=REPO / "configs" / "lisa_cpu.cfg",
        help="pipeline config whose [components.lisa_srl.model] is measured",
    )
    args = parser.parse_args()
    fix_random_seed(0)
    pipeline_config = load_config(args.config)
    model = registry.resolve({"model": pipeline_config["components"]["lisa_srl"]["model"]})["model"]
    print(f"model: [components.lisa_srl.model] of {args.config}")
    model.set_dim("n_tags", N_TAGS)
    model.set_dim("n_deps", N_DEPS)
    model.set_dim("n_roles", N_ROLES)
    model.attrs["predicate_tags"] = list(range(N_TAGS // 2, N_TAGS))
    warm_up, *batches = make_batches(args.batches + 1, args.batch_words)
    model.initialize(X=warm_up)
    optimizer = Adam(0.001)
    time_predict(model, [warm_up])
    time_train(model, [warm_up], optimizer)
    n_params = sum(p.numel() for p in model.get_ref("lisa").shims[0]._model.parameters())
    print(describe())
    print(
        f"{n_params / 1e6:.1f}M LISA torch parameters; "
        f"{len(batches)} batches of ~{args.batch_words} words, "
        f"{sum(len(b.docs) for b in batches) / len(batches):.0f} docs each"
    )
    report("forward", time_predict(model, batches))
    report("forward + backward", time_train(model, batches, optimizer))
    print(describe())


if __name__ == "__main__":
    main()
