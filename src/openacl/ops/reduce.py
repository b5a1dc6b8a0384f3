"""Reductions: ReduceSum/Mean/Max (axes as an input) and their D forms (axes as an attribute), ArgMax."""

from __future__ import annotations

from openacl.ops import kinds as A
from openacl.ops.record import AttrSpec, Builder, Operand, OpRecord, Output, input_mismatch

_KEEP = AttrSpec("keep_dims", A.BOOL, False, "keepdims", "keep reduced dims as 1")


def _reduce_input(onnx_type: str):
    def lower(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
        x, axes = inputs
        return [b.one(onnx_type, [x.name, b.as_int64(axes)], keepdims=int(attrs["keep_dims"]))]

    return lower


def _reduce_attr(onnx_type: str):
    def lower(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
        (x,) = inputs
        return [b.one(onnx_type, [x.name, b.int64s(attrs["axes"])], keepdims=int(attrs["keep_dims"]))]

    return lower


def _reductions(name: str, onnx_type: str) -> tuple[OpRecord, OpRecord]:
    return (
        OpRecord(name, onnx_type, ("x", "axes"), ("y",), (_KEEP,), _reduce_input(onnx_type), f"{onnx_type} over axes"),
        OpRecord(
            f"{name}D",
            onnx_type,
            ("x",),
            ("y",),
            (AttrSpec("axes", A.LIST_INT, (), "axes", "[] reduces every dim"), _KEEP),
            _reduce_attr(onnx_type),
            f"{onnx_type} over the axes attribute",
        ),
    )


def _argmax(b: Builder, x: Operand, axis: int, outputs: list[Output]) -> list[str]:
    if not -x.rank <= axis < max(x.rank, 1):
        raise input_mismatch(b.op_type, f"dimension {axis} is outside x's {x.rank} dims")
    index = b.one("ArgMax", [x.name], axis=axis, keepdims=0)
    target = outputs[0].dtype
    if target.kind != "i":
        raise input_mismatch(b.op_type, f"the output must be int32 or int64, not {target}")
    return [index if target.itemsize == 8 else b.cast(index, target)]


def _argmax_v2(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
    x, dimension = inputs
    values = b.const_ints(dimension, "dimension")
    if len(values) != 1:
        raise input_mismatch(b.op_type, f"dimension holds {len(values)} values, not 1")
    return _argmax(b, x, values[0], outputs)


def _argmax_d(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
    return _argmax(b, inputs[0], attrs["dimension"], outputs)


_DTYPE = AttrSpec("dtype", A.INT, 3, "", "index dtype (ACL_INT32 3 / ACL_INT64 9); the output desc decides")

RECORDS = (
    *_reductions("ReduceSum", "ReduceSum"),
    *_reductions("ReduceMean", "ReduceMean"),
    *_reductions("ReduceMax", "ReduceMax"),
    OpRecord(
        "ArgMaxV2",
        "ArgMax",
        ("x", "dimension"),
        ("y",),
        (_DTYPE,),
        _argmax_v2,
        "index of the largest value along a const dimension",
    ),
    OpRecord(
        "ArgMaxD",
        "ArgMax",
        ("x",),
        ("y",),
        (AttrSpec("dimension", A.INT, onnx="axis"), _DTYPE),
        _argmax_d,
        "as ArgMaxV2, dimension an attribute",
    ),
)
