"""The converters of the LISA model's ``PyTorchWrapper_v2``: a :class:`PreparedBatch` in,
the torch network's arguments on its device; its :class:`LisaTorchOutput` out, a
:class:`~.types.LisaOutput` in ``model.ops`` arrays (tag rows unpadded, float32), and the
gradients back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, List, Tuple, cast

from thinc.api import ArgsKwargs, Model, PyTorchShim, torch2xp, xp2torch
from thinc.types import Floats2d, Floats3d, Ints2d

from .lisa_batch import PaddedWindows
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
    model: Model, padded: PaddedWindows, is_train: bool
) -> Tuple[ArgsKwargs, Callable[[ArgsKwargs], List[Floats2d]]]:
    """PaddedWindows -> the arguments of LisaTorchModel.forward on the shim's device."""
    import torch

    ops = model.ops
    device = torch_device(model)
    x = xp2torch(padded.X, requires_grad=is_train, device=device)  # [S, T, nI]
    request = padded.request(device, is_train)
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


def convert_outputs(
    model: Model, inputs_outputs: Tuple[PaddedWindows, LisaTorchOutput], is_train: bool
) -> Tuple[LisaOutput, Callable[[LisaOutput], ArgsKwargs]]:
    """LisaTorchOutput -> LisaOutput in ops arrays (tag rows unpadded, float32)."""
    import torch

    ops = model.ops
    prepared, y = inputs_outputs
    device = torch_device(model)
    mask_xp = ops.xp.asarray(prepared.mask)
    # float32 for the loss even under autocast; .float() is the identity on float32
    scores = {
        "tag_scores": y.tag_scores.float(),
        "head_scores": y.head_scores.float(),
        "dep_scores": y.dep_scores.float(),
        "role_scores": y.role_scores.float(),
    }
    label_attention = None if y.label_attention is None else y.label_attention.float()
    frame_scores = {
        name: None if getattr(y, name) is None else getattr(y, name).float()
        for name in ("sense_scores", "lemma_scores", "pred_pos_scores")
    }
    tag_pad = torch2xp(scores["tag_scores"], ops=ops)  # [S, T, n_tags]
    frames = torch.stack([y.frame_window, y.frame_pos], dim=1).to(torch.int32)  # [F, 2]
    output = LisaOutput(
        windows=prepared.windows,
        tag_scores=cast(Floats2d, tag_pad[mask_xp]),  # [N, n_tags]
        head_scores=cast(Floats3d, torch2xp(scores["head_scores"], ops=ops)),
        dep_scores=cast(Floats3d, torch2xp(scores["dep_scores"], ops=ops)),
        frames=cast(Ints2d, torch2xp(frames, ops=ops)),
        role_scores=cast(Floats3d, torch2xp(scores["role_scores"], ops=ops)),
        label_attention=None
        if label_attention is None
        else cast(Floats3d, torch2xp(label_attention, ops=ops)),
        used_heads=None
        if y.used_heads is None
        else cast(Ints2d, torch2xp(y.used_heads.to(torch.int32), ops=ops)),
        **cast(
            Dict[str, Any],
            {
                name: None if tensor is None else cast(Floats2d, torch2xp(tensor, ops=ops))
                for name, tensor in frame_scores.items()
            },
        ),
    )

    def backprop(d_output: LisaOutput) -> ArgsKwargs:
        d_tag: Any = ops.alloc3f(*tag_pad.shape)
        d_tag[mask_xp] = d_output.tag_scores
        pairs = [
            (scores["tag_scores"], d_tag),
            (scores["head_scores"], d_output.head_scores),
            (scores["dep_scores"], d_output.dep_scores),
            (scores["role_scores"], d_output.role_scores),
            (label_attention, d_output.label_attention),
            *[(frame_scores[name], getattr(d_output, name)) for name in frame_scores],
        ]
        tensors, grads = [], []
        for tensor, grad in pairs:
            if tensor is None or grad is None or not tensor.requires_grad or tensor.numel() == 0:
                continue
            grad_t = xp2torch(ops.asarray(grad, dtype="float32"), device=device)
            tensors.append(tensor)
            grads.append(grad_t.reshape(tensor.shape))
        return ArgsKwargs(args=(tuple(tensors),), kwargs={"grad_tensors": tuple(grads)})

    return output, backprop


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
