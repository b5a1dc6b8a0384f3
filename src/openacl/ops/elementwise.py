"""Element-wise operators: unary and binary arithmetic (numpy broadcasting), comparisons, logic, selection.

Binary operands meet at one dtype (:meth:`LowerContext.meet`). An int32/int64 division is three nodes more.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from openacl.ops.ir import IrAttr, IrOp, LowerContext, ir

_TRAPPING = (np.dtype(np.int32), np.dtype(np.int64))  # the CPU's idiv traps on MIN / -1: SIGFPE kills the process
_BOOL = np.dtype(np.bool_)


def _unary(onnx_type: str, **attrs: Any):
    def lower(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
        ctx.emit(onnx_type, [ins[0]], outs, **attrs)

    return lower


def _binary(onnx_type: str):
    def lower(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
        ctx.emit(onnx_type, ctx.meet(ins[:2]), outs)

    return lower


def _divide(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    """x1 / x2. Invariant: onnxruntime never divides an int32/int64 by -1 (MIN / -1 is a hardware trap that ends
    the process); that quotient is -x1, which wraps MIN to MIN as two's complement does."""
    x1, x2 = ctx.meet(ins)
    dtype = ctx.dtype(x1)
    if dtype not in _TRAPPING or ctx.dtype(x2) != dtype:
        ctx.emit("Div", [x1, x2], outs)
        return
    by_minus_one = ctx.emit("Equal", [x2, ctx.const(np.array(-1, dtype))])[0]
    divisor = ctx.emit("Where", [by_minus_one, ctx.const(np.array(1, dtype)), x2])[0]
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
    diff = ctx.emit("Sub", ctx.meet(ins))[0]
    ctx.emit("Mul", [diff, diff], outs)


def _not_equal(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Not", ctx.emit("Equal", ctx.meet(ins)), outs)


def _add_n(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    ctx.emit("Sum", list(ins[0]), outs)


def _like(fill: float):
    def lower(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
        ctx.emit("ConstantOfShape", ctx.emit("Shape", [ins[0]]), outs, value=np.array([fill], ctx.dtype(ins[0])))

    return lower


def _logical(onnx_type: str):
    def lower(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
        ctx.emit(onnx_type, [ctx.cast(t, _BOOL) for t in ins], outs)

    return lower


def _select(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    cond, x1, x2 = ins
    ctx.emit("Where", [ctx.cast(cond, _BOOL), *ctx.meet([x1, x2])], outs)


def _masked_fill(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    x, mask, value = ins
    ctx.emit("Where", [ctx.cast(mask, _BOOL), ctx.cast(value, ctx.dtype(x)), x], outs)


_UNARY = (
    ("Relu", "Relu", "y = max(x, 0)"),
    ("Sigmoid", "Sigmoid", "y = 1 / (1 + exp(-x))"),
    ("Tanh", "Tanh", "y = tanh(x)"),
    ("Exp", "Exp", "y = exp(x)"),
    ("Log", "Log", "y = ln(x)"),
    ("Sqrt", "Sqrt", "y = sqrt(x)"),
    ("Abs", "Abs", "y = |x|"),
    ("Neg", "Neg", "y = -x"),
    ("Reciprocal", "Reciprocal", "y = 1 / x"),
    ("Floor", "Floor", ""),
    ("Ceil", "Ceil", ""),
    ("Round", "Round", "half to even"),
    ("Sign", "Sign", ""),
    ("Erf", "Erf", ""),
    ("Sin", "Sin", ""),
    ("Cos", "Cos", ""),
    ("Softplus", "Softplus", "y = ln(1 + exp(x))"),
    ("Identity", "Identity", "y = x"),
)
_BINARY = (
    ("Add", "Add", "y = x1 + x2"),
    ("AddV2", "Add", "y = x1 + x2"),
    ("Sub", "Sub", "y = x1 - x2"),
    ("Mul", "Mul", "y = x1 * x2"),
    ("Maximum", "Max", "y = max(x1, x2)"),
    ("Minimum", "Min", "y = min(x1, x2)"),
    ("Pow", "Pow", "y = x1 ** x2"),
    ("Greater", "Greater", "y = x1 > x2"),
    ("GreaterEqual", "GreaterOrEqual", "y = x1 >= x2"),
    ("Less", "Less", "y = x1 < x2"),
    ("LessEqual", "LessOrEqual", "y = x1 <= x2"),
    ("Equal", "Equal", "y = x1 == x2"),
)
_DIVISION = "y = x1 / x2 (integers: toward zero; MIN / -1 is MIN)"

RECORDS: tuple[IrOp, ...] = (
    *(ir(t, "x", lower=_unary(o), onnx=o, doc=d) for t, o, d in _UNARY),
    ir("Square", "x", lower=_square, onnx="Mul", doc="y = x * x"),
    ir("Rsqrt", "x", lower=_rsqrt, onnx="Sqrt, Reciprocal", doc="y = 1 / sqrt(x)"),
    ir("Relu6", "x", lower=_relu6, onnx="Clip", doc="y = min(max(x, 0), 6)"),
    ir("Gelu", "x", lower=_gelu, onnx="Erf", doc="exact (erf) GELU"),
    ir(
        "LeakyRelu",
        "x",
        "y",
        [("negative_slope", "Float", 0.0)],
        onnx="LeakyRelu",
        lower=lambda c, i, a, o: c.emit("LeakyRelu", [i[0]], o, alpha=a["negative_slope"]),
    ),
    ir(
        "Elu",
        "x",
        "y",
        [("alpha", "Float", 1.0)],
        onnx="Elu",
        lower=lambda c, i, a, o: c.emit("Elu", [i[0]], o, alpha=a["alpha"]),
    ),
    ir("ZerosLike", "x", lower=_like(0), onnx="ConstantOfShape", doc="zeros of x's shape and dtype"),
    ir("OnesLike", "x", lower=_like(1), onnx="ConstantOfShape", doc="ones of x's shape and dtype"),
    ir("LogicalNot", "x", lower=_logical("Not"), onnx="Not"),
    *(ir(t, "x1 x2", lower=_binary(o), onnx=o, doc=d) for t, o, d in _BINARY),
    ir("Div", "x1 x2", lower=_divide, onnx="Div", doc=_DIVISION),
    ir("RealDiv", "x1 x2", lower=_divide, onnx="Div", doc=_DIVISION),
    ir("NotEqual", "x1 x2", lower=_not_equal, onnx="Equal, Not", doc="y = x1 != x2"),
    ir("SquaredDifference", "x1 x2", lower=_squared_difference, onnx="Sub, Mul", doc="y = (x1 - x2) ** 2"),
    ir("LogicalAnd", "x1 x2", lower=_logical("And"), onnx="And"),
    ir("LogicalOr", "x1 x2", lower=_logical("Or"), onnx="Or"),
    ir("AddN", "x*", "y", [IrAttr("N", "Int", counts="x")], lower=_add_n, onnx="Sum", doc="the sum of the tensors"),
    ir("Select", "condition x1 x2", lower=_select, onnx="Where", doc="y = condition ? x1 : x2"),
    ir("MaskedFill", "x mask value", lower=_masked_fill, onnx="Where", doc="y = mask ? value : x"),
)
