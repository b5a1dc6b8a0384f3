"""Neural-network operators: softmax, BiasAdd, BatchNorm and Conv2D (CANN's NHWC default, through Transposes
around ONNX's NCHW Conv)."""

from __future__ import annotations

import numpy as np

from openacl.dtypes import AclFormat
from openacl.ops.ir import ATTR, IrOp, LowerContext, ir
from openacl.ops.lowering import int64s


def _softmax(onnx_type: str):
    def lower(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
        axes = list(a["axes"])
        if len(axes) != 1:
            ctx.fail(f"axes {axes}: ONNX {onnx_type} takes exactly one axis", ATTR)
        ctx.emit(onnx_type, [ins[0]], outs, axis=axes[0])

    return lower


def _channel_view(ctx: LowerContext, tensor: str, data_format: str) -> str:
    """A per-channel vector shaped to broadcast against NCHW ([C,1,1]); NHWC broadcasts as it is."""
    if data_format in ("NCHW", "NCDHW"):
        return ctx.emit("Reshape", [tensor, int64s(ctx, [-1, 1, 1])])[0]
    return tensor


def _bias_add(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Add", [ins[0], _channel_view(ctx, ins[1], a["data_format"])], outs)


def _mean(ctx: LowerContext, x: str, axes: list[int]) -> str:
    if ctx.opset >= 18:  # ReduceMean's axes became an input in opset 18
        return ctx.emit("ReduceMean", [x, int64s(ctx, axes, "axes")], keepdims=0)[0]
    return ctx.emit("ReduceMean", [x], axes=axes, keepdims=0)[0]


def _batch_norm(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    """Inference (``is_training=False``) normalises with the given mean and variance; training computes the batch
    statistics (the biased variance, also in ``batch_variance``: openacl's decision)."""
    x, scale, offset, mean, variance = ins
    fmt = a["data_format"]
    if fmt not in ("NCHW", "NHWC"):
        ctx.fail(f"data_format {fmt!r} is not supported (NCHW, NHWC)", ATTR)
    dt = ctx.dtype(x)
    axes = [0, 2, 3] if fmt == "NCHW" else [0, 1, 2]
    if a["is_training"]:
        mean = _mean(ctx, x, axes)
        centred = ctx.emit("Sub", [x, _channel_view(ctx, mean, fmt)])[0]
        variance = _mean(ctx, ctx.emit("Mul", [centred, centred])[0], axes)
    elif mean is None or variance is None:
        ctx.fail("inference (is_training=False) needs mean and variance")
    centred = ctx.emit("Sub", [x, _channel_view(ctx, mean, fmt)])[0]
    std = ctx.emit("Sqrt", [ctx.emit("Add", [variance, ctx.const(np.array(a["epsilon"], dt))])[0]])[0]
    normed = ctx.emit("Div", [centred, _channel_view(ctx, std, fmt)])[0]
    scaled = ctx.emit("Mul", [normed, _channel_view(ctx, scale, fmt)])[0]
    ctx.emit("Add", [scaled, _channel_view(ctx, offset, fmt)], [outs[0]])
    for out, source in zip(outs[1:], (mean, variance, mean, variance, variance), strict=True):
        ctx.emit("Identity", [source], [out])


#: A filter's layout by its desc format, and the perm that makes it ONNX's OIHW (a single operator's filter desc
#: says its layout; any other format is taken as OIHW).
_FILTER_TO_OIHW = {
    int(AclFormat.ACL_FORMAT_NCHW): None,
    int(AclFormat.ACL_FORMAT_NHWC): [0, 3, 1, 2],
    int(AclFormat.ACL_FORMAT_HWCN): [3, 2, 0, 1],
}
_LAYOUTS = {"NCHW": (2, 3), "NHWC": (1, 2)}  # where H and W sit in strides / dilations


def _filter_perm(ctx: LowerContext, weights: str, layout: str) -> list[int] | None:
    """The filter's perm to OIHW: from its desc format where it has one; in a graph (no desc), GE's rule: OIHW
    with NCHW data, HWCN (TensorFlow's) with NHWC data."""
    fmt = ctx.format(weights)
    if fmt is None:
        return None if layout == "NCHW" else _FILTER_TO_OIHW[int(AclFormat.ACL_FORMAT_HWCN)]
    return _FILTER_TO_OIHW.get(fmt)


def _conv2d(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    """``strides``/``dilations`` have four entries in ``data_format`` order, ``pads`` are [top, bottom, left, right]."""
    x, weights, bias, offset_w = ins
    layout = a["data_format"]
    if layout not in _LAYOUTS:
        ctx.fail(f"data_format {layout!r} is not NCHW or NHWC", ATTR)
    if offset_w is not None or a["offset_x"] != 0:
        ctx.fail("quantized convolution (offset_w, offset_x) is not supported")
    if ctx.rank(x) not in (4, None) or ctx.rank(weights) not in (4, None):
        ctx.fail(f"x (rank {ctx.rank(x)}) and filter (rank {ctx.rank(weights)}) must be 4-D")
    strides, pads, dilations = list(a["strides"]), list(a["pads"]), list(a["dilations"])
    if len(strides) != 4 or len(dilations) != 4 or len(pads) != 4:
        ctx.fail("strides and dilations need 4 values, pads 4 (top, bottom, left, right)", ATTR)
    h, w = _LAYOUTS[layout]
    data = ctx.emit("Transpose", [x], perm=[0, 3, 1, 2])[0] if layout == "NHWC" else x
    perm = _filter_perm(ctx, weights, layout)
    kernel = ctx.emit("Transpose", [weights], perm=perm)[0] if perm else weights
    conv = {
        "strides": [strides[h], strides[w]],
        "dilations": [dilations[h], dilations[w]],
        "pads": [pads[0], pads[2], pads[1], pads[3]],
        "group": a["groups"],
    }
    inputs = [data, kernel] + ([bias] if bias is not None else [])
    if layout == "NCHW":
        ctx.emit("Conv", inputs, outs, **conv)
    else:
        ctx.emit("Transpose", ctx.emit("Conv", inputs, **conv), outs, perm=[0, 2, 3, 1])


_AXES = ("axes", "ListInt", [-1])

RECORDS: tuple[IrOp, ...] = (
    ir("SoftmaxV2", "x", "y", [_AXES], lower=_softmax("Softmax"), onnx="Softmax", doc="softmax along one axis"),
    ir("Softmax", "x", "y", [_AXES], lower=_softmax("Softmax"), onnx="Softmax", doc="as SoftmaxV2"),
    ir("LogSoftmaxV2", "x", "logsoftmax", [_AXES], lower=_softmax("LogSoftmax"), onnx="LogSoftmax"),
    ir("BiasAdd", "x bias", "y", [("data_format", "String", "NHWC")], lower=_bias_add, onnx="Add"),
    ir(
        "BatchNorm",
        "x scale offset mean? variance?",
        "y batch_mean batch_variance reserve_space_1 reserve_space_2 reserve_space_3",
        [
            ("epsilon", "Float", 0.0001),
            ("data_format", "String", "NHWC"),
            ("is_training", "Bool", True),
            ("exponential_avg_factor", "Float", 1.0),
        ],
        lower=_batch_norm,
        onnx="ReduceMean, Sub, Div, Mul, Add",
    ),
    ir(
        "Conv2D",
        "x filter bias? offset_w?",
        "y",
        [
            ("strides", "ListInt"),
            ("pads", "ListInt"),
            ("dilations", "ListInt", [1, 1, 1, 1]),
            ("groups", "Int", 1),
            ("data_format", "String", "NHWC"),
            ("offset_x", "Int", 0),
        ],
        lower=_conv2d,
        onnx="Conv",
        doc="2-D convolution; acl.op: filter desc format NCHW (OIHW), NHWC (OHWI) or HWCN",
    ),
)
