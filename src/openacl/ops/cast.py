"""Cast: the output desc's dtype decides; ``dst_type``, when set, must agree with it."""

from __future__ import annotations

from openacl.dtypes import numpy_from_acl
from openacl.ops import kinds as A
from openacl.ops.record import AttrSpec, Builder, Operand, OpRecord, Output, attr_mismatch


def _lower(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
    (x,) = inputs
    target = outputs[0].dtype
    dst_type = attrs["dst_type"]
    if dst_type is not None:
        try:
            wanted = numpy_from_acl(dst_type)
        except (KeyError, ValueError):
            raise attr_mismatch(b.op_type, f"dst_type {dst_type} is not a dtype openacl can cast to") from None
        if wanted != target:
            raise attr_mismatch(b.op_type, f"dst_type {dst_type} ({wanted}) but the output desc is {target}")
    return [b.cast(x.name, target)]


RECORDS = (
    OpRecord(
        "Cast",
        "Cast",
        ("x",),
        ("y",),
        (
            AttrSpec("dst_type", A.INT, None, "to", "ACL dtype number; default: the output desc's dtype"),
            AttrSpec("truncate", A.BOOL, False, "", "accepted; ONNX Cast truncates float to int toward zero"),
        ),
        _lower,
        "y = x converted to the output desc's dtype",
    ),
)
