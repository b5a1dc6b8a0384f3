"""``Node`` and ``Operator`` of ``ge.graph``: read access to a built graph's nodes (``Node``); ``Operator`` exists
only inside GE's parser callbacks, which openacl does not run, so constructing one is GE-PY's RuntimeError."""

from __future__ import annotations

from typing import Any

from openacl.graph_engine.graph import Graph as EngineGraph
from openacl.graph_engine.graph import Node as EngineNode

__all__ = ["Node", "Operator"]


class Node:
    """A node of a built graph (from ``Graph.get_all_nodes`` / ``find_node_by_name``); not constructible."""

    __slots__ = ("_graph", "_node")

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

    def has_attr(self, name: str) -> bool:
        return name in self._node.attrs

    def get_attr(self, key: str) -> Any:
        if key not in self._node.attrs:
            raise RuntimeError(f"Node {self.name} has no attribute {key}")
        return self._node.attrs[key]

    def set_attr(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError("key must be a str")
        self._node.attrs[key] = value

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
            raise TypeError("in_index must be an int")
        if not 0 <= in_index < len(self._node.inputs):
            raise RuntimeError(f"Node {self.name} has no input {in_index}")
        tensor = self._node.inputs[in_index]
        producer = self._graph.producer(tensor)
        return Node._wrap(self._graph, producer), producer.outputs.index(tensor)

    def get_out_data_nodes_and_port_indexes(self, out_index: int) -> list[tuple[Node, int]]:
        if not isinstance(out_index, int):
            raise TypeError("out_index must be an int")
        if not 0 <= out_index < len(self._node.outputs):
            raise RuntimeError(f"Node {self.name} has no output {out_index}")
        tensor = self._node.outputs[out_index]
        return [
            (Node._wrap(self._graph, n), i) for n in self._graph.nodes for i, t in enumerate(n.inputs) if t == tensor
        ]

    def __repr__(self) -> str:
        return f"Node({self.name!r}, {self.type!r})"


class Operator:
    """Only valid inside a custom-op / ONNX-plugin parse callback, which openacl does not run."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("Operator is only valid inside parse_node")
