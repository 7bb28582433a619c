"""The msgpack codec cache (predict with worker processes, the training reader): one
registry scan, not one per serialised doc, and encoders registered later are still used."""

from __future__ import annotations

import subprocess
import sys
from typing import Any, Iterator

import catalogue
import pytest
import srsly
from srsly import msgpack as srsly_msgpack

from spacy_lisa.msgpack_codecs import cache_msgpack_codecs, uncached_msgpack_codecs


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
    for registry in (srsly_msgpack.msgpack_encoders, srsly_msgpack.msgpack_decoders):
        catalogue.REGISTRY.pop((*registry.namespace, "test_point"), None)
        cache = getattr(registry, "_spacy_lisa_cache", None)
        if cache is not None:
            cache.value = None


def test_building_lisa_srl_leaves_srsly_alone() -> None:
    """Building and running lisa_srl does not patch srsly (a fresh process: other tests
    here install the cache on purpose)."""
    code = (
        "import spacy, sys; sys.path.insert(0, 'tests');"
        "from srl_testing import TINY_MODEL;"
        "from srsly import msgpack as m;"
        "nlp = spacy.blank('en'); nlp.add_pipe('lisa_srl', config={'model': TINY_MODEL});"
        "nlp.make_doc('One two.').to_bytes();"
        "print(hasattr(m.msgpack_encoders, '_spacy_lisa_cache'),"
        " 'get_all' in vars(m.msgpack_encoders), 'get_all' in vars(m.msgpack_decoders))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    assert result.stdout.split() == ["False", "False", "False"]


@pytest.mark.parametrize("decorator", [False, True])
def test_codecs_registered_after_the_cache_are_used(point_codecs: None, decorator: bool) -> None:
    cache_msgpack_codecs()
    assert srsly.msgpack_loads(srsly.msgpack_dumps({"a": 1})) == {"a": 1}  # cache filled
    encoders, decoders = srsly_msgpack.msgpack_encoders, srsly_msgpack.msgpack_decoders
    if decorator:
        encoders.register("test_point")(encode_point)
        decoders.register("test_point")(decode_point)
    else:
        encoders.register("test_point", func=encode_point)
        decoders.register("test_point", func=decode_point)
    point = srsly.msgpack_loads(srsly.msgpack_dumps({"p": Point(3, 4)}))["p"]
    assert isinstance(point, Point) and (point.x, point.y) == (3, 4)


def test_cache_is_idempotent() -> None:
    cache_msgpack_codecs()
    first = srsly_msgpack.msgpack_encoders._spacy_lisa_cache  # type: ignore[attr-defined]
    cache_msgpack_codecs()
    assert srsly_msgpack.msgpack_encoders._spacy_lisa_cache is first  # type: ignore[attr-defined]
    # the wrapped lookup was not wrapped again
    assert first.uncached_get_all.__self__ is srsly_msgpack.msgpack_encoders


def test_uncached_block_restores_the_cache() -> None:
    cache_msgpack_codecs()
    encoders = srsly_msgpack.msgpack_encoders
    cache = encoders._spacy_lisa_cache  # type: ignore[attr-defined]
    with uncached_msgpack_codecs():
        assert encoders.get_all == cache.uncached_get_all
    assert encoders.get_all == cache.get_all


def test_the_training_reader_decodes_with_the_cache(tmp_path: Any) -> None:
    """spacy train reads every DocBin each epoch through spacy-lisa.SRLCorpus.v1: the
    reader installs the cache (a fresh process, so that no other test installed it)."""
    from spacy.tokens import Doc, DocBin
    from spacy.vocab import Vocab

    from spacy_lisa.frames import set_srl_frames

    doc = Doc(Vocab(), words=["John", "sold", "the", "car", "."])
    set_srl_frames(doc, [{"predicate": [1, 2], "roleset": "sell.01", "roles": [[0, 1, "ARG0"]]}])
    DocBin(docs=[doc], store_user_data=True).to_disk(tmp_path / "train.spacy")
    code = (
        "import spacy, sys;"
        "from srsly import msgpack as m;"
        "from spacy_lisa.corpus.readers import SRLCorpus;"
        f"egs = list(SRLCorpus({str(tmp_path / 'train.spacy')!r})(spacy.blank('en')));"
        "print(len(egs), hasattr(m.msgpack_decoders, '_spacy_lisa_cache'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    assert result.stdout.split() == ["1", "True"]
