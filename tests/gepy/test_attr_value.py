"""``ge.graph._attr._AttrValue`` and the typing of Python attribute values (graph, node and scope attributes)."""

from __future__ import annotations

import numpy as np
import pytest
from ge.es import GraphBuilder
from ge.es.graph_builder import attr_scope
from ge.graph import Graph, Tensor
from ge.graph._attr import _AttrValue
from ge.graph.types import AttrValueType, DataType


def test_each_kind_round_trips_and_records_its_type():
    av = _AttrValue()
    assert av.value_type == AttrValueType.VT_NONE
    cases = [
        ("string", "你好", AttrValueType.VT_STRING),
        ("int", -(2**63), AttrValueType.VT_INT),
        ("bool", False, AttrValueType.VT_BOOL),
        ("data_type", DataType.DT_INT8, AttrValueType.VT_DATA_TYPE),
        ("list_int", [1, 2], AttrValueType.VT_LIST_INT),
        ("list_bool", [True, False], AttrValueType.VT_LIST_BOOL),
        ("list_string", ["a", ""], AttrValueType.VT_LIST_STRING),
        ("list_data_type", [DataType.DT_STRING], AttrValueType.VT_LIST_DATA_TYPE),
    ]
    for kind, value, vt in cases:
        assert getattr(av, f"set_{kind}")(value) is True
        assert getattr(av, f"get_{kind}")() == value and av.value_type == vt
    assert "AttrValue" in str(av) and "DT_STRING" in str(av)


def test_floats_are_kept_in_32_bits_as_ge_keeps_them():
    av = _AttrValue()
    av.set_float(0.1)
    assert av.get_float() == float(np.float32(0.1)) and av.get_float() != 0.1
    av.set_list_float([1.1, 2])
    assert av.get_list_float() == [float(np.float32(1.1)), 2.0]


def test_tensor_value_is_a_copy():
    t = Tensor([7], data_type=DataType.DT_INT32, shape=[])
    av = _AttrValue()
    av.set_tensor(t)
    got = av.get_tensor()
    assert got is not t and (got.data_type, got.shape, got.data) == (DataType.DT_INT32, [], 7)


def test_wrong_kinds_and_empty_lists():
    av = _AttrValue()
    for setter, value in [("set_string", None), ("set_int", 3.0), ("set_bool", 1),
                          ("set_list_int", "x"), ("set_list_string", 1), ("set_tensor", [1])]:  # fmt: skip
        with pytest.raises(TypeError):
            getattr(av, setter)(value)
    for setter in ("set_list_int", "set_list_float", "set_list_bool", "set_list_string", "set_list_data_type"):
        with pytest.raises(ValueError, match="Empty list is not supported"):
            getattr(av, setter)([])
    with pytest.raises(ValueError, match="int64"):
        av.set_int(2**63)
    av.set_int(True)  # a bool is an int, as in Python
    assert av.get_int() == 1 and type(av.get_int()) is int and av.get_value_type() == AttrValueType.VT_INT
    with pytest.raises(TypeError, match="VT_INT"):
        av.get_string()


def test_graph_and_node_attributes_are_typed_as_ge_types_them():
    g = Graph("g")
    g.set_attr("f", 3.14)
    g.set_attr("dt", DataType.DT_INT8)
    assert g.get_attr("f") == pytest.approx(3.14, abs=1e-6) and g.get_attr("dt") is DataType.DT_INT8
    with pytest.raises(ValueError, match="Unsupported attribute type: <class 'dict'>"):
        g.set_attr("d", {"a": 1})
    with pytest.raises(ValueError, match="Unsupported attribute type: <class 'list'>"):
        g.set_attr("l", [])


def test_attr_scope_refuses_what_ge_cannot_type():
    b = GraphBuilder()
    refused = r"Unsupported attribute type: <class 'list'> for value: \[1, 'a'\]"
    with pytest.raises(ValueError, match=refused), attr_scope({"x": [1, "a"]}):
        pass
    with attr_scope({"_tag": "t", "_n": [1, 2]}):
        c = b.create_const_float(1.0)
    node = c._get_node_snapshot()
    assert node.get_attr("_tag") == "t" and node.get_attr("_n") == [1, 2]


def test_regression_attr_scope_stored_tensor_values_raw(tmp_path):
    """A Tensor in an attr_scope reaches the node as data (so the graph saves to AIR), a float in 32 bits."""
    b = GraphBuilder()
    with attr_scope({"_t": Tensor([1, 2], data_type=DataType.DT_INT32, shape=[2]), "_f": 0.1}):
        c = b.create_const_float(1.0)
    graph = b.build_and_reset([c])
    node = graph.get_all_nodes()[0]
    assert node.get_attr("_t").get_data() == [1, 2] and node.get_attr("_f") == float(np.float32(0.1))
    graph.save_to_air(str(tmp_path / "g.air"))
