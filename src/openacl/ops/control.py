"""Control flow and training updates: If (subgraphs, GE only) and ApplyGradientDescent (a ref output)."""

from __future__ import annotations

import numpy as np

from openacl.ops.ir import IrOp, LowerContext, ir
from openacl.ops.lowering import int64s


def _if(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    """``cond`` is any number (non-zero selects then_branch); each branch's Data ``i`` reads ``input[i]``."""
    cond = ctx.emit("Reshape", [ctx.cast(ins[0], np.dtype(np.bool_)), int64s(ctx, [])])[0]
    then_graph = ctx.subgraph(a["then_branch"], ins[1], "then_branch")
    else_graph = ctx.subgraph(a["else_branch"], ins[1], "else_branch")
    for graph in (then_graph, else_graph):
        if len(graph.output) != len(outs):
            ctx.fail(f"{graph.name} has {len(graph.output)} outputs, the If node {len(outs)}")
    ctx.emit("If", [cond], outs, then_branch=then_graph, else_branch=else_graph)


def _apply_gradient_descent(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    var, alpha, delta = ins
    dt = ctx.dtype(var)
    step = ctx.emit("Mul", [ctx.cast(alpha, dt), ctx.cast(delta, dt)])[0]
    ctx.emit("Sub", [var, step], outs)


RECORDS: tuple[IrOp, ...] = (
    ir(
        "ApplyGradientDescent",
        "var alpha delta",
        "var",
        [("use_locking", "Bool", False)],
        lower=_apply_gradient_descent,
        onnx="Mul, Sub",
        refs=[("var", "var")],
        doc="var - alpha * delta (GE writes var back)",
    ),
    ir(
        "If",
        "cond input*",
        "output*",
        subgraphs="then_branch else_branch",
        lower=_if,
        onnx="If",
        doc="runs then_branch or else_branch (graphs only)",
    ),
)
