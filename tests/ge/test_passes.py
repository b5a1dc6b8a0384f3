"""The compile passes and handlers against GE's unit tests (notes §4.2)."""

from __future__ import annotations

import numpy as np
import pytest

from openacl.errors import GeError, GeStatus
from openacl.graph_engine import passes
from openacl.graph_engine.graph import Graph, Node

F32 = np.float32


def var_graph(*names: str) -> Graph:
    g = Graph("g")
    for name in names:
        g.variable(name, value=np.zeros(2, F32))
    return g


def codes(fn, *args):
    with pytest.raises(GeError) as info:
        fn(*args)
    return info.value.code


# ----- summary_optimize_unittest.cc -----


def test_handle_summary_op_null_graph_is_param_invalid():
    assert codes(passes.handle_summary_op, None) == GeStatus.PARAM_INVALID


def test_summary_without_input_is_param_nullptr():
    g = Graph("g")
    g.nodes.append(Node("summary", "Summary", [], []))
    assert codes(passes.handle_summary_op, g) == GeStatus.GE_GRAPH_PARAM_NULLPTR


def test_summary_input_without_peer_is_param_nullptr():
    g = Graph("g")
    g.summary("summary", "nowhere")
    assert codes(passes.handle_summary_op, g) == GeStatus.GE_GRAPH_PARAM_NULLPTR


def test_summary_becomes_an_output_after_the_user_outputs():
    g = Graph("g")
    x = g.data("x", index=0, shape=[2], dtype=F32)
    y = g.op("Relu", [x], name="y")
    g.summary("b[:Scalar]", x)
    g.summary("a[:Tensor]", y)
    g.set_outputs([y])
    index = passes.handle_summary_op(g)
    assert index == {"b[:Scalar]": 1, "a[:Tensor]": 2}
    assert g.outputs == ["y", "x", "y"]
    assert [n.type for n in g.nodes] == ["Data", "Relu"]


def test_data_summary_netoutput_is_success():
    g = Graph("g")
    x = g.data("x", index=0, shape=[2], dtype=F32)
    g.summary("summary", x)
    assert passes.handle_summary_op(g) == {"summary": 0}
    assert g.outputs == ["x"]


def test_compile_leaves_the_user_graph_alone():
    g = Graph("g")
    x = g.data("x", index=0, shape=[2], dtype=F32)
    g.summary("s", x)
    compiled = passes.compile_graph(g)
    assert [n.type for n in g.nodes] == ["Data", "Summary"] and g.outputs == []
    assert compiled.is_summary_graph and compiled.outputs == ["x"]


# ----- SavePass -----


def test_save_pass_turns_variable_inputs_into_outputs_and_drops_others():
    g = var_graph("a", "b")
    x = g.data("x", index=0, shape=[2], dtype=F32)
    g.save(["a", x, "b"], name="save")
    assert passes.save_pass(g) == ["a", "b"]
    assert g.outputs == ["a", "b"]
    assert "Save" not in [n.type for n in g.nodes]
    assert g.node("a").attrs[passes.VAR_IS_SAVE] == "save_checkpoint"


def test_save_outputs_come_before_summary_outputs():
    g = var_graph("w")
    x = g.data("x", index=0, shape=[2], dtype=F32)
    g.set_outputs([g.op("Relu", [x], name="r")])
    g.summary("s", x)
    g.save(["w"])
    compiled = passes.compile_graph(g)
    assert compiled.outputs == ["r", "w", "x"]
    assert compiled.summary_index == {"s": 2}
    assert compiled.checkpoint_outputs == ["r", "w"]


# ----- graph_manager_unittest.cc: IsCheckpointGraph -----


def test_is_checkpoint_graph_null_is_false():
    assert passes.is_checkpoint_graph(None) is False


def test_variable_to_netoutput_is_checkpoint_graph():
    g = var_graph("v").set_outputs(["v"])
    assert passes.is_checkpoint_graph(g) is True


def test_variable_plus_data_relu_is_not_checkpoint_graph():
    g = var_graph("v")
    x = g.data("x", index=0, shape=[2], dtype=F32)
    g.set_outputs(["v", g.op("Relu", [x])])
    assert passes.is_checkpoint_graph(g) is False


def test_output_whose_producer_is_gone_is_not_checkpoint_graph():
    g = var_graph("v").set_outputs(["v", "removed"])
    assert passes.is_checkpoint_graph(g) is False


def test_variable_tagged_for_get_variables_is_not_checkpoint_graph():
    g = var_graph("v")
    g.node("v").attrs[passes.FOR_GET_VAR] = True
    g.set_outputs([g.op("Cast", ["v"], to=1)])
    assert passes.is_checkpoint_graph(g) is False


def test_constant_relu_is_not_checkpoint_graph():
    g = Graph("g")
    g.set_outputs([g.op("Relu", [g.const("c", np.ones(2, F32))])])
    assert passes.is_checkpoint_graph(g) is False


def test_cast_relu_is_not_checkpoint_graph():
    g = var_graph("v")
    g.set_outputs([g.op("Relu", [g.op("Cast", ["v"], to=1)])])
    assert passes.is_checkpoint_graph(g) is False


def test_transops_between_variables_and_outputs_keep_a_checkpoint_graph():
    g = var_graph("v")
    shape = g.const("shape", np.array([1, 2], np.int64))
    g.set_outputs([g.op("Reshape", [g.op("Cast", ["v"], to=1), shape])])
    assert passes.is_checkpoint_graph(g) is True


def test_unused_constant_is_allowed_used_constant_is_not():
    g = var_graph("v").set_outputs(["v"])
    g.const("unused", np.ones(1, F32))
    assert passes.is_checkpoint_graph(g) is True
    g.set_outputs(["v", "unused"])
    assert passes.is_checkpoint_graph(g) is False


def test_empty_graph_passes_the_test_but_has_nothing_to_save():
    compiled = passes.compile_graph(Graph("empty"))
    assert compiled.is_checkpoint_graph and compiled.checkpoint_outputs == []


# ----- graph_manager_unittest.cc: CheckpointHandle / SummaryHandle -----


def test_checkpoint_handle_keys_are_variable_names():
    g = var_graph("a", "b")
    g.set_outputs(["b", g.op("Cast", ["a"], to=1)])
    assert passes.checkpoint_handle(g, ["B", "A"]) == {"b": "B", "a": "A"}


def test_checkpoint_handle_with_empty_outputs_is_param_invalid():
    g = var_graph("v").set_outputs(["v"])
    assert codes(passes.checkpoint_handle, g, []) == GeStatus.PARAM_INVALID


def test_checkpoint_handle_without_netoutput_is_failed():
    assert codes(passes.checkpoint_handle, var_graph("v"), []) == GeStatus.FAILED


def test_checkpoint_handle_on_data_relu_is_param_invalid():
    g = var_graph("v")
    x = g.data("x", index=0, shape=[2], dtype=F32)
    g.set_outputs([g.op("Relu", [x])])
    assert codes(passes.checkpoint_handle, g, ["r"]) == GeStatus.PARAM_INVALID


def test_checkpoint_handle_through_a_node_with_two_inputs_is_failed():
    g = var_graph("a", "b")
    g.set_outputs([g.op("Add", ["a", "b"])])
    assert codes(passes.checkpoint_handle, g, ["sum"]) == GeStatus.FAILED


def test_summary_handle_without_summary_index_is_failed():
    compiled = passes.compile_graph(var_graph("v").set_outputs(["v"]))
    assert codes(passes.summary_handle, compiled, ["v"]) == GeStatus.FAILED


def test_summary_handle_takes_the_summary_tensors_out():
    g = Graph("g")
    x = g.data("x", index=0, shape=[2], dtype=F32)
    g.set_outputs([g.op("Relu", [x], name="r")])
    g.summary("s", x)
    compiled = passes.compile_graph(g)
    outputs = ["R", "X"]
    assert passes.summary_handle(compiled, outputs) == {"s": "X"}
    assert outputs == ["R"]


# ----- checks before the passes -----


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (lambda g: g.data("x", index=1, shape=[1], dtype=F32), "Data indices"),
        (lambda g: g.set_outputs(["ghost"]), "produced by no node"),
        (lambda g: g.op("Relu", ["ghost"]), "which no node produces"),
    ],
)
def test_structural_errors_are_param_invalid(build, words):
    g = Graph("g")
    build(g)
    with pytest.raises(GeError, match=words) as info:
        passes.compile_graph(g)
    assert info.value.code == GeStatus.PARAM_INVALID


def test_assigning_a_variable_twice_is_param_invalid():
    g = var_graph("v")
    g.assign("v", g.op("Relu", ["v"]))
    g.assign("v", g.op("Neg", ["v"]))
    with pytest.raises(GeError, match="assigned more than once"):
        passes.compile_graph(g)
