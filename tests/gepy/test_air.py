"""``Graph.save_to_air`` / ``load_from_air``: GE's AIR files from GE-PY, and a loaded graph runs as the saved one."""

from __future__ import annotations

import numpy as np
import pytest
from ge.es import GraphBuilder
from ge.es.all import Relu
from ge.graph import Graph, Tensor
from ge.session import Session


def test_saved_graph_loads_back_and_runs_the_same(tmp_path, initialized):
    b = GraphBuilder("air_graph")
    x = b.create_input(0, shape=[2, 2])
    y = Relu(x) * b.create_const_float([1.0, 2.0, 3.0, 4.0], shape=[2, 2])
    path = tmp_path / "g.air"
    b.build_and_reset([y]).save_to_air(str(path))
    assert path.stat().st_size > 0
    loaded = Graph("other")
    loaded.load_from_air(str(path))
    assert loaded.name == "air_graph"
    assert [n.name for n in loaded.get_all_nodes()] == ["input_0", "Relu_0", "Const_1", "Mul_2", "NetOutput_air_graph"]
    session = Session()
    session.add_graph(1, loaded)
    [out] = session.run_graph(1, [Tensor([-1.0, 1.0, 2.0, -2.0], shape=[2, 2])])
    np.testing.assert_array_equal(np.asarray(out), [[0.0, 2.0], [6.0, 0.0]])


def test_air_errors(tmp_path):
    g = Graph("g")
    with pytest.raises(TypeError, match="file_path must be a string"):
        g.save_to_air(233)
    with pytest.raises(TypeError, match="file_path must be a string"):
        g.load_from_air(233)
    with pytest.raises(RuntimeError, match="Failed to save graph to AIR format"):
        g.save_to_air(str(tmp_path))  # a directory
    with pytest.raises(RuntimeError, match="Failed to load graph from AIR format"):
        g.load_from_air(str(tmp_path / "missing.air"))
    (tmp_path / "junk.air").write_bytes(b"\x0f\x0f")
    with pytest.raises(RuntimeError, match="Failed to load graph from AIR format"):
        g.load_from_air(str(tmp_path / "junk.air"))
    assert g.name == "g"  # a failed load leaves the graph as it was
