"""Static word vectors that travel inside the component: ``spacy-lisa.MultiHashEmbed.v1``.

spaCy's ``MultiHashEmbed.v2`` with ``include_static_vectors`` reads the vectors of the
pipeline's shared ``vocab.vectors``: a ``lisa_srl`` trained that way breaks when it is
sourced into a pipeline with other vectors, or none (``IndexError`` in spaCy's
``StaticVectors``). Here the table is the embedding layer's own: its rows are a model
parameter (``V``, never updated: the layer passes no gradient to it) and its keys (the
hashes of the words, which are the same in every spaCy vocab) an attribute, both saved
with the component. It is copied at ``initialize`` from a pipeline with vectors (the
project's ``vectors`` step, or any that ``[initialize] vectors`` takes) or, if none is
named, from the training pipeline's own vectors; afterwards the pipeline's
``vocab.vectors`` are never read.
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple, Union, cast

import numpy
from spacy.attrs import ORTH
from spacy.tokens import Doc
from spacy.util import registry
from spacy.vectors import Vectors
from thinc.api import (
    HashEmbed,
    Maxout,
    Model,
    Ragged,
    chain,
    concatenate,
    list2ragged,
    ragged2list,
    with_array,
)
from thinc.initializers import glorot_uniform_init
from thinc.types import Floats2d, Ints2d

from ..device import to_host
from ..errors import Errors


@registry.architectures("spacy-lisa.MultiHashEmbed.v1")
def multi_hash_embed(
    width: int,
    attrs: List[Union[str, int]],
    rows: List[int],
    vectors: Optional[str] = None,
    include_static_vectors: bool = True,
) -> Model[List[Doc], List[Floats2d]]:
    """spaCy's ``MultiHashEmbed.v2`` (hash embeddings of ``attrs`` with ``rows`` rows each,
    mixed by a Maxout to ``width``) whose static vectors are the layer's own table
    (:func:`component_vectors`), loaded at ``initialize`` from ``vectors``, a pipeline with
    vectors as ``[initialize] vectors`` takes (or, if null, copied from the training
    pipeline's vectors).
    ``include_static_vectors = false`` leaves the table out (then spaCy's own
    ``MultiHashEmbed.v2`` is the same model)."""
    from spacy.ml.featureextractor import FeatureExtractor

    if len(rows) != len(attrs):
        raise ValueError(Errors.E173.format(n_rows=len(rows), n_attrs=len(attrs)))
    # the same seeds as spaCy's MultiHashEmbed.v2: one table per attribute
    embeddings: List[Model] = [
        HashEmbed(width, n_rows, column=i, seed=8 + i, dropout=0.0) for i, n_rows in enumerate(rows)
    ]
    concat_size = width * (len(embeddings) + include_static_vectors)
    max_out: Model[Ragged, Ragged] = with_array(
        Maxout(width, concat_size, nP=3, dropout=0.0, normalize=True)
    )
    features: Model[List[Doc], Ragged] = chain(
        FeatureExtractor(attrs),
        cast(Model[List[Ints2d], Ragged], list2ragged()),
        with_array(concatenate(*embeddings)),
    )
    if include_static_vectors:
        features = concatenate(features, component_vectors(width, vectors))
    return chain(features, max_out, ragged2list())


def component_vectors(nO: int, path: Optional[str] = None) -> Model[List[Doc], Ragged]:
    """Static vectors from the layer's own table (``V`` [n_rows, nM]; the sorted keys in
    ``attrs["keys"]``, the row of each in ``attrs["key_rows"]``, so that the cases of a word
    share one row), projected to ``nO`` by a learned ``W``. Words without a vector get a
    zero vector, as with spaCy's ``StaticVectors``."""
    return Model(
        "component_vectors",
        forward,
        init=init,
        params={"W": None, "V": None},
        # key_rows None: a layer saved before rows were shared holds a row per key
        attrs={"path": path, "keys": None, "key_rows": None},
        dims={"nO": nO, "nM": None},
    )


def init(
    model: Model[List[Doc], Ragged], X: Optional[List[Doc]] = None, Y: Optional[Ragged] = None
) -> None:
    """Copy the vectors table (from ``attrs["path"]``, else the docs' vocab) and
    initialise the projection."""
    path = model.attrs["path"]
    if path:
        # a pipeline with vectors, as [initialize] vectors takes (spacy init vectors, the
        # project's `vectors` step), or a package name
        from spacy.util import load_model

        table = load_model(path).vocab.vectors
        where = f"the vectors pipeline {path}"
    elif X:
        table = X[0].vocab.vectors
        where = "the training pipeline's vectors ([initialize] vectors)"
    else:
        raise ValueError(Errors.E174.format(where="no sample docs and no vectors path"))
    keys, rows = _key_rows(table)
    if not len(keys):
        raise ValueError(Errors.E174.format(where=f"{where}: the table is empty"))
    # on a GPU the vocab's table is a CuPy array (spacy train --gpu-id moves it there)
    data = numpy.asarray(to_host(table.data), dtype="float32")
    # only the rows some key uses (spaCy's table has spare rows), each once
    used, key_rows = numpy.unique(rows, return_inverse=True)
    order = numpy.argsort(keys)
    model.attrs["keys"] = keys[order]
    model.attrs["key_rows"] = key_rows[order]
    model.set_param("V", model.ops.asarray2f(data[used]))
    model.set_dim("nM", data.shape[1])
    model.set_param("W", glorot_uniform_init(model.ops, (model.get_dim("nO"), data.shape[1])))


def _key_rows(table: Vectors) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """(keys, rows) of every key of a spaCy vectors table."""
    pairs = list(table.key2row.items())
    keys = numpy.asarray([k for k, _ in pairs], dtype="uint64")
    rows = numpy.asarray([r for _, r in pairs], dtype="int64")
    return keys, rows


def forward(
    model: Model[List[Doc], Ragged], docs: List[Doc], is_train: bool
) -> Tuple[Ragged, Callable[[Ragged], List[Doc]]]:
    ops = model.ops
    lengths = ops.asarray1i([len(doc) for doc in docs])
    if not sum(len(doc) for doc in docs):
        return Ragged(ops.alloc2f(0, model.get_dim("nO")), lengths), lambda d: []
    keys = model.attrs["keys"]
    words = numpy.concatenate([doc.to_array(ORTH).astype("uint64") for doc in docs])
    found = numpy.minimum(numpy.searchsorted(keys, words), len(keys) - 1)
    key_rows = model.attrs["key_rows"]
    rows = found if key_rows is None else key_rows[found]
    rows = numpy.where(keys[found] == words, rows, -1)
    table: Any = model.get_param("V")
    V: Any = ops.as_contig(table[ops.xp.asarray(numpy.maximum(rows, 0))])
    V[ops.xp.asarray(rows < 0)] = 0  # no vector: a zero vector (and no gradient to W)
    W = cast(Floats2d, ops.as_contig(model.get_param("W")))
    output = ops.gemm(V, W, trans2=True)

    def backprop(d_output: Ragged) -> List[Doc]:
        # W learns; the table V stays as loaded (no gradient)
        model.inc_grad("W", ops.gemm(cast(Floats2d, d_output.data), V, trans1=True))
        return []

    return Ragged(output, lengths), backprop
