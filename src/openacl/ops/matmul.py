"""Matrix products: MatMul(V2), BatchMatMul(V2) and GEMM, as ONNX MatMul with Transposes where CANN transposes."""

from __future__ import annotations

from openacl.ops.ir import IrOp, LowerContext, ir


def _swap_last_two(ctx: LowerContext, tensor: str) -> str:
    rank = ctx.rank(tensor)
    if rank is None or rank < 2:
        ctx.fail(f"a transposed input needs 2 or more dims, not rank {rank}")
    return ctx.emit("Transpose", [tensor], perm=[*range(rank - 2), rank - 1, rank - 2])[0]


def _matmul(first: str, second: str, two_d: bool):
    """``op(x1) @ op(x2) + bias``; MatMul is 2-D, BatchMatMul broadcasts batch dims. Quantisation inputs of the V2
    forms (``offset_w``) are not read."""

    def lower(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
        x1, x2 = ctx.meet(ins[:2])
        bias = ins[2]
        if two_d and (ctx.rank(x1) not in (2, None) or ctx.rank(x2) not in (2, None)):
            ctx.fail(f"x1 (rank {ctx.rank(x1)}) and x2 (rank {ctx.rank(x2)}) must be 2-D (BatchMatMul is N-D)")
        x1 = _swap_last_two(ctx, x1) if a[first] else x1
        x2 = _swap_last_two(ctx, x2) if a[second] else x2
        if bias is None:
            ctx.emit("MatMul", [x1, x2], outs)
        else:
            product = ctx.emit("MatMul", [x1, x2])[0]
            ctx.emit("Add", ctx.meet([product, bias]), outs)

    return lower


def _gemm(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    x1, x2, c, alpha, beta = ins
    left = _swap_last_two(ctx, x1) if a["transpose_a"] else x1
    right = _swap_last_two(ctx, x2) if a["transpose_b"] else x2
    scaled = ctx.emit("Mul", [ctx.emit("MatMul", [left, right])[0], alpha])[0]
    ctx.emit("Add", [scaled, ctx.emit("Mul", [c, beta])[0]], outs)


_FLAGS = ("transpose_x1", "transpose_x2")
_ADJ = ("adj_x1", "adj_x2")
_DOC = "y = op(x1) @ op(x2) + bias"

RECORDS: tuple[IrOp, ...] = (
    ir(
        "MatMul",
        "x1 x2 bias?",
        "y",
        [(f, "Bool", False) for f in _FLAGS],
        lower=_matmul(*_FLAGS, two_d=True),
        onnx="MatMul",
        doc=f"{_DOC}, 2-D",
    ),
    ir(
        "MatMulV2",
        "x1 x2 bias? offset_w?",
        "y",
        [*((f, "Bool", False) for f in _FLAGS), ("offset_x", "Int", 0)],
        lower=_matmul(*_FLAGS, two_d=True),
        onnx="MatMul",
        doc=f"{_DOC}, 2-D",
    ),
    ir(
        "BatchMatMul",
        "x1 x2 bias?",
        "y",
        [(f, "Bool", False) for f in _ADJ],
        lower=_matmul(*_ADJ, two_d=False),
        onnx="MatMul",
        doc=f"{_DOC} over broadcast batch dims",
    ),
    ir(
        "BatchMatMulV2",
        "x1 x2 bias? offset_w?",
        "y",
        [*((f, "Bool", False) for f in _ADJ), ("offset_x", "Int", 0)],
        lower=_matmul(*_ADJ, two_d=False),
        onnx="MatMul",
        doc=f"{_DOC} over broadcast batch dims",
    ),
    ir(
        "GEMM",
        "a b c alpha beta",
        "y",
        [("transpose_a", "Bool", False), ("transpose_b", "Bool", False)],
        lower=_gemm,
        onnx="MatMul",
        doc="y = alpha * (op(a) @ op(b)) + beta * c",
    ),
)
