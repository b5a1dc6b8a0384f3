"""Editing a built graph (``Graph.add_data_edge`` ... ``remove_subgraph``) and the descs and attributes of a node's
inputs and outputs (``Node.get_input_desc`` ... ``set_output_attr``)."""

from __future__ import annotations

import numpy as np
import pytest
from ge.es import GraphBuilder
from ge.es.all import Relu
from ge.graph import Graph, Tensor, TensorDesc
from ge.graph.types import DataType, Format


def built():
    b = GraphBuilder("g")
    x = b.create_input(0, name="x", shape=[2, 3])
    c = b.create_const_int64(10)
    r = Relu(x)
    return b.build_and_reset([r, c])


def nodes(graph):
    return {n.name: n for n in graph.get_all_nodes()}


def test_data_edges_need_an_existing_free_input():
    g = built()
    n = nodes(g)
    with pytest.raises(
        RuntimeError, match="Failed to add DataEdge from Node x, Port Index 0 to Node Const_0, Port Index 0"
    ):
        g.add_data_edge(n["x"], 0, n["Const_0"], 0)  # a Const has no inputs
    with pytest.raises(RuntimeError, match="Failed to add DataEdge"):
        g.add_data_edge(n["x"], 0, n["Relu_1"], 0)  # already connected
    g.remove_edge(n["x"], 0, n["Relu_1"], 0)
    assert n["Relu_1"].get_inputs_size() == 1
    with pytest.raises(RuntimeError, match="Input 0 of Node Relu_1 is not connected"):
        n["Relu_1"].get_in_data_nodes_and_port_indexes(0)
    assert n["x"].get_out_data_nodes_and_port_indexes(0) == []
    with pytest.raises(RuntimeError, match="Failed to remove edge from Node x, Port Index 0 to Node Relu_1"):
        g.remove_edge(n["x"], 0, n["Relu_1"], 0)
    g.add_data_edge(n["x"], 0, n["Relu_1"], 0)
    assert n["Relu_1"].get_in_data_nodes_and_port_indexes(0)[0].name == "x"


def test_control_edges_are_added_and_removed_with_ports_minus_one():
    g = built()
    n = nodes(g)
    g.add_control_edge(n["Const_0"], n["Relu_1"])
    assert [m.name for m in n["Relu_1"].get_in_control_nodes()] == ["Const_0"]
    g.remove_edge(n["Const_0"], -1, n["Relu_1"], -1)
    assert n["Relu_1"].get_in_control_nodes() == []
    with pytest.raises(RuntimeError, match="Failed to remove edge"):
        g.remove_edge(n["Const_0"], -1, n["Relu_1"], -1)


def test_edge_argument_types():
    g = built()
    node = g.get_all_nodes()[0]
    for call, text in [
        (lambda: g.add_data_edge(1, 0, node, 0), "src_node must be a Node"),
        (lambda: g.add_data_edge(node, "0", node, 0), "src_port_index must be an integer"),
        (lambda: g.remove_edge(node, 0, 1, 0), "dst_node must be a Node"),
        (lambda: g.remove_edge(node, 0, node, "0"), "dst_port_index must be an integer"),
        (lambda: g.add_control_edge(node, 1), "dst_node must be a Node"),
        (lambda: g.add_subgraph("g"), "subgraph must be a Graph"),
        (lambda: g.remove_subgraph(1), "name must be a string"),
    ]:
        with pytest.raises(TypeError, match=text):
            call()


def test_the_graph_ends_with_ges_net_output_node_whose_inputs_are_the_outputs(initialized):
    from ge.session import Session

    g = built()
    n = nodes(g)
    net = n["NetOutput_g"]
    assert net.type == "NetOutput" and net.get_inputs_size() == 2 and net.get_outputs_size() == 0
    assert [net.get_in_data_nodes_and_port_indexes(i)[0].name for i in (0, 1)] == ["Relu_1", "Const_0"]
    assert net.get_input_desc(1).get_data_type() == DataType.DT_INT64
    g.remove_node(n["Const_0"])  # its NetOutput input is left unconnected, as in GE
    assert sorted(nodes(g)) == ["NetOutput_g", "Relu_1", "x"]
    with pytest.raises(RuntimeError, match="Failed to remove Node Const_0"):
        g.remove_node(n["Const_0"])
    session = Session()
    session.add_graph(1, g)
    x = Tensor([-1.0, 2.0, -3.0, 4.0, 5.0, -6.0], shape=[2, 3])
    with pytest.raises(RuntimeError, match="graph output 1 is not connected"):
        session.run_graph(1, [x])
    g.add_data_edge(n["Relu_1"], 0, net, 1)  # editing NetOutput's inputs edits the outputs
    session = Session()  # a session takes a Graph object once
    session.add_graph(2, g)
    out = session.run_graph(2, [x])
    for tensor in out:
        np.testing.assert_array_equal(np.asarray(tensor), [[0, 2, 0], [4, 5, 0]])
    g.remove_node(net)
    session = Session()
    session.add_graph(3, g)
    assert session.run_graph(3, [x]) == []


def test_subgraphs_added_as_a_whole():
    g, then_graph = Graph("g"), Graph("then")
    g.add_subgraph(then_graph)
    assert [s.name for s in g.get_all_subgraphs()] == ["then"] and g.get_subgraph("then").name == "then"
    with pytest.raises(RuntimeError, match="Failed to add subgraph 'then' to graph 'g'"):
        g.add_subgraph(then_graph)
    g.remove_subgraph("then")
    assert g.get_all_subgraphs() == [] and g.get_subgraph("then") is None
    with pytest.raises(RuntimeError, match="Failed to remove subgraph 'then'"):
        g.remove_subgraph("then")


def test_port_descs_come_from_the_graph_and_can_be_updated():
    g = built()
    n = nodes(g)
    x_desc = n["x"].get_output_desc(0)
    assert (x_desc.get_shape(), x_desc.get_format(), x_desc.get_data_type()) == (
        [2, 3],
        Format.FORMAT_ND,
        DataType.DT_FLOAT,
    )
    c_desc = n["Const_0"].get_output_desc(0)
    assert (c_desc.get_shape(), c_desc.get_data_type()) == ([], DataType.DT_INT64)
    assert n["Relu_1"].get_input_desc(0).get_shape() == [2, 3]  # from its producer
    assert n["Relu_1"].get_output_desc(0).get_shape() == []  # not inferred yet: GE's empty desc
    n["Relu_1"].update_output_desc(0, TensorDesc([2, -1], Format.FORMAT_NCHW, DataType.DT_INT32))
    relu_out = n["Relu_1"].get_output_desc(0)
    assert relu_out.get_shape() == [2, -1] and relu_out.get_shape().is_unknown_shape()
    assert (relu_out.get_format(), relu_out.get_data_type()) == (Format.FORMAT_NCHW, DataType.DT_INT32)
    # a Data node's output desc is the input's declaration
    n["x"].update_output_desc(0, TensorDesc([4], Format.FORMAT_ND, DataType.DT_INT32))
    assert (
        n["x"].get_output_desc(0).get_shape() == [4] and n["x"].get_input_desc(0).get_data_type() == DataType.DT_INT32
    )
    with pytest.raises(RuntimeError, match="Failed to get output desc 3 of Node x"):
        n["x"].get_output_desc(3)
    with pytest.raises(TypeError, match="Input index must be an integer"):
        n["x"].get_input_desc("0")
    with pytest.raises(TypeError, match="tensor_desc must be a TensorDesc"):
        n["x"].update_output_desc(0, "desc")


def test_port_attributes_and_builder_tensor_attributes():
    b = GraphBuilder()
    x = b.create_input(0)
    b.set_tensor_attr_string(x, "_kind", "image")
    g = b.build_and_reset([x])
    node = g.get_all_nodes()[0]
    assert node.get_output_attr("_kind", 0) == "image"
    node.set_input_attr("scale", 0, 2.5)
    assert node.get_input_attr("scale", 0) == 2.5
    with pytest.raises(RuntimeError, match="Failed to get output attribute missing"):
        node.get_output_attr("missing", 0)
    with pytest.raises(TypeError, match="Attribute name must be a string"):
        node.set_output_attr(1, 0, "v")
    with pytest.raises(TypeError, match="Output index must be an integer"):
        node.get_output_attr("a", "0")


def test_regression_const_value_attribute_was_an_ndarray():
    """GE-PY gives a Const's value as a ge Tensor; openacl handed out its internal ndarray."""
    b = GraphBuilder()
    node = b.build_and_reset([b.create_const_int64([3], shape=[1])]).get_all_nodes()[0]
    value = node.get_attr("value")
    assert isinstance(value, Tensor) and (value.get_data(), value.get_data_type()) == ([3], DataType.DT_INT64)


def test_const_value_attribute_is_a_ge_tensor_and_node_attribute_messages():
    b = GraphBuilder()
    c = b.create_const_float([1.0, 2.0])
    node = b.build_and_reset([c]).get_all_nodes()[0]
    value = node.get_attr("value")
    assert isinstance(value, Tensor) and value.get_data() == [1.0, 2.0] and value.data_type == DataType.DT_FLOAT
    with pytest.raises(TypeError, match="Attribute key must be a string"):
        node.get_attr(1)
    with pytest.raises(TypeError, match="attr_name must be a string"):
        node.has_attr(True)
    with pytest.raises(TypeError, match="Input index must be an integer"):
        node.get_in_data_nodes_and_port_indexes("0")
