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
    # CANN's mixed forms (fp16 x fp16 -> fp32, int8 x int8 -> int32 or fp32) multiply in c's type.
    x1, x2 = ctx.cast(x1, ctx.dtype(c)), ctx.cast(x2, ctx.dtype(c))
    left = _swap_last_two(ctx, x1) if a["transpose_a"] else x1
    right = _swap_last_two(ctx, x2) if a["transpose_b"] else x2
    scaled = ctx.emit("Mul", [ctx.emit("MatMul", [left, right])[0], alpha])[0]
    ctx.emit("Add", [scaled, ctx.emit("Mul", [c, beta])[0]], outs)


def _pair(name: str, flags: tuple[str, str], two_d: bool, doc: str) -> tuple[IrOp, IrOp]:
    """The plain form and its V2, which adds the quantisation input ``offset_w`` and attribute ``offset_x``."""
    attrs = [(flag, "Bool", False) for flag in flags]
    lower = _matmul(*flags, two_d=two_d)
    return (
        ir(name, "x1 x2 bias?", "y", attrs, lower=lower, onnx="MatMul", doc=doc),
        ir(
            f"{name}V2",
            "x1 x2 bias? offset_w?",
            "y",
            [*attrs, ("offset_x", "Int", 0)],
            lower=lower,
            onnx="MatMul",
            doc=doc,
        ),
    )


_DOC = "y = op(x1) @ op(x2) + bias"

RECORDS: tuple[IrOp, ...] = (
    *_pair("MatMul", ("transpose_x1", "transpose_x2"), True, f"{_DOC}, 2-D"),
    *_pair("BatchMatMul", ("adj_x1", "adj_x2"), False, f"{_DOC} over broadcast batch dims"),
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
