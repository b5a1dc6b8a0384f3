"""``ge.es.GraphBuilder`` and ``TensorHolder``: what they build, the literals they accept, the errors they raise."""

from __future__ import annotations

import numpy as np
import pytest
from ge.error import GeError
from ge.es import GraphBuilder, TensorHolder
from ge.es.all import Cast, Relu
from ge.es.graph_builder import attr_scope, control_dependency_scope
from ge.es.tensor_like import convert_to_tensor_holder, resolve_builder
from ge.ge_global import GeApi
from ge.graph import Tensor
from ge.graph.types import DataType, Format
from ge.session import Session


def run(graph, *inputs):
    assert GeApi.ge_initialize({"ge.exec.deviceId": "0"}) == 0
    session = Session()
    assert session.add_graph(1, graph) == 0
    return session.run_graph(1, list(inputs))


def test_names_defaults_and_one_counter_per_builder():
    b = GraphBuilder()
    assert b.name == "graph"
    x = b.create_input(0)
    assert x.name == "input_0"
    r1, r2 = Relu(x), Relu(x)
    s = r1 + r2
    assert (r1.name, r2.name, s.name) == ("Relu_0", "Relu_1", "Add_2")
    graph = b.build_and_reset()
    assert [n.type for n in graph.get_all_nodes()] == ["Data", "Relu", "Relu", "Add", "NetOutput"]


def test_tensor_like_conversion():
    b = GraphBuilder("lits")
    x = b.create_input(0, data_type=DataType.DT_FLOAT, shape=[2, 2])
    assert convert_to_tensor_holder(None, b) is None and convert_to_tensor_holder(x, b) is x
    graph_nodes = b._graph.nodes
    convert_to_tensor_holder(3, b)
    convert_to_tensor_holder(True, b)
    convert_to_tensor_holder(2.5, b)
    convert_to_tensor_holder([[1, 2], [3, 4]], b)
    convert_to_tensor_holder([[1, 2.0]], b)
    values = [n.attrs["value"] for n in graph_nodes if n.type == "Const"]
    assert [(v.dtype, v.shape) for v in values] == [
        (np.int64, ()),
        (np.int64, ()),
        (np.float32, ()),
        (np.int64, (2, 2)),
        (np.float32, (1, 2)),
    ]
    with pytest.raises(ValueError, match="Irregular nested list"):
        convert_to_tensor_holder([[1, 2], [3]], b)
    with pytest.raises(TypeError):
        convert_to_tensor_holder("x", b)
    assert resolve_builder(1, x) is b and resolve_builder(b) is b
    with pytest.raises(ValueError):
        resolve_builder(1, 2.0)


def test_reflected_operators_and_literals():
    b = GraphBuilder("ops")
    x = b.create_input(0, data_type=DataType.DT_FLOAT, shape=[3])
    b.set_graph_output(2 - x * 3 + 1.5 / x, 0)
    [out] = run(b.build_and_reset(), Tensor([1.0, 2.0, 4.0], None, DataType.DT_FLOAT, Format.FORMAT_ND, [3]))
    x_np = np.array([1.0, 2.0, 4.0], np.float32)
    np.testing.assert_allclose(np.asarray(out), 2 - x_np * 3 + 1.5 / x_np)


def test_operands_of_two_builders():
    a, b = GraphBuilder("a"), GraphBuilder("b")
    with pytest.raises(ValueError, match="tensors from different GraphBuilders"):
        a.create_input(0) + b.create_input(0)


def test_consts():
    b = GraphBuilder("c")
    assert b.create_const_float([1.0, 2.0], shape=[2, 1]).name.startswith("Const_")
    with pytest.raises(ValueError):
        b.create_const_int64([1, 2, 3], shape=[2])
    with pytest.raises(TypeError):
        b.create_const_int64([1.5])
    with pytest.raises(ValueError):
        b.create_scalar_uint32(-1)
    with pytest.raises(ValueError):
        b.create_const_uint32([2**32])
    b.create_const_uint64(2**63)
    b.create_vector_int64([1, 0])


def test_build_checks_indexes_and_closes_the_builder():
    b = GraphBuilder("gaps")
    b.create_input(1)
    with pytest.raises(RuntimeError, match="Failed to build graph"):
        b.build_and_reset()
    b = GraphBuilder("done")
    x = b.create_input(0)
    b.set_graph_output(x, 0)
    with pytest.raises(RuntimeError, match="already set"):
        b.set_graph_output(x, 0)
    b.build_and_reset()
    with pytest.raises(
        RuntimeError,
        match=r"Cannot create_input: GraphBuilder has already been built\. Create a new GraphBuilder to build",
    ):
        b.create_input(1)
    with pytest.raises(RuntimeError, match="already been built"):
        Relu(x)


def test_build_and_reset_with_outputs():
    b = GraphBuilder("outs")
    x = b.create_input(0, data_type=DataType.DT_FLOAT, shape=[1])
    graph = b.build_and_reset([Relu(x), x + 1.0])
    outs = run(graph, Tensor([-2.0], None, DataType.DT_FLOAT, Format.FORMAT_ND, [1]))
    assert [o.get_data() for o in outs] == [[0.0], [-1.0]]


def test_scopes_put_attributes_and_control_edges_on_new_nodes():
    b = GraphBuilder("scopes")
    x = b.create_input(0)
    with attr_scope({"_stream_label": "a", "rank": 1}):
        with attr_scope({"rank": 2}):
            inner = Relu(x)
        outer = Relu(x)
    with control_dependency_scope([inner, outer]):
        late = b.create_input(1)
    graph = b.build_and_reset()
    node = graph.find_node_by_name(inner.name)
    assert node.get_attr("_stream_label") == "a" and node.get_attr("rank") == 2
    assert graph.find_node_by_name(outer.name).get_attr("rank") == 1
    assert [n.name for n in graph.find_node_by_name(late.name).get_in_control_nodes()] == [inner.name, outer.name]
    with pytest.raises(ValueError), attr_scope({"bad": []}):
        pass


def test_tensor_holder_is_not_constructible_and_sets_descs():
    with pytest.raises(RuntimeError):
        TensorHolder()
    b = GraphBuilder("desc")
    x = b.create_input(0)
    assert x.set_data_type(DataType.DT_INT32).set_shape([3]) is x
    b.set_graph_output(Cast(x, dst_type=DataType.DT_FLOAT), 0)
    [out] = run(b.build_and_reset(), Tensor([1, 2, 3], None, DataType.DT_INT32, Format.FORMAT_ND, [3]))
    assert out.get_data() == [1.0, 2.0, 3.0]


def test_fractal_nz_is_refused_when_built():
    b = GraphBuilder("nz")
    x = b.create_input(0, data_type=DataType.DT_FLOAT, shape=[16, 16])
    y = Relu(x)
    y.set_format(Format.FORMAT_FRACTAL_NZ)
    b.set_graph_output(y, 0)
    with pytest.raises(GeError, match=r"FORMAT_FRACTAL_NZ \(29\), an Ascend storage layout"):
        run(b.build_and_reset(), Tensor([0.0] * 256, None, DataType.DT_FLOAT, Format.FORMAT_ND, [16, 16]))


def test_string_inputs_are_declared_as_ge_declares_them(tmp_path):
    """DT_STRING Data nodes (numpy object arrays, ONNX STRING) can be declared, described and saved; a ge Tensor
    of strings cannot be made, as in GE-PY."""
    b = GraphBuilder()
    s = b.create_input(0, data_type=DataType.DT_STRING, shape=[2])
    x = b.create_input(1, shape=[1])
    x.set_data_type(DataType.DT_STRING)
    graph = b.build_and_reset([s, x])
    descs = [n.get_output_desc(0) for n in graph.get_all_nodes() if n.type == "Data"]
    assert [d.get_data_type() for d in descs] == [DataType.DT_STRING, DataType.DT_STRING]
    graph.save_to_air(str(tmp_path / "s.air"))
    with pytest.raises(RuntimeError, match="Failed to create Tensor with data type"):
        Tensor([1.0], data_type=DataType.DT_STRING, shape=[1])
    with pytest.raises(RuntimeError, match="Failed to set datatype 13"):
        Tensor([1.0], shape=[1]).set_data_type(DataType.DT_STRING)
