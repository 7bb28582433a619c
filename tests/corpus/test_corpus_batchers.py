"""spacy-lisa.shuffled_length_buckets.v1: spaCy's padded batches cut from a large
length-sorted buffer, yielded in random order."""

import random
from collections import Counter

import pytest
from spacy.training.batchers import minibatch_by_padded_size
from spacy.util import registry

from spacy_lisa.corpus.batchers import configure_shuffled_length_buckets


def _items(n, seed=0):
    """Sentences as lists of their length, EWT-like: many short, a long tail."""
    rng = random.Random(seed)
    return [[i] * max(1, min(120, int(rng.lognormvariate(2.7, 0.7)))) for i in range(n)]


def _padding(batches):
    real = sum(len(item) for batch in batches for item in batch)
    padded = sum(len(batch) * max(len(item) for item in batch) for batch in batches)
    return 1 - real / padded


def test_every_item_comes_once_and_no_batch_is_over_the_size():
    items = _items(3000)
    batches = list(configure_shuffled_length_buckets(size=400, buffer=512)(items))
    assert all(len(batch) * max(len(item) for item in batch) <= 400 for batch in batches)
    # oversize items (none here: the longest is 120) aside, each item exactly once
    assert Counter(item[0] for batch in batches for item in batch) == Counter(range(3000))


def test_an_item_longer_than_the_size_is_left_out_or_kept_alone():
    items = [[0] * 5, [1] * 50, [2] * 6]
    kept = configure_shuffled_length_buckets(size=20, buffer=8, discard_oversize=False)(items)
    assert sorted(len(b[0]) for b in kept if len(b) == 1 and len(b[0]) == 50) == [50]
    dropped = configure_shuffled_length_buckets(size=20, buffer=8)(items)
    assert all(len(item) < 50 for batch in dropped for item in batch)


def test_batches_come_in_random_order_within_the_buffer_and_follow_the_seed():
    items = _items(2048)
    random.seed(1)
    batches = list(configure_shuffled_length_buckets(size=400, buffer=2048)(items))
    longest = [max(len(item) for item in batch) for batch in batches]
    # spaCy's own order within a buffer is longest first
    assert longest != sorted(longest, reverse=True)
    assert longest != sorted(longest)
    random.seed(1)
    again = list(configure_shuffled_length_buckets(size=400, buffer=2048)(items))
    assert again == batches


def test_a_large_buffer_pads_far_less_than_spacys_default_one():
    items = _items(4000)
    ours = list(configure_shuffled_length_buckets(size=1500, buffer=2048)(items))
    spacys = list(minibatch_by_padded_size(items, 1500, buffer=256, discard_oversize=True))
    assert _padding(ours) < 0.1 < 0.2 < _padding(spacys)


def test_it_is_found_by_name_as_a_config_does():
    config = {"batcher": {"@batchers": "spacy-lisa.shuffled_length_buckets.v1", "size": 100}}
    batcher = registry.resolve(config)["batcher"]
    assert sum(len(batch) for batch in batcher(_items(50))) == 50


def test_an_empty_buffer_is_refused_with_its_error():
    with pytest.raises(ValueError, match="E459"):
        configure_shuffled_length_buckets(size=100, buffer=0)
