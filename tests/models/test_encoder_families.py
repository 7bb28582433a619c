"""``spacy-lisa.TransformerTok2Vec.v1`` on the encoder families users bring: BERT (cased),
ELECTRA, DistilBERT, RoBERTa, XLM-R, MPNet, DeBERTa-v3 and ModernBERT, in the single pass
and the predicate-aware encoding, from a local directory or a hub name. The encoders are
tiny and random (``encoder_testing``).
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List

import numpy
import pytest
import spacy
import srsly
import torch
from encoder_testing import FAMILIES, LONG_WORDS, WINDOW, encoder_builder
from spacy.tokens import Doc, DocBin
from spacy.util import registry
from srl_testing import TEXT_SENTENCES, TINY_MODEL, gold_examples
from thinc.api import Adam, ConfigValidationError

from spacy_lisa.models.pretrained import CACHE_VARIABLES
from spacy_lisa.models.transformer import _encode, _plan, encode_marked
from spacy_lisa.models.wordpieces import MarkedWindows, doc_windows, max_positions

# how each marks a predicate with predicate_mark = "auto": token type 1 where the config
# has two token types (BERT, ELECTRA), else the learned indicator
AUTO_MARK = {
    "bert": "token_type",
    "electra": "token_type",
    "distilbert": "indicator",
    "roberta": "indicator",
    "xlm-roberta": "indicator",
    "mpnet": "indicator",
    "deberta-v3": "indicator",
    "modernbert": "indicator",
}
ARCHITECTURES = {
    "single": "spacy-lisa.LISA.v1",
    "predicate_aware": "spacy-lisa.PredicateAwareLISA.v1",
}
TOK2VEC = "spacy-lisa.TransformerTok2Vec.v1"


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """family -> the directory of its tiny encoder, built once per module."""
    return encoder_builder(tmp_path_factory.mktemp("encoders"))


@pytest.fixture(scope="module")
def tok2vec(encoder_dir: Callable[[str], Path]) -> Callable[[str], Any]:
    """family -> an initialised TransformerTok2Vec.v1 on its encoder, once per module."""
    made: Dict[str, Any] = {}

    def get(family: str) -> Any:
        if family not in made:
            made[family] = make_tok2vec(str(encoder_dir(family)))
        return made[family]

    return get


def make_tok2vec(name: str, **options: Any) -> Any:
    config = {"@architectures": TOK2VEC, "name": name, "hidden_dropout": 0.0, **options}
    model = registry.resolve({"m": config})["m"]
    model.initialize()
    return model


def shim_of(model: Any) -> Any:
    return model.shims[0]


@pytest.fixture(scope="module")
def vocab() -> Any:
    return spacy.blank("en").vocab


def frames_of(doc: Doc) -> List[Any]:
    """(predicate span, roleset, roles) per frame (an untrained model's V span may hold
    a neighbour of the given predicate too)."""
    return [
        (
            (f.predicate.start, f.predicate.end),
            f.roleset,
            [(r.start, r.end, r.label_) for r in f.roles],
        )
        for f in doc._.srl_frames
    ]


# --- tokenisation and windows ------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_each_word_gets_its_own_running_text_pieces_and_the_special_tokens(
    family, encoder_dir, tok2vec, vocab
):
    """The pieces of each word in a window are those the saved tokenizer gives it in
    running text (a word after a space: "Ġsold", "▁sold", "sold"), and the window carries
    the encoder's own special tokens around them."""
    from transformers import AutoTokenizer

    model = tok2vec(family)
    saved = AutoTokenizer.from_pretrained(encoder_dir(family), local_files_only=True)
    words = "Mary said John sold the car to Anna .".split()
    (window,) = _plan(model, doc_windows([Doc(vocab, words=words)])[0])
    # running text: each of these words is one pre-token (word_ids count them)
    running = saved(" ".join(words), add_special_tokens=True)
    assert max(w for w in running.word_ids() if w is not None) == len(words) - 1
    for i in range(1, len(words)):  # the first word has no space before it in the text
        ours = [p for p, w in zip(window.ids, window.word_ids, strict=True) if w == i]
        theirs = [
            p for p, w in zip(running["input_ids"], running.word_ids(), strict=True) if w == i
        ]
        assert ours == theirs, (family, words[i], saved.convert_ids_to_tokens(ours))
    (sub,) = _encode(model, [window])
    row = sub.input_ids[0].tolist()
    # e.g. [CLS] ... [SEP], <s> ... </s>
    assert row[0] == running["input_ids"][0] and row[-1] == running["input_ids"][-1]
    assert row[1:-1] == window.ids


@pytest.mark.parametrize("family", FAMILIES)
def test_a_sentence_longer_than_the_window_is_split_at_the_encoders_limit(family, tok2vec, vocab):
    model = tok2vec(family)
    assert (
        max_positions(shim_of(model).encoder.transformer, shim_of(model).tokenizer) == WINDOW
    )  # RoBERTa, XLM-R: 34 rows less 2
    doc = Doc(vocab, words=LONG_WORDS)
    windows = _plan(model, doc_windows([doc])[0])
    subs = _encode(model, windows)
    lengths = [int(m.sum()) for sub in subs for m in sub.attention_mask]
    assert len(windows) >= 2 and max(lengths) <= WINDOW
    # nothing truncated: every word has its pieces in one of the windows
    assert sorted(w.start + i for w in windows for i in set(w.word_ids)) == list(range(40))
    (X,) = model.predict([doc])
    assert X.shape == (40, 32) and (numpy.abs(X).sum(axis=1) > 0).all()


# --- training, saving, loading -----------------------------------------------------------


@pytest.mark.parametrize("architecture", sorted(ARCHITECTURES))
@pytest.mark.parametrize("family", FAMILIES)
def test_trains_saves_loads_and_predicts_the_same_frames(
    family, architecture, encoder_dir, tmp_path, monkeypatch
):
    """A tiny lisa_srl on the encoder trains (gradients reach the transformer and, in the
    predicate-aware encoding, its mark), and after to_disk / spacy.load, with the encoder
    directory gone and the hub offline, gives the same frames, also on a sentence longer
    than the encoder's window."""
    local = tmp_path / family
    shutil.copytree(encoder_dir(family), local)
    model = copy.deepcopy(TINY_MODEL)
    model["@architectures"] = ARCHITECTURES[architecture]
    model["tok2vec"] = {"@architectures": TOK2VEC, "name": str(local), "hidden_dropout": 0.0}
    nlp = spacy.blank("xx")  # tokenizes these sentences as "en" does, and loads faster
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl", config={"model": model, "predicate_source": "doc"})
    encoder = shim_of(nlp.get_pipe("lisa_srl").model.get_ref("tok2vec")).encoder
    examples = gold_examples(nlp, TEXT_SENTENCES)
    optimizer = nlp.initialize(lambda: examples)
    assert encoder.predicate_mark == AUTO_MARK[family]
    before = encoder.transformer.get_input_embeddings().weight.detach().clone()
    losses: Dict[str, float] = {}
    for _ in range(2):
        nlp.update(examples, sgd=optimizer, drop=0.0, losses=losses)
    assert numpy.isfinite(losses["lisa_srl"]) and losses["lisa_srl"] > 0
    assert not torch.equal(before, encoder.transformer.get_input_embeddings().weight)
    indicator = encoder.predicate_indicator
    if AUTO_MARK[family] == "token_type":
        assert indicator is None
    else:
        weight = indicator.weight.detach()
        assert not weight[0].any()  # unmarked pieces: the transformer's own input
        # learnt by the marked pass only
        assert bool(weight[1].any()) == (architecture == "predicate_aware")

    texts = ["She said she would come .", " ".join(LONG_WORDS)]
    predicates = [[1, 4], [1, 12]]

    def frames(pipeline):
        docs = []
        for text, marked in zip(texts, predicates, strict=True):
            doc = pipeline.make_doc(text)
            doc._.srl_predicates = marked
            docs.append(pipeline(doc))
        return [frames_of(doc) for doc in docs]

    expected = frames(nlp)
    for doc_frames, marked in zip(expected, predicates, strict=True):
        assert len(doc_frames) == len(marked)
        spans = [span for span, _, _ in doc_frames]
        assert all(start <= p < end for (start, end), p in zip(spans, marked, strict=True))
    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(local)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty_hf_home"))
    loaded = spacy.load(tmp_path / "pipeline")
    loaded_encoder = shim_of(loaded.get_pipe("lisa_srl").model.get_ref("tok2vec")).encoder
    assert loaded_encoder.predicate_mark == AUTO_MARK[family]
    assert frames(loaded) == expected


# --- the predicate mark ------------------------------------------------------------------


def _marked_update(model: Any, doc: Doc, optimizer: Any) -> None:
    Xs, backprop = encode_marked(model, MarkedWindows([doc], [(0, 0, len(doc), 1)]), True)
    # random: a gradient of ones is nearly orthogonal to what a LayerNorm passes back
    rng = numpy.random.RandomState(0)
    backprop([rng.normal(size=x.shape).astype("float32") for x in Xs])
    model.finish_update(optimizer)


@pytest.mark.parametrize(
    "setting", [{"learn_rate_scale": 0.0}, {"frozen": True}], ids=["learn_rate_scale_0", "frozen"]
)
def test_the_indicator_learns_at_the_full_rate_also_over_a_fixed_transformer(
    setting, encoder_dir, vocab
):
    """predicate_mark = "indicator" forced on an encoder with two token types (as on the
    MiniLM for a comparison): its weights are the shim's own, updated at the full rate by
    finish_update, also where the transformer does not move (learn_rate_scale 0, or
    frozen: the indicator's gradient then flows through the fixed transformer)."""
    model = make_tok2vec(str(encoder_dir("bert")), predicate_mark="indicator", **setting)
    encoder = shim_of(model).encoder
    assert encoder.predicate_mark == "indicator" and encoder.predicate_indicator is not None
    transformer_before = {k: v.clone() for k, v in encoder.transformer.state_dict().items()}
    doc = Doc(vocab, words="John sold the car .".split())
    unmarked = model.predict([doc])[0]
    marked_before = encode_marked(model, MarkedWindows([doc], [(0, 0, 5, 1)]), False)[0][0]
    numpy.testing.assert_allclose(marked_before, unmarked, atol=1e-5)  # zero: no change
    _marked_update(model, doc, Adam(0.01))
    weight = encoder.predicate_indicator.weight.detach()
    # Adam's first step moves each weight by about the rate (0.01), not 0 x or 0.1 x it
    assert not weight[0].any() and weight[1].abs().median() > 0.005
    after = encoder.transformer.state_dict()
    assert all(torch.equal(transformer_before[k], after[k]) for k in after)
    marked_after = encode_marked(model, MarkedWindows([doc], [(0, 0, 5, 1)]), False)[0][0]
    assert numpy.abs(marked_after - unmarked).max() > 1e-3  # the mark now changes it


def test_forced_marks_and_their_errors(encoder_dir):
    with pytest.raises(ValueError, match=r"\[E179\].*predicate_mark='segment'"):
        registry.resolve({"m": {"@architectures": TOK2VEC, "predicate_mark": "segment"}})
    with pytest.raises(ValueError, match=r"\[E172\].*has 1 token type"):
        make_tok2vec(str(encoder_dir("roberta")), predicate_mark="token_type")
    forced = make_tok2vec(str(encoder_dir("bert")), predicate_mark="indicator")
    fresh = registry.resolve({"m": {"@architectures": TOK2VEC, "name": "/gone"}})["m"]
    fresh.from_bytes(forced.to_bytes())  # the saved mark wins over the config's "auto"
    assert shim_of(fresh).encoder.predicate_mark == "indicator"


def test_the_indicator_can_be_forced_on_the_minilm_config_by_an_override():
    """The comparison of the two marks on the MiniLM runs with a config override."""
    from spacy.util import load_config

    config_path = Path(__file__).resolve().parents[2] / "configs" / "lisa_trf_marked.cfg"
    key = "components.lisa_srl.model.tok2vec.predicate_mark"
    config = load_config(config_path, overrides={key: "indicator"})
    tok2vec = registry.resolve({"m": config["components"]["lisa_srl"]["model"]["tok2vec"]})["m"]
    assert tok2vec.attrs["predicate_mark"] == "indicator"


# --- hub names ---------------------------------------------------------------------------

MISSING = "nonexistent-org/nonexistent-model"


@pytest.fixture
def offline_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The hub offline, its cache an empty HF_HOME; returns HF_HOME."""
    home = tmp_path / "hf_home"
    home.mkdir()
    for var in CACHE_VARIABLES:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return home


def test_a_hub_name_not_cached_offline_says_how_to_fetch_it(offline_hub):
    with pytest.raises(ConfigValidationError) as info:
        make_tok2vec(MISSING)
    message = " ".join(str(info.value).split())
    assert "[E181]" in message and str(offline_hub / "hub") in message
    assert "HF_HUB_OFFLINE" in message
    # the hub client's command this install has (`hf`; `huggingface-cli` before 0.34)
    command = re.search(rf"`(\S+) download {re.escape(MISSING)}`", message)
    assert command and (Path(sys.executable).parent / command.group(1)).is_file()
    assert isinstance(info.value, ValueError)


def test_a_hub_name_resolves_through_the_cache(offline_hub, encoder_dir, vocab):
    """A hub name is read from transformers' cache under HF_HOME (laid out as the hub
    client writes it), offline."""
    repo = offline_hub / "hub" / "models--tiny-org--tiny-roberta"
    commit = "0123456789abcdef0123456789abcdef01234567"
    shutil.copytree(encoder_dir("roberta"), repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    model = make_tok2vec("tiny-org/tiny-roberta")
    assert shim_of(model).encoder.predicate_mark == "indicator"
    assert model.predict([Doc(vocab, words=["Hello", "world"])])[0].shape == (2, 32)


def test_a_missing_directory_is_not_taken_for_a_hub_name(tmp_path):
    with pytest.raises(ConfigValidationError, match=r"\[E180\].*neither a local directory"):
        make_tok2vec(str(tmp_path / "no" / "such" / "model"))


def test_spacy_train_prints_the_hub_error_without_a_traceback(offline_hub, tmp_path, capsys):
    """`spacy train` initialises the pipeline inside spaCy's show_validation_error: the
    error is printed as one message and the command exits 1, no traceback."""
    from spacy.cli.train import train

    nlp = spacy.blank("en")
    corpus = tmp_path / "train.spacy"
    references = [example.reference for example in gold_examples(nlp, TEXT_SENTENCES)]
    DocBin(docs=references, store_user_data=True).to_disk(corpus)
    model = copy.deepcopy(TINY_MODEL)
    model["tok2vec"] = {"@architectures": TOK2VEC, "name": MISSING}
    nlp.add_pipe("lisa_srl", config={"model": model})
    config_path = tmp_path / "config.cfg"
    nlp.config.to_disk(config_path)  # complete: spaCy's training defaults filled in
    with pytest.raises(SystemExit) as exit_info:
        train(config_path, overrides={"paths.train": str(corpus), "paths.dev": str(corpus)})
    assert exit_info.value.code == 1
    out = capsys.readouterr()
    printed = " ".join((out.out + out.err).split())
    assert f"[E181] Transformer weights '{MISSING}'" in printed
    assert "Traceback" not in printed


# the cache where transformers' own from_pretrained finds a hub name, and ours: run with
# the environment read at import; prints [theirs, ours] (found or not)
CACHE_PROBE = """
import json, sys
from transformers import AutoConfig
from spacy_lisa.models.pretrained import load_pretrained, model_source
def found(load):
    try:
        load()
        return True
    except (OSError, ValueError):
        return False
name = sys.argv[1]
print(json.dumps([
    found(lambda: AutoConfig.from_pretrained(name)),
    found(lambda: load_pretrained(AutoConfig, model_source(name))),
]))
"""


def test_a_hub_name_is_read_from_the_cache_the_installed_transformers_reads(tmp_path, encoder_dir):
    """TRANSFORMERS_CACHE and HF_HUB_CACHE name two folders, the model cached in one:
    the tok2vec finds it where transformers' own from_pretrained does (transformers 4
    reads TRANSFORMERS_CACHE first, transformers 5 only HF_HUB_CACHE), offline."""
    results = []
    for cached_in in ("TRANSFORMERS_CACHE", "HF_HUB_CACHE"):
        caches = {var: tmp_path / cached_in / var for var in ("TRANSFORMERS_CACHE", "HF_HUB_CACHE")}
        repo = caches[cached_in] / "models--tiny-org--tiny-bert"
        commit = "0123456789abcdef0123456789abcdef01234567"
        shutil.copytree(encoder_dir("bert"), repo / "snapshots" / commit)
        (repo / "refs").mkdir()
        (repo / "refs" / "main").write_text(commit)
        env = {k: v for k, v in os.environ.items() if k not in CACHE_VARIABLES}
        env.update({var: str(path) for var, path in caches.items()})
        env.update(HF_HOME=str(tmp_path / "hf_home"), HF_HUB_OFFLINE="1")
        out = subprocess.run(
            [sys.executable, "-c", CACHE_PROBE, "tiny-org/tiny-bert"],
            env=env, capture_output=True, text=True, timeout=300, check=True,
        )  # fmt: skip
        theirs, ours = json.loads(out.stdout.strip().splitlines()[-1])
        results.append((cached_in, theirs, ours))
    assert all(theirs == ours for _, theirs, ours in results), results
    # one of the two is the folder transformers reads
    assert sorted(theirs for _, theirs, _ in results) == [False, True], results


# --- across transformers versions --------------------------------------------------------


def _edited_transformer(model_bytes: bytes, edit: Callable[[Dict[str, Any]], None]) -> bytes:
    """The tok2vec's bytes with ``edit`` applied to its saved transformer (the shim's
    payload: hf_config, tokenizer files, state)."""
    msg = srsly.msgpack_loads(model_bytes)
    (node,) = [shims for shims in msg["shims"] if shims]
    payload = srsly.msgpack_loads(node[0])
    edit(payload)
    node[0] = srsly.msgpack_dumps(payload)
    return srsly.msgpack_dumps(msg)


def _as_transformers_5_names_it(tokenizer_config: bytes) -> bytes:
    """A plain fast tokenizer's tokenizer_config.json as transformers 5 writes it."""
    config = json.loads(tokenizer_config)
    config["tokenizer_class"] = "TokenizersBackend"
    return json.dumps(config).encode("utf8")


def test_a_tokenizer_saved_by_transformers_5_loads_under_4_and_5(
    encoder_dir, tok2vec, tmp_path, vocab
):
    """ModernBERT's plain fast tokenizer, which transformers 5 saves as
    "TokenizersBackend" (a class transformers 4 lacks), in a model directory and in a
    saved tok2vec: both load and give the vectors they gave before."""
    docs = [Doc(vocab, words="She said she would come .".split())]
    expected = tok2vec("modernbert").predict(docs)[0]
    local = tmp_path / "modernbert"
    shutil.copytree(encoder_dir("modernbert"), local)
    config = local / "tokenizer_config.json"
    config.write_bytes(_as_transformers_5_names_it(config.read_bytes()))
    numpy.testing.assert_allclose(make_tok2vec(str(local)).predict(docs)[0], expected, atol=1e-5)

    def renamed(payload: Dict[str, Any]) -> None:
        files = payload["tokenizer"]
        files["tokenizer_config.json"] = _as_transformers_5_names_it(files["tokenizer_config.json"])

    saved = _edited_transformer(tok2vec("modernbert").to_bytes(), renamed)
    fresh = registry.resolve({"m": {"@architectures": TOK2VEC, "name": "/gone"}})["m"]
    numpy.testing.assert_allclose(fresh.from_bytes(saved).predict(docs)[0], expected, atol=1e-5)


def _half(payload: Dict[str, Any]) -> None:
    # the key transformers 4 saves the dtype under, and transformers 5's
    payload["hf_config"].update(torch_dtype="float16", dtype="float16")


def test_a_float16_checkpoint_loads_trains_and_reloads_in_float32(encoder_dir, tmp_path, vocab):
    """Weights saved in float16 (transformers 5 loads a checkpoint's own dtype by
    default): the tok2vec holds them in float32, updates, and its saved transformer,
    even one whose config says float16, is rebuilt in float32."""
    from transformers import AutoModel

    local = tmp_path / "bert-fp16"
    shutil.copytree(encoder_dir("bert"), local)
    AutoModel.from_pretrained(local).half().save_pretrained(local)
    model = make_tok2vec(str(local))
    assert {p.dtype for p in shim_of(model).encoder.parameters()} == {torch.float32}
    docs = [Doc(vocab, words="John sold the car .".split())]
    Y, backprop = model.begin_update(docs)
    backprop([numpy.ones_like(y) for y in Y])
    model.finish_update(Adam(0.001))
    assert Y[0].dtype == numpy.float32
    fresh = registry.resolve({"m": {"@architectures": TOK2VEC, "name": "/gone"}})["m"]
    fresh.from_bytes(_edited_transformer(model.to_bytes(), _half))
    assert {p.dtype for p in shim_of(fresh).encoder.parameters()} == {torch.float32}
    numpy.testing.assert_allclose(fresh.predict(docs)[0], model.predict(docs)[0], atol=1e-5)


def _future_model_type(payload: Dict[str, Any]) -> None:
    payload["hf_config"].update(model_type="lisa-future-encoder", transformers_version="9.1.0")


def _future_tokenizer(payload: Dict[str, Any]) -> None:
    payload["hf_config"]["transformers_version"] = "9.1.0"
    # a class of a later transformers, and no tokenizer.json this one could read instead
    payload["tokenizer"] = {"tokenizer_config.json": b'{"tokenizer_class": "FutureTokenizer"}'}


@pytest.mark.parametrize(
    "edit,reason",
    [
        (_future_model_type, "does not know the model type 'lisa-future-encoder'"),
        (_future_tokenizer, "its tokenizer does not load"),
    ],
    ids=["model-type", "tokenizer"],
)
def test_a_saved_transformer_this_transformers_cannot_rebuild_is_e191(tok2vec, edit, reason):
    """A pipeline saved with a later transformers, whose model type or tokenizer the
    installed one lacks: E191 names both versions and what is missing."""
    saved = _edited_transformer(tok2vec("bert").to_bytes(), edit)
    fresh = registry.resolve({"m": {"@architectures": TOK2VEC, "name": "/gone"}})["m"]
    with pytest.raises(ValueError) as info:
        fresh.from_bytes(saved)
    message = str(info.value)
    assert message.startswith("[E191]") and reason in message
    assert "saved with transformers 9.1.0" in message and '"transformers>=9.1.0"' in message
