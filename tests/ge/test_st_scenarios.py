"""GE's own ST file ``tests/ge/st/testcase/test_summary_and_checkpoint.cc`` (notes §4.1), rebuilt in our API.

``BuildVariableGraph``: var1 -> transdata1 -> relu1 -> output; var1 -> transdata2 -> relu2 -> output;
data1 -> relu3 -> transdata3 -> var_ref (var1's new value) -> output; relu3 -> summary. TransData has no ONNX
twin, so Transpose with the identity permutation stands in for it (both are GE TransOps).
"""

from __future__ import annotations

import numpy as np
import pytest

from openacl import ge
from openacl.graph_engine import passes

SHAPE = [1, 1, 224, 224]
PERM = [0, 1, 2, 3]


def build_variable_graph() -> ge.Graph:
    g = ge.Graph("variable_graph")
    var1 = g.variable("var1", value=np.zeros(SHAPE, np.float32))
    relu1 = g.op("Relu", [g.op("Transpose", [var1], name="transdata1", perm=PERM)], name="relu1")
    relu2 = g.op("Relu", [g.op("Transpose", [var1], name="transdata2", perm=PERM)], name="relu2")
    data1 = g.data("data1", index=0, shape=SHAPE, dtype="float32")
    relu3 = g.op("Relu", [data1], name="relu3")
    var_ref = g.assign(var1, g.op("Transpose", [relu3], name="transdata3", perm=PERM), name="var_ref")
    g.summary("summary", relu3)
    g.set_outputs([relu1, relu2, var_ref])
    return g


@pytest.fixture
def session():
    assert ge.ge_initialize({}) == 0
    return ge.Session({"ge.graphRunMode": "1", "ge.variableMemoryMaxSize": "12800"})


def test_generate_and_run_checkpoint_graph(session, monkeypatch):
    generated = []
    original = passes.gen_checkpoint_graph

    def spy(names):
        generated.append(original(names))
        return generated[-1]

    monkeypatch.setattr(passes, "gen_checkpoint_graph", spy)
    saves = []
    assert session.add_graph(1, build_variable_graph()) == 0
    assert session.build_graph(1, []) == 0
    assert session.register_callback_func("Save", lambda gid, params: saves.append(params) or 0) == 0

    values, ret = session.get_variables(["var1"])

    assert ret == 0
    assert len(values) == 1 and values[0].shape == tuple(SHAPE)
    (checkpoint_graph,) = generated
    assert checkpoint_graph.name == "checkpoint_graph"
    (consumer,) = [n for n in checkpoint_graph.nodes if "var1" in n.inputs]
    assert consumer.type == "Save" and consumer.name == "checkpoint_graph_Save"
    assert not passes.is_checkpoint_graph(passes.compile_graph(checkpoint_graph).graph)
    assert saves == [], "checkpoint graph gen by GetVariables should ignore checkpoint graph check"


def test_optimize_summary_graph(session):
    calls = []
    assert session.add_graph(1, build_variable_graph()) == 0
    assert session.register_callback_func("Summary", lambda gid, params: calls.append((gid, params)) or 0) == 0
    x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)

    outputs, ret = session.run_graph(1, [x])

    assert ret == 0
    model = session.compiled_model(1)
    assert "summary" not in [n.name for n in model.graph.node]
    assert [o.name for o in model.graph.output][:4] == ["relu1", "relu2", "var_ref", "relu3"]
    assert len(calls) == 1
    graph_id, params = calls[0]
    assert graph_id == 1 and list(params) == ["summary"]
    np.testing.assert_array_equal(params["summary"], np.maximum(x, 0))
    assert len(outputs) == 3, "the summary tensor is taken out of the outputs"
    np.testing.assert_array_equal(outputs[0], np.zeros(SHAPE, np.float32))
    np.testing.assert_array_equal(outputs[2], np.maximum(x, 0))
    (var1,), _ = session.get_variables(["var1"])
    np.testing.assert_array_equal(var1, np.maximum(x, 0))


def test_optimize_summary_graph_with_a_bytes_key(session):
    """Scenario 3 uses GE's V2 session and the ``const char*`` key overload: a ``bytes`` key here."""
    calls = []
    assert session.add_graph(7, build_variable_graph()) == 0
    assert session.register_callback_func(b"Summary", lambda gid, params: calls.append(gid)) == 0
    _, ret = session.run_graph(7, [np.ones(SHAPE, np.float32)])
    assert ret == 0
    assert calls == [7]
