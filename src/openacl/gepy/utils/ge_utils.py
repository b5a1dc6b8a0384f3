"""``ge.utils.ge_utils``: ``GeUtils.infer_shape`` over the engine's :mod:`openacl.graph_engine.infer`.

GE-PY's ``check_node_support_on_aicore`` asks the NPU's AI Core about a node; openacl has no AI Core to ask, so
it is not offered.
"""

from __future__ import annotations

from typing import Any

from openacl.gepy.graph.graph import Graph
from openacl.graph_engine.infer import infer_shape

__all__ = ["GeUtils"]


class GeUtils:
    @staticmethod
    def infer_shape(graph: Graph, input_shapes: list[list[int]]) -> None:
        """Infer every node's output shape and data type for these input shapes (one list of dims per Data node,
        by index), written into the graph's output descs (``Node.get_output_desc``)."""
        if not isinstance(graph, Graph):
            raise TypeError("graph must be a Graph")
        if not _shape_list(input_shapes):
            raise TypeError("input_shapes must be a list of lists of integers")
        try:
            infer_shape(graph._graph, input_shapes)
        except ValueError as exc:
            raise RuntimeError(f"Failed to infer shape: {exc}") from None


def _shape_list(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(dims, list) and all(isinstance(d, int) and not isinstance(d, bool) for d in dims) for dims in value
    )
