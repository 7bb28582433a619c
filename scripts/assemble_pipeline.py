"""Assemble the pipeline users load for raw text: the project's UD tagger, morphologizer,
parser and lemmatizer (which also split sentences), or its senter and lemmatizer
(configs/senter.cfg), in front of a trained ``lisa_srl``, with the EWT-style tokenizer
(and ``lisa_split_its``, which splits "its" where it means "it's", as EWT does).

    python scripts/assemble_pipeline.py training/lisa_cpu/model-best \
        training/parser/model-best training/pipelines/lisa_cpu
    python scripts/assemble_pipeline.py training/lisa_trf_short/model-best \
        training/senter/model-best training/pipelines/lisa_trf_short --parse-source model

The result is what ``spacy package`` turns into ``en_lisa_srl_ewt_cpu`` /
``en_lisa_srl_ewt_trf``. ``lisa_srl`` follows the parser's parse there
(``parse_source="auto"``), unless ``--parse-source model`` keeps it on its own parse
(for a ``lisa_srl`` whose own parse is better than the parser's: the transformer's own
parse beats the project parser's on EWT dev, BENCHMARKS.md); either way it takes the lemmatiser's
lemmas where its own lemma has no roleset candidates, and its windows are the parser's
sentences.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy
import spacy

# the components taken from the parser (or senter) pipeline, in pipeline order (tok2vec
# first: the others listen)
PARSER_COMPONENTS = (
    "tok2vec",
    "tagger",
    "morphologizer",
    "senter",
    "parser",
    "trainable_lemmatizer",
)
# how the meta's description names each of them
DESCRIBED = {
    "tagger": "tagger",
    "morphologizer": "morphologizer",
    "senter": "sentence segmenter",
    "parser": "parser",
    "trainable_lemmatizer": "lemmatizer",
}
EWT_TOKENIZER = {"@tokenizers": "spacy-lisa.EWTTokenizer.v1"}


def assemble(
    srl_path: Path,
    parser_path: Path,
    *,
    ewt_tokenizer: bool = True,
    parse_source: str = "auto",
) -> spacy.Language:
    # the option through the pipeline's config, so that config.cfg and the component
    # agree on the parse it follows (loading decides options from the config)
    overrides = {"components": {"lisa_srl": {"parse_source": parse_source}}}
    nlp = spacy.load(srl_path, config=overrides)
    parser_nlp = spacy.load(parser_path)
    share_vectors(nlp, parser_nlp)
    first = nlp.pipe_names[0]
    with warnings.catch_warnings():
        # W113 ("source vectors are not identical"): share_vectors has checked that a
        # Tok2Vec reading static vectors finds the ones it was trained with
        warnings.filterwarnings("ignore", message=r"\[W113\]")
        for name in PARSER_COMPONENTS:
            if name in parser_nlp.pipe_names:
                nlp.add_pipe(name, source=parser_nlp, before=first)
    if ewt_tokenizer:
        from spacy.util import registry

        nlp.config["nlp"]["tokenizer"] = dict(EWT_TOKENIZER)
        nlp.tokenizer = registry.resolve({"t": EWT_TOKENIZER})["t"](nlp)
        # "its" meaning "it's" split as EWT does, before anything tags or parses it
        nlp.add_pipe("lisa_split_its", first=True)
    return nlp


def share_vectors(nlp: spacy.Language, parser_nlp: spacy.Language) -> None:
    """The parser's static vectors in the assembled vocab: its Tok2Vec
    (configs/parser.cfg) reads the distilled MiniLM vectors from there. A lisa_srl whose
    vectors are its own (spacy-lisa.MultiHashEmbed.v1: configs/lisa_cpu.cfg) or that
    reads none (lisa_trf) has no table in its vocab and takes the parser's. One trained
    on the shared table (spaCy's MultiHashEmbed with static vectors) must find the same
    table: two different ones cannot share one vocab, an error, not a silent swap."""
    ours, theirs = nlp.vocab.vectors, parser_nlp.vocab.vectors
    if theirs.shape[0] == 0:
        return
    if ours.shape[0] == 0:
        nlp.vocab.vectors = theirs
        nlp.meta["vectors"] = parser_nlp.meta.get("vectors", {})
        return
    same = (
        ours.shape == theirs.shape
        and list(ours.keys()) == list(theirs.keys())
        and numpy.array_equal(ours.data, theirs.data)
    )
    if not same:
        raise SystemExit(
            f"the SRL pipeline's static vectors ({ours.shape}) differ from the parser "
            f"pipeline's ({theirs.shape}): train both with the same --paths.vectors"
        )


def description(pipe_names: list) -> str:
    """The meta's description, naming the components in front of lisa_srl."""
    named = [DESCRIBED[name] for name in pipe_names if name in DESCRIBED]
    front = ", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else "".join(named)
    return (
        f"Semantic role labelling (LISA) for raw English text: UD {front} trained on EWT, "
        "then lisa_srl. Frames in doc._.srl_frames."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("srl", type=Path, help="trained lisa_srl pipeline (model-best)")
    parser.add_argument("parser", type=Path, help="trained tagger/parser pipeline")
    parser.add_argument("output", type=Path)
    parser.add_argument("--name", default=None, help="meta name, e.g. lisa_srl_ewt_cpu")
    parser.add_argument("--default-tokenizer", action="store_true")
    parser.add_argument(
        "--parse-source",
        choices=("auto", "model"),
        default="auto",
        help="the parse lisa_srl follows: the parser's (auto) or its own (model)",
    )
    args = parser.parse_args()
    nlp = assemble(
        args.srl,
        args.parser,
        ewt_tokenizer=not args.default_tokenizer,
        parse_source=args.parse_source,
    )
    if args.name:
        nlp.meta["name"] = args.name
    nlp.meta["description"] = description(nlp.pipe_names)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(args.output)
    print(f"{args.output}: {nlp.pipe_names}")


if __name__ == "__main__":
    main()
