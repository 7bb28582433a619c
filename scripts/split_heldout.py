"""Split a converted DocBin into a training part and a held-out part, by document.

Training budgets and distillation settings are chosen on a held-out slice of the
*training* data, never on dev. A document goes to the held-out part when the CRC-32 of
its EWT document id (``spacy_lisa.doc_id``, written by ``spacy-lisa convert``) falls in
the held-out share, so the sentence-level and the document-level files of one corpus
split the same documents the same way, on every machine.

    python scripts/split_heldout.py corpus/train.spacy corpus/train_fit.spacy \
        corpus/train_heldout.spacy --share 0.1
"""

from __future__ import annotations

import zlib
from pathlib import Path

import spacy
import typer
from spacy.tokens import DocBin

from spacy_lisa.corpus.docbin import DOC_ID_KEY


def is_heldout(doc_id: str, share: float) -> bool:
    """True when the document ``doc_id`` belongs to the held-out share (stable hash)."""
    return zlib.crc32(doc_id.encode("utf8")) % 1000 < round(share * 1000)


def main(
    source: Path = typer.Argument(..., help="DocBin written by spacy-lisa convert"),
    fit_output: Path = typer.Argument(..., help="DocBin of the documents to train on"),
    heldout_output: Path = typer.Argument(..., help="DocBin of the held-out documents"),
    share: float = typer.Option(0.1, "--share", help="Share of documents held out (0-1)"),
) -> None:
    if not 0.0 < share < 1.0:
        raise typer.BadParameter(f"--share must be between 0 and 1, got {share}")
    nlp = spacy.blank("en")
    docs = list(DocBin().from_disk(source).get_docs(nlp.vocab))
    missing = [i for i, doc in enumerate(docs) if DOC_ID_KEY not in doc.user_data]
    if missing:
        raise SystemExit(
            f"{source}: {len(missing)} docs (first: #{missing[0]}) have no document id "
            f"({DOC_ID_KEY}); convert the corpus again with spacy-lisa convert ewt"
        )
    fit, heldout = DocBin(store_user_data=True), DocBin(store_user_data=True)
    doc_ids = {True: set(), False: set()}
    for doc in docs:
        held = is_heldout(doc.user_data[DOC_ID_KEY], share)
        (heldout if held else fit).add(doc)
        doc_ids[held].add(doc.user_data[DOC_ID_KEY])
    if not len(fit) or not len(heldout):
        raise SystemExit(
            f"{source}: {len(doc_ids[False] | doc_ids[True])} documents give "
            f"{len(doc_ids[False])} to train on and {len(doc_ids[True])} held out at "
            f"--share {share}: both need at least one. Use more data or another share."
        )
    fit.to_disk(fit_output)
    heldout.to_disk(heldout_output)
    print(
        f"{source}: {len(fit)} docs ({len(doc_ids[False])} documents) -> {fit_output}, "
        f"{len(heldout)} docs ({len(doc_ids[True])} documents) -> {heldout_output}"
    )


if __name__ == "__main__":
    typer.run(main)
