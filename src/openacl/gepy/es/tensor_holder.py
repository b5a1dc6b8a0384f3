"""``ge.es.tensor_holder``: ``TensorHolder``, one output of a node being built, with GE-PY's ``+ - * /``.

The operators build ``Add``, ``Sub``, ``Mul`` and ``Div`` nodes (GE's type promotion applies when the graph is
built: float32 + int64 is float32); the other operand may be a TensorHolder of the same builder or a
TensorLike literal (an int, a float, a nested list).
"""

from __future__ import annotations

from typing import Any

from openacl import dtypes
from openacl.gepy._handle import OpaqueHandle
from openacl.gepy.graph.node import Node
from openacl.gepy.graph.types import DataType, Format
from openacl.graph_engine.graph import Tensor as EngineTensor

__all__ = ["TensorHolder"]


class TensorHolder:
    """Made by the builder and the op functions; constructing one directly is GE-PY's RuntimeError."""

    __slots__ = ("_builder", "_node", "_tensor")
    _handle = OpaqueHandle()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("TensorHolder cannot be constructed directly; use GraphBuilder or the ge.es.all functions")

    @classmethod
    def _wrap(cls, builder: Any, tensor: EngineTensor | None, node: str) -> TensorHolder:
        holder = cls.__new__(cls)
        holder._builder, holder._tensor, holder._node = builder, tensor, node
        return holder

    @property
    def name(self) -> str:
        """The name of the node that produces this tensor."""
        return self._node

    def get_owner_builder(self) -> Any:
        return self._builder

    def _get_node_snapshot(self) -> Node:
        """The producer node as a ``ge.graph.Node`` (a view of the builder's graph, as GE-PY's snapshot is)."""
        return Node._wrap(self._builder._graph, self._builder._graph.node(self._node))

    def _engine_tensor(self) -> EngineTensor:
        if self._tensor is None:
            raise ValueError(f"{self._node} has no output and cannot be an input")
        return self._tensor

    def set_data_type(self, data_type: DataType) -> TensorHolder:
        if not isinstance(data_type, DataType):
            raise TypeError("Data type must be a DataType enum")
        self._builder._check_open("set data type")
        self._builder._graph.set_desc(self._engine_tensor(), dtype=dtypes.numpy_from_ge(data_type))
        return self

    def set_format(self, format: Format) -> TensorHolder:
        if not isinstance(format, Format):
            raise TypeError("Format must be a Format enum")
        self._builder._check_open("set format")
        self._builder._graph.set_desc(self._engine_tensor(), format=int(format))
        return self

    def set_shape(self, shape: list[int]) -> TensorHolder:
        if not isinstance(shape, list):
            raise TypeError("Shape must be a list of integers")
        if not all(isinstance(d, int) for d in shape):
            raise TypeError("All shape dimensions must be integers")
        self._builder._check_open("set shape")
        self._builder._graph.set_desc(self._engine_tensor(), shape=shape)
        return self

    def __add__(self, other: Any) -> TensorHolder:
        return self._builder._binary("Add", self, other)

    def __radd__(self, other: Any) -> TensorHolder:
        return self._builder._binary("Add", other, self)

    def __sub__(self, other: Any) -> TensorHolder:
        return self._builder._binary("Sub", self, other)

    def __rsub__(self, other: Any) -> TensorHolder:
        return self._builder._binary("Sub", other, self)

    def __mul__(self, other: Any) -> TensorHolder:
        return self._builder._binary("Mul", self, other)

    def __rmul__(self, other: Any) -> TensorHolder:
        return self._builder._binary("Mul", other, self)

    def __truediv__(self, other: Any) -> TensorHolder:
        return self._builder._binary("Div", self, other)

    def __rtruediv__(self, other: Any) -> TensorHolder:
        return self._builder._binary("Div", other, self)

    def __repr__(self) -> str:
        return f"TensorHolder({self._node!r})"
