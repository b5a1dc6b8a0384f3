"""Helpers the lowerings of every family share: integer inputs read at build time or cast to int64, attribute
lists as int64 constants, GE dtype numbers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from openacl import dtypes, lazy
from openacl.ops.ir import ATTR, LowerContext

onnx = lazy.module("onnx")

INT64 = np.dtype(np.int64)
INT64_MAX, INT64_MIN = (1 << 63) - 1, -(1 << 63)


def dtype_of(ctx: LowerContext, code: int) -> np.dtype:
    """The numpy dtype of a dtype number (GE's ``DataType`` and ACL's ``aclDataType`` agree on every one openacl
    runs); an attribute error for one that has none."""
    try:
        return dtypes.numpy_from_ge(code)
    except (KeyError, ValueError):
        ctx.fail(f"data type {code} has no CPU equivalent in openacl", ATTR)


def ints(ctx: LowerContext, tensor: str, what: str) -> list[int]:
    """The integer values of an input the lowering needs when it builds (a const: ``set_tensor_const``, a Const)."""
    value = ctx.value(tensor)
    if value is None:
        ctx.fail(f"{what} must be a constant (openacl needs its value when it builds the operator)")
    if np.asarray(value).dtype.kind not in "iu":
        ctx.fail(f"{what} must hold integers, not {np.asarray(value).dtype}")
    return [int(v) for v in np.asarray(value).reshape(-1)]


def one_int(ctx: LowerContext, tensor: str, what: str) -> int:
    values = ints(ctx, tensor, what)
    if len(values) != 1:
        ctx.fail(f"{what} holds {len(values)} values, not 1")
    return values[0]


def int64s(ctx: LowerContext, values: Sequence[int], what: str = "ints") -> str:
    """A constant int64 vector; an input error for values past int64."""
    values = [int(v) for v in values]
    if not all(INT64_MIN <= v <= INT64_MAX for v in values):
        ctx.fail(f"{what} {values} do not fit int64")
    return ctx.const(np.asarray(values, dtype=INT64))


def as_int64(ctx: LowerContext, tensor: str, what: str = "input") -> str:
    """An integer input as int64 (ONNX shape and axes inputs want int64; CANN often passes int32)."""
    value = ctx.value(tensor)
    if value is not None:
        array = np.asarray(value)
        values = ints(ctx, tensor, what)
        if values and not INT64_MIN <= max(values) <= INT64_MAX:
            ctx.fail(f"{what} {values} do not fit int64")
        return ctx.const(array.astype(INT64))  # its shape kept: Pad's paddings are [rank, 2]
    dtype = ctx.dtype(tensor)
    if dtype.kind not in "iu":
        ctx.fail(f"{what} must be an integer tensor, not {dtype}")
    return ctx.cast(tensor, INT64)


def learn_types(model, dtypes_out: dict[str, np.dtype], ranks_out: dict[str, int]) -> None:
    """What ONNX type inference tells of ``model``'s values, added to the two maps (known entries stay).

    Inference is a help, not a requirement: a model it refuses teaches nothing, and ``LowerContext.dtype`` says
    when nobody could tell."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:
        return
    for info in inferred.graph.value_info:
        tensor_type = info.type.tensor_type
        if tensor_type.elem_type:
            dtypes_out.setdefault(info.name, dtypes.numpy_from_onnx(tensor_type.elem_type))
        if tensor_type.HasField("shape"):
            ranks_out.setdefault(info.name, len(tensor_type.shape.dim))
