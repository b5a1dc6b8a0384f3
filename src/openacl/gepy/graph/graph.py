"""``ge.graph.Graph`` and ``DumpFormat``: the built graph, for inspection, attributes and dumps.

It wraps an :class:`openacl.graph_engine.graph.Graph` of the engine, which is what ``Session.add_graph`` takes.
"""

from __future__ import annotations

import enum
from typing import Any

from openacl.gepy.graph.node import Node
from openacl.graph_engine import graph_dump
from openacl.graph_engine.graph import Graph as EngineGraph

__all__ = ["DumpFormat", "Graph"]


class DumpFormat(enum.Enum):
    kOnnx = 0
    kTxt = 1
    kReadable = 2


_KINDS = {DumpFormat.kOnnx: graph_dump.ONNX, DumpFormat.kTxt: graph_dump.TXT, DumpFormat.kReadable: graph_dump.READABLE}


class Graph:
    """``Graph(name="graph")``; usually made by ``GraphBuilder.build_and_reset()``."""

    __slots__ = ("__weakref__", "_graph")

    def __init__(self, name: str = "graph") -> None:
        if not isinstance(name, str):
            raise TypeError("name must be a str")
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
            raise TypeError("name must be a str")
        for node in self.get_all_nodes():
            if node.name == name:
                return node
        raise RuntimeError(f"Node {name} not found in graph {self.name}")

    def get_attr(self, key: str) -> Any:
        if not isinstance(key, str):
            raise TypeError("key must be a str")
        if key not in self._graph.attrs:
            raise RuntimeError(f"Graph {self.name} has no attribute {key}")
        return self._graph.attrs[key]

    def set_attr(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError("key must be a str")
        self._graph.attrs[key] = value

    def get_all_subgraphs(self) -> list[Graph]:
        return [Graph._wrap(g) for g in graph_dump.subgraphs(self._graph)]

    def get_subgraph(self, name: str) -> Graph | None:
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

    def __str__(self) -> str:
        return self.dump_to_stream()

    def __copy__(self) -> None:
        raise RuntimeError("Graph does not support copy")

    def __deepcopy__(self, memo: Any) -> None:
        raise RuntimeError("Graph does not support deepcopy")
