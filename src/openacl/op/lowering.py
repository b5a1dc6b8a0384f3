"""What an op-table record is, and the builder its lowering writes ONNX nodes with.

A lowering turns one CANN operator (its inputs' dtypes, shapes and constant values, its attributes, its
outputs' descs) into ONNX nodes. Most are a single ONNX node; a few CANN operators need a couple (a transpose
before a MatMul, a Cast after an ArgMax). Constant inputs (``set_tensor_const``) become initializers, so a
lowering that needs a value at build time (ArgMaxV2's ``dimension``, Transpose's ``perm``) can read it.

Errors a lowering raises carry CANN's matching codes: ``ACL_ERROR_OP_INPUT_NOT_MATCH`` for inputs the
operator cannot take, ``ACL_ERROR_OP_ATTR_NOT_MATCH`` for attributes, ``ACL_ERROR_OP_OUTPUT_NOT_MATCH`` for
outputs.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from openacl import lazy
from openacl.dtypes import onnx_from_numpy
from openacl.errors import AclCode, AclError

helper = lazy.module("onnx.helper")
numpy_helper = lazy.module("onnx.numpy_helper")

REQUIRED = object()  # an AttrSpec default: the program must set the attribute


def input_mismatch(op_type: str, detail: str) -> AclError:
    return AclError(AclCode.ACL_ERROR_OP_INPUT_NOT_MATCH, f"{op_type}: {detail}")


def attr_mismatch(op_type: str, detail: str) -> AclError:
    return AclError(AclCode.ACL_ERROR_OP_ATTR_NOT_MATCH, f"{op_type}: {detail}")


def output_mismatch(op_type: str, detail: str) -> AclError:
    return AclError(AclCode.ACL_ERROR_OP_OUTPUT_NOT_MATCH, f"{op_type}: {detail}")


@dataclass(frozen=True)
class AttrSpec:
    """One CANN attribute: its kind (``openacl.op.attr`` kinds), default, and the ONNX attribute it becomes."""

    name: str
    kind: str
    default: Any = REQUIRED
    onnx: str = ""  # the ONNX attribute (or input) it maps to; "" when the lowering uses it otherwise
    doc: str = ""


@dataclass(frozen=True)
class Operand:
    """One input as a lowering sees it: its ONNX value name, dtype, shape and, for a const, its value."""

    name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    format: int = -1
    const: np.ndarray | None = None

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class Output:
    """One output desc as a lowering sees it."""

    dtype: np.dtype
    shape: tuple[int, ...]


class Builder:
    """Collects the nodes and initializers of one operator's ONNX graph."""

    def __init__(self, op_type: str) -> None:
        self._helper = helper
        self._numpy_helper = numpy_helper
        self.op_type = op_type
        self.nodes: list = []
        self.initializers: list = []
        self._names = itertools.count()

    def make_node(self, onnx_type: str, inputs: list[str], outputs: list[str], **attributes: object):
        return self._helper.make_node(onnx_type, inputs, outputs, **attributes)

    def tensor(self, value: np.ndarray, name: str):
        return self._numpy_helper.from_array(np.asarray(value), name)

    def fresh(self, hint: str) -> str:
        return f"{hint}_{next(self._names)}"

    def node(self, onnx_type: str, inputs: list[str], outputs: int = 1, **attributes: object) -> list[str]:
        """Add one node; returns its output names."""
        names = [self.fresh(onnx_type.lower()) for _ in range(outputs)]
        self.nodes.append(self.make_node(onnx_type, inputs, names, **attributes))
        return names

    def one(self, onnx_type: str, inputs: list[str], **attributes: object) -> str:
        return self.node(onnx_type, inputs, 1, **attributes)[0]

    def constant(self, value: np.ndarray, hint: str = "const") -> str:
        name = self.fresh(hint)
        self.initializers.append(self.tensor(value, name))
        return name

    def int64s(self, values: list[int] | tuple[int, ...], hint: str = "ints") -> str:
        if not all(-(1 << 63) <= v < 1 << 63 for v in values):
            raise input_mismatch(self.op_type, f"{hint} {list(values)} do not fit int64")
        return self.constant(np.asarray(values, dtype=np.int64), hint)

    def cast(self, name: str, dtype: np.dtype) -> str:
        return self.one("Cast", [name], to=onnx_from_numpy(dtype))

    def as_int64(self, operand: Operand) -> str:
        """An integer input as an int64 value (ONNX shape/axes inputs want int64, CANN often passes int32)."""
        if operand.dtype.kind not in "iu":
            raise input_mismatch(self.op_type, f"input {operand.name} must be an integer tensor, not {operand.dtype}")
        if operand.const is not None:
            return self.int64s(operand.const.astype(np.int64).reshape(-1).tolist(), "ints")
        return operand.name if operand.dtype == np.int64 else self.cast(operand.name, np.dtype(np.int64))

    def const_ints(self, operand: Operand, what: str) -> list[int]:
        """The values of an input that this lowering needs at build time (``set_tensor_const``)."""
        if operand.const is None:
            raise input_mismatch(self.op_type, f"input {what} must be a const (acl.set_tensor_const)")
        if operand.dtype.kind not in "iu":
            raise input_mismatch(self.op_type, f"input {what} must hold integers, not {operand.dtype}")
        return [int(v) for v in operand.const.reshape(-1)]


Lower = Callable[[Builder, list[Operand | None], dict[str, Any], list[Output]], list[str]]


@dataclass(frozen=True)
class OpRecord:
    """One CANN operator type: its inputs, outputs, attributes, and how it becomes ONNX.

    ``inputs`` are CANN's input names; a trailing ``?`` marks an optional input (absent: a desc of dtype
    ACL_DT_UNDEFINED), a trailing ``*`` a dynamic input that takes one or more tensors (ConcatD's ``x``).
    """

    op_type: str
    onnx: str  # the ONNX operator it mainly lowers to, for the README table
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: tuple[AttrSpec, ...]
    lower: Lower
    doc: str = ""

    def input_count_ok(self, count: int) -> bool:
        required = sum(1 for name in self.inputs if not name.endswith("?"))
        if any(name.endswith("*") for name in self.inputs):
            return count >= required
        return required <= count <= len(self.inputs)
