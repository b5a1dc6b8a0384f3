"""GE-PY's exception texts: programs catch GE-PY's errors by their message, so openacl raises the same ones."""

from __future__ import annotations

import copy

import pytest
from ge.es import GraphBuilder
from ge.es.tensor_like import convert_to_tensor_holder, resolve_builder
from ge.ge_global import GeApi
from ge.graph import Graph, Shape, Tensor, TensorDesc
from ge.graph.types import DataType
from ge.session import Session


def builder_cases(b, t):
    return [
        (lambda: GraphBuilder(1), TypeError, "Graph name must be a string"),
        (lambda: b.create_inputs(0), TypeError, "Number of inputs must be a positive integer"),
        (lambda: b.create_inputs(1, -1), TypeError, "Start index must be a non-negative integer"),
        (lambda: b.create_input("0"), TypeError, "Input index must be an integer"),
        (lambda: b.create_input(0, shape="x"), TypeError, "Shape must be a list of integers"),
        (lambda: b.create_const_int64("x"), TypeError, "Value must be an integer or list of integers"),
        (lambda: b.create_const_float("x"), TypeError, "Value must be a float or list of floats"),
        (lambda: b.create_const_int64([1, 2, 3], shape=[2, 2]), ValueError, r"Value count \(3\) doesn't match shape"),
        (lambda: b.create_vector_int64("x"), TypeError, "Value must be a list of integers"),
        (lambda: b.create_scalar_uint64("x"), TypeError, "Value must be an integer"),
        (lambda: b.create_scalar_uint64(-1), ValueError, "Value must be non-negative"),
        (lambda: b.create_scalar_uint32(2**32), ValueError, "Value must be in range"),
        (lambda: b.create_variable("0", "v"), TypeError, "Index must be an integer"),
        (lambda: b.create_variable(0, 1), TypeError, "Name must be a string"),
        (lambda: b.set_graph_output("t", 0), TypeError, "Tensor must be a TensorHolder"),
        (lambda: b.set_graph_output(t, "0"), TypeError, "Output index must be an integer"),
        (lambda: b.set_graph_attr_int64(1, 1), TypeError, "Attribute name must be a string"),
        (lambda: b.set_graph_attr_string("a", 1), TypeError, "Value must be a string"),
        (lambda: b.set_graph_attr_bool("a", 1), TypeError, "Value must be a boolean"),
        (lambda: b.set_node_attr_int64("t", "a", 1), TypeError, "Tensor must be a TensorHolder"),
        (lambda: b.set_tensor_attr_int64(t, "a", True), TypeError, "Value must be an integer"),
        (lambda: b.build_and_reset(t), TypeError, "Outputs must be a list"),
        (lambda: b.build_and_reset([t, None]), TypeError, "All outputs must be TensorHolder objects"),
        (lambda: copy.copy(b), RuntimeError, "GraphBuilder does not support copy"),
        (lambda: copy.deepcopy(b), RuntimeError, "GraphBuilder does not support deepcopy"),
        (lambda: t.set_data_type(0), TypeError, "Data type must be a DataType enum"),
        (lambda: t.set_format(0), TypeError, "Format must be a Format enum"),
        (lambda: t.set_shape("x"), TypeError, "Shape must be a list of integers"),
        (lambda: t.set_shape([1, "x"]), TypeError, "All shape dimensions must be integers"),
        (
            lambda: t + GraphBuilder().create_const_float(1.0),
            ValueError,
            "Cannot perform add: tensors from different GraphBuilders",
        ),
        (lambda: convert_to_tensor_holder("x", b), TypeError, "Value must be int/float or nested lists of int"),
        (
            lambda: resolve_builder(1, [2.0]),
            ValueError,
            "Please ensure at least one input tensor or an explicit owner_builder is provided when supported",
        ),
    ]


def test_builder_and_tensor_holder_messages():
    b = GraphBuilder()
    t = b.create_input(0)
    for call, kind, text in builder_cases(b, t):
        with pytest.raises(kind, match=text):
            call()


def test_regression_build_and_reset_set_outputs_before_checking_all():
    """A bad output in the list used to leave the good ones before it set, so a retry failed as a duplicate."""
    b = GraphBuilder()
    x = b.create_input(0)
    with pytest.raises(TypeError, match="All outputs must be TensorHolder objects"):
        b.build_and_reset([x, "y"])
    graph = b.build_and_reset([x])  # output 0 was not left set by the failed call
    assert graph.name == "graph"


def test_regression_auto_node_names_counted_from_1():
    """GE's builder names nodes <type>_<n> with n from 0 (one counter per builder); openacl started at 1."""
    b = GraphBuilder()
    assert [b.create_const_float(1.0).name, (b.create_input(0) + 1.0).name] == ["Const_0", "Add_2"]


def test_after_build_the_holder_says_to_make_a_new_builder():
    b = GraphBuilder()
    c = b.create_const_float(1.0)
    b.build_and_reset([c])
    with pytest.raises(RuntimeError, match=r"Cannot set data type: GraphBuilder has already been built\. Create a new"):
        c.set_data_type(DataType.DT_FLOAT)


def test_graph_tensor_desc_session_and_init_messages():
    g = Graph("g")
    cases = [
        (lambda: Graph(1), TypeError, "Graph name must be a string"),
        (lambda: g.get_attr(1), TypeError, "Attribute key must be a string"),
        (lambda: g.set_attr(1, "v"), TypeError, "Attribute key must be a string"),
        (lambda: g.find_node_by_name(1), TypeError, "name must be a string"),
        (lambda: g.find_node_by_name("nope"), RuntimeError, "Failed to find Node name nope"),
        (lambda: g.get_subgraph(1), TypeError, "name must be a string"),
        (lambda: Shape("x"), TypeError, "dims must be a list of integers"),
        (lambda: TensorDesc(shape="x"), TypeError, "shape must be a list of integers"),
        (lambda: TensorDesc().set_shape([1, "x"]), TypeError, "shape must be a list of integers"),
        (lambda: TensorDesc(format="x"), TypeError, "Format must be a Format"),
        (lambda: TensorDesc().set_data_type("x"), TypeError, "Data type must be a DataType"),
        (lambda: Tensor([1.0], shape=1), TypeError, "Shape must be a list of integers"),
        (lambda: Tensor([1.0], shape=[1], placement=1), TypeError, "Placement must be a Placement"),
        (lambda: Tensor([1.0], "f.bin"), RuntimeError, "Tensor should be created either by data or by file"),
        (lambda: Tensor([1.0], shape=[1]).to_host(), ValueError, r"to_host\(\) only supports device tensors"),
        (lambda: GeApi.ge_initialize([]), TypeError, "Ge init config must be a dictionary"),
        (lambda: GeApi.ge_initialize({}), TypeError, "Ge init config must not be empty"),
        (lambda: Session().register_external_allocator("1", None), TypeError, "stream must be an integer"),
        (lambda: Session().register_external_allocator(1, None), TypeError, "allocator must be an Allocator instance"),
        (lambda: Session().unregister_external_allocator("1"), TypeError, "stream must be an integer"),
    ]
    for call, kind, text in cases:
        with pytest.raises(kind, match=text):
            call()
