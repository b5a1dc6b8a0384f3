"""Shape inference of a graph for given input shapes (GE ``GeUtils::InferShape``).

Data node ``i`` takes ``input_shapes[i]``; the graph is compiled and lowered as a run would be, ONNX's shape
inference runs over the result, and every node output it could type gets that desc (dims, with -1 for what stays
unknown, and data type). Outputs it could not type keep the desc they had.
"""

from __future__ import annotations

from collections.abc import Sequence

from openacl import dtypes, lazy
from openacl.errors import GeError
from openacl.graph_engine import _ops
from openacl.graph_engine._lower import lower
from openacl.graph_engine.graph import FORMAT_ND, Graph, PortDesc
from openacl.graph_engine.passes import compile_graph

onnx = lazy.module("onnx")

__all__ = ["infer_shape"]


def infer_shape(graph: Graph, input_shapes: Sequence[Sequence[int]]) -> None:
    """Set the Data nodes' shapes and the inferred output descs of ``graph``; ``ValueError`` when the number of
    shapes is not the number of Data nodes or the graph cannot be lowered."""
    data = sorted((n for n in graph.nodes if n.type == _ops.DATA), key=lambda n: n.attrs["index"])
    if len(input_shapes) != len(data):
        raise ValueError(f"graph {graph.name!r} has {len(data)} inputs, {len(input_shapes)} shapes were given")
    if not graph.nodes:
        return
    trial = graph.copy()
    _declare(trial, input_shapes)
    try:
        model, _ = lower(compile_graph(trial), {})
        inferred = onnx.shape_inference.infer_shapes(model)
    except (GeError, onnx.shape_inference.InferenceError, ValueError, KeyError) as exc:
        raise ValueError(f"graph {graph.name!r} cannot be inferred: {exc}") from None
    found: dict[str, PortDesc] = {}
    for info in [*inferred.graph.value_info, *inferred.graph.output]:
        tensor_type = info.type.tensor_type
        if not tensor_type.elem_type or not tensor_type.HasField("shape"):
            continue
        dims = tuple(d.dim_value if d.HasField("dim_value") else -1 for d in tensor_type.shape.dim)
        code = dtypes.ge_from_numpy(dtypes.numpy_from_onnx(tensor_type.elem_type))
        found[info.name] = PortDesc(dims, FORMAT_ND, code)
    _declare(graph, input_shapes)
    for node in graph.nodes:
        if node.type in (_ops.DATA, _ops.CONST):
            continue
        for index, tensor in enumerate(node.outputs):
            if tensor in found:
                graph.set_port_desc(node.name, "output", index, found[tensor])


def _declare(graph: Graph, input_shapes: Sequence[Sequence[int]]) -> None:
    """Data node ``i`` of ``graph`` takes ``input_shapes[i]`` (-1: any size)."""
    data = sorted((n for n in graph.nodes if n.type == _ops.DATA), key=lambda n: n.attrs["index"])
    for node, shape in zip(data, input_shapes, strict=True):
        node.attrs["shape"] = tuple(None if d < 0 else int(d) for d in shape)
