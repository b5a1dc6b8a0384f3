"""Indexing operators: gathers, scatters and TopK."""

from __future__ import annotations

from openacl import dtypes
from openacl.ops.ir import ATTR, IrOp, LowerContext, ir
from openacl.ops.lowering import as_int64, dtype_of, int64s, one_int


def _gather_elements(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("GatherElements", [ins[0], as_int64(ctx, ins[1], "index")], outs, axis=a["dim"])


def _gather_v2(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    if a["batch_dims"] != 0:
        ctx.fail("batch_dims != 0 is not supported", ATTR)
    axis = one_int(ctx, ins[2], "axis")
    ctx.emit("Gather", [ins[0], as_int64(ctx, ins[1], "indices")], outs, axis=axis)


def _gather(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Gather", [ins[0], as_int64(ctx, ins[1], "indices")], outs, axis=0)


def _scatter_elements(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    reduction = a["reduction"]
    if reduction not in ("none", "add", "mul"):
        ctx.fail(f"reduction {reduction!r} is not supported (none, add, mul)", ATTR)
    inputs = [ins[0], as_int64(ctx, ins[1], "indices"), ctx.cast(ins[2], ctx.dtype(ins[0]))]
    ctx.emit("ScatterElements", inputs, outs, axis=a["axis"], reduction=reduction)


def _topk(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    k = ctx.emit("Reshape", [as_int64(ctx, ins[1], "k"), int64s(ctx, [1])])[0]
    attrs = {"axis": a["dim"], "largest": int(a["largest"]), "sorted": int(a["sorted"])}
    _, indices = ctx.emit("TopK", [ins[0], k], [outs[0], f"{outs[1]}__int64"], **attrs)
    index_type = ctx.out_dtype(1) or dtype_of(ctx, a.get("indices_dtype", _DT_INT32))
    ctx.emit("Cast", [indices], [outs[1]], to=dtypes.onnx_from_numpy(index_type))


_DT_INT32 = 3
_TOPK = [("sorted", "Bool", True), ("dim", "Int", -1), ("largest", "Bool", True)]

RECORDS: tuple[IrOp, ...] = (
    ir("GatherElements", "x index", "y", [("dim", "Int", 0)], lower=_gather_elements, onnx="GatherElements"),
    ir("GatherV2", "x indices axis", "y", [("batch_dims", "Int", 0)], lower=_gather_v2, onnx="Gather"),
    ir(
        "Gather",
        "x indices",
        "y",
        [("validate_indices", "Bool", True), ("batch_dims", "Int", 0)],
        lower=_gather,
        onnx="Gather",
    ),
    ir(
        "ScatterElements",
        "data indices updates",
        "y",
        [("axis", "Int", 0), ("reduction", "String", "none")],
        lower=_scatter_elements,
        onnx="ScatterElements",
    ),
    ir(
        "TopKV2",
        "x k",
        "values indices",
        [*_TOPK, ("indices_dtype", "Type", _DT_INT32)],
        lower=_topk,
        onnx="TopK",
    ),
    ir("TopK", "x k", "values indices", [_TOPK[0], _TOPK[2], _TOPK[1]], lower=_topk, onnx="TopK"),
)
