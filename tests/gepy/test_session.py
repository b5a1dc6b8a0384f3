"""``ge.ge_global.GeApi`` and ``ge.session.Session``: GE-PY's return values, TypeErrors and GeErrors."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from ge.error import GeError, get_ge_error_msg
from ge.es.all import Add, Gather, Relu
from ge.es.graph_builder import GraphBuilder
from ge.ge_global import GeApi
from ge.graph import Tensor
from ge.graph.types import DataType, Format
from ge.session import Session

from openacl import ge as engine


def relu_graph(shape=(2, 2)):
    b = GraphBuilder("relu")
    x = b.create_input(0, name="x", data_type=DataType.DT_FLOAT, shape=list(shape) if shape else None)
    b.set_graph_output(Relu(x), 0)
    return b.build_and_reset()


def floats(values, shape):
    return Tensor(list(values), None, DataType.DT_FLOAT, Format.FORMAT_ND, list(shape))


def test_initialize_and_finalize_return_zero():
    assert GeApi().ge_initialize({"ge.exec.deviceId": "0", "ge.graphRunMode": "0"}) == 0
    assert engine.is_initialized()
    assert GeApi.ge_finalize() == 0
    assert not engine.is_initialized()


@pytest.mark.parametrize("config", [None, {}, [("a", "b")], {"ge.exec.deviceId": 0}])
def test_initialize_type_errors(config):
    with pytest.raises(TypeError):
        GeApi.ge_initialize(config)


def test_add_run_remove(initialized):
    session = Session()
    assert session.add_graph(1, relu_graph()) == 0
    [out] = session.run_graph(1, [floats([-1, 2, -3, 4], [2, 2])])
    assert isinstance(out, Tensor) and out.get_data() == [[0.0, 2.0], [0.0, 4.0]]
    assert out.get_data_type() is DataType.DT_FLOAT and out.get_format() is Format.FORMAT_ND
    assert session.remove_graph(1) is None


def test_type_errors(initialized):
    session = Session()
    with pytest.raises(TypeError, match="option must be a dictionary"):
        Session([("ge.graphRunMode", "0")])
    with pytest.raises(TypeError, match="Graph_id"):
        session.add_graph("1", relu_graph())
    with pytest.raises(TypeError, match="Add_graph must be a Graph"):
        session.add_graph(1, engine.Graph("raw"))
    assert session.add_graph(1, relu_graph()) == 0
    with pytest.raises(TypeError, match="inputs must be a list of Tensor"):
        session.run_graph(1, (floats([1, 2, 3, 4], [2, 2]),))
    with pytest.raises(TypeError, match="All elements"):
        session.run_graph(1, [np.ones((2, 2), np.float32)])


def test_failures_are_ge_errors_with_api_name_context_and_text(initialized):
    session = Session()
    with pytest.raises(GeError) as info:
        session.run_graph(9, [])
    err = info.value
    assert isinstance(err, RuntimeError)
    assert err.api_name == "RunGraph" and err.context == {"graph_id": 9}
    assert "graph id 9 does not exist" in err.error_message
    assert str(err).startswith("RunGraph failed; graph_id=9; ")
    with pytest.raises(GeError, match="RemoveGraph failed; graph_id=4"):
        session.remove_graph(4)
    assert session.add_graph(1, relu_graph()) == 0
    with pytest.raises(GeError, match="expected float32") as info:
        session.run_graph(1, [Tensor([1, 2, 3, 4], None, DataType.DT_INT32, Format.FORMAT_ND, [2, 2])])
    assert info.value.context == {"graph_id": 1}


def test_regression_gepy_error_text_depended_on_logging(initialized):
    """GE-PY's GeError took its text from the GE logger's ERROR records: with that logging silenced (a program's
    own logging set-up, ASCEND_GLOBAL_LOG_LEVEL=4) the error said only "RunGraph failed; graph_id=9"."""
    logger = logging.getLogger("openacl")
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        with pytest.raises(GeError) as info:
            Session().run_graph(9, [])
    finally:
        logger.setLevel(level)
    assert info.value.error_message == "RunGraph: graph id 9 does not exist; add it with AddGraph first"
    assert str(info.value) == "RunGraph failed; graph_id=9; " + info.value.error_message


def test_get_ge_error_msg_reads_what_ge_reported_on_this_thread():
    session = Session()  # before ge_initialize: GE reports that the session has no inner session
    assert "creating the session failed" in get_ge_error_msg()
    assert get_ge_error_msg() == "", "reading clears the record"
    assert GeApi.ge_initialize({"ge.exec.deviceId": "0"}) == 0
    with pytest.raises(GeError) as info:
        session.add_graph(1, relu_graph())
    assert "created before GEInitialize" in info.value.error_message
    assert get_ge_error_msg() == "", "the GeError took the text"
    assert engine.Session().remove_graph(4) == engine.GeStatus.FAILED  # the status-code face reports too
    assert get_ge_error_msg() == "RemoveGraph: graph id 4 does not exist (GE_GRAPH_GRAPH_NOT_EXIST)"


def test_add_graph_refuses_graph_options(initialized):
    session = Session()
    with pytest.raises(GeError, match=r"AddGraph failed; graph_id=1; .*graph options are not supported") as info:
        session.add_graph(1, relu_graph(), {"ge.exec.precision_mode": "force_fp32"})
    assert "GE_GRAPH_OPTIONS_INVALID" in info.value.error_message
    assert session.add_graph(1, relu_graph(), {}) == 0


def test_session_before_initialize_fails_at_first_call():
    session = Session()
    assert GeApi.ge_initialize({"ge.exec.deviceId": "0"}) == 0
    with pytest.raises(GeError, match=r"AddGraph failed; graph_id=1; .*created before GEInitialize"):
        session.add_graph(1, relu_graph())


def test_zero_dim_data_takes_the_first_runs_shape(initialized):
    session = Session()
    assert session.add_graph(1, relu_graph(shape=None)) == 0
    [out] = session.run_graph(1, [floats(range(-3, 3), [3, 2])])
    assert out.get_shape() == [3, 2] and out.get_data() == [[0.0, 0.0], [0.0, 0.0], [1.0, 2.0]]
    assert session.run_graph(1, [floats([5, -5, 1, 1, 0, 0], [3, 2])])[0].get_data()[0] == [5.0, 0.0]
    with pytest.raises(GeError, match=r"shape \(6,\), expected \(3, 2\)"):
        session.run_graph(1, [floats(range(6), [6])])


def test_unwired_graph_runs_and_returns_no_outputs(initialized):
    b = GraphBuilder("dangling")
    x = b.create_input(0, data_type=DataType.DT_FLOAT, shape=[2])
    Add(x, x)
    session = Session()
    assert session.add_graph(1, b.build_and_reset()) == 0
    assert session.run_graph(1, [floats([1, 2], [2])]) == []


def test_a_planned_run_raises_the_same_ge_error_as_a_first_run(initialized):
    """After a first run the session keeps a plan for inputs of those kinds; the planned path translates errors as
    the full path does: api name, context, GE's line, and an empty record afterwards."""
    b = GraphBuilder("gather")
    x = b.create_input(0, name="x", data_type=DataType.DT_FLOAT, shape=[3])
    index = b.create_input(1, name="i", data_type=DataType.DT_INT64, shape=[1])
    b.set_graph_output(Gather(x, index), 0)
    session = Session()
    assert session.add_graph(1, b.build_and_reset()) == 0
    data = floats([1, 2, 3], [3])

    def run(i):
        return session.run_graph(1, [data, Tensor([i], None, DataType.DT_INT64, Format.FORMAT_ND, [1])])

    assert [t.get_data() for t in run(2)] == [[3.0]]
    assert 1 in session._session._plans
    assert [t.get_data() for t in run(0)] == [[1.0]]
    with pytest.raises(GeError) as info:
        run(7)
    err = info.value
    assert err.api_name == "RunGraph" and err.context == {"graph_id": 1}
    assert err.error_message.startswith("RunGraph: graph 1 failed in onnxruntime: ")
    assert str(err) == "RunGraph failed; graph_id=1; " + err.error_message
    assert get_ge_error_msg() == ""
    with pytest.raises(GeError, match=r"has shape \(2,\), expected \(3,\)"):  # another kind: the full checks
        session.run_graph(1, [floats([1, 2], [2]), Tensor([0], None, DataType.DT_INT64, Format.FORMAT_ND, [1])])
