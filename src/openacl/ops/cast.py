"""Cast: to ``dst_type``; a single operator's output desc gives the dtype when ``dst_type`` is unset, and the two
must agree when both are given."""

from __future__ import annotations

from openacl import dtypes
from openacl.ops.ir import ATTR, IrAttr, IrOp, LowerContext, ir
from openacl.ops.lowering import dtype_of


def _cast(ctx: LowerContext, ins: list, a: dict, outs: list[str]) -> None:
    wanted = ctx.out_dtype(0)
    if a["dst_type"] is not None:
        target = dtype_of(ctx, a["dst_type"])
        if wanted is not None and target != wanted:
            ctx.fail(f"dst_type {a['dst_type']} ({target}) but the output desc is {wanted}", ATTR)
    elif wanted is None:
        ctx.fail("dst_type is not set", ATTR)
    else:
        target = wanted
    ctx.emit("Cast", [ins[0]], outs, to=dtypes.onnx_from_numpy(target))


RECORDS: tuple[IrOp, ...] = (
    ir(
        "Cast",
        "x",
        "y",
        [IrAttr("dst_type", "Int", op_default=None)],
        lower=_cast,
        onnx="Cast",
        doc="y = x as dst_type (acl.op: the output desc's dtype); float to int truncates toward zero",
    ),
)
