"""The lowering context of one operator (:class:`openacl.ops.ir.LowerContext`): what its descs say, and the ONNX
nodes and initializers its lowering writes.

A single operator knows every input's dtype, dims, format and (``set_tensor_const``) value and every output's
dtype; a const input becomes an initializer, so a lowering that needs a value when it builds (ArgMaxV2's
``dimension``, Transpose's ``perm``) can read it. Operands are not promoted: the descs must agree, as CANN's
single-operator check wants. A failure carries CANN's matching code: ``ACL_ERROR_OP_INPUT_NOT_MATCH`` for inputs
the operator cannot take, ``ACL_ERROR_OP_ATTR_NOT_MATCH`` for attributes, ``ACL_ERROR_OP_OUTPUT_NOT_MATCH`` for
outputs.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from openacl import lazy
from openacl.dtypes import numpy_from_onnx, onnx_from_numpy
from openacl.op.table import attr_mismatch, input_mismatch, output_mismatch
from openacl.ops.ir import ATTR, INPUT, OUTPUT
from openacl.ops.lowering import learn_types

helper = lazy.module("onnx.helper")
numpy_helper = lazy.module("onnx.numpy_helper")

_FAILURES = {INPUT: input_mismatch, ATTR: attr_mismatch, OUTPUT: output_mismatch}


@dataclass(frozen=True)
class Operand:
    """One input as its desc gives it: its ONNX value name, dtype, dims, format and, for a const, its value."""

    name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    format: int = -1
    const: np.ndarray | None = None


class SingleOpContext:
    """Collects the nodes and initializers of one operator's ONNX graph."""

    def __init__(self, op_type: str, opset: int, operands: Sequence[Operand], out_dtypes: Sequence[np.dtype]) -> None:
        self._helper, self._numpy_helper = helper, numpy_helper
        self.op_type = op_type
        self.opset = opset
        self.operands = {operand.name: operand for operand in operands}
        self.out_dtypes = list(out_dtypes)
        self.nodes: list = []
        self.initializers: list = []
        self.graph_inputs: list = []
        self._dtypes = {operand.name: operand.dtype for operand in operands}
        self._ranks = {operand.name: len(operand.shape) for operand in operands}
        self._consts = {o.name: o.const for o in operands if o.const is not None}
        self._names = itertools.count()
        for operand in operands:
            if operand.const is not None:
                self.initializers.append(numpy_helper.from_array(operand.const, operand.name))
            else:
                elem = helper.np_dtype_to_tensor_dtype(operand.dtype)
                self.graph_inputs.append(helper.make_tensor_value_info(operand.name, elem, list(operand.shape)))

    def fail(self, detail: str, about: str = INPUT) -> NoReturn:
        raise _FAILURES[about](self.op_type, detail)

    def _fresh(self, hint: str) -> str:
        return f"{hint}_{next(self._names)}"

    def emit(self, onnx_type: str, inputs: Sequence[str], outputs: Sequence[str] | int = 1, **attrs: Any) -> list[str]:
        outs = [self._fresh(onnx_type.lower()) for _ in range(outputs)] if isinstance(outputs, int) else list(outputs)
        tensors = {k: self._numpy_helper.from_array(v) for k, v in attrs.items() if isinstance(v, np.ndarray)}
        self.nodes.append(self._helper.make_node(onnx_type, list(inputs), outs, **(attrs | tensors)))
        if onnx_type == "Cast":
            self._dtypes[outs[0]] = numpy_from_onnx(attrs["to"])
        return outs

    def const(self, value: Any, dtype: Any = None) -> str:
        array = np.asarray(value, dtype=dtype)
        name = self._fresh("const")
        self.initializers.append(self._numpy_helper.from_array(array, name))
        self._consts[name], self._dtypes[name], self._ranks[name] = array, array.dtype, array.ndim
        return name

    def value(self, tensor: str) -> np.ndarray | None:
        return self._consts.get(tensor)

    def dtype(self, tensor: str) -> np.dtype:
        if tensor not in self._dtypes:
            self._infer()
        if tensor not in self._dtypes:
            self.fail(f"openacl cannot tell the dtype of {tensor!r}")
        return self._dtypes[tensor]

    def rank(self, tensor: str) -> int | None:
        if tensor not in self._ranks:
            self._infer()
        return self._ranks.get(tensor)

    def shape(self, tensor: str) -> tuple[int, ...] | None:
        operand = self.operands.get(tensor)
        return operand.shape if operand is not None else None

    def format(self, tensor: str) -> int | None:
        operand = self.operands.get(tensor)
        return operand.format if operand is not None else None

    def out_dtype(self, index: int) -> np.dtype | None:
        return self.out_dtypes[index] if index < len(self.out_dtypes) else None

    def cast(self, tensor: str, dtype: Any) -> str:
        dtype = np.dtype(dtype)
        if self.dtype(tensor) == dtype:
            return tensor
        return self.emit("Cast", [tensor], to=onnx_from_numpy(dtype))[0]

    def meet(self, tensors: Sequence[str]) -> list[str]:
        return list(tensors)

    def subgraph(self, graph: Any, inputs: Sequence[str], tag: str) -> NoReturn:
        self.fail(f"{tag}: a single operator has no subgraphs")

    def _infer(self) -> None:
        """ONNX type inference over the nodes written so far; what it learns is kept."""
        graph = self._helper.make_graph(self.nodes, "infer", self.graph_inputs, [], initializer=self.initializers)
        model = self._helper.make_model(graph, opset_imports=[self._helper.make_opsetid("", self.opset)])
        learn_types(model, self._dtypes, self._ranks)
