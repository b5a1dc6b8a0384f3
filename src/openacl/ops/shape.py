"""Operators that move data without arithmetic: reshapes, transposes, concatenations, splits, slices, fills."""

from __future__ import annotations

import numpy as np

from openacl import dtypes
from openacl.ops.ir import ATTR, IrAttr, IrOp, LowerContext, ir
from openacl.ops.lowering import INT64, INT64_MAX, INT64_MIN, as_int64, dtype_of, int64s, ints, one_int

# ----- Reshape, Transpose, Squeeze, Unsqueeze -----


def _reshape(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    if a["axis"] != 0 or a["num_axes"] != -1:
        ctx.fail("only axis=0, num_axes=-1 (the whole shape) is supported", ATTR)
    ctx.emit("Reshape", [ins[0], as_int64(ctx, ins[1], "shape")], outs)


def _transpose_to(ctx: LowerContext, x: str, perm: list[int], outs: list[str]) -> None:
    rank = ctx.rank(x)
    if rank == 0:
        ctx.fail("x is a scalar: a transpose needs 1 or more dims")
    if rank is not None and sorted(perm) != list(range(rank)):
        ctx.fail(f"perm {perm} is not a permutation of x's {rank} dims")
    ctx.emit("Transpose", [x], outs, perm=perm)


def _transpose(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    _transpose_to(ctx, ins[0], ints(ctx, ins[1], "perm"), outs)


def _transpose_d(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    _transpose_to(ctx, ins[0], list(a["perm"]), outs)


def _unsqueeze(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Unsqueeze", [ins[0], int64s(ctx, a["axes"], "axes")], outs)


def _squeeze(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    axes = list(a["axis"])
    ctx.emit("Squeeze", [ins[0], *([int64s(ctx, axes, "axis")] if axes else [])], outs)


def _expand_dims(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    axis = ctx.emit("Reshape", [as_int64(ctx, ins[1], "axis"), int64s(ctx, [1])])[0]
    ctx.emit("Unsqueeze", [ins[0], axis], outs)


# ----- concatenation, stacking, splitting -----


def _concat_to(ctx: LowerContext, tensors: list[str], axis: int, outs: list[str]) -> None:
    rank = ctx.rank(tensors[0])
    if rank is not None and not -rank <= axis < rank:
        ctx.fail(f"concat_dim {axis} is outside the inputs' {rank} dims", ATTR)
    ctx.emit("Concat", tensors, outs, axis=axis)


def _concat(x_at: int, dim_at: int):
    def lower(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
        _concat_to(ctx, list(ins[x_at]), one_int(ctx, ins[dim_at], "concat_dim"), outs)

    return lower


def _concat_d(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    _concat_to(ctx, list(ins[0]), a["concat_dim"], outs)


def _pack(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    axes = int64s(ctx, [a["axis"]], "axis")
    ctx.emit("Concat", [ctx.emit("Unsqueeze", [x, axes])[0] for x in ins[0]], outs, axis=a["axis"])


def _split_to(ctx: LowerContext, inputs: list[str], axis: int, outs: list[str]) -> None:
    extra = {"num_outputs": len(outs)} if ctx.opset >= 18 and len(inputs) == 1 else {}
    ctx.emit("Split", inputs, outs, axis=axis, **extra)


def _split(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    axis = one_int(ctx, ins[0], "split_dim")
    if a["num_split"] != len(outs):
        ctx.fail(f"num_split={a['num_split']} but y_num={len(outs)}", ATTR)
    _split_to(ctx, [ins[1]], axis, outs)


def _split_v(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    _split_to(ctx, [ins[0], as_int64(ctx, ins[1], "size_splits")], one_int(ctx, ins[2], "split_dim"), outs)


# ----- shapes and fills -----


def _shape(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Cast", ctx.emit("Shape", [ins[0]]), outs, to=dtypes.onnx_from_numpy(dtype_of(ctx, a["dtype"])))


def _expand(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Expand", [ins[0], as_int64(ctx, ins[1], "shape")], outs)


def _fill(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Expand", [ins[1], as_int64(ctx, ins[0], "dims")], outs)


def _tile(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Tile", [ins[0], as_int64(ctx, ins[1], "multiples")], outs)


def _pad(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    """Paddings ``[[before, after], ...]`` -> ONNX ``[before..., after...]``."""
    pairs = ctx.emit("Transpose", [as_int64(ctx, ins[1], "paddings")], perm=[1, 0])[0]
    ctx.emit("Pad", [ins[0], ctx.emit("Reshape", [pairs, int64s(ctx, [-1])])[0]], outs, mode="constant")


def _range(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    start, limit = ctx.meet(ins[:2])
    start, delta = ctx.meet([start, ins[2]])
    limit = ctx.meet([limit, delta])[0]
    scalar = ctx.const(np.array([], INT64))
    ctx.emit("Range", [ctx.emit("Reshape", [t, scalar])[0] for t in (start, limit, delta)], outs)


# ----- Slice: offsets and size (-1: to the end) -----


def _slice_ends(offsets: list[int], size: list[int]) -> list[int]:
    """Each end, clamped to int64 (ONNX clamps ends to the dim anyway): 2**63-1 + 2 must not overflow."""
    ends = [INT64_MAX if n == -1 else start + n for start, n in zip(offsets, size, strict=True)]
    return [min(max(end, INT64_MIN), INT64_MAX) for end in ends]


def _slice_to(ctx: LowerContext, x: str, starts: str, ends: str, count: int | None, outs: list[str]) -> None:
    rank = ctx.rank(x)
    if count is not None and rank is not None and count != rank:
        ctx.fail(f"offsets and size need one value per dim of x (rank {rank}), got {count}")
    ctx.emit("Slice", [x, starts, ends], outs)


def _static_slice(ctx: LowerContext, x: str, starts: list[int], lengths: list[int], outs: list[str]) -> None:
    if len(starts) != len(lengths):
        ctx.fail(f"{len(starts)} offsets but {len(lengths)} sizes")
    ends = _slice_ends(starts, lengths)
    _slice_to(ctx, x, int64s(ctx, starts, "offsets"), int64s(ctx, ends, "ends"), len(starts), outs)


def _slice(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    x, offsets, size = ins
    if ctx.value(offsets) is not None and ctx.value(size) is not None:
        _static_slice(ctx, x, ints(ctx, offsets, "offsets"), ints(ctx, size, "size"), outs)
        return
    # Offsets and size known only when the operator runs: ends = size == -1 ? INT64_MAX : offsets + size.
    starts, lengths = as_int64(ctx, offsets, "offsets"), as_int64(ctx, size, "size")
    to_end = ctx.emit("Equal", [lengths, int64s(ctx, [-1])])[0]
    ends = ctx.emit("Where", [to_end, int64s(ctx, [INT64_MAX]), ctx.emit("Add", [starts, lengths])[0]])[0]
    shape = ctx.shape(offsets)
    _slice_to(ctx, x, starts, ends, shape[0] if shape is not None and len(shape) == 1 else None, outs)


def _slice_d(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    starts, lengths = list(a["offsets"]), list(a["size"])
    if len(starts) != len(lengths):
        ctx.fail(f"{len(starts)} offsets but {len(lengths)} sizes", ATTR)
    _static_slice(ctx, ins[0], starts, lengths, outs)


# ----- StridedSlice: TensorFlow's begin/end/strides with masks -----

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _strided(ctx: LowerContext, x: str, begin: list[int], end: list[int], strides: list[int], a: dict, outs) -> None:
    if a["ellipsis_mask"] or a["new_axis_mask"]:
        ctx.fail("ellipsis_mask and new_axis_mask are not supported (must be 0)", ATTR)
    rank = ctx.rank(x)
    if not len(begin) == len(end) == len(strides) or (rank is not None and len(begin) > rank):
        ctx.fail(f"begin {begin}, end {end}, strides {strides} for x of rank {rank}")
    if 0 in strides:
        ctx.fail("a stride of 0")
    starts, ends, steps, squeeze = [], [], [], []
    for axis, (start, stop, step) in enumerate(zip(begin, end, strides, strict=True)):
        bit = 1 << axis
        if a["shrink_axis_mask"] & bit:  # shrinking takes the one element at begin; the masks do not apply
            starts.append(start)
            ends.append(start + 1 if start != -1 else INT64_MAX)
            steps.append(1)
            squeeze.append(axis)
            continue
        if a["begin_mask"] & bit:
            start = 0 if step > 0 else INT64_MAX
        if a["end_mask"] & bit:
            stop = INT64_MAX if step > 0 else INT64_MIN
        starts.append(start)
        ends.append(stop)
        steps.append(step)
    args = [int64s(ctx, v, w) for v, w in ((starts, "begin"), (ends, "end"), (range(len(starts)), "axes"))]
    args.append(int64s(ctx, steps, "strides"))
    if not squeeze:
        ctx.emit("Slice", [x, *args], outs)
        return
    ctx.emit("Squeeze", [ctx.emit("Slice", [x, *args])[0], int64s(ctx, squeeze, "axes")], outs)


def _strided_slice(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    x, begin, end, strides = ins
    begin, end = ints(ctx, begin, "begin"), ints(ctx, end, "end")
    steps = ints(ctx, strides, "strides") if strides is not None else [1] * len(begin)
    _strided(ctx, x, begin, end, steps, a, outs)


def _strided_slice_d(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    _strided(ctx, ins[0], list(a["begin"]), list(a["end"]), list(a["strides"]), a, outs)


_DT_INT32 = 3
_N = IrAttr("N", "Int", 1, counts="x")  # the number of tensors of x
_MASK_ATTRS = [(name, "Int", 0) for name in _MASKS]

RECORDS: tuple[IrOp, ...] = (
    ir(
        "Reshape",
        "x shape",
        "y",
        [("axis", "Int", 0), ("num_axes", "Int", -1)],
        lower=_reshape,
        onnx="Reshape",
        doc="ONNX Reshape: 0 copies x's dim, -1 is inferred",
    ),
    ir("Transpose", "x perm", lower=_transpose, onnx="Transpose", doc="perm const"),
    ir("TransposeD", "x", "y", [("perm", "ListInt")], lower=_transpose_d, onnx="Transpose"),
    ir("Unsqueeze", "x", "y", [("axes", "ListInt", [])], lower=_unsqueeze, onnx="Unsqueeze"),
    ir("Squeeze", "x", "y", [("axis", "ListInt", [])], lower=_squeeze, onnx="Squeeze", doc="[]: every dim of 1"),
    ir("ExpandDims", "x axis", lower=_expand_dims, onnx="Unsqueeze"),
    ir("ConcatV2", "x* concat_dim", "y", [_N], lower=_concat(0, 1), onnx="Concat", doc="concat_dim const, last"),
    ir("Concat", "concat_dim x*", "y", [_N], lower=_concat(1, 0), onnx="Concat", doc="concat_dim const, first"),
    ir(
        "ConcatD",
        "x*",
        "y",
        [("concat_dim", "Int"), _N],
        lower=_concat_d,
        onnx="Concat",
        doc="joins the tensors along concat_dim",
    ),
    ir("ConcatV2D", "x*", "y", [("concat_dim", "Int"), _N], lower=_concat_d, onnx="Concat", doc="as ConcatD"),
    ir("Pack", "x*", "y", [("axis", "Int", 0), IrAttr("N", "Int", counts="x")], lower=_pack, onnx="Unsqueeze, Concat"),
    ir("Split", "split_dim x", "y*", [("num_split", "Int")], lower=_split, onnx="Split", doc="split_dim const"),
    ir("SplitV", "x size_splits split_dim", "y*", [("num_split", "Int")], lower=_split_v, onnx="Split"),
    ir("Shape", "x", "y", [("dtype", "Int", _DT_INT32)], lower=_shape, onnx="Shape"),
    ir("BroadcastTo", "x shape", lower=_expand, onnx="Expand"),
    ir("Fill", "dims value", lower=_fill, onnx="Expand"),
    ir("Tile", "x multiples", lower=_tile, onnx="Tile"),
    ir("Pad", "x paddings", lower=_pad, onnx="Pad", doc="constant 0"),
    ir("Slice", "x offsets size", lower=_slice, onnx="Slice", doc="x[offsets : offsets+size]"),
    ir(
        "SliceD",
        "x",
        "y",
        [("offsets", "ListInt"), ("size", "ListInt")],
        lower=_slice_d,
        onnx="Slice",
        doc="as Slice, offsets and size attributes (-1: to the end)",
    ),
    ir(
        "StridedSlice",
        "x begin end strides?",
        "y",
        _MASK_ATTRS,
        lower=_strided_slice,
        onnx="Slice",
        doc="x[begin:end:strides] with TensorFlow's masks; begin/end/strides const",
    ),
    ir(
        "StridedSliceD",
        "x",
        "y",
        [("begin", "ListInt"), ("end", "ListInt"), ("strides", "ListInt"), *_MASK_ATTRS],
        lower=_strided_slice_d,
        onnx="Slice",
        doc="as StridedSlice, begin/end/strides attributes",
    ),
    ir("Range", "start limit delta", lower=_range, onnx="Range"),
)
