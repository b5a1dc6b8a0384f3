"""Building graphs in Python and reading them from ONNX models."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from openacl import ge
from openacl.errors import GeStatus as S

F32 = np.float32


def test_node_and_tensor_names_are_unique():
    g = ge.Graph("g")
    g.data("x", index=0, shape=[1], dtype="float32")
    with pytest.raises(ValueError, match="already has a node named 'x'"):
        g.const("x", 1.0)
    with pytest.raises(ValueError, match="already has a node named 'x'"):
        g.summary("x", "x")


def test_tensors_of_another_graph_are_refused():
    a, b = ge.Graph("a"), ge.Graph("b")
    x = a.data("x", index=0, shape=[1], dtype="float32")
    with pytest.raises(ValueError, match="belongs to graph 'a'"):
        b.op("Relu", [x])
    with pytest.raises(TypeError):
        b.op("Relu", x)
    with pytest.raises(TypeError, match="expected a Tensor"):
        b.op("Relu", [1.0])


def test_unknown_operators_and_ge_types_through_op():
    g = ge.Graph("g")
    with pytest.raises(ValueError, match="not an ONNX operator; GE node types are Assign, Const, Data"):
        g.op("Frobnicate", [])
    with pytest.raises(ValueError, match=r"use Graph.summary"):
        g.op("Summary", [])
    g.op("Frobnicate", [], domain="com.example")  # custom domains are onnxruntime's to judge


def test_variables():
    g = ge.Graph("g")
    w = g.variable("w", value=np.zeros(2, F32))
    assert g.variable("w") is w
    with pytest.raises(ValueError, match="give its value once"):
        g.variable("w", value=np.ones(2, F32))
    with pytest.raises(ValueError, match="is not a variable"):
        g.assign(g.const("c", np.ones(2, F32)), w)
    assert g.node("w").attrs["value"].flags.writeable is False


def test_dtypes_without_onnx_equivalent_are_refused():
    g = ge.Graph("g")
    with pytest.raises(ValueError, match="no ONNX equivalent"):
        g.const("s", np.array(["text"]))
    with pytest.raises(ValueError, match="index must be an int >= 0"):
        g.data("x", index=-1, shape=[1], dtype="float32")


def test_multi_output_operator_and_attributes(predict):
    g = ge.Graph("g")
    x = g.data("x", index=0, shape=[4], dtype="float32")
    a, b = g.op("Split", [x, g.const("sizes", np.array([1, 3], np.int64))], n_outputs=2, axis=0)
    g.set_outputs([b, a])
    assert predict.add_graph(1, g) == S.SUCCESS
    (first, second), ret = predict.run_graph(1, [np.arange(4, dtype=F32)])
    assert ret == S.SUCCESS
    np.testing.assert_array_equal(first, [1, 2, 3])
    np.testing.assert_array_equal(second, [0])


def test_node_lookup_lists_what_exists():
    g = ge.Graph("g")
    g.data("x", index=0, shape=[1], dtype="float32")
    with pytest.raises(KeyError, match=r"nodes: \['x'\]"):
        g.node("y")


def ge_model() -> onnx.ModelProto:
    """x + w -> y; Summary(y); w <- y: written as another tool would, with openacl.ge nodes."""
    w0 = numpy_helper.from_array(np.array([1, 2], F32))
    nodes = [
        helper.make_node("Variable", [], ["w_read"], name="w", domain=ge.GE_DOMAIN, value=w0),
        helper.make_node("Mul", ["x", "scale"], ["xs"]),
        helper.make_node("Add", ["xs", "w_read"], ["y"], name="add"),
        helper.make_node("Assign", ["w_read", "y"], ["w_new"], domain=ge.GE_DOMAIN),
        helper.make_node("Summary", ["y"], [], name="y[:Tensor]", domain=ge.GE_DOMAIN),
    ]
    graph = helper.make_graph(
        nodes,
        "from_tool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])],
        initializer=[numpy_helper.from_array(np.array(2, F32), "scale")],
    )
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid(ge.GE_DOMAIN, 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=7)


def test_from_onnx_reads_ge_nodes(train, tmp_path):
    path = tmp_path / "model.onnx"
    onnx.save(ge_model(), str(path))
    g = ge.Graph.from_onnx(path)
    assert g.name == "from_tool" and g.opset == {"": 13} and g.ir_version == 7
    assert [n.type for n in g.nodes] == ["Const", "Data", "Variable", "Mul", "Add", "Assign", "Summary"]
    assert g.node("add").inputs == ["xs", "w"], "the Variable's output is renamed to the variable"
    seen = []
    assert train.register_callback_func("Summary", lambda gid, p: seen.append(p["y[:Tensor]"].tolist())) == 0
    assert train.add_graph(1, g) == S.SUCCESS
    for _ in range(2):
        assert train.run_graph(1, [np.array([1, 1], F32)])[1] == S.SUCCESS
    assert seen == [[3, 4], [5, 6]]
    (w,), _ = train.get_variables(["w"])
    np.testing.assert_array_equal(w, [5, 6])


def test_from_onnx_plain_model_and_unknown_ge_type(predict):
    model = helper.make_model(
        helper.make_graph(
            [helper.make_node("Relu", ["x"], ["y"])],
            "plain",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        ),
        opset_imports=[helper.make_opsetid("", 17)],
        ir_version=8,
    )
    g = ge.Graph.from_onnx(model, name="renamed")
    assert g.name == "renamed"
    assert predict.add_graph(1, g) == S.SUCCESS
    (y,), _ = predict.run_graph(1, [np.array([-1, 1], F32)])
    np.testing.assert_array_equal(y, [0, 1])
    model.graph.node.append(helper.make_node("Print", ["y"], [], domain=ge.GE_DOMAIN))
    with pytest.raises(ValueError, match=r"unknown openacl\.ge node type 'Print'"):
        ge.Graph.from_onnx(model)


@pytest.mark.timeout(30)
def test_regression_an_output_count_of_2_31_is_a_value_error_not_a_hang():
    """``n_outputs=2**31`` built 2**31 tensor names (minutes and gigabytes) before anything refused it."""
    g = ge.Graph("g")
    x = g.data("x", index=0, shape=[4], dtype="float32")
    for count in (2**31, 2**63, 2**64, 0, -1):
        with pytest.raises(ValueError, match="n_outputs"):
            g.op("Split", [x], n_outputs=count)
    assert len(g.op("Split", [x], n_outputs=4, num_outputs=4)) == 4
