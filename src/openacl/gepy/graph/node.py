"""``Node`` and ``Operator`` of ``ge.graph``: read access to a built graph's nodes (``Node``); ``Operator`` exists
only inside GE's parser callbacks, which openacl does not run, so constructing one is GE-PY's RuntimeError."""

from __future__ import annotations

from typing import Any

import numpy as np

from openacl.gepy._handle import OpaqueHandle
from openacl.gepy.graph._attr import engine_value
from openacl.gepy.graph.tensor import Tensor
from openacl.gepy.graph.tensor_desc import Shape, TensorDesc
from openacl.gepy.graph.types import DataType, Format
from openacl.graph_engine.graph import UNCONNECTED, PortDesc
from openacl.graph_engine.graph import Graph as EngineGraph
from openacl.graph_engine.graph import Node as EngineNode

__all__ = ["Node", "Operator"]


class Node:
    """A node of a built graph (from ``Graph.get_all_nodes`` / ``find_node_by_name``); not constructible."""

    __slots__ = ("_graph", "_node")
    _handle = OpaqueHandle()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("Node cannot be constructed directly; get it from a Graph")

    @classmethod
    def _wrap(cls, graph: EngineGraph, node: EngineNode) -> Node:
        wrapped = cls.__new__(cls)
        wrapped._graph, wrapped._node = graph, node
        return wrapped

    @property
    def name(self) -> str:
        return self._node.name

    @property
    def type(self) -> str:
        return self._node.type

    def has_attr(self, attr_name: str) -> bool:
        if not isinstance(attr_name, str):
            raise TypeError("attr_name must be a string")
        return attr_name in self._node.attrs

    def get_attr(self, key: str) -> Any:
        """The attribute's value; a Const's ``value`` is a ``ge.graph.Tensor``, as GE-PY gives it."""
        if not isinstance(key, str):
            raise TypeError("Attribute key must be a string")
        if key not in self._node.attrs:
            raise RuntimeError(f"Failed to get attribute {key} of Node {self.name}")
        value = self._node.attrs[key]
        if isinstance(value, np.ndarray):
            return Tensor._wrap(np.array(value))
        return value

    def set_attr(self, key: str, value: Any) -> None:
        """GE types the value (``ge.graph._attr``): ValueError for one it cannot type."""
        if not isinstance(key, str):
            raise TypeError("Attribute key must be a string")
        self._node.attrs[key] = engine_value(value)

    # ----- the descs and attributes of the node's inputs and outputs -----

    def get_input_desc(self, index: int) -> TensorDesc:
        return self._desc("input", index)

    def get_output_desc(self, index: int) -> TensorDesc:
        return self._desc("output", index)

    def update_input_desc(self, index: int, tensor_desc: TensorDesc) -> None:
        self._update_desc("input", index, tensor_desc)

    def update_output_desc(self, index: int, tensor_desc: TensorDesc) -> None:
        """On a Data node this is the input's declared shape, data type and format."""
        self._update_desc("output", index, tensor_desc)

    def get_input_attr(self, attr_name: str, index: int) -> Any:
        return self._port_attr("input", attr_name, index)

    def get_output_attr(self, attr_name: str, index: int) -> Any:
        return self._port_attr("output", attr_name, index)

    def set_input_attr(self, attr_name: str, index: int, value: Any) -> None:
        self._set_port_attr("input", attr_name, index, value)

    def set_output_attr(self, attr_name: str, index: int, value: Any) -> None:
        self._set_port_attr("output", attr_name, index, value)

    def _desc(self, side: str, index: Any) -> TensorDesc:
        _check_index(side, index)
        try:
            desc = self._graph.port_desc(self._node.name, side, index)
        except (IndexError, KeyError):
            raise RuntimeError(f"Failed to get {side} desc {index} of Node {self.name}") from None
        return TensorDesc(Shape(list(desc.shape)), Format(desc.format), DataType(desc.dtype))

    def _update_desc(self, side: str, index: Any, tensor_desc: Any) -> None:
        _check_index(side, index)
        if not isinstance(tensor_desc, TensorDesc):
            raise TypeError("tensor_desc must be a TensorDesc")
        desc = PortDesc(tuple(tensor_desc.get_shape()), int(tensor_desc.get_format()), int(tensor_desc.get_data_type()))
        try:
            self._graph.set_port_desc(self._node.name, side, index, desc)
        except (IndexError, KeyError, ValueError) as exc:
            raise RuntimeError(f"Failed to update {side} desc {index} of Node {self.name}: {exc}") from None

    def _port_attr(self, side: str, attr_name: Any, index: Any) -> Any:
        _check_attr_name(attr_name)
        _check_index(side, index)
        try:
            return self._graph.port_attr(self._node.name, side, index, attr_name)
        except (IndexError, KeyError):
            raise RuntimeError(
                f"Failed to get {side} attribute {attr_name} of Node {self.name}, index {index}"
            ) from None

    def _set_port_attr(self, side: str, attr_name: Any, index: Any, value: Any) -> None:
        _check_attr_name(attr_name)
        _check_index(side, index)
        try:
            self._graph.set_port_attr(self._node.name, side, index, attr_name, engine_value(value))
        except (IndexError, KeyError):
            raise RuntimeError(
                f"Failed to set {side} attribute {attr_name} of Node {self.name}, index {index}"
            ) from None

    def get_inputs_size(self) -> int:
        return len(self._node.inputs)

    def get_outputs_size(self) -> int:
        return len(self._node.outputs)

    def get_in_control_nodes(self) -> list[Node]:
        return [Node._wrap(self._graph, self._graph.node(name)) for name in self._node.control]

    def get_out_control_nodes(self) -> list[Node]:
        return [Node._wrap(self._graph, n) for n in self._graph.nodes if self._node.name in n.control]

    def get_in_data_nodes_and_port_indexes(self, in_index: int) -> tuple[Node, int]:
        if not isinstance(in_index, int):
            raise TypeError("Input index must be an integer")
        if not 0 <= in_index < len(self._node.inputs):
            raise RuntimeError(f"Node {self.name} has no input {in_index}")
        tensor = self._node.inputs[in_index]
        if tensor == UNCONNECTED:
            raise RuntimeError(f"Input {in_index} of Node {self.name} is not connected")
        producer = self._graph.producer(tensor)
        return Node._wrap(self._graph, producer), producer.outputs.index(tensor)

    def get_out_data_nodes_and_port_indexes(self, out_index: int) -> list[tuple[Node, int]]:
        if not isinstance(out_index, int):
            raise TypeError("Output index must be an integer")
        if not 0 <= out_index < len(self._node.outputs):
            raise RuntimeError(f"Node {self.name} has no output {out_index}")
        tensor = self._node.outputs[out_index]
        return [
            (Node._wrap(self._graph, n), i) for n in self._graph.nodes for i, t in enumerate(n.inputs) if t == tensor
        ]

    def __repr__(self) -> str:
        return f"Node({self.name!r}, {self.type!r})"


def _check_index(side: str, index: Any) -> None:
    if not isinstance(index, int):
        raise TypeError(f"{side.capitalize()} index must be an integer")


def _check_attr_name(name: Any) -> None:
    if not isinstance(name, str):
        raise TypeError("Attribute name must be a string")


class Operator:
    """Only valid inside a custom-op / ONNX-plugin parse callback, which openacl does not run."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("Operator is only valid inside parse_node")
