"""The registry: every CANN operator type openacl knows, by type, from the family modules in one explicit list."""

from __future__ import annotations

from openacl.ops import cast, elementwise, matmul, nn, reduce, shape
from openacl.ops.record import OpRecord

REGISTRY: dict[str, OpRecord] = {
    record.op_type: record
    for record in (
        *elementwise.RECORDS,
        *cast.RECORDS,
        *matmul.RECORDS,
        *reduce.RECORDS,
        *shape.RECORDS,
        *nn.RECORDS,
    )
}


def op_types() -> list[str]:
    return sorted(REGISTRY)
