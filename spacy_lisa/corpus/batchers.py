"""The training batcher ``spacy-lisa.shuffled_length_buckets.v1``: batches of similar
length, in random order.

spaCy's ``spacy.batch_by_padded.v1`` sorts each ``buffer`` of examples by length and cuts
it into batches of at most ``size`` padded words, then yields them longest first. A
small buffer leaves much padding (the batch of its shortest sentences spans a wide range
of lengths); a large one yields a long run of batches in length order, a curriculum
nobody asked for. This batcher cuts spaCy's batches from a large buffer and shuffles
their order within it, so padding stays low and the batches come in random order
(docs/benchmarks/training.md, "Where a training step's time goes").
"""

from __future__ import annotations

import itertools
import random
from typing import Any, Callable, Iterable, Iterator, List, Optional

from spacy.training.batchers import Sizing, minibatch_by_padded_size
from spacy.util import minibatch, registry

from ..errors import Errors


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
        raise ValueError(Errors.E459.format(buffer=buffer))

    length = get_length or len

    def batch(items: Iterable[Any]) -> Iterator[List[Any]]:
        sizes = itertools.repeat(size) if isinstance(size, int) else iter(size)
        for chunk in minibatch(items, size=buffer):
            target = next(sizes)
            batches = minibatch_by_padded_size(chunk, target, buffer=len(chunk), get_length=length)
            # spaCy's discard_oversize also drops every batch whose padded size is exactly
            # the target (its test is >=), and a large buffer makes many such batches. An
            # oversize item is always a batch of its own: that is what is left out here.
            kept = [
                one
                for one in batches
                if not (discard_oversize and len(one) == 1 and length(one[0]) > target)
            ]
            random.shuffle(kept)
            yield from kept

    return batch
