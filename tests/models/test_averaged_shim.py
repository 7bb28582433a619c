"""use_averages = true reaches the torch weights of LISA (Thinc's PyTorchShim alone
ignores the optimizer's averages: they are keyed (shim.id, name), use_params looks for
"pytorch_{id}_{name}" strings)."""

from __future__ import annotations

import numpy
import spacy
import torch
from spacy.tokens import Doc
from spacy.training import Example
from srl_testing import TINY_MODEL
from thinc.api import Adam, PyTorchShim, PyTorchWrapper_v2, torch2xp

from spacy_lisa.frames import set_srl_frames
from spacy_lisa.models.lisa import torch_layer
from spacy_lisa.patches import AveragedPyTorchShim, averaged_pytorch_wrapper


def _train_linear(wrapper, optimizer, steps: int = 5) -> numpy.ndarray:
    X = numpy.random.default_rng(0).normal(size=(4, 3)).astype("float32")
    for _ in range(steps):
        Y, backprop = wrapper.begin_update(X)
        backprop(numpy.ones_like(Y))
        wrapper.finish_update(optimizer)
    return X


def test_plain_pytorch_shim_ignores_averages():
    # the Thinc behaviour this module works around; if Thinc fixes it, this test tells us
    # the workaround can go
    torch.manual_seed(0)
    wrapper = PyTorchWrapper_v2(torch.nn.Linear(3, 2))
    optimizer = Adam(0.1, use_averages=True)
    X = _train_linear(wrapper, optimizer)
    raw = wrapper.predict(X)
    with wrapper.use_params(optimizer.averages):
        assert numpy.allclose(wrapper.predict(X), raw)


def test_only_the_wrapper_built_for_it_gets_the_averaging_shim():
    """The shim is built as the subclass for that one wrapper: Thinc's own wrappers
    keep Thinc's shim."""
    wrapper = averaged_pytorch_wrapper(torch.nn.Linear(3, 2))
    assert type(wrapper.shims[0]) is AveragedPyTorchShim
    assert type(PyTorchWrapper_v2(torch.nn.Linear(3, 2)).shims[0]) is PyTorchShim


def test_averaged_shim_uses_and_restores_the_averages():
    torch.manual_seed(0)
    linear = torch.nn.Linear(3, 2)
    wrapper = averaged_pytorch_wrapper(linear)
    assert isinstance(wrapper.shims[0], AveragedPyTorchShim)
    optimizer = Adam(0.1, use_averages=True)
    X = _train_linear(wrapper, optimizer)
    raw = wrapper.predict(X)
    shim_id = wrapper.shims[0].id
    avg_w = optimizer.averages[(shim_id, "weight")]
    avg_b = optimizer.averages[(shim_id, "bias")]
    with wrapper.use_params(optimizer.averages):
        assert numpy.allclose(torch2xp(linear.weight.data), avg_w)
        averaged = wrapper.predict(X)
        assert numpy.allclose(averaged, X @ avg_w.T + avg_b, atol=1e-5)
        assert not numpy.allclose(averaged, raw)
    # the trained weights come back afterwards
    assert numpy.allclose(wrapper.predict(X), raw)


def test_averaged_shim_without_averages_is_a_no_op():
    wrapper = averaged_pytorch_wrapper(torch.nn.Linear(3, 2))
    X = numpy.ones((1, 3), dtype="float32")
    before = wrapper.predict(X)
    with wrapper.use_params({}):
        assert numpy.allclose(wrapper.predict(X), before)


def test_lisa_pipeline_evaluates_with_averaged_torch_weights():
    nlp = spacy.blank("en")
    nlp.add_pipe("lisa_srl", config={"model": TINY_MODEL})
    words = "John sold the car to Mary .".split()
    ref = Doc(
        nlp.vocab,
        words=words,
        tags=["NNP", "VBD", "DT", "NN", "IN", "NNP", "."],
        heads=[1, 1, 3, 1, 5, 1, 1],
        deps=["nsubj", "ROOT", "det", "obj", "case", "obl", "punct"],
    )
    set_srl_frames(
        ref,
        [{"predicate": [1, 2], "roleset": "sell.01", "roles": [[0, 1, "ARG0"], [2, 4, "ARG1"]]}],
    )
    examples = [Example(nlp.make_doc(" ".join(words)), ref)]
    nlp.initialize(lambda: examples)
    optimizer = Adam(0.01, use_averages=True)
    for _ in range(5):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    shim = torch_layer(nlp.get_pipe("lisa_srl").model).shims[0]
    torch_model = shim._model
    name, param = next(iter(torch_model.named_parameters()))
    raw = param.detach().clone()
    average = optimizer.averages[(shim.id, name)]
    assert not numpy.allclose(torch2xp(raw), average)
    # spaCy's training loop evaluates and saves inside nlp.use_params(optimizer.averages)
    with nlp.use_params(optimizer.averages):
        assert numpy.allclose(torch2xp(dict(torch_model.named_parameters())[name].data), average)
    assert torch.equal(dict(torch_model.named_parameters())[name].data, raw)


def test_loaded_pipeline_keeps_the_averaging_shim():
    nlp = spacy.blank("en")
    nlp.add_pipe("lisa_srl", config={"model": TINY_MODEL})
    doc = Doc(
        nlp.vocab, words=["Ann", "ran", "."], heads=[1, 1, 1], deps=["nsubj", "ROOT", "punct"]
    )
    set_srl_frames(doc, [{"predicate": [1, 2], "roleset": "run.01", "roles": [[0, 1, "ARG0"]]}])
    nlp.initialize(lambda: [Example(nlp.make_doc("Ann ran ."), doc)])
    loaded = spacy.blank("en")
    loaded.add_pipe("lisa_srl", config={"model": TINY_MODEL})
    loaded.from_bytes(nlp.to_bytes())
    shim = torch_layer(loaded.get_pipe("lisa_srl").model).shims[0]
    assert isinstance(shim, AveragedPyTorchShim)


def test_prediction_leaves_eval_mode_and_training_switches_back():
    """Dropout is off in a prediction and on in the next update, without the per-call
    switch back to train mode of Thinc's PyTorchShim.predict."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Dropout(0.5))
    wrapper = averaged_pytorch_wrapper(net)
    X = numpy.ones((64, 3), dtype="float32")
    first, second = wrapper.predict(X), wrapper.predict(X)
    assert not net.training
    numpy.testing.assert_array_equal(first, second)  # no dropout: deterministic
    Y, _ = wrapper.begin_update(X)
    assert net.training
    assert (Y == 0).any()  # dropout applied in training
