"""acl.op's view of the operator library (:mod:`openacl.ops.registry`): looking a type up, resolving attributes.

A type that is not in the library, or one a CPU cannot run, is ``ACL_ERROR_OP_TYPE_NOT_MATCH``, which is what
CANN returns when no loaded operator has that type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openacl.errors import AclCode, AclError
from openacl.op import attr as A
from openacl.op.attr import OpAttr
from openacl.ops.ir import REQUIRED, IrOp
from openacl.ops.registry import REGISTRY

__all__ = ["REGISTRY", "attr_mismatch", "input_mismatch", "op_types", "output_mismatch", "record", "resolve_attrs"]


def input_mismatch(op_type: str, detail: str) -> AclError:
    return AclError(AclCode.ACL_ERROR_OP_INPUT_NOT_MATCH, f"{op_type}: {detail}")


def attr_mismatch(op_type: str, detail: str) -> AclError:
    return AclError(AclCode.ACL_ERROR_OP_ATTR_NOT_MATCH, f"{op_type}: {detail}")


def output_mismatch(op_type: str, detail: str) -> AclError:
    return AclError(AclCode.ACL_ERROR_OP_OUTPUT_NOT_MATCH, f"{op_type}: {detail}")


def _why_not(op: IrOp) -> str | None:
    """Why a single operator of this type cannot run, or None."""
    if op.unsupported is not None:
        return op.unsupported
    if op.lower is None or op.subgraphs:
        return "it runs only inside a graph (GE)"
    return None


def op_types() -> list[str]:
    """The types ``acl.op`` runs, sorted: every runnable type of the library but those that take subgraphs."""
    return sorted(t for t, op in REGISTRY.items() if _why_not(op) is None)


def record(op_type: str) -> IrOp:
    """The record of an operator type; TYPE_NOT_MATCH names the type (the facade logs it once)."""
    found = REGISTRY.get(op_type)
    if found is None:
        raise AclError(
            AclCode.ACL_ERROR_OP_TYPE_NOT_MATCH,
            f"operator type {op_type!r} is not in openacl's op table ({len(REGISTRY)} types, e.g. Add, MatMul)",
        )
    reason = _why_not(found)
    if reason is not None:
        raise AclError(AclCode.ACL_ERROR_OP_TYPE_NOT_MATCH, f"{op_type} cannot run in openacl: {reason}")
    return found


def resolve_attrs(op: IrOp, attr: OpAttr, counts: Mapping[str, int]) -> dict[str, Any]:
    """The attribute values a lowering reads: each set value checked against its kind, defaults filled in.

    ``counts`` gives the number of tensors of each dynamic input: an attribute that counts them (``N``) is filled
    in when unset and must agree when set. Attributes the record does not declare are ignored (a program may set
    more than openacl reads); they still take part in the compiled operator's signature.
    """
    values: dict[str, Any] = {}
    for spec in op.attrs:
        given = attr.values.get(spec.name)
        if given is None:
            default = counts[spec.counts] if spec.counts else spec.single_op_default
            if default is REQUIRED:
                wanted = A.SETTER_KINDS.get(spec.kind, spec.kind)
                raise attr_mismatch(op.type, f"required attribute {spec.name!r} ({wanted}) is not set")
            values[spec.name] = default
            continue
        kind, value = given
        if not A.fits(kind, spec.kind):
            wanted = A.SETTER_KINDS.get(spec.kind, spec.kind)
            raise attr_mismatch(op.type, f"attribute {spec.name!r} must be set as {wanted}, not {kind}")
        if spec.counts and value != counts[spec.counts]:
            raise attr_mismatch(op.type, f"{spec.name} is {value} but {counts[spec.counts]} tensors were given")
        values[spec.name] = value
    return values
