"""Element-wise CANN operators: each is one ONNX node with the same inputs (numpy broadcasting); an int32/int64
division is three more."""

from __future__ import annotations

import numpy as np

from openacl.ops.record import Builder, Operand, OpRecord, Output

_TRAPPING = (np.dtype(np.int32), np.dtype(np.int64))  # the CPU's idiv traps on MIN / -1: SIGFPE kills the process


def _same(onnx_type: str):
    def lower(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
        return [b.one(onnx_type, [operand.name for operand in inputs if operand is not None])]

    return lower


def _binary(op_type: str, onnx_type: str, doc: str) -> OpRecord:
    return OpRecord(op_type, onnx_type, ("x1", "x2"), ("y",), (), _same(onnx_type), doc)


def _divide(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
    """x1 / x2. Invariant: onnxruntime never divides an int32/int64 by -1 (MIN / -1 is a hardware trap that
    ends the process); that quotient is -x1, which wraps MIN to MIN as two's complement does."""
    x1, x2 = inputs
    if x1.dtype not in _TRAPPING or x2.dtype != x1.dtype:
        return [b.one("Div", [x1.name, x2.name])]
    by_minus_one = b.one("Equal", [x2.name, b.constant(np.array(-1, x2.dtype), "minus_one")])
    divisor = b.one("Where", [by_minus_one, b.constant(np.array(1, x2.dtype), "one"), x2.name])
    return [b.one("Where", [by_minus_one, b.one("Neg", [x1.name]), b.one("Div", [x1.name, divisor])])]


def _division(op_type: str) -> OpRecord:
    return OpRecord(op_type, "Div", ("x1", "x2"), ("y",), (), _divide, "y = x1 / x2 (integers: toward zero)")


def _unary(op_type: str, onnx_type: str, doc: str) -> OpRecord:
    return OpRecord(op_type, onnx_type, ("x",), ("y",), (), _same(onnx_type), doc)


RECORDS = (
    _binary("Add", "Add", "y = x1 + x2"),
    _binary("AddV2", "Add", "y = x1 + x2"),
    _binary("Sub", "Sub", "y = x1 - x2"),
    _binary("Mul", "Mul", "y = x1 * x2"),
    _division("RealDiv"),
    _division("Div"),
    _binary("Maximum", "Max", "y = max(x1, x2)"),
    _binary("Minimum", "Min", "y = min(x1, x2)"),
    _binary("Pow", "Pow", "y = x1 ** x2"),
    _unary("Relu", "Relu", "y = max(x, 0)"),
    _unary("Sigmoid", "Sigmoid", "y = 1 / (1 + exp(-x))"),
    _unary("Tanh", "Tanh", "y = tanh(x)"),
    _unary("Exp", "Exp", "y = exp(x)"),
    _unary("Log", "Log", "y = ln(x)"),
    _unary("Sqrt", "Sqrt", "y = sqrt(x)"),
    _unary("Abs", "Abs", "y = |x|"),
    _unary("Neg", "Neg", "y = -x"),
)
