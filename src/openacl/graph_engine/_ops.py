"""The GE op table: every node type a GE graph may hold, one explicit registry (:data:`REGISTRY`).

Two kinds of record share it. The graph-level types (Data, Const, Variable, Assign, Summary, Save) never reach
onnxruntime under their own name: the compile passes remove Summary and Save, and the lowering turns Data into
graph inputs, Const into initializers, Variable into extra inputs and Assign into extra outputs. Every other
record is an operator of the operator library (:mod:`openacl.ops.registry`, which ``acl.op`` reads too) whose
lowering writes ONNX nodes. Nodes of ONNX's own domain added with ``Graph.op`` go to onnxruntime as they are.
"""

from __future__ import annotations

from openacl.errors import GeError, GeStatus
from openacl.ops import registry
from openacl.ops.ir import IrOp, ir

GE_DOMAIN = "openacl.ge"

DATA = "Data"
CONST = "Const"
VARIABLE = "Variable"
ASSIGN = "Assign"
SUMMARY = "Summary"
SAVE = "Save"
#: The node GE's graph builder ends a graph with (``NetOutput_<graph name>``): its inputs are the graph outputs.
#: Not a record of the table: the compile passes drop it, and nothing lowers it.
NET_OUTPUT = "NetOutput"

#: GE's TransOps (``TransOpUtil``, GE ``base/common/op/transop_util.cc``), plus the ONNX spellings of the same
#: layout-only operators. A checkpoint graph may hold these between its variables and its outputs.
TRANS_OPS = frozenset(
    {
        "TransData",
        "Transpose",
        "TransposeD",
        "Reshape",
        "ReFormat",
        "Cast",
        "Squeeze",
        "SqueezeV2",
        "UnsqueezeV2",
        "ExpandDims",
        "SqueezeV3",
        "UnsqueezeV3",
        "Unsqueeze",
    }
)
#: Node types GE allows in a checkpoint graph besides Variable, Const and the TransOps.
SEND, RECV = "Send", "Recv"

_GRAPH_TYPES: tuple[IrOp, ...] = (
    ir(DATA, "", "y", [("index", "Int", 0)], builder_only=True),  # graph input number `index`
    ir(CONST, "", "y", [("value", "Tensor")], builder_only=True),  # a constant (ONNX initializer)
    ir(VARIABLE, "", "y", [("index", "Int", 0)], builder_only=True),  # session state shared by name
    ir(ASSIGN, "ref value", "ref", [("validate_shape", "Bool", True), ("use_locking", "Bool", False)]),
    ir(SUMMARY, "x", ""),  # its input goes to the Summary callback under the node's name
    ir(SAVE, "tensors*", ""),  # its variable inputs become graph outputs
)

#: Every node type: the graph-level ones, then the GE IR operators.
REGISTRY: dict[str, IrOp] = {record.type: record for record in _GRAPH_TYPES} | registry.REGISTRY
#: The types with their own ``Graph`` method and their own handling in the passes and the lowering.
GE_TYPES = frozenset(record.type for record in _GRAPH_TYPES)


def type_list() -> str:
    return ", ".join(sorted(GE_TYPES))


def spec(op_type: str) -> IrOp:
    """The record of a node type; ``ValueError`` says how many types exist and names a few."""
    try:
        return REGISTRY[op_type]
    except KeyError:
        raise ValueError(
            f"unknown {GE_DOMAIN} node type {op_type!r}; the table has {len(REGISTRY)} types "
            f"(graph-level: {type_list()}; operators such as Add, MatMul, Conv2D)"
        ) from None


def runnable() -> list[str]:
    """The types openacl can run, sorted (docs/gepy.md shows how many)."""
    return sorted(t for t, record in REGISTRY.items() if record.unsupported is None)


def unsupported(op_type: str, reason: str) -> GeError:
    return GeError(GeStatus.UNSUPPORTED, f"{op_type} cannot run in openacl: {reason}")


#: GE ``Format`` numbers of NPU storage layouts: tensors in them hold Ascend's tiled bytes, which openacl does not
#: keep (it runs ND, NCHW, NHWC and the other plain layouts).
NPU_FORMATS: dict[int, str] = {
    3: "FORMAT_NC1HWC0",
    4: "FORMAT_FRACTAL_Z",
    5: "FORMAT_NC1C0HWPAD",
    6: "FORMAT_NHWC1C0",
    12: "FORMAT_NC1HWC0_C04",
    13: "FORMAT_FRACTAL_Z_C04",
    17: "FORMAT_NC1KHKWHWC0",
    28: "FORMAT_FRACTAL_ZZ",
    29: "FORMAT_FRACTAL_NZ",
    32: "FORMAT_NDC1HWC0",
    33: "FORMAT_FRACTAL_Z_3D",
    37: "FORMAT_FRACTAL_Z_3D_TRANSPOSE",
    38: "FORMAT_FRACTAL_ZN_LSTM",
    39: "FORMAT_FRACTAL_Z_G",
    44: "FORMAT_FRACTAL_ZN_RNN",
    48: "FORMAT_FRACTAL_Z_WINO",
    50: "FORMAT_FRACTAL_NZ_C0_16",
    51: "FORMAT_FRACTAL_NZ_C0_32",
}


def check_format(what: str, fmt: int | None) -> None:
    """UNSUPPORTED for a tensor declared in an NPU storage layout."""
    if fmt is not None and fmt in NPU_FORMATS:
        raise GeError(
            GeStatus.UNSUPPORTED,
            f"{what} is declared {NPU_FORMATS[fmt]} ({fmt}), an Ascend storage layout that openacl cannot run",
        )
