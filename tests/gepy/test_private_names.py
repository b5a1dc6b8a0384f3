"""The private names GE-PY programs (and GE-PY's own tests) reach, where they mirror GE-PY's layout harmlessly."""

from __future__ import annotations

import pytest
from ge._capi.pyes_graph_builder_wrapper import is_generated_lib_available
from ge._capi.pyge_utils_wrapper import get_ge_utils_lib, is_ge_utils_lib_loaded
from ge.es import GraphBuilder
from ge.es.tensor_like import _flatten_and_infer_shape, _unflatten
from ge.graph import Graph, Node, Tensor, TensorDesc
from ge.graph.tensor import _parse_str_list, unflatten_tensor_data
from ge.session import Session


def objects():
    builder = GraphBuilder()
    holder = builder.create_const_float(1.0)
    node = holder._get_node_snapshot()
    return [Graph(), node, Tensor(), TensorDesc(), holder, builder, Session()]


def test_handle_is_an_opaque_read_only_int_on_every_object():
    for obj in objects():
        handle = obj._handle
        assert isinstance(handle, int) and handle != 0
        with pytest.raises(AttributeError, match="read-only"):
            obj._handle = None
        assert obj._handle == handle


def test_capi_modules_answer_truthfully():
    assert is_generated_lib_available() is True  # the op functions and + - * / are built in
    assert is_ge_utils_lib_loaded() is False and get_ge_utils_lib() is None


def test_node_snapshot_is_the_producer_node():
    builder = GraphBuilder()
    x = builder.create_input(0)
    c = builder.create_const_float(2.0)
    node = (x * c)._get_node_snapshot()
    assert isinstance(node, Node) and (node.name, node.type) == ("Mul_1", "Mul")
    assert c._get_node_snapshot().type == "Const"


def test_parse_str_list_reads_ge_text():
    assert _parse_str_list("[]") == []
    assert _parse_str_list("[1, 2.5, -3]") == [1, 2.5, -3]
    assert [type(v) for v in _parse_str_list("[1, 2.0]")] == [int, float]
    with pytest.raises(ValueError, match=r"Input must start with '\[' and end with '\]'"):
        _parse_str_list("1, 2")
    with pytest.raises(ValueError, match="Invalid item: 'x'"):
        _parse_str_list("[1, x]")


def test_unflatten_tensor_data_nests_by_shape():
    assert unflatten_tensor_data("[1.0, 2.0, 3.0, 4.0]", [2, 2]) == [[1.0, 2.0], [3.0, 4.0]]
    assert unflatten_tensor_data("[7]", []) == 7


def test_flatten_and_infer_shape():
    assert _flatten_and_infer_shape([[1, 2.5], [3, 4]]) == ([1, 2.5, 3, 4], [2, 2])
    assert _flatten_and_infer_shape([]) == ([], [0])
    with pytest.raises(ValueError, match="Irregular nested list: all sub-lists must have the same shape"):
        _flatten_and_infer_shape([[1], [2, 3]])
    for bad in (["1"], [[]], [None]):
        with pytest.raises(TypeError, match="Value must be int/float or nested lists of int"):
            _flatten_and_infer_shape(bad)


def test_unflatten_checks_length_and_shape():
    assert _unflatten([1, 2, 3, 4, 5, 6], [3, 2]) == [[1, 2], [3, 4], [5, 6]]
    with pytest.raises(ValueError, match="Length of list 5 does not match shape 6"):
        _unflatten([1, 2, 3, 4, 5], [2, 3])
    with pytest.raises(ValueError, match="Shape cannot be empty"):
        _unflatten([1], None)
