"""The msgpack codec cache (predict with worker processes, the training reader): one
registry scan, not one per serialised doc, encoders registered later are still used, and
srsly is as it was once the last block closes."""

from __future__ import annotations

from typing import Any, Iterator

import catalogue
import pytest
import srsly
from srsly import msgpack as srsly_msgpack

from spacy_lisa.patches import cached_msgpack_codecs, uncached_msgpack_codecs

REGISTRIES = (srsly_msgpack.msgpack_encoders, srsly_msgpack.msgpack_decoders)


class Point:
    def __init__(self, x: int, y: int) -> None:
        self.x, self.y = x, y


def encode_point(obj: Any, chain: Any = None) -> Any:
    if isinstance(obj, Point):
        return {"__point__": [obj.x, obj.y]}
    return obj if chain is None else chain(obj)


def decode_point(obj: Any, chain: Any = None) -> Any:
    if isinstance(obj, dict) and "__point__" in obj:
        return Point(*obj["__point__"])
    return obj if chain is None else chain(obj)


@pytest.fixture
def point_codecs() -> Iterator[None]:
    yield
    for registry in REGISTRIES:
        catalogue.REGISTRY.pop((*registry.namespace, "test_point"), None)


def cached() -> bool:
    """Whether srsly's registries answer from the cache (instance attributes shadowing
    catalogue's methods); False means srsly's own lookups."""
    shadowed = [{"get_all", "register"} & set(vars(registry)) for registry in REGISTRIES]
    assert shadowed[0] == shadowed[1]
    return bool(shadowed[0])


@pytest.mark.parametrize("decorator", [False, True])
def test_codecs_registered_after_the_cache_are_used(point_codecs: None, decorator: bool) -> None:
    with cached_msgpack_codecs():
        assert srsly.msgpack_loads(srsly.msgpack_dumps({"a": 1})) == {"a": 1}  # cache filled
        encoders, decoders = REGISTRIES
        if decorator:
            encoders.register("test_point")(encode_point)
            decoders.register("test_point")(decode_point)
        else:
            encoders.register("test_point", func=encode_point)
            decoders.register("test_point", func=decode_point)
        point = srsly.msgpack_loads(srsly.msgpack_dumps({"p": Point(3, 4)}))["p"]
        assert isinstance(point, Point) and (point.x, point.y) == (3, 4)


def test_the_cache_answers_from_one_lookup() -> None:
    with cached_msgpack_codecs():
        cache = REGISTRIES[0].get_all.__self__  # type: ignore[attr-defined]
        calls = []
        uncached = cache.uncached_get_all
        cache.uncached_get_all = lambda: calls.append(1) or uncached()
        for _ in range(3):
            srsly.msgpack_loads(srsly.msgpack_dumps({"a": 1}))
        assert len(calls) == 1


def test_blocks_nest_and_overlap_and_the_last_one_restores_srsly() -> None:
    assert not cached()
    first, second = cached_msgpack_codecs(), cached_msgpack_codecs()
    first.__enter__()
    installed = REGISTRIES[0].get_all
    second.__enter__()
    assert REGISTRIES[0].get_all == installed  # installed once, not wrapped again
    assert installed.__self__.uncached_get_all.__self__ is REGISTRIES[0]  # type: ignore[attr-defined]
    first.__exit__(None, None, None)  # closed out of order, as two readers' generators
    assert cached()
    second.__exit__(None, None, None)
    assert not cached()
    assert srsly.msgpack_loads(srsly.msgpack_dumps({"a": 1})) == {"a": 1}


def test_a_block_that_raises_restores_srsly() -> None:
    with pytest.raises(RuntimeError), cached_msgpack_codecs():
        assert cached()
        raise RuntimeError
    assert not cached()


def test_uncached_block_restores_the_cache() -> None:
    with cached_msgpack_codecs():
        encoders = REGISTRIES[0]
        cache = encoders.get_all.__self__  # type: ignore[attr-defined]
        with uncached_msgpack_codecs():
            assert encoders.get_all == cache.uncached_get_all
        assert encoders.get_all == cache.get_all
    with uncached_msgpack_codecs():  # outside any cached block: nothing to do
        assert not cached()
    assert not cached()


def test_the_training_reader_decodes_with_the_cache(tmp_path: Any) -> None:
    """spacy train reads every DocBin each epoch through spacy-lisa.SRLCorpus.v1: the
    cache is open while a read runs, and srsly is as it was once it has ended."""
    import spacy
    from spacy.tokens import Doc, DocBin
    from spacy.vocab import Vocab

    from spacy_lisa.corpus.readers import SRLCorpus
    from spacy_lisa.frames import set_srl_frames

    doc = Doc(Vocab(), words=["John", "sold", "the", "car", "."])
    set_srl_frames(doc, [{"predicate": [1, 2], "roleset": "sell.01", "roles": [[0, 1, "ARG0"]]}])
    DocBin(docs=[doc], store_user_data=True).to_disk(tmp_path / "train.spacy")
    examples = iter(SRLCorpus(tmp_path / "train.spacy")(spacy.blank("en")))
    assert not cached()
    next(examples)
    assert cached()  # the read is under way
    assert next(examples, None) is None
    assert not cached()
    examples = iter(SRLCorpus(tmp_path / "train.spacy")(spacy.blank("en")))
    next(examples)
    del examples  # a read given up half-way (its generator closed when dropped)
    assert not cached()
