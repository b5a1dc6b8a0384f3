"""Matrix products: MatMul, BatchMatMul(V2) and GEMM, as ONNX MatMul with Transposes where CANN transposes."""

from __future__ import annotations

from openacl.ops import kinds as A
from openacl.ops.record import AttrSpec, Builder, Operand, OpRecord, Output, input_mismatch


def _swap_last_two(b: Builder, operand: Operand) -> str:
    if operand.rank < 2:
        raise input_mismatch(b.op_type, f"a transposed input needs 2 or more dims, not {operand.shape}")
    perm = [*range(operand.rank - 2), operand.rank - 1, operand.rank - 2]
    return b.one("Transpose", [operand.name], perm=perm)


def _product(b: Builder, x1: Operand, x2: Operand, t1: bool, t2: bool) -> str:
    left = _swap_last_two(b, x1) if t1 else x1.name
    right = _swap_last_two(b, x2) if t2 else x2.name
    return b.one("MatMul", [left, right])


def _matmul(first: str, second: str, two_d: bool):
    def lower(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
        x1, x2, *rest = inputs
        if two_d and (x1.rank != 2 or x2.rank != 2):
            raise input_mismatch(b.op_type, f"x1 {x1.shape} and x2 {x2.shape} must be 2-D (BatchMatMul is N-D)")
        y = _product(b, x1, x2, attrs[first], attrs[second])
        bias = rest[0] if rest else None
        return [b.one("Add", [y, bias.name]) if bias is not None else y]

    return lower


def _gemm(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
    a, b_, c, alpha, beta = inputs
    product = _product(b, a, b_, attrs["transpose_a"], attrs["transpose_b"])
    scaled = b.one("Mul", [product, alpha.name])
    return [b.one("Add", [scaled, b.one("Mul", [c.name, beta.name])])]


def _flags(first: str, second: str) -> tuple[AttrSpec, ...]:
    return (
        AttrSpec(first, A.BOOL, False, "", "transpose the first input's last two dims (a Transpose node)"),
        AttrSpec(second, A.BOOL, False, "", "transpose the second input's last two dims"),
    )


RECORDS = (
    OpRecord(
        "MatMul",
        "MatMul",
        ("x1", "x2", "bias?"),
        ("y",),
        _flags("transpose_x1", "transpose_x2"),
        _matmul("transpose_x1", "transpose_x2", two_d=True),
        "y = op(x1) @ op(x2) + bias, 2-D",
    ),
    OpRecord(
        "BatchMatMul",
        "MatMul",
        ("x1", "x2", "bias?"),
        ("y",),
        _flags("adj_x1", "adj_x2"),
        _matmul("adj_x1", "adj_x2", two_d=False),
        "y = op(x1) @ op(x2) + bias over broadcast batch dims",
    ),
    OpRecord(
        "BatchMatMulV2",
        "MatMul",
        ("x1", "x2", "bias?"),
        ("y",),
        _flags("adj_x1", "adj_x2"),
        _matmul("adj_x1", "adj_x2", two_d=False),
        "as BatchMatMul",
    ),
    OpRecord(
        "GEMM",
        "MatMul",
        ("a", "b", "c", "alpha", "beta"),
        ("y",),
        _flags("transpose_a", "transpose_b"),
        _gemm,
        "y = alpha * (op(a) @ op(b)) + beta * c",
    ),
)
