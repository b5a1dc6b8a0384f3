"""The GE node types openacl understands, in one explicit registry.

Everything else in a graph is an ONNX operator and goes to onnxruntime as it is. These types never reach
onnxruntime under their own name: the compile passes remove Summary and Save, and the lowering turns Data into
graph inputs, Const into initializers, Variable into extra inputs and Assign into extra outputs.
"""

from __future__ import annotations

import dataclasses

GE_DOMAIN = "openacl.ge"

DATA = "Data"
CONST = "Const"
VARIABLE = "Variable"
ASSIGN = "Assign"
SUMMARY = "Summary"
SAVE = "Save"

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


@dataclasses.dataclass(frozen=True)
class OpSpec:
    """What a GE node type is: its inputs, whether it produces a tensor, and the attributes it reads."""

    type: str
    inputs: str
    has_output: bool
    attrs: tuple[str, ...]
    doc: str


REGISTRY: dict[str, OpSpec] = {
    DATA: OpSpec(DATA, "none", True, ("index", "shape", "dtype"), "graph input number `index`"),
    CONST: OpSpec(CONST, "none", True, ("value",), "a constant (ONNX initializer)"),
    VARIABLE: OpSpec(VARIABLE, "none", True, ("value",), "session state shared by name; `value` initialises it"),
    ASSIGN: OpSpec(ASSIGN, "ref, value", True, (), "the variable `ref` takes `value` after the run"),
    SUMMARY: OpSpec(SUMMARY, "x", False, (), "its input goes to the Summary callback under the node's name"),
    SAVE: OpSpec(SAVE, "variables...", False, (), "its variable inputs become graph outputs"),
}
GE_TYPES = frozenset(REGISTRY)


def type_list() -> str:
    return ", ".join(sorted(REGISTRY))


def spec(op_type: str) -> OpSpec:
    """The spec of a GE node type; ``ValueError`` names the types that exist."""
    try:
        return REGISTRY[op_type]
    except KeyError:
        raise ValueError(f"unknown {GE_DOMAIN} node type {op_type!r}; known: {type_list()}") from None
