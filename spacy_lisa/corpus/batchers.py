"""The training batcher ``spacy-lisa.shuffled_length_buckets.v1``: batches of similar
length, in random order.

spaCy's ``spacy.batch_by_padded.v1`` sorts each ``buffer`` of examples by length and cuts
it into batches of at most ``size`` padded words, then yields them longest first. A
small buffer leaves much padding (the batch of the shortest sentences of 256 spans lengths
1 to 15); a large one yields a long run of batches in length order, a curriculum nobody
asked for. This batcher takes spaCy's batches of a large buffer and shuffles their order
within it, so padding stays low and the batches stay in random order
(docs/benchmarks/training.md, "Where a training step's time goes").
"""

from __future__ import annotations

import random
from typing import Any, Callable, Iterable, Iterator, List, Optional

from spacy.training.batchers import Sizing, minibatch_by_padded_size
from spacy.util import registry


@registry.batchers("spacy-lisa.shuffled_length_buckets.v1")
def configure_shuffled_length_buckets(
    size: Sizing,
    buffer: int = 2048,
    discard_oversize: bool = True,
    get_length: Optional[Callable[[Any], int]] = None,
) -> Callable[[Iterable[Any]], Iterator[List[Any]]]:
    """Batches of at most ``size`` padded words (longest item x items), each cut from a
    length-sorted ``buffer`` of items and yielded in random order within it (Python's
    ``random``, which ``spacy train`` seeds). ``discard_oversize``: leave out an item
    longer than ``size`` instead of making it a batch of its own."""
    if buffer < 1:
        raise ValueError(f"buffer must be at least 1, got {buffer}")

    def batch(items: Iterable[Any]) -> Iterator[List[Any]]:
        batches = minibatch_by_padded_size(
            items,
            size,
            buffer=buffer,
            discard_oversize=discard_oversize,
            get_length=get_length or len,
        )
        pool: List[List[Any]] = []
        pooled = 0
        for one in batches:
            pool.append(one)
            pooled += len(one)
            if pooled >= buffer:
                yield from _shuffled(pool)
                pool, pooled = [], 0
        yield from _shuffled(pool)

    return batch


def _shuffled(pool: List[List[Any]]) -> List[List[Any]]:
    random.shuffle(pool)
    return pool
