"""``spacy-lisa export DATA.spacy --output DIR``: the gold frames of a DocBin as a
CoNLL-2005 words file and props file (``DIR/words.txt``, ``DIR/props.txt``), e.g. the
gold side for ``srl-eval.pl``."""

from pathlib import Path
from typing import Annotated, List

import typer
from spacy.tokens import Doc
from spacy.vocab import Vocab
from wasabi import msg

from ..corpus.conll2005 import write_conll2005
from ..docbins import read_docs
from ..errors import Errors, UserError
from ..frames import doc_sentences, has_srl_annotation
from ._app import app
from ._io import Input, check_output_paths, check_writable, fail

WORDS_FILE = "words.txt"
PROPS_FILE = "props.txt"


def _spacy_files(path: Path) -> List[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*.spacy") if p.is_file())
    return [path]


@app.command("export")
def export_cli(
    data: Annotated[Path, typer.Argument(exists=True, help="A .spacy file or a folder of them")],
    output: Annotated[
        Path,
        typer.Option("--output", "-o", file_okay=False, help="Folder for words.txt and props.txt"),
    ],
    include_unannotated: Annotated[
        bool,
        typer.Option(
            "--include-unannotated",
            help="Also write docs without SRL annotation (as sentences without predicates)",
        ),
    ] = False,
) -> None:
    """Export the SRL frames of converted data in CoNLL-2005 format."""
    files = _spacy_files(data)
    if not files:
        fail(Errors.E041.format(path=data))
    outputs = [("--output", output / WORDS_FILE), ("--output", output / PROPS_FILE)]
    try:
        # before any work: neither file may be an input, and the folder must be writable
        check_output_paths(outputs, [Input("DATA", path) for path in files])
        check_writable("--output", output, folder=True)
    except UserError as err:
        fail(err)
    vocab = Vocab()
    docs: List[Doc] = []
    n_read = 0
    for path in files:
        try:
            # one empty DocBin among others has no docs to write, as before
            file_docs = read_docs(path, vocab, empty_ok=True)  # E002, E262
        except UserError as err:
            fail(err)
        for doc in file_docs:
            n_read += 1
            if include_unannotated or has_srl_annotation(doc):
                docs.append(doc)
    output.mkdir(parents=True, exist_ok=True)
    try:
        write_conll2005(docs, output / WORDS_FILE, output / PROPS_FILE)
    except ValueError as err:  # frames that CoNLL-2005 columns cannot hold
        fail(err)
    rows = [
        ("docs read", n_read),
        ("docs written", len(docs)),
        ("docs left out (no SRL annotation)", n_read - len(docs)),
        ("sentences", sum(len(doc_sentences(doc)) for doc in docs)),
        ("predicates", sum(len(doc._.srl_frames) for doc in docs)),
        ("argument spans", sum(len(f.roles) for doc in docs for f in doc._.srl_frames)),
    ]
    msg.table(rows, header=("", "count"), aligns=("l", "r"), divider=True, max_col=60)
    msg.good(f"Wrote {output / WORDS_FILE} and {output / PROPS_FILE}")
