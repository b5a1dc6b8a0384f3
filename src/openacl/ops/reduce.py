"""Reductions: ReduceSum/Mean/Max/Min/Prod (axes an input) and their D forms (axes an attribute), ArgMax."""

from __future__ import annotations

from openacl import dtypes
from openacl.ops.ir import OUTPUT, IrAttr, IrOp, LowerContext, ir
from openacl.ops.lowering import as_int64, dtype_of, int64s, ints, one_int


def _reduce(onnx_type: str):
    """ReduceSum takes its axes as an input from opset 13, the others from 18 (before: an attribute, so their axes
    must be constants). Empty axes reduce every dim unless ``noop_with_empty_axes``."""

    def lower(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
        keep = int(a["keep_dims"])
        as_input = onnx_type == "ReduceSum" or ctx.opset >= 18
        if len(ins) == 1:  # the D forms: axes is an attribute
            axes = list(a["axes"])
        elif as_input and ctx.value(ins[1]) is None:
            ctx.emit(onnx_type, [ins[0], as_int64(ctx, ins[1], "axes")], outs, keepdims=keep)
            return
        else:
            axes = ints(ctx, ins[1], "axes")
        if not axes and a.get("noop_with_empty_axes", False):
            ctx.emit("Identity", [ins[0]], outs)
        elif not axes:
            ctx.emit(onnx_type, [ins[0]], outs, keepdims=keep)
        elif as_input:
            ctx.emit(onnx_type, [ins[0], int64s(ctx, axes, "axes")], outs, keepdims=keep)
        else:
            ctx.emit(onnx_type, [ins[0]], outs, keepdims=keep, axes=axes)

    return lower


_KEEP = ("keep_dims", "Bool", False)
#: GE's prototype leaves empty axes alone; acl.op's ReduceSum/ReduceMean always reduced every dim for them.
_NOOP = IrAttr("noop_with_empty_axes", "Bool", True, op_default=False)


def _reductions(name: str, onnx_type: str, noop: bool) -> tuple[IrOp, ...]:
    doc = f"{onnx_type} over axes"
    return (
        ir(name, "x axes", "y", [_KEEP, *([_NOOP] if noop else [])], lower=_reduce(onnx_type), onnx=onnx_type, doc=doc),
        ir(
            f"{name}D",
            "x",
            "y",
            [IrAttr("axes", "ListInt", op_default=()), _KEEP],
            lower=_reduce(onnx_type),
            onnx=onnx_type,
            doc=f"{onnx_type} over the axes attribute ([]: every dim)",
        ),
    )


def _argmax(ctx: LowerContext, x: str, axis: int, a: dict, outs: list[str]) -> None:
    rank = ctx.rank(x)
    if rank is not None and not -rank <= axis < max(rank, 1):
        ctx.fail(f"dimension {axis} is outside x's {rank} dims")
    target = ctx.out_dtype(0) or dtype_of(ctx, a["dtype"])
    if target.kind != "i":
        ctx.fail(f"the output must be int32 or int64, not {target}", OUTPUT)
    index = ctx.emit("ArgMax", [x], axis=axis, keepdims=0)
    ctx.emit("Cast", index, outs, to=dtypes.onnx_from_numpy(target))


def _argmax_v2(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    _argmax(ctx, ins[0], one_int(ctx, ins[1], "dimension"), a, outs)


def _argmax_d(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    _argmax(ctx, ins[0], a["dimension"], a, outs)


_DT_INT64 = 9
_DTYPE = ("dtype", "Type", _DT_INT64)  # the index dtype; acl.op's output desc decides
_ARGMAX_DOC = "index of the largest value along dimension"

RECORDS: tuple[IrOp, ...] = (
    *_reductions("ReduceSum", "ReduceSum", noop=True),
    ir("Sum", "x axes", "y", [_KEEP], lower=_reduce("ReduceSum"), onnx="ReduceSum", doc="as ReduceSum"),
    *_reductions("ReduceMean", "ReduceMean", noop=True),
    ir("Mean", "x axes", "y", [_KEEP], lower=_reduce("ReduceMean"), onnx="ReduceMean", doc="as ReduceMean"),
    *_reductions("ReduceMax", "ReduceMax", noop=False),
    ir("ReduceMin", "x axes", "y", [_KEEP], lower=_reduce("ReduceMin"), onnx="ReduceMin", doc="ReduceMin over axes"),
    ir("ReduceProd", "x axes", "y", [_KEEP], lower=_reduce("ReduceProd"), onnx="ReduceProd", doc="over axes"),
    ir("ArgMaxV2", "x dimension", "y", [_DTYPE], lower=_argmax_v2, onnx="ArgMax", doc=f"{_ARGMAX_DOC} (const)"),
    ir("ArgMaxD", "x", "y", [("dimension", "Int"), _DTYPE], lower=_argmax_d, onnx="ArgMax", doc=_ARGMAX_DOC),
)
