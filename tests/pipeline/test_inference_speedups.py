"""The prediction speed-ups (718e912, d818063) change no output: a saved pipeline writes the same
frames, parse, POS and spans with them as without them (packed encoder rows, tok2vec
matmuls on torch, the longer model calls, per-frame Viterbi candidates, the doc's parse
read as arrays and its head scores left out), on its own parse and on a given one."""

from __future__ import annotations

import importlib.util
import json
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any, List

import pytest
import spacy
from oracles import dense_viterbi_paths
from spacy.tokens import Doc
from srl_testing import scoreless

from spacy_lisa import patches
from spacy_lisa.decoding import frames
from spacy_lisa.models.lisa_torch import LisaTorchModel
from spacy_lisa.pipeline import batching
from spacy_lisa.pipeline.annotate import doc_own_parse
from spacy_lisa.pipeline.batching import doc_heads

FIXTURE = Path(__file__).parents[1] / "fixtures" / "saved_pipeline"


@pytest.fixture(scope="module")
def nlp():
    return spacy.load(FIXTURE / "pipeline")


@pytest.fixture(scope="module")
def texts() -> List[str]:
    texts = json.loads((FIXTURE / "expected.json").read_text())["texts"]
    # and each text again as one paragraph: docs of several windows of mixed lengths
    return texts + [" ".join(texts[i : i + 3]) for i in range(0, len(texts), 3)]


def outputs(nlp, texts: List[str]) -> List[Any]:
    spec = importlib.util.spec_from_file_location("mk", FIXTURE / "make_saved_pipeline.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return scoreless(module.outputs(nlp, texts))


def without_speedups(stack: ExitStack, monkeypatch: pytest.MonkeyPatch) -> None:
    """The prediction path as it was before the speed-ups."""
    patch = stack.enter_context(monkeypatch.context())
    patch.setattr(LisaTorchModel, "_packing", lambda self, mask: None)
    patch.setattr(patches, "_torch_gemm_on", lambda: False)
    patch.setattr(batching, "PREDICT_CHUNK_TOKENS", 512)
    patch.setattr(frames, "viterbi_paths", dense_viterbi_paths)
    patch.setattr(
        "spacy_lisa.pipeline.annotate.doc_own_parse",
        lambda doc: {"heads": [t.head.i for t in doc], "deps": [t.dep_ for t in doc]},
    )
    patch.setattr(batching, "doc_heads", lambda doc: [t.head.i for t in doc])
    real_forward = LisaTorchModel.forward

    def with_head_scores(self, x, mask, request):
        if not request.marked:
            request = replace(request, head_scores=True)
        return real_forward(self, x, mask, request)

    patch.setattr(LisaTorchModel, "forward", with_head_scores)


@pytest.mark.parametrize("decoding_mode", ["viterbi", "greedy"])
def test_own_parse_outputs_unchanged(nlp, texts, monkeypatch, decoding_mode):
    srl = nlp.get_pipe("lisa_srl")
    srl.decoding = decoding_mode
    try:
        fast = outputs(nlp, texts)
        with ExitStack() as stack:
            without_speedups(stack, monkeypatch)
            slow = outputs(nlp, texts)
    finally:
        srl.decoding = "viterbi"
    assert fast == slow
    assert sum(len(doc["frames"]) for doc in fast) > 5


def with_parse(nlp, text: str) -> Doc:
    doc = nlp(text)  # sentences from the pipeline's sentencizer
    words = [t.text for t in doc]
    sent_starts = [t.is_sent_start for t in doc]
    # a parse per sentence: every token on its left neighbour, the first one the root
    heads, deps = [], []
    for sent in doc.sents:
        heads += [sent.start] + list(range(sent.start, sent.end - 1))
        deps += ["ROOT"] + ["dep" if i % 2 else "obj" for i in range(len(sent) - 1)]
    return Doc(nlp.vocab, words=words, heads=heads, deps=deps, sent_starts=sent_starts)


def test_doc_parse_outputs_unchanged(nlp, texts, monkeypatch):
    srl = nlp.get_pipe("lisa_srl")

    def run() -> List[Any]:
        docs = list(srl.pipe([with_parse(nlp, text) for text in texts]))
        return [
            (
                scoreless([f.to_dict() for f in doc._.srl_frames]),
                doc._.srl_parse,
                doc._.srl_parse_source,
                doc._.srl_pos,
            )
            for doc in docs
        ]

    fast = run()
    with ExitStack() as stack:
        without_speedups(stack, monkeypatch)
        slow = run()
    assert fast == slow
    # every doc followed its own parse (the empty text follows none)
    assert [source for _, _, source, _ in fast].count("doc") == len(texts) - 1


def test_doc_heads_and_parse_read_the_arrays():
    vocab = spacy.blank("en").vocab
    words = "a b c d e".split()
    doc = Doc(
        vocab,
        words=words,
        heads=[1, 1, 1, 4, 4],
        deps=["x", "ROOT", "y", "z", "ROOT"],
        sent_starts=[True, False, False, True, False],
    )
    assert doc_heads(doc).tolist() == [t.head.i for t in doc] == [1, 1, 1, 4, 4]
    assert doc_own_parse(doc) == {"heads": [1, 1, 1, 4, 4], "deps": ["x", "ROOT", "y", "z", "ROOT"]}
    unparsed = Doc(vocab, words=words)
    assert doc_own_parse(unparsed) == {"heads": [0, 1, 2, 3, 4], "deps": [""] * 5}
    empty = Doc(vocab, words=[])
    assert doc_heads(empty).tolist() == [] and doc_own_parse(empty) == {"heads": [], "deps": []}
