"""Element-wise CANN operators: each is exactly one ONNX node with the same inputs (numpy broadcasting)."""

from __future__ import annotations

from openacl.op.lowering import Builder, Operand, OpRecord, Output


def _same(onnx_type: str):
    def lower(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
        return [b.one(onnx_type, [operand.name for operand in inputs if operand is not None])]

    return lower


def _binary(op_type: str, onnx_type: str, doc: str) -> OpRecord:
    return OpRecord(op_type, onnx_type, ("x1", "x2"), ("y",), (), _same(onnx_type), doc)


def _unary(op_type: str, onnx_type: str, doc: str) -> OpRecord:
    return OpRecord(op_type, onnx_type, ("x",), ("y",), (), _same(onnx_type), doc)


RECORDS = (
    _binary("Add", "Add", "y = x1 + x2"),
    _binary("AddV2", "Add", "y = x1 + x2"),
    _binary("Sub", "Sub", "y = x1 - x2"),
    _binary("Mul", "Mul", "y = x1 * x2"),
    _binary("RealDiv", "Div", "y = x1 / x2"),
    _binary("Div", "Div", "y = x1 / x2"),
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
