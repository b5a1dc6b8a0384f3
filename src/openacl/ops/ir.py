"""What one record of the operator library is: a CANN operator prototype (GE's ``REG_OP``) and its lowering.

A record declares what CANN's operator prototype declares, in its order: inputs (required, optional ``?`` or
dynamic ``*``), outputs (dynamic ``*``), attributes with their kind and default, subgraphs. Both faces read it:
``acl.op`` checks a single operator's descs and attributes against it, GE checks graph nodes and GE-PY generates
its op functions (``ge.es.all``) from it. A record with ``unsupported`` set exists so that programs naming it
fail with that reason.

A lowering turns one operator into ONNX nodes through a :class:`LowerContext`, which each face implements
(``openacl.op.lowering`` for one operator and its descs, ``openacl.graph_engine._lower`` for a node of a graph).
What the faces know differs, and the context says it: a single operator knows every input's dtype, shape and
desc format and every output's dtype; a graph node may know only what ONNX type inference tells.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, Protocol

import numpy as np

REQUIRED: Any = type("Required", (), {"__repr__": lambda self: "REQUIRED"})()
SAME: Any = type("Same", (), {"__repr__": lambda self: "SAME"})()  # IrAttr.op_default: as ``default``

#: What a lowering's failure is about; ``acl.op`` answers each with its own code (INPUT/ATTR/OUTPUT_NOT_MATCH).
INPUT, ATTR, OUTPUT = "input", "attribute", "output"

#: GE attribute kinds (``REG_OP`` ``ATTR``/``REQUIRED_ATTR`` types) and the Python types GE-PY accepts for them.
ATTR_KINDS = (
    "Int",
    "Float",
    "String",
    "Bool",
    "Type",
    "ListInt",
    "ListFloat",
    "ListBool",
    "ListString",
    "ListType",
    "ListListInt",
    "Tensor",
)


@dataclasses.dataclass(frozen=True)
class IrInput:
    name: str
    kind: str  # "required", "optional" or "dynamic"


@dataclasses.dataclass(frozen=True)
class IrOutput:
    name: str
    dynamic: bool = False


@dataclasses.dataclass(frozen=True)
class IrAttr:
    """One attribute. ``default`` is the prototype's (what GE fills in). ``acl.op`` differs only where CANN's
    single-operator call reads the value from the call itself: ``op_default`` is what it uses when a program
    leaves the attribute unset (Cast's ``dst_type``: None, the output desc decides), and ``counts`` names the
    dynamic input whose tensors the attribute counts (``N``): ``acl.op`` fills it in and checks a set value."""

    name: str
    kind: str
    default: Any = REQUIRED
    op_default: Any = SAME
    counts: str = ""

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def single_op_default(self) -> Any:
        return self.default if self.op_default is SAME else self.op_default


@dataclasses.dataclass(frozen=True)
class IrSubgraph:
    name: str
    dynamic: bool = False


class LowerContext(Protocol):
    """What a lowering may ask while it turns one operator into ONNX."""

    op_type: str
    opset: int  # the default domain's opset the nodes are written for (ReduceMean takes axes as an input from 18)

    def emit(self, onnx_type: str, inputs: Sequence[str], outputs: Sequence[str] | int = 1, **attrs: Any) -> list[str]:
        """Add an ONNX node; ``outputs`` are names or a count of fresh names. Returns the output names."""

    def const(self, value: Any, dtype: Any = None) -> str:
        """An initializer holding ``value``."""

    def value(self, tensor: str) -> np.ndarray | None:
        """The constant value of a tensor, or None when it is computed at run time."""

    def dtype(self, tensor: str) -> np.dtype:
        """A tensor's dtype (declared, or by ONNX type inference); FAILED when nobody can tell."""

    def rank(self, tensor: str) -> int | None:
        """A tensor's rank when shape inference knows it."""

    def shape(self, tensor: str) -> tuple[int, ...] | None:
        """An input's dims when the face has descs (a single operator); None in a graph."""

    def format(self, tensor: str) -> int | None:
        """An input's desc format (``aclFormat``) when the face has descs; None in a graph."""

    def out_dtype(self, index: int) -> np.dtype | None:
        """Output ``index``'s dtype when the face is told it (a single operator's output desc); None in a graph."""

    def cast(self, tensor: str, dtype: Any) -> str:
        """``tensor`` as ``dtype`` (no node when it already is)."""

    def meet(self, tensors: Sequence[str]) -> list[str]:
        """The operands of an arithmetic operator at the dtype they meet at: a graph promotes them (GE's rule,
        :func:`promote`); a single operator takes them as its descs say (CANN checks them, ONNX says which differ)."""

    def subgraph(self, graph: Any, inputs: Sequence[str], tag: str) -> Any:
        """A GE graph as an ONNX GraphProto whose Data ``i`` reads ``inputs[i]`` of the enclosing graph."""

    def fail(self, detail: str, about: str = INPUT) -> NoReturn:
        """Raise the face's error that says why this operator cannot be lowered (``about``: INPUT, ATTR, OUTPUT)."""


#: A lowering: ``(ctx, inputs, attrs, outputs)``. ``inputs`` has one entry per IR input: a tensor name, None for
#: an absent optional input, a list for a dynamic one. ``outputs`` are the names to write, dynamic ones
#: flattened in IR order. ``attrs`` hold every declared attribute (defaults filled) and the subgraphs.
Lower = Callable[[LowerContext, list[Any], dict[str, Any], list[str]], None]


@dataclasses.dataclass(frozen=True)
class IrOp:
    """One GE IR operator type: its prototype, its lowering, and why it cannot run if it cannot."""

    type: str
    inputs: tuple[IrInput, ...] = ()
    outputs: tuple[IrOutput, ...] = ()
    attrs: tuple[IrAttr, ...] = ()
    subgraphs: tuple[IrSubgraph, ...] = ()
    lower: Lower | None = None
    unsupported: str | None = None
    onnx: str = ""  # what it mainly lowers to, for the docs table
    #: Types the graph builds with its own methods (Data, Const, Variable): no ``ge.es.all`` function.
    builder_only: bool = False
    #: Outputs that write back the input of the same position (GE ``ref`` ports): ``{output: input}``.
    refs: tuple[tuple[str, str], ...] = ()
    doc: str = ""  # what it computes, for the docs tables

    @property
    def dynamic_outputs(self) -> list[IrOutput]:
        return [o for o in self.outputs if o.dynamic]

    def attr(self, name: str) -> IrAttr | None:
        for attr in self.attrs:
            if attr.name == name:
                return attr
        return None


def ir(
    op_type: str,
    inputs: str = "",
    outputs: str = "y",
    attrs: Sequence[tuple[Any, ...] | IrAttr] = (),
    subgraphs: str = "",
    *,
    lower: Lower | None = None,
    onnx: str = "",
    unsupported: str | None = None,
    builder_only: bool = False,
    refs: Sequence[tuple[str, str]] = (),
    doc: str = "",
) -> IrOp:
    """A record from GE's prototype in short form: ``ir("MatMul", "x1 x2 bias? offset_w?", "y", [...])``.

    Inputs ``name`` (required), ``name?`` (optional), ``name*`` (dynamic); outputs ``name`` or ``name*``;
    attributes ``(name, kind)`` (required), ``(name, kind, default)`` or an :class:`IrAttr`; subgraphs ``name`` or
    ``name*``.
    """
    ins = []
    for token in inputs.split():
        if token.endswith("?"):
            ins.append(IrInput(token[:-1], "optional"))
        elif token.endswith("*"):
            ins.append(IrInput(token[:-1], "dynamic"))
        else:
            ins.append(IrInput(token, "required"))
    outs = tuple(IrOutput(t.rstrip("*"), t.endswith("*")) for t in outputs.split())
    attr_records = []
    for spec in attrs:
        record = spec if isinstance(spec, IrAttr) else IrAttr(*spec)
        if record.kind not in ATTR_KINDS:
            raise ValueError(f"{op_type}: attribute {record.name!r} has unknown kind {record.kind!r}")
        attr_records.append(record)
    graphs = tuple(IrSubgraph(t.rstrip("*"), t.endswith("*")) for t in subgraphs.split())
    return IrOp(
        op_type,
        tuple(ins),
        outs,
        tuple(attr_records),
        graphs,
        lower,
        unsupported,
        onnx,
        builder_only,
        tuple(refs),
        doc,
    )


# ----- attribute values -----


def check_attr(op_type: str, attr: IrAttr, value: Any) -> Any:
    """``value`` as the attribute's kind, or TypeError (GE-PY's generated functions check the Python type)."""

    def bad() -> NoReturn:
        raise TypeError(f"{op_type}: attribute {attr.name!r} must be {attr.kind}, got {type(value).__name__}")

    kind = attr.kind
    if kind in ("Int", "Type"):
        if not isinstance(value, int):
            bad()
        return int(value)
    if kind == "Float":
        if not isinstance(value, int | float) or isinstance(value, bool):
            bad()
        return float(value)
    if kind == "Bool":
        if not isinstance(value, bool):
            bad()
        return value
    if kind == "String":
        if not isinstance(value, str):
            bad()
        return value
    if kind.startswith("List"):
        if not isinstance(value, list | tuple):
            bad()
        item = IrAttr(attr.name, kind[4:], None)
        if kind == "ListListInt":
            return [[int(v) for v in check_attr(op_type, IrAttr(attr.name, "ListInt"), row)] for row in value]
        return [check_attr(op_type, item, v) for v in value]
    return value  # Tensor: any array-like


# ----- GE's type promotion -----

_FLOAT_RANK = {np.dtype(np.float16): 1, np.dtype(np.float32): 2, np.dtype(np.float64): 3}


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """The dtype two operands of an arithmetic op meet at.

    GE does not document it (reference notes §19): openacl decides as PyTorch does, the rule GE-PY programs
    (float32 + int64) expect: a float beats an integer (the float's own width wins), the wider float beats the
    narrower, integers go to numpy's common integer type (int64 for int64 with uint64), and bool yields to anything.
    """
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    if a == np.bool_:
        return b
    if b == np.bool_:
        return a
    fa, fb = a in _FLOAT_RANK, b in _FLOAT_RANK
    if fa and fb:
        return a if _FLOAT_RANK[a] >= _FLOAT_RANK[b] else b
    if fa:
        return a
    if fb:
        return b
    common = np.promote_types(a, b)
    return common if common.kind in "iu" else np.dtype(np.int64)
