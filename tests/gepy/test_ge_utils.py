"""``ge.utils.GeUtils.infer_shape``: the inferred shapes and data types land in the nodes' output descs."""

from __future__ import annotations

import pytest
from ge.es import GraphBuilder
from ge.es.all import Cast, MatMul
from ge.graph import Graph
from ge.graph.types import DataType
from ge.utils import GeUtils


def test_infer_shape_fills_output_descs():
    b = GraphBuilder()
    x, w = b.create_input(0), b.create_input(1)
    y = Cast(MatMul(x, w), dst_type=DataType.DT_INT32)
    graph = b.build_and_reset([y])
    assert GeUtils.infer_shape(graph, [[2, 3], [3, -1]]) is None
    nodes = {n.type: n for n in graph.get_all_nodes()}
    assert nodes["MatMul"].get_output_desc(0).get_shape() == [2, -1]
    cast = nodes["Cast"].get_output_desc(0)
    assert cast.get_shape() == [2, -1] and cast.get_data_type() == DataType.DT_INT32
    assert nodes["Data"].get_output_desc(0).get_shape() in ([2, 3], [3, -1])


def test_infer_shape_errors():
    assert GeUtils.infer_shape(Graph("empty"), []) is None
    with pytest.raises(RuntimeError, match="Failed to infer shape"):
        GeUtils.infer_shape(Graph("empty"), [[1]])  # more shapes than inputs
    for bad in ("bad", [1, 2], [[1, "bad"]], [[True]]):
        with pytest.raises(TypeError, match="input_shapes must be a list of lists of integers"):
            GeUtils.infer_shape(Graph("g"), bad)
    with pytest.raises(TypeError, match="graph must be a Graph"):
        GeUtils.infer_shape("g", [])
