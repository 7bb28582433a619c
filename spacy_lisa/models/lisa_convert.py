"""The converters of the LISA model's ``PyTorchWrapper_v2``: a :class:`~.lisa_batch.PaddedBatch`
in, the torch network's arguments on its device; its :class:`LisaTorchOutput` out, a
:class:`~.types.LisaOutput` in ``model.ops`` arrays (tag rows unpadded, float32), and the
gradients back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, cast

from thinc.api import ArgsKwargs, Model, PyTorchShim, torch2xp, xp2torch
from thinc.types import Floats2d, Floats3d, Ints2d

from .lisa_batch import PaddedBatch
from .types import LisaOutput

# the per-predicate classifiers' sizes (optional: 0 or unset leaves a classifier out;
# pipelines saved before they existed have none)
FRAME_DIMS = ("n_senses", "n_lemmas", "n_pred_pos")

if TYPE_CHECKING:
    import torch

    from .lisa_torch import LisaTorchOutput

# sizes of the per-predicate classifiers and the LisaOutput field each one fills
FRAME_SCORES = {
    "n_senses": "sense_scores",
    "n_lemmas": "lemma_scores",
    "n_pred_pos": "pred_pos_scores",
}


def torch_device(model: Model) -> torch.device:
    """The torch device of a PyTorchWrapper's module (where its parameters live)."""
    return cast(PyTorchShim, model.shims[0]).device


def convert_inputs(
    model: Model, padded: PaddedBatch, is_train: bool
) -> Tuple[ArgsKwargs, Callable[[ArgsKwargs], List[Floats2d]]]:
    """PaddedBatch -> the arguments of LisaTorchModel.forward on the shim's device."""
    import torch

    ops = model.ops
    device = torch_device(model)
    x = xp2torch(padded.X, requires_grad=is_train, device=device)  # [S, T, nI]
    request = padded.request.on(device, is_train)
    mask = torch.as_tensor(padded.mask, device=device)
    mask_xp = ops.xp.asarray(padded.mask)

    def backprop(d_inputs: ArgsKwargs) -> List[Floats2d]:
        d_x = d_inputs.args[0]
        if d_x is None:  # nothing flowed back to the input
            return [ops.alloc2f(n, model.get_dim("nI")) for n in padded.doc_lengths]
        d_pad = cast(Floats3d, torch2xp(d_x, ops=ops))  # [S, T, nI]
        d_flat = d_pad[mask_xp]  # [N, nI]: the input arrays' rows in order
        return cast(List[Floats2d], ops.unflatten(d_flat, ops.asarray1i(padded.doc_lengths)))

    return ArgsKwargs(args=(x, mask, request), kwargs={}), backprop


# the float outputs of LisaTorchModel that LisaOutput holds, the tag scores unpadded; in
# this order their gradients go back
FLOAT_SCORES = (
    "tag_scores",
    "head_scores",
    "dep_scores",
    "role_scores",
    "label_attention",
    *FRAME_SCORES.values(),
)


def convert_outputs(
    model: Model, inputs_outputs: Tuple[PaddedBatch, LisaTorchOutput], is_train: bool
) -> Tuple[LisaOutput, Callable[[LisaOutput], ArgsKwargs]]:
    """LisaTorchOutput -> LisaOutput in ops arrays (tag rows unpadded, float32)."""
    import torch

    ops = model.ops
    padded, y = inputs_outputs
    mask_xp = ops.xp.asarray(padded.mask)
    # float32 for the loss even under autocast; .float() is the identity on float32
    scores: Dict[str, Optional[torch.Tensor]] = {
        name: None if getattr(y, name) is None else getattr(y, name).float()
        for name in FLOAT_SCORES
    }
    arrays: Dict[str, Any] = {
        name: None if tensor is None else torch2xp(tensor, ops=ops)
        for name, tensor in scores.items()
    }
    tag_pad = arrays["tag_scores"]  # [S, T, n_tags]
    arrays["tag_scores"] = tag_pad[mask_xp]  # [N, n_tags]
    frames = torch.stack([y.frame_window, y.frame_pos], dim=1).to(torch.int32)  # [F, 2]
    output = LisaOutput(
        windows=padded.windows,
        frames=cast(Ints2d, torch2xp(frames, ops=ops)),
        used_heads=None
        if y.used_heads is None
        else cast(Ints2d, torch2xp(y.used_heads.to(torch.int32), ops=ops)),
        **arrays,
    )
    return output, _backprop_outputs(model, scores, mask_xp, tag_pad.shape)


def _backprop_outputs(
    model: Model, scores: Dict[str, Any], mask_xp: Any, tag_shape: Tuple[int, ...]
) -> Callable[[LisaOutput], ArgsKwargs]:
    """The gradients of a LisaOutput -> the arguments of ``torch.autograd.backward`` on
    the output tensors ``scores`` that need them (the tag rows padded again)."""
    ops = model.ops
    device = torch_device(model)

    def backprop(d_output: LisaOutput) -> ArgsKwargs:
        d_tag: Any = ops.alloc3f(*tag_shape)
        d_tag[mask_xp] = d_output.tag_scores
        tensors, grads = [], []
        for name, tensor in scores.items():
            grad = d_tag if name == "tag_scores" else getattr(d_output, name)
            if tensor is None or grad is None or not tensor.requires_grad or tensor.numel() == 0:
                continue
            grad_t = xp2torch(ops.asarray(grad, dtype="float32"), device=device)
            tensors.append(tensor)
            grads.append(grad_t.reshape(tensor.shape))
        return ArgsKwargs(args=(tuple(tensors),), kwargs={"grad_tensors": tuple(grads)})

    return backprop


def empty_output(model: Model) -> LisaOutput:
    ops = model.ops
    return LisaOutput(
        windows=[],
        tag_scores=ops.alloc2f(0, model.get_dim("n_tags")),
        head_scores=ops.alloc3f(0, 0, 0),
        dep_scores=ops.alloc3f(0, 0, model.get_dim("n_deps")),
        frames=ops.alloc2i(0, 2),
        role_scores=ops.alloc3f(0, 0, model.get_dim("n_roles")),
        used_heads=ops.alloc2i(0, 0) if model.attrs["lisa_config"]["parse_layer"] else None,
        **cast(
            Dict[str, Any],
            {
                FRAME_SCORES[name]: ops.alloc2f(0, n) if n else None
                for name in FRAME_DIMS
                for n in [model.maybe_get_dim(name) or 0]
            },
        ),
    )
