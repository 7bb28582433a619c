"""Reading the ``.spacy`` files users pass to ``spacy-lisa evaluate`` and ``export``: a
file that is empty, not a DocBin, or a DocBin without documents is a numbered
:class:`~spacy_lisa.input_docs.UserError` naming the file, not spaCy's E1014 under a zlib
traceback or a later, misleading complaint about the docs."""

from __future__ import annotations

from pathlib import Path
from typing import List

from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from .errors import Errors, UserError

# what spaCy's DocBin raises on bytes it cannot decode: zlib (E1014, a ValueError), msgpack
# (ExtraData is a ValueError), or decoded data of the wrong shape
_DECODE_ERRORS = (ValueError, KeyError, TypeError, IndexError, AttributeError)
_DETAIL_CHARS = 120


def read_docs(path: Path, vocab: Vocab, *, empty_ok: bool = False) -> List[Doc]:
    """The docs of the DocBin at ``path`` (user data included) in ``vocab``. Raises
    UserError E002 (0 bytes), E262 (not a DocBin) or, unless ``empty_ok``, E263 (a DocBin
    without docs)."""
    path = Path(path)
    if path.is_file() and path.stat().st_size == 0:
        raise UserError(Errors.E002.format(path=path))
    try:
        docs = list(DocBin().from_disk(path).get_docs(vocab))
    except _DECODE_ERRORS as err:
        raise UserError(Errors.E262.format(path=path, detail=_detail(err))) from None
    if not docs and not empty_ok:
        raise UserError(Errors.E263.format(path=path))
    return docs


def _detail(err: Exception) -> str:
    """The first line of ``err``, at most :data:`_DETAIL_CHARS` characters."""
    if "[E1014]" in str(err):  # spaCy's advice (convert v2 JSON) rarely fits: say what it is
        return "its bytes are not DocBin data (spaCy's E1014)"
    lines = str(err).strip().splitlines()
    text = f"{type(err).__name__}: {lines[0]}" if lines else type(err).__name__
    return text if len(text) <= _DETAIL_CHARS else text[:_DETAIL_CHARS] + "..."


__all__ = ["read_docs"]
