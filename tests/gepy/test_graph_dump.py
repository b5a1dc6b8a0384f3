"""``Graph.dump_to_file`` / ``dump_to_stream``: GE's file names, ONNX text with GE's node types, GE proto text."""

from __future__ import annotations

import re

import onnx
import pytest
from ge.es.all import Relu
from ge.es.graph_builder import GraphBuilder
from ge.graph import DumpFormat, Graph
from google.protobuf import text_format


def graph():
    b = GraphBuilder("Dumped")
    x = b.create_input(0, name="x")
    b.set_graph_output(Relu(x), 0)
    return b.build_and_reset()


def test_names_and_contents(tmp_path, monkeypatch):
    monkeypatch.setenv("DUMP_GRAPH_PATH", str(tmp_path))
    g = graph()
    g.dump_to_file(format=DumpFormat.kOnnx, suffix="one")
    g.dump_to_file(format=DumpFormat.kTxt, suffix="one")
    g.dump_to_file(suffix="one")
    names = sorted(p.name for p in tmp_path.iterdir())
    onnx_name = next(n for n in names if n.startswith("ge_onnx_"))
    m = re.fullmatch(r"ge_onnx_(\d{8})_graph_0_one\.pbtxt", onnx_name)
    assert m
    first = int(m[1])
    assert f"ge_proto_{first + 1:08d}_one.txt" in names and f"ge_readable_{first + 2:08d}_one.txt" in names
    model = text_format.Parse((tmp_path / onnx_name).read_text(), onnx.ModelProto())
    assert [n.op_type for n in model.graph.node] == ["Data", "Relu", "NetOutput"]
    assert model.graph.node[-1].name == "NetOutput_Dumped"


def test_stream_and_type_errors():
    g = graph()
    assert 'type: "Relu"' in g.dump_to_stream(DumpFormat.kTxt)
    assert "Relu_1: Relu(x)" in str(g)
    with pytest.raises(TypeError):
        g.dump_to_file(format=1)
    with pytest.raises(TypeError):
        g.dump_to_file(suffix=3)
    with pytest.raises(TypeError):
        Graph(1)
    assert Graph("empty").name == "empty" and Graph().get_all_nodes() == []
