"""acl.op's view of the operator library (:mod:`openacl.ops.registry`): looking a type up, resolving its attributes.

Each record (``openacl.ops.record.OpRecord``) names the operator's inputs, outputs and attributes (kind,
default, the ONNX attribute each becomes) and its lowering. A type that is not here is
``ACL_ERROR_OP_TYPE_NOT_MATCH``, which is what CANN returns when no loaded operator has that type.
"""

from __future__ import annotations

from typing import Any

from openacl.errors import AclCode, AclError
from openacl.op.attr import OpAttr
from openacl.ops.record import REQUIRED, OpRecord, attr_mismatch
from openacl.ops.registry import REGISTRY, op_types

__all__ = ["REGISTRY", "op_types", "record", "resolve_attrs"]


def record(op_type: str) -> OpRecord:
    """The record of an operator type; TYPE_NOT_MATCH names the type (the facade logs it once)."""
    try:
        return REGISTRY[op_type]
    except KeyError:
        raise AclError(
            AclCode.ACL_ERROR_OP_TYPE_NOT_MATCH,
            f"operator type {op_type!r} is not in openacl's op table ({len(REGISTRY)} types, e.g. Add, MatMul)",
        ) from None


def resolve_attrs(op: OpRecord, attr: OpAttr) -> dict[str, Any]:
    """The attribute values a lowering reads: each set value checked against its kind, defaults filled in.

    Attributes the record does not declare are ignored (a program may set more than openacl reads); they
    still take part in the compiled operator's signature.
    """
    values: dict[str, Any] = {}
    for spec in op.attrs:
        given = attr.values.get(spec.name)
        if given is None:
            if spec.default is REQUIRED:
                raise attr_mismatch(op.op_type, f"required attribute {spec.name!r} ({spec.kind}) is not set")
            values[spec.name] = spec.default
            continue
        kind, value = given
        if kind != spec.kind:
            raise attr_mismatch(op.op_type, f"attribute {spec.name!r} must be set as {spec.kind}, not {kind}")
        values[spec.name] = value
    return values
