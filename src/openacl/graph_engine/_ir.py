"""What one record of the GE op table is: a GE IR operator (``REG_OP``) and how it becomes ONNX.

A record declares what GE's operator prototype declares, in GE's order: inputs (required, optional ``?`` or
dynamic ``*``), outputs (dynamic ``*``), attributes with their GE kind and default, subgraphs. GE-PY's op
functions (``ge.es.all``) are generated from these records by GE's own rules, and the lowering turns one node
into ONNX nodes when a session builds the graph. A record with ``unsupported`` set exists so that programs
naming it fail with that reason instead of a NameError.

The lowering sees its node through a :class:`LowerContext`: constant values of inputs, their dtypes (from the
graph's declarations, then ONNX type inference), and a way to emit ONNX nodes and initializers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, Protocol

import numpy as np

from openacl.errors import GeError, GeStatus

REQUIRED: Any = type("Required", (), {"__repr__": lambda self: "REQUIRED"})()

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
    name: str
    kind: str
    default: Any = REQUIRED

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclasses.dataclass(frozen=True)
class IrSubgraph:
    name: str
    dynamic: bool = False


class LowerContext(Protocol):
    """What a lowering may ask while it turns one GE node into ONNX (implemented in
    :mod:`openacl.graph_engine._lower`)."""

    op_type: str

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

    def cast(self, tensor: str, dtype: Any) -> str:
        """``tensor`` as ``dtype`` (no node when it already is)."""

    def subgraph(self, graph: Any, inputs: Sequence[str], tag: str) -> Any:
        """A GE graph as an ONNX GraphProto whose Data ``i`` reads ``inputs[i]`` of the enclosing graph."""

    def fail(self, detail: str) -> NoReturn:
        """Raise the GeError that says why this node cannot be lowered."""


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
    onnx: str = ""  # what it mainly lowers to, for the README table
    #: Types the graph builds with its own methods (Data, Const, Variable): no ``ge.es.all`` function.
    builder_only: bool = False
    #: Outputs that write back the input of the same position (GE ``ref`` ports): ``{output: input}``.
    refs: tuple[tuple[str, str], ...] = ()

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
    attrs: Sequence[tuple[Any, ...]] = (),
    subgraphs: str = "",
    *,
    lower: Lower | None = None,
    onnx: str = "",
    unsupported: str | None = None,
    builder_only: bool = False,
    refs: Sequence[tuple[str, str]] = (),
) -> IrOp:
    """A record from GE's prototype in short form: ``ir("MatMul", "x1 x2 bias? offset_w?", "y", [...])``.

    Inputs ``name`` (required), ``name?`` (optional), ``name*`` (dynamic); outputs ``name`` or ``name*``;
    attributes ``(name, kind)`` (required) or ``(name, kind, default)``; subgraphs ``name`` or ``name*``.
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
        if spec[1] not in ATTR_KINDS:
            raise ValueError(f"{op_type}: attribute {spec[0]!r} has unknown kind {spec[1]!r}")
        attr_records.append(IrAttr(*spec))
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
