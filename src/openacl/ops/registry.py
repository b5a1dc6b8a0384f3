"""The registry: every CANN operator type openacl knows, by type, from the family modules in one explicit list.

Order matters only for the docs tables (family by family); a type declared twice is an error at import.
"""

from __future__ import annotations

from openacl.ops import cast, control, elementwise, gather, matmul, nn, reduce, shape, unsupported
from openacl.ops.ir import IrOp

FAMILIES = {
    "element-wise": elementwise.RECORDS,
    "cast": cast.RECORDS,
    "matrix": matmul.RECORDS,
    "shape and layout": shape.RECORDS,
    "indexing": gather.RECORDS,
    "reduction": reduce.RECORDS,
    "neural network": nn.RECORDS,
    "control and training": control.RECORDS,
    "not on a CPU": unsupported.RECORDS,
}

REGISTRY: dict[str, IrOp] = {record.type: record for records in FAMILIES.values() for record in records}
assert len(REGISTRY) == sum(map(len, FAMILIES.values())), "an operator type is declared twice"


def op_types() -> list[str]:
    return sorted(REGISTRY)


def runnable() -> list[str]:
    """The types a CPU runs, sorted."""
    return sorted(t for t, record in REGISTRY.items() if record.unsupported is None)
