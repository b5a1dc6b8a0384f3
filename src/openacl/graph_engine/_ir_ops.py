"""The GE IR operators openacl knows, one record each (prototype facts from GE's op protos), and their lowerings.

Prototypes follow GE's ``REG_OP`` declarations as GE-PY sees them (reference notes ``ge_python.md`` §12.3);
where the shipped op package is not public, the record says what openacl decided. ``UNSUPPORTED`` records are
the operators a CPU cannot run (HCCL collectives, fused NPU kernels, NPU storage layouts): they exist so that a
program importing them fails with the reason when it uses them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from openacl import dtypes, lazy
from openacl.graph_engine._ir import IrOp, LowerContext, ir, promote

numpy_helper = lazy.module("onnx.numpy_helper")

_INT64 = np.dtype(np.int64)
_BIG = np.iinfo(np.int64).max


def _ge_dtype(ctx: LowerContext, code: int) -> np.dtype:
    try:
        return dtypes.numpy_from_ge(code)
    except KeyError:
        ctx.fail(f"GE data type {code} has no CPU equivalent in openacl")


def _ints(ctx: LowerContext, tensor: str, what: str) -> list[int]:
    value = ctx.value(tensor)
    if value is None:
        ctx.fail(f"{what} must be a constant (openacl needs its value when it builds the graph)")
    return [int(v) for v in np.asarray(value).reshape(-1)]


def _int64(ctx: LowerContext, tensor: str) -> str:
    return ctx.cast(tensor, _INT64)


# ----- lowering makers -----


def _unary(onnx_type: str, **attrs: Any):
    def lower(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
        ctx.emit(onnx_type, [ins[0]], outs, **attrs)

    return lower


def _binary(onnx_type: str):
    """Both operands cast to GE's promoted type first (float32 + int64 is float32)."""

    def lower(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
        common = promote(ctx.dtype(ins[0]), ctx.dtype(ins[1]))
        ctx.emit(onnx_type, [ctx.cast(ins[0], common), ctx.cast(ins[1], common)], outs)

    return lower


_TRAPPING = (np.dtype(np.int32), np.dtype(np.int64))  # the CPU's idiv traps on MIN / -1: SIGFPE kills the process


def _divide(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    """x1 / x2 in GE's promoted type. Invariant: onnxruntime never divides an int32/int64 by -1 (MIN / -1 is a
    hardware trap that ends the process); that quotient is -x1, which wraps MIN to MIN as two's complement does."""
    common = promote(ctx.dtype(ins[0]), ctx.dtype(ins[1]))
    x1, x2 = ctx.cast(ins[0], common), ctx.cast(ins[1], common)
    if common not in _TRAPPING:
        ctx.emit("Div", [x1, x2], outs)
        return
    by_minus_one = ctx.emit("Equal", [x2, ctx.const(-1, common)])[0]
    divisor = ctx.emit("Where", [by_minus_one, ctx.const(1, common), x2])[0]
    ctx.emit("Where", [by_minus_one, ctx.emit("Neg", [x1])[0], ctx.emit("Div", [x1, divisor])[0]], outs)


def _square(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Mul", [ins[0], ins[0]], outs)


def _rsqrt(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Reciprocal", ctx.emit("Sqrt", [ins[0]]), outs)


def _relu6(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    dt = ctx.dtype(ins[0])
    ctx.emit("Clip", [ins[0], ctx.const(np.array(0, dt)), ctx.const(np.array(6, dt))], outs)


def _gelu(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    x = ins[0]
    dt = ctx.dtype(x)
    erf = ctx.emit("Erf", [ctx.emit("Mul", [x, ctx.const(np.array(1 / np.sqrt(2), dt))])[0]])
    one = ctx.emit("Add", [erf[0], ctx.const(np.array(1, dt))])
    ctx.emit("Mul", [ctx.emit("Mul", [x, one[0]])[0], ctx.const(np.array(0.5, dt))], outs)


def _squared_difference(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    common = promote(ctx.dtype(ins[0]), ctx.dtype(ins[1]))
    diff = ctx.emit("Sub", [ctx.cast(ins[0], common), ctx.cast(ins[1], common)])[0]
    ctx.emit("Mul", [diff, diff], outs)


def _add_n(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Sum", list(ins[0]), outs)


def _matmul(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    """2-D MatMul; ``transpose_x1``/``transpose_x2`` transpose first, ``bias`` is added after."""
    x1, x2, bias = ins[0], ins[1], ins[2]
    common = promote(ctx.dtype(x1), ctx.dtype(x2))
    x1, x2 = ctx.cast(x1, common), ctx.cast(x2, common)
    if a["transpose_x1"]:
        x1 = ctx.emit("Transpose", [x1], perm=[1, 0])[0]
    if a["transpose_x2"]:
        x2 = ctx.emit("Transpose", [x2], perm=[1, 0])[0]
    if bias is None:
        ctx.emit("MatMul", [x1, x2], outs)
    else:
        product = ctx.emit("MatMul", [x1, x2])[0]
        ctx.emit("Add", [product, ctx.cast(bias, common)], outs)


def _last_two(ctx: LowerContext, tensor: str) -> str:
    rank = ctx.rank(tensor)
    if rank is None or rank < 2:
        ctx.fail(f"adjoint of {tensor!r} needs its rank (>= 2), which openacl cannot infer here")
    perm = [*range(rank - 2), rank - 1, rank - 2]
    return ctx.emit("Transpose", [tensor], perm=perm)[0]


def _batch_matmul(flag1: str, flag2: str):
    def lower(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
        x1, x2, bias = ins[0], ins[1], ins[2]
        common = promote(ctx.dtype(x1), ctx.dtype(x2))
        x1, x2 = ctx.cast(x1, common), ctx.cast(x2, common)
        x1 = _last_two(ctx, x1) if a[flag1] else x1
        x2 = _last_two(ctx, x2) if a[flag2] else x2
        if bias is None:
            ctx.emit("MatMul", [x1, x2], outs)
        else:
            ctx.emit("Add", [ctx.emit("MatMul", [x1, x2])[0], ctx.cast(bias, common)], outs)

    return lower


def _cast(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Cast", [ins[0]], outs, to=dtypes.onnx_from_numpy(_ge_dtype(ctx, a["dst_type"])))


def _reshape(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    if a["axis"] != 0 or a["num_axes"] != -1:
        ctx.fail("Reshape with axis/num_axes other than 0/-1 is not supported")
    ctx.emit("Reshape", [ins[0], _int64(ctx, ins[1])], outs)


def _transpose(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Transpose", [ins[0]], outs, perm=_ints(ctx, ins[1], "Transpose's perm"))


def _transpose_d(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Transpose", [ins[0]], outs, perm=list(a["perm"]))


def _unsqueeze(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Unsqueeze", [ins[0], ctx.const(np.array(a["axes"], _INT64))], outs)


def _squeeze(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    axes = list(a["axis"])
    ctx.emit("Squeeze", [ins[0], *([ctx.const(np.array(axes, _INT64))] if axes else [])], outs)


def _expand_dims(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit(
        "Unsqueeze", [ins[0], ctx.emit("Reshape", [_int64(ctx, ins[1]), ctx.const(np.array([1], _INT64))])[0]], outs
    )


def _concat(x_at: int, dim_at: int):
    def lower(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
        axis = _ints(ctx, ins[dim_at], "concat_dim")[0]
        ctx.emit("Concat", list(ins[x_at]), outs, axis=axis)

    return lower


def _pack(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    axes = ctx.const(np.array([a["axis"]], _INT64))
    parts = [ctx.emit("Unsqueeze", [x, axes])[0] for x in ins[0]]
    ctx.emit("Concat", parts, outs, axis=a["axis"])


def _split(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    axis = _ints(ctx, ins[0], "Split's split_dim")[0]
    if a["num_split"] != len(outs):
        ctx.fail(f"num_split={a['num_split']} but y_num={len(outs)}")
    ctx.emit("Split", [ins[1]], outs, axis=axis)


def _split_v(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    axis = _ints(ctx, ins[2], "SplitV's split_dim")[0]
    ctx.emit("Split", [ins[0], _int64(ctx, ins[1])], outs, axis=axis)


def _topk(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    k = ctx.emit("Reshape", [_int64(ctx, ins[1]), ctx.const(np.array([1], _INT64))])[0]
    attrs = {"axis": a["dim"], "largest": int(a["largest"]), "sorted": int(a["sorted"])}
    _, indices = ctx.emit("TopK", [ins[0], k], [outs[0], f"{outs[1]}__int64"], **attrs)
    index_type = _ge_dtype(ctx, a["indices_dtype"]) if "indices_dtype" in a else np.dtype(np.int32)
    ctx.emit("Cast", [indices], [outs[1]], to=dtypes.onnx_from_numpy(index_type))


def _reduce(onnx_type: str, axes_input: bool):
    """ReduceSum takes axes as an input from opset 13; the others only from 18, so theirs must be constants."""

    def lower(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
        keep = int(a["keep_dims"])
        if "axes" in a and not isinstance(a["axes"], str):  # the *D variants: axes is an attribute
            axes = list(a["axes"])
        else:
            if axes_input and ctx.value(ins[1]) is None:
                ctx.emit(onnx_type, [ins[0], _int64(ctx, ins[1])], outs, keepdims=keep)
                return
            axes = _ints(ctx, ins[1], "axes")
        if not axes:
            if a.get("noop_with_empty_axes", False):
                ctx.emit("Identity", [ins[0]], outs)
                return
            axes = None
        if axes_input:
            extra = [ctx.const(np.array(axes, _INT64))] if axes is not None else []
            ctx.emit(onnx_type, [ins[0], *extra], outs, keepdims=keep)
        elif axes is None:
            ctx.emit(onnx_type, [ins[0]], outs, keepdims=keep)
        else:
            ctx.emit(onnx_type, [ins[0]], outs, keepdims=keep, axes=axes)

    return lower


def _like(fill: float):
    def lower(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
        dt = ctx.dtype(ins[0])
        value = numpy_helper.from_array(np.array([fill], dt))
        ctx.emit("ConstantOfShape", ctx.emit("Shape", [ins[0]]), outs, value=value)

    return lower


def _fill(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Expand", [ins[1], _int64(ctx, ins[0])], outs)


def _shape(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Cast", ctx.emit("Shape", [ins[0]]), outs, to=dtypes.onnx_from_numpy(_ge_dtype(ctx, a["dtype"])))


def _broadcast_to(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Expand", [ins[0], _int64(ctx, ins[1])], outs)


def _masked_fill(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    x, mask, value = ins
    mask = ctx.cast(mask, np.dtype(np.bool_))
    ctx.emit("Where", [mask, ctx.cast(value, ctx.dtype(x)), x], outs)


def _select(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    cond, x1, x2 = ins
    common = promote(ctx.dtype(x1), ctx.dtype(x2))
    ctx.emit("Where", [ctx.cast(cond, np.dtype(np.bool_)), ctx.cast(x1, common), ctx.cast(x2, common)], outs)


def _logical(onnx_type: str):
    def lower(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
        ctx.emit(onnx_type, [ctx.cast(t, np.dtype(np.bool_)) for t in ins], outs)

    return lower


def _gather_elements(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("GatherElements", [ins[0], _int64(ctx, ins[1])], outs, axis=a["dim"])


def _gather_v2(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    if a["batch_dims"] != 0:
        ctx.fail("GatherV2 with batch_dims != 0 is not supported")
    axis = _ints(ctx, ins[2], "GatherV2's axis")[0]
    ctx.emit("Gather", [ins[0], _int64(ctx, ins[1])], outs, axis=axis)


def _gather(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Gather", [ins[0], _int64(ctx, ins[1])], outs, axis=0)


def _scatter_elements(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    reduction = a["reduction"]
    if reduction not in ("none", "add", "mul"):
        ctx.fail(f"ScatterElements reduction {reduction!r} is not supported (none, add, mul)")
    ctx.emit(
        "ScatterElements",
        [ins[0], _int64(ctx, ins[1]), ctx.cast(ins[2], ctx.dtype(ins[0]))],
        outs,
        axis=a["axis"],
        reduction=reduction,
    )


def _slice(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    """GE Slice(x, offsets, size): a size of -1 runs to the end of that dimension."""
    starts, size = _int64(ctx, ins[1]), _int64(ctx, ins[2])
    minus_one = ctx.emit("Equal", [size, ctx.const(np.array(-1, _INT64))])[0]
    ends = ctx.emit("Where", [minus_one, ctx.const(np.array(_BIG, _INT64)), ctx.emit("Add", [starts, size])[0]])[0]
    ctx.emit("Slice", [ins[0], starts, ends], outs)


def _strided_slice(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    if a["ellipsis_mask"] or a["new_axis_mask"]:
        ctx.fail("StridedSlice with ellipsis_mask or new_axis_mask is not supported")
    begin = _ints(ctx, ins[1], "StridedSlice's begin")
    end = _ints(ctx, ins[2], "StridedSlice's end")
    strides = _ints(ctx, ins[3], "StridedSlice's strides") if ins[3] is not None else [1] * len(begin)
    shrink = []
    for i, step in enumerate(strides):
        if a["begin_mask"] >> i & 1:
            begin[i] = 0 if step > 0 else _BIG
        if a["end_mask"] >> i & 1:
            end[i] = _BIG if step > 0 else -_BIG
        if a["shrink_axis_mask"] >> i & 1:
            end[i] = begin[i] + 1 if begin[i] != -1 else _BIG
            strides[i] = 1
            shrink.append(i)
    args = [ctx.const(np.array(v, _INT64)) for v in (begin, end, list(range(len(begin))), strides)]
    if not shrink:
        ctx.emit("Slice", [ins[0], *args], outs)
        return
    sliced = ctx.emit("Slice", [ins[0], *args])[0]
    ctx.emit("Squeeze", [sliced, ctx.const(np.array(shrink, _INT64))], outs)


def _tile(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Tile", [ins[0], _int64(ctx, ins[1])], outs)


def _pad(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    """GE paddings ``[[before, after], ...]`` -> ONNX ``[before..., after...]``."""
    flat = ctx.emit(
        "Reshape", [ctx.emit("Transpose", [_int64(ctx, ins[1])], perm=[1, 0])[0], ctx.const(np.array([-1], _INT64))]
    )
    ctx.emit("Pad", [ins[0], flat[0]], outs, mode="constant")


def _softmax(onnx_type: str):
    def lower(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
        axes = list(a["axes"])
        if len(axes) != 1:
            ctx.fail(f"{ctx.op_type} over {len(axes)} axes is not supported (one axis)")
        ctx.emit(onnx_type, [ins[0]], outs, axis=axes[0])

    return lower


def _arg_max(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    axis = _ints(ctx, ins[1], "ArgMaxV2's dimension")[0]
    index = ctx.emit("ArgMax", [ins[0]], axis=axis, keepdims=0)
    ctx.emit("Cast", index, outs, to=dtypes.onnx_from_numpy(_ge_dtype(ctx, a["dtype"])))


def _range(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    common = promote(promote(ctx.dtype(ins[0]), ctx.dtype(ins[1])), ctx.dtype(ins[2]))
    scalars = [ctx.emit("Reshape", [ctx.cast(t, common), ctx.const(np.array([], _INT64))])[0] for t in ins]
    ctx.emit("Range", scalars, outs)


def _channel_view(ctx: LowerContext, tensor: str, data_format: str) -> str:
    """A per-channel vector shaped to broadcast against NCHW ([C,1,1]); NHWC broadcasts as it is."""
    if data_format in ("NCHW", "NCDHW"):
        return ctx.emit("Reshape", [tensor, ctx.const(np.array([-1, 1, 1], _INT64))])[0]
    return tensor


def _bias_add(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Add", [ins[0], _channel_view(ctx, ins[1], a["data_format"])], outs)


def _batch_norm(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    """GE BatchNorm. Inference (``is_training=False``) normalises with the given mean and variance; training
    computes the batch statistics (the biased variance, also in ``batch_variance``: openacl's decision)."""
    x, scale, offset, mean, variance = ins
    fmt = a["data_format"]
    if fmt not in ("NCHW", "NHWC"):
        ctx.fail(f"BatchNorm data_format {fmt!r} is not supported (NCHW, NHWC)")
    dt = ctx.dtype(x)
    axes = [0, 2, 3] if fmt == "NCHW" else [0, 1, 2]
    if a["is_training"]:
        mean = ctx.emit("ReduceMean", [x], axes=axes, keepdims=0)[0]
        centred = ctx.emit("Sub", [x, _channel_view(ctx, mean, fmt)])[0]
        variance = ctx.emit("ReduceMean", [ctx.emit("Mul", [centred, centred])[0]], axes=axes, keepdims=0)[0]
    elif mean is None or variance is None:
        ctx.fail("BatchNorm in inference (is_training=False) needs mean and variance")
    centred = ctx.emit("Sub", [x, _channel_view(ctx, mean, fmt)])[0]
    std = ctx.emit("Sqrt", [ctx.emit("Add", [variance, ctx.const(np.array(a["epsilon"], dt))])[0]])[0]
    normed = ctx.emit("Div", [centred, _channel_view(ctx, std, fmt)])[0]
    scaled = ctx.emit("Mul", [normed, _channel_view(ctx, scale, fmt)])[0]
    ctx.emit("Add", [scaled, _channel_view(ctx, offset, fmt)], [outs[0]])
    for out, source in zip(outs[1:], (mean, variance, mean, variance, variance), strict=True):
        ctx.emit("Identity", [source], [out])


def _conv2d(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    """GE Conv2D: ``x`` in ``data_format``; ``filter`` OIHW for NCHW and HWCN (TensorFlow's) for NHWC.

    ``strides``/``dilations`` have four entries in ``data_format`` order, ``pads`` are [top, bottom, left, right].
    """
    x, w, bias, offset_w = ins
    if offset_w is not None or a["offset_x"] != 0:
        ctx.fail("quantised Conv2D (offset_w, offset_x) is not supported")
    fmt = a["data_format"]
    if fmt not in ("NCHW", "NHWC"):
        ctx.fail(f"Conv2D data_format {fmt!r} is not supported (NCHW, NHWC)")
    h, wd = (2, 3) if fmt == "NCHW" else (1, 2)
    strides = [a["strides"][h], a["strides"][wd]]
    dilations = [a["dilations"][h], a["dilations"][wd]]
    top, bottom, left, right = a["pads"]
    if fmt == "NHWC":
        x = ctx.emit("Transpose", [x], perm=[0, 3, 1, 2])[0]
        w = ctx.emit("Transpose", [w], perm=[3, 2, 0, 1])[0]
    attrs = {"strides": strides, "dilations": dilations, "pads": [top, left, bottom, right], "group": a["groups"]}
    inputs = [x, w] + ([bias] if bias is not None else [])
    if fmt == "NCHW":
        ctx.emit("Conv", inputs, outs, **attrs)
    else:
        ctx.emit("Transpose", ctx.emit("Conv", inputs, **attrs), outs, perm=[0, 2, 3, 1])


def _apply_gradient_descent(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    var, alpha, delta = ins
    dt = ctx.dtype(var)
    step = ctx.emit("Mul", [ctx.cast(alpha, dt), ctx.cast(delta, dt)])[0]
    ctx.emit("Sub", [var, step], outs)


def _if(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    """GE If: ``cond`` is any number (non-zero selects then_branch); each branch's Data ``i`` reads ``input[i]``."""
    cond = ctx.cast(ins[0], np.dtype(np.bool_))
    cond = ctx.emit("Reshape", [cond, ctx.const(np.array([], _INT64))])[0]
    then_graph = ctx.subgraph(a["then_branch"], ins[1], "then_branch")
    else_graph = ctx.subgraph(a["else_branch"], ins[1], "else_branch")
    for graph in (then_graph, else_graph):
        if len(graph.output) != len(outs):
            ctx.fail(f"{graph.name} has {len(graph.output)} outputs, the If node {len(outs)}")
    ctx.emit("If", [cond], outs, then_branch=then_graph, else_branch=else_graph)


_B, _I, _F, _S, _T, _LI = "Bool", "Int", "Float", "String", "Type", "ListInt"
_DT_INT32, _DT_INT64 = 3, 9

_HCCL = "it is an HCCL collective; openacl has one process and no HCCL ranks"
_FUSED = "it is a fused NPU kernel with no CPU implementation in openacl"

RECORDS: tuple[IrOp, ...] = (
    # element-wise, unary
    *(
        ir(t, "x", lower=_unary(o), onnx=o)
        for t, o in (
            ("Relu", "Relu"),
            ("Sigmoid", "Sigmoid"),
            ("Tanh", "Tanh"),
            ("Exp", "Exp"),
            ("Log", "Log"),
            ("Sqrt", "Sqrt"),
            ("Abs", "Abs"),
            ("Neg", "Neg"),
            ("Reciprocal", "Reciprocal"),
            ("Floor", "Floor"),
            ("Ceil", "Ceil"),
            ("Round", "Round"),
            ("Sign", "Sign"),
            ("Erf", "Erf"),
            ("Sin", "Sin"),
            ("Cos", "Cos"),
            ("Softplus", "Softplus"),
            ("Identity", "Identity"),
        )
    ),
    ir("Square", "x", lower=_square, onnx="Mul"),
    ir("Rsqrt", "x", lower=_rsqrt, onnx="Sqrt, Reciprocal"),
    ir("Relu6", "x", lower=_relu6, onnx="Clip"),
    ir("Gelu", "x", lower=_gelu, onnx="Erf"),
    ir(
        "LeakyRelu",
        "x",
        "y",
        [("negative_slope", _F, 0.0)],
        onnx="LeakyRelu",
        lower=lambda c, i, a, o: c.emit("LeakyRelu", [i[0]], o, alpha=a["negative_slope"]),
    ),
    ir(
        "Elu",
        "x",
        "y",
        [("alpha", _F, 1.0)],
        onnx="Elu",
        lower=lambda c, i, a, o: c.emit("Elu", [i[0]], o, alpha=a["alpha"]),
    ),
    ir("ZerosLike", "x", lower=_like(0), onnx="ConstantOfShape"),
    ir("OnesLike", "x", lower=_like(1), onnx="ConstantOfShape"),
    ir("LogicalNot", "x", lower=_logical("Not"), onnx="Not"),
    # element-wise, binary (GE's type promotion)
    *(
        ir(t, "x1 x2", lower=_binary(o), onnx=o)
        for t, o in (
            ("Add", "Add"),
            ("AddV2", "Add"),
            ("Sub", "Sub"),
            ("Mul", "Mul"),
            ("Maximum", "Max"),
            ("Minimum", "Min"),
            ("Greater", "Greater"),
            ("GreaterEqual", "GreaterOrEqual"),
            ("Less", "Less"),
            ("LessEqual", "LessOrEqual"),
            ("Equal", "Equal"),
        )
    ),
    ir("Div", "x1 x2", lower=_divide, onnx="Div"),
    ir("RealDiv", "x1 x2", lower=_divide, onnx="Div"),
    ir("Pow", "x1 x2", lower=_binary("Pow"), onnx="Pow"),
    ir("NotEqual", "x1 x2", onnx="Equal, Not", lower=lambda c, i, a, o: c.emit("Not", _binary_emit(c, "Equal", i), o)),
    ir("SquaredDifference", "x1 x2", lower=_squared_difference, onnx="Sub, Mul"),
    ir("LogicalAnd", "x1 x2", lower=_logical("And"), onnx="And"),
    ir("LogicalOr", "x1 x2", lower=_logical("Or"), onnx="Or"),
    ir("AddN", "x*", "y", [("N", _I)], lower=_add_n, onnx="Sum"),
    ir("Select", "condition x1 x2", lower=_select, onnx="Where"),
    ir("MaskedFill", "x mask value", lower=_masked_fill, onnx="Where"),
    # matrix
    ir(
        "MatMul",
        "x1 x2 bias?",
        "y",
        [("transpose_x1", _B, False), ("transpose_x2", _B, False)],
        lower=_matmul,
        onnx="MatMul",
    ),
    ir(
        "MatMulV2",
        "x1 x2 bias? offset_w?",
        "y",
        [("transpose_x1", _B, False), ("transpose_x2", _B, False), ("offset_x", _I, 0)],
        lower=lambda c, i, a, o: _matmul(c, i[:3], a, o),
        onnx="MatMul",
    ),
    ir(
        "BatchMatMul",
        "x1 x2 bias?",
        "y",
        [("adj_x1", _B, False), ("adj_x2", _B, False)],
        lower=_batch_matmul("adj_x1", "adj_x2"),
        onnx="MatMul",
    ),
    ir(
        "BatchMatMulV2",
        "x1 x2 bias? offset_w?",
        "y",
        [("adj_x1", _B, False), ("adj_x2", _B, False), ("offset_x", _I, 0)],
        lower=lambda c, i, a, o: _batch_matmul("adj_x1", "adj_x2")(c, i[:3], a, o),
        onnx="MatMul",
    ),
    # shape and layout
    ir("Cast", "x", "y", [("dst_type", _I)], lower=_cast, onnx="Cast"),
    ir("Reshape", "x shape", "y", [("axis", _I, 0), ("num_axes", _I, -1)], lower=_reshape, onnx="Reshape"),
    ir("Transpose", "x perm", lower=_transpose, onnx="Transpose"),
    ir("TransposeD", "x", "y", [("perm", _LI)], lower=_transpose_d, onnx="Transpose"),
    ir("Unsqueeze", "x", "y", [("axes", _LI, [])], lower=_unsqueeze, onnx="Unsqueeze"),
    ir("Squeeze", "x", "y", [("axis", _LI, [])], lower=_squeeze, onnx="Squeeze"),
    ir("ExpandDims", "x axis", lower=_expand_dims, onnx="Unsqueeze"),
    ir("ConcatV2", "x* concat_dim", "y", [("N", _I, 1)], lower=_concat(0, 1), onnx="Concat"),
    ir("Concat", "concat_dim x*", "y", [("N", _I, 1)], lower=_concat(1, 0), onnx="Concat"),
    ir("Pack", "x*", "y", [("axis", _I, 0), ("N", _I)], lower=_pack, onnx="Unsqueeze, Concat"),
    ir("Split", "split_dim x", "y*", [("num_split", _I)], lower=_split, onnx="Split"),
    ir("SplitV", "x size_splits split_dim", "y*", [("num_split", _I)], lower=_split_v, onnx="Split"),
    ir("Shape", "x", "y", [("dtype", _I, _DT_INT32)], lower=_shape, onnx="Shape"),
    ir("BroadcastTo", "x shape", lower=_broadcast_to, onnx="Expand"),
    ir("Fill", "dims value", lower=_fill, onnx="Expand"),
    ir("Tile", "x multiples", lower=_tile, onnx="Tile"),
    ir("Pad", "x paddings", lower=_pad, onnx="Pad"),
    ir("Slice", "x offsets size", lower=_slice, onnx="Slice"),
    ir(
        "StridedSlice",
        "x begin end strides?",
        "y",
        [
            ("begin_mask", _I, 0),
            ("end_mask", _I, 0),
            ("ellipsis_mask", _I, 0),
            ("new_axis_mask", _I, 0),
            ("shrink_axis_mask", _I, 0),
        ],
        lower=_strided_slice,
        onnx="Slice",
    ),
    ir("Range", "start limit delta", lower=_range, onnx="Range"),
    # gather / scatter / selection
    ir("GatherElements", "x index", "y", [("dim", _I, 0)], lower=_gather_elements, onnx="GatherElements"),
    ir("GatherV2", "x indices axis", "y", [("batch_dims", _I, 0)], lower=_gather_v2, onnx="Gather"),
    ir(
        "Gather",
        "x indices",
        "y",
        [("validate_indices", _B, True), ("batch_dims", _I, 0)],
        lower=_gather,
        onnx="Gather",
    ),
    ir(
        "ScatterElements",
        "data indices updates",
        "y",
        [("axis", _I, 0), ("reduction", _S, "none")],
        lower=_scatter_elements,
        onnx="ScatterElements",
    ),
    ir(
        "TopKV2",
        "x k",
        "values indices",
        [("sorted", _B, True), ("dim", _I, -1), ("largest", _B, True), ("indices_dtype", _T, _DT_INT32)],
        lower=_topk,
        onnx="TopK",
    ),
    ir(
        "TopK",
        "x k",
        "values indices",
        [("sorted", _B, True), ("largest", _B, True), ("dim", _I, -1)],
        lower=_topk,
        onnx="TopK",
    ),
    ir("ArgMaxV2", "x dimension", "y", [("dtype", _T, _DT_INT64)], lower=_arg_max, onnx="ArgMax"),
    # reductions (GE spells TensorFlow's Sum and Mean as ReduceSum and ReduceMean; both spellings are here)
    ir(
        "ReduceSum",
        "x axes",
        "y",
        [("keep_dims", _B, False), ("noop_with_empty_axes", _B, True)],
        lower=_reduce("ReduceSum", True),
        onnx="ReduceSum",
    ),
    ir("Sum", "x axes", "y", [("keep_dims", _B, False)], lower=_reduce("ReduceSum", True), onnx="ReduceSum"),
    ir(
        "ReduceSumD",
        "x",
        "y",
        [("axes", _LI), ("keep_dims", _B, False)],
        lower=_reduce("ReduceSum", True),
        onnx="ReduceSum",
    ),
    ir(
        "ReduceMean",
        "x axes",
        "y",
        [("keep_dims", _B, False), ("noop_with_empty_axes", _B, True)],
        lower=_reduce("ReduceMean", False),
        onnx="ReduceMean",
    ),
    ir("Mean", "x axes", "y", [("keep_dims", _B, False)], lower=_reduce("ReduceMean", False), onnx="ReduceMean"),
    ir(
        "ReduceMeanD",
        "x",
        "y",
        [("axes", _LI), ("keep_dims", _B, False)],
        lower=_reduce("ReduceMean", False),
        onnx="ReduceMean",
    ),
    ir("ReduceMax", "x axes", "y", [("keep_dims", _B, False)], lower=_reduce("ReduceMax", False), onnx="ReduceMax"),
    ir("ReduceMin", "x axes", "y", [("keep_dims", _B, False)], lower=_reduce("ReduceMin", False), onnx="ReduceMin"),
    ir("ReduceProd", "x axes", "y", [("keep_dims", _B, False)], lower=_reduce("ReduceProd", False), onnx="ReduceProd"),
    # neural network
    ir("SoftmaxV2", "x", "y", [("axes", _LI, [-1])], lower=_softmax("Softmax"), onnx="Softmax"),
    ir("Softmax", "x", "y", [("axes", _LI, [-1])], lower=_softmax("Softmax"), onnx="Softmax"),
    ir("LogSoftmaxV2", "x", "logsoftmax", [("axes", _LI, [-1])], lower=_softmax("LogSoftmax"), onnx="LogSoftmax"),
    ir("BiasAdd", "x bias", "y", [("data_format", _S, "NHWC")], lower=_bias_add, onnx="Add"),
    ir(
        "BatchNorm",
        "x scale offset mean? variance?",
        "y batch_mean batch_variance reserve_space_1 reserve_space_2 reserve_space_3",
        [
            ("epsilon", _F, 0.0001),
            ("data_format", _S, "NHWC"),
            ("is_training", _B, True),
            ("exponential_avg_factor", _F, 1.0),
        ],
        lower=_batch_norm,
        onnx="ReduceMean, Sub, Div, Mul, Add",
    ),
    ir(
        "Conv2D",
        "x filter bias? offset_w?",
        "y",
        [
            ("strides", _LI),
            ("pads", _LI),
            ("dilations", _LI, [1, 1, 1, 1]),
            ("groups", _I, 1),
            ("data_format", _S, "NHWC"),
            ("offset_x", _I, 0),
        ],
        lower=_conv2d,
        onnx="Conv",
    ),
    # training
    ir(
        "ApplyGradientDescent",
        "var alpha delta",
        "var",
        [("use_locking", _B, False)],
        lower=_apply_gradient_descent,
        onnx="Mul, Sub",
        refs=[("var", "var")],
    ),
    # control flow
    ir("If", "cond input*", "output*", subgraphs="then_branch else_branch", lower=_if, onnx="If"),
    # what a CPU cannot run
    *(
        ir(t, unsupported=_HCCL)
        for t in (
            "HcomAllReduce",
            "HcomAllGather",
            "HcomReduceScatter",
            "HcomBroadcast",
            "HcomAllToAllV",
            "HcomAllToAll",
            "HcomSend",
            "HcomReceive",
            "HcomReduce",
            "MatmulAllReduce",
            "AllGatherMatmul",
            "MatmulReduceScatter",
        )
    ),
    *(
        ir(t, unsupported=_FUSED)
        for t in (
            "PromptFlashAttention",
            "IncreFlashAttention",
            "FusedInferAttentionScore",
            "FlashAttentionScore",
            "DynamicQuant",
            "MoeGatingTopKSoftmax",
            "GroupedMatmul",
            "GroupedMatmulFinalizeRouting",
            "AddRmsNorm",
            "RmsNorm",
            "RotaryPositionEmbedding",
            "MoeInitRouting",
            "MoeFinalizeRouting",
        )
    ),
    ir(
        "TransData",
        unsupported="it converts to NPU storage layouts (FRACTAL_NZ, NC1HWC0, ...), which openacl does not keep",
    ),
)


def _binary_emit(ctx: LowerContext, onnx_type: str, ins: list) -> list[str]:
    common = promote(ctx.dtype(ins[0]), ctx.dtype(ins[1]))
    return ctx.emit(onnx_type, [ctx.cast(ins[0], common), ctx.cast(ins[1], common)])


TABLE: dict[str, IrOp] = {record.type: record for record in RECORDS}
assert len(TABLE) == len(RECORDS), "a GE op type is declared twice"
