"""``ge.graph.Graph`` and ``DumpFormat``: the built graph, for inspection, attributes and dumps.

It wraps an :class:`openacl.graph_engine.graph.Graph` of the engine, which is what ``Session.add_graph`` takes.
"""

from __future__ import annotations

import enum
from typing import Any

from openacl import lazy
from openacl.gepy._handle import OpaqueHandle
from openacl.gepy.graph._attr import engine_value
from openacl.gepy.graph.node import Node
from openacl.graph_engine import graph_dump
from openacl.graph_engine.graph import Graph as EngineGraph
from openacl.log import get_logger

air = lazy.module("openacl.graph_engine.air.codec")  # its schema builds a protobuf pool: at the first AIR file

__all__ = ["DumpFormat", "Graph"]


class DumpFormat(enum.Enum):
    kOnnx = 0
    kTxt = 1
    kReadable = 2


log = get_logger("ge")

_KINDS = {DumpFormat.kOnnx: graph_dump.ONNX, DumpFormat.kTxt: graph_dump.TXT, DumpFormat.kReadable: graph_dump.READABLE}


class Graph:
    """``Graph(name="graph")``; usually made by ``GraphBuilder.build_and_reset()``."""

    __slots__ = ("__weakref__", "_graph")
    _handle = OpaqueHandle()

    def __init__(self, name: str = "graph") -> None:
        if not isinstance(name, str):
            raise TypeError("Graph name must be a string")
        self._graph = EngineGraph(name)

    @classmethod
    def _wrap(cls, engine: EngineGraph) -> Graph:
        graph = cls.__new__(cls)
        graph._graph = engine
        return graph

    @property
    def name(self) -> str:
        return self._graph.name

    def get_direct_nodes(self) -> list[Node]:
        return [Node._wrap(self._graph, n) for n in self._graph.nodes]

    def get_all_nodes(self) -> list[Node]:
        nodes = self.get_direct_nodes()
        for sub in graph_dump.subgraphs(self._graph):
            nodes += [Node._wrap(sub, n) for n in sub.nodes]
        return nodes

    def find_node_by_name(self, name: str) -> Node:
        if not isinstance(name, str):
            raise TypeError("name must be a string")
        for node in self.get_all_nodes():
            if node.name == name:
                return node
        raise RuntimeError(f"Failed to find Node name {name}")

    def get_attr(self, key: str) -> Any:
        if not isinstance(key, str):
            raise TypeError("Attribute key must be a string")
        if key not in self._graph.attrs:
            raise RuntimeError(f"Graph {self.name} has no attribute {key}")
        return self._graph.attrs[key]

    def set_attr(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError("Attribute key must be a string")
        self._graph.attrs[key] = engine_value(value)

    # ----- editing -----

    def add_data_edge(self, src_node: Node, src_port_index: int, dst_node: Node, dst_port_index: int) -> None:
        """Connect an output to a free, existing input (GE's inputs are declared by the op)."""
        _check_edge(src_node, src_port_index, dst_node, dst_port_index)
        try:
            self._graph.add_data_edge(src_node.name, src_port_index, dst_node.name, dst_port_index)
        except (KeyError, ValueError):
            raise RuntimeError(
                f"Failed to add DataEdge from Node {src_node.name}, Port Index {src_port_index} "
                f"to Node {dst_node.name}, Port Index {dst_port_index}"
            ) from None

    def add_control_edge(self, src_node: Node, dst_node: Node) -> None:
        _check_node(src_node, "src_node")
        _check_node(dst_node, "dst_node")
        try:
            self._graph.add_control_edge(src_node.name, dst_node.name)
        except KeyError:
            raise RuntimeError(f"Failed to add ControlEdge from Node {src_node.name} to Node {dst_node.name}") from None

    def remove_edge(self, src_node: Node, src_port_index: int, dst_node: Node, dst_port_index: int) -> None:
        """Remove a data edge, or the control edge when both port indexes are -1."""
        _check_edge(src_node, src_port_index, dst_node, dst_port_index)
        try:
            self._graph.remove_edge(src_node.name, src_port_index, dst_node.name, dst_port_index)
        except (KeyError, ValueError):
            raise RuntimeError(
                f"Failed to remove edge from Node {src_node.name}, Port Index {src_port_index} "
                f"to Node {dst_node.name}, Port Index {dst_port_index}"
            ) from None

    def remove_node(self, node: Node) -> None:
        """Remove a node of this graph with its edges; the inputs it fed are left unconnected."""
        _check_node(node, "node")
        try:
            self._graph.remove_node(node.name)
        except KeyError:
            raise RuntimeError(f"Failed to remove Node {node.name} from graph {self.name}") from None

    def add_subgraph(self, subgraph: Graph) -> None:
        if not isinstance(subgraph, Graph):
            raise TypeError("subgraph must be a Graph")
        try:
            self._graph.add_subgraph(subgraph._graph)
        except ValueError:
            raise RuntimeError(f"Failed to add subgraph '{subgraph.name}' to graph '{self.name}'") from None

    def remove_subgraph(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError("name must be a string")
        try:
            self._graph.remove_subgraph(name)
        except KeyError:
            raise RuntimeError(f"Failed to remove subgraph '{name}' from graph '{self.name}'") from None

    def get_all_subgraphs(self) -> list[Graph]:
        return [Graph._wrap(g) for g in graph_dump.subgraphs(self._graph)]

    def get_subgraph(self, name: str) -> Graph | None:
        if not isinstance(name, str):
            raise TypeError("name must be a string")
        for sub in graph_dump.subgraphs(self._graph):
            if sub.name == name:
                return Graph._wrap(sub)
        return None

    def dump_to_file(self, format: DumpFormat = DumpFormat.kReadable, suffix: str = "") -> None:
        """Write the dump GE writes (file names in :mod:`openacl.graph_engine.graph_dump`); graph id 0 before
        ``add_graph``."""
        if not isinstance(format, DumpFormat):
            raise TypeError("format must be a DumpFormat")
        if not isinstance(suffix, str):
            raise TypeError("suffix must be a str")
        try:
            graph_dump.dump_to_file(self._graph, _KINDS[format], suffix)
        except OSError as exc:
            raise RuntimeError(f"Failed to dump graph {self.name}: {exc}") from exc

    def dump_to_stream(self, format: DumpFormat = DumpFormat.kReadable) -> str:
        if not isinstance(format, DumpFormat):
            raise TypeError("format must be a DumpFormat")
        if format == DumpFormat.kOnnx:
            return str(graph_dump.onnx_model(self._graph))
        if format == DumpFormat.kTxt:
            return graph_dump.proto_text(self._graph)
        return graph_dump.readable_text(self._graph)

    def save_to_air(self, file_path: str) -> None:
        """Write the graph as an AIR file: GE's graph protobuf (``ge.proto.ModelDef``), which GE loads."""
        if not isinstance(file_path, str):
            raise TypeError("file_path must be a string")
        try:
            air.save(self._graph, file_path)
        except (OSError, ValueError, KeyError) as exc:
            log.error("save_to_air %r: %s", file_path, exc)
            raise RuntimeError("Failed to save graph to AIR format") from None

    def load_from_air(self, file_path: str) -> None:
        """This graph becomes the one in the AIR file (its name too), as GE's ``Graph::LoadFromFile`` does."""
        if not isinstance(file_path, str):
            raise TypeError("file_path must be a string")
        try:
            self._graph = air.load(file_path)
        except (OSError, ValueError, KeyError) as exc:
            log.error("load_from_air %r: %s", file_path, exc)
            raise RuntimeError("Failed to load graph from AIR format") from None

    def __str__(self) -> str:
        return self.dump_to_stream()

    def __copy__(self) -> None:
        raise RuntimeError("Graph does not support copy")

    def __deepcopy__(self, memo: Any) -> None:
        raise RuntimeError("Graph does not support deepcopy")


def _check_node(node: Any, what: str) -> None:
    if not isinstance(node, Node):
        raise TypeError(f"{what} must be a Node")


def _check_edge(src_node: Any, src_port_index: Any, dst_node: Any, dst_port_index: Any) -> None:
    _check_node(src_node, "src_node")
    if not isinstance(src_port_index, int):
        raise TypeError("src_port_index must be an integer")
    _check_node(dst_node, "dst_node")
    if not isinstance(dst_port_index, int):
        raise TypeError("dst_port_index must be an integer")
