"""Session API: every status code path, callback semantics, variables, async runs and lifecycle."""

from __future__ import annotations

import gc
import logging
import os
import threading

import numpy as np
import pytest

from openacl import ge
from openacl.errors import GeError
from openacl.errors import GeStatus as S
from openacl.graph_engine import session as engine
from tests.forking import in_child

F32 = np.float32


def ones(*shape: int) -> np.ndarray:
    return np.ones(shape, F32)


def step_graph(name: str = "step") -> ge.Graph:
    """y = x @ w; loss summary; w <- w + 1."""
    g = ge.Graph(name)
    x = g.data("x", index=0, shape=[2, 3], dtype="float32")
    w = g.variable("w", value=np.zeros((3, 2), F32))
    y = g.op("MatMul", [x, w], name="y")
    g.summary("loss[:Scalar]", g.op("ReduceSum", [y], name="loss", keepdims=0))
    g.assign(w, g.op("Add", [w, g.const("one", F32(1))]))
    g.set_outputs([y])
    return g


def checkpoint_graph(*names: str) -> ge.Graph:
    g = ge.Graph("ckpt")
    g.save([g.variable(n) for n in names], name="save")
    return g


def errors(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def w_value(sess: ge.Session) -> np.ndarray:
    (value,), ret = sess.get_variables(["w"])
    assert ret == S.SUCCESS
    return value


# ----- GEInitialize / GEFinalize / Session creation -----


def test_initialize_twice_is_success_and_warns_about_new_options(ge_log):
    assert ge.ge_initialize({"ge.exec.deviceId": "0"}) == S.SUCCESS
    assert ge.ge_initialize({"ge.exec.deviceId": "0"}) == S.SUCCESS
    assert ge.ge_initialize({"ge.exec.deviceId": "1"}) == S.SUCCESS
    assert "called more than once" in ge_log.text
    assert ge.ge_finalize() == S.SUCCESS
    assert not ge.is_initialized()


def test_initialize_with_an_empty_option_key_fails():
    assert ge.ge_initialize({"": "x"}) == S.FAILED
    assert not ge.is_initialized()


def test_finalize_before_initialize_is_success(ge_log):
    assert ge.ge_finalize() == S.SUCCESS
    assert "before GEInitialize" in ge_log.text


def test_register_callback_before_initialize_is_session_manager_not_init(ge_log):
    sess = ge.Session({"ge.graphRunMode": "1"})
    assert sess.register_callback_func("Summary", lambda *a: 0) == S.GE_SESSION_MANAGER_NOT_INIT == 1343238150
    assert "GE is not initialized" in ge_log.text


def test_session_created_before_initialize_has_no_inner_session():
    sess = ge.Session()
    assert sess.add_graph(1, step_graph()) == S.GE_CLI_GE_NOT_INITIALIZED
    assert ge.ge_initialize() == S.SUCCESS
    assert sess.add_graph(1, step_graph()) == S.FAILED
    assert sess.run_graph(1, [ones(2, 3)]) == ([], S.FAILED)
    assert sess.register_callback_func("Summary", lambda *a: 0) == S.FAILED


def test_finalize_ends_sessions(train):
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    assert ge.ge_finalize() == S.SUCCESS
    assert train.run_graph(1, [ones(2, 3)]) == ([], S.GE_CLI_GE_NOT_INITIALIZED)
    assert train.get_variables(["w"]) == ([], S.GE_CLI_GE_NOT_INITIALIZED)
    assert ge.ge_initialize() == S.SUCCESS
    assert train.run_graph(1, [ones(2, 3)]) == ([], S.FAILED)


def test_bad_run_mode_option_gives_a_dead_session(ge_log):
    assert ge.ge_initialize() == S.SUCCESS
    sess = ge.Session({"ge.graphRunMode": "train"})
    assert "GE_GRAPH_OPTIONS_INVALID" in ge_log.text
    assert sess.add_graph(1, step_graph()) == S.FAILED


def test_run_mode_comes_from_the_global_options_when_the_session_has_none():
    assert ge.ge_initialize({"ge.graphRunMode": "1"}) == S.SUCCESS
    assert ge.Session().train is True
    assert ge.Session({"ge.graphRunMode": "0"}).train is False


# ----- AddGraph / RemoveGraph / BuildGraph -----


def test_regression_add_graph_ignored_its_options(train, ge_log):
    """AddGraph took graph options and silently did nothing with them; they are refused now (FAILED, as GE
    reports its inner GE_GRAPH_OPTIONS_INVALID), and the graph is not added."""
    assert train.add_graph(1, step_graph(), {"ge.exec.precision_mode": "allow_fp32_to_fp16"}) == S.FAILED
    assert ge_log.records[-1].getMessage() == (
        "AddGraph: graph 1: graph options are not supported ('ge.exec.precision_mode'); "
        "the graph is not added (GE_GRAPH_OPTIONS_INVALID)"
    )
    assert train.run_graph(1, [ones(2, 3)])[1] == S.GE_GRAPH_GRAPH_NOT_EXIST
    assert train.add_graph(1, step_graph(), {}) == S.SUCCESS, "empty options ask for nothing"
    assert train.add_graph(2, step_graph("other"), None) == S.SUCCESS
    with pytest.raises(TypeError, match="options must be a dict"):
        train.add_graph(3, step_graph("third"), ["ge.exec.precision_mode"])


def test_readding_an_id_keeps_the_first_graph(train, ge_log):
    first, second = ge.Graph("first"), ge.Graph("second")
    first.set_outputs([first.const("c", F32(1))])
    second.set_outputs([second.const("c", F32(2))])
    assert train.add_graph(1, first) == S.SUCCESS
    assert train.add_graph(1, second) == S.SUCCESS
    assert "already exists; the first graph is kept" in ge_log.text
    (out,), ret = train.run_graph(1, [])
    assert ret == S.SUCCESS and out == 1


def test_adding_one_graph_object_under_two_ids_fails(train, ge_log):
    g = step_graph()
    assert train.add_graph(1, g) == S.SUCCESS
    assert train.add_graph(2, g) == S.FAILED
    assert "GE_GRAPH_GRAPH_ALREADY_EXIST" in ge_log.text
    assert train.remove_graph(1) == S.SUCCESS
    assert train.add_graph(2, g) == S.SUCCESS


def test_add_graph_takes_a_snapshot(predict):
    g = ge.Graph("g")
    x = g.data("x", index=0, shape=[2], dtype=F32)
    g.set_outputs([g.op("Relu", [x])])
    assert predict.add_graph(1, g) == S.SUCCESS
    g.set_outputs([g.op("Neg", [x])])
    (out,), _ = predict.run_graph(1, [np.array([-1, 2], F32)])
    np.testing.assert_array_equal(out, [0, 2])


def test_unknown_graph_ids(train, ge_log):
    assert train.run_graph(9, [ones(2, 3)]) == ([], S.GE_GRAPH_GRAPH_NOT_EXIST)
    assert train.build_graph(9, []) == S.GE_GRAPH_GRAPH_NOT_EXIST
    assert train.remove_graph(9) == S.FAILED
    assert S.GE_GRAPH_GRAPH_NOT_EXIST == 1343242242
    assert "graph id 9 does not exist" in ge_log.text


def test_the_engine_raises_one_error_whose_line_the_face_logs(train, ge_log):
    """The engine's one exception carries the status and the whole line; openacl.ge returns the one, logs the other."""
    with pytest.raises(GeError) as info:
        engine.Session({"ge.graphRunMode": "1"}).remove_graph(4)
    assert info.value.code == S.FAILED
    assert info.value.detail == "RemoveGraph: graph id 4 does not exist (GE_GRAPH_GRAPH_NOT_EXIST)"
    assert train.remove_graph(4) == S.FAILED
    assert [r.getMessage() for r in ge_log.records if r.levelno >= logging.ERROR] == [info.value.detail]


def test_the_engine_names_the_api_once_and_keeps_ges_own_lines(train):
    g = ge.Graph("s")
    g.summary("s", g.const("c", F32(1)))
    session = engine.Session({"ge.graphRunMode": "1"})
    session.add_graph(1, g)
    with pytest.raises(GeError, match=r"^FAILED\(\d+\): .*: No summary callback found, graph_id:1$"):
        session.run_graph(1, [])
    with pytest.raises(GeError) as info:
        session.build_graph(2)
    assert info.value.detail.startswith("BuildGraph: graph id 2 does not exist")


def test_removed_graph_is_gone(train):
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    assert train.remove_graph(1) == S.SUCCESS
    assert train.run_graph(1, [ones(2, 3)]) == ([], S.GE_GRAPH_GRAPH_NOT_EXIST)
    assert train.remove_graph(1) == S.FAILED


def test_graph_id_must_be_an_uint32_int(train):
    assert train.add_graph(-1, step_graph()) == S.PARAM_INVALID
    assert train.run_graph(2**32, []) == ([], S.PARAM_INVALID)
    with pytest.raises(TypeError, match="graph_id must be an int"):
        train.run_graph("1", [])
    with pytest.raises(TypeError):
        train.add_graph(1, "not a graph")


@pytest.mark.parametrize(
    ("inputs", "words"),
    [
        ([], "expects 1 input(s), got 0"),
        ([ones(2, 3), ones(2, 3)], "expects 1 input(s), got 2"),
        ([np.ones((2, 3), np.float64)], "has dtype float64, expected float32"),
        ([ones(3, 2)], "has shape (3, 2), expected (2, 3)"),
        ([ones(2, 3, 1)], "has shape (2, 3, 1)"),
    ],
)
def test_bad_inputs_are_param_invalid_and_change_nothing(train, ge_log, inputs, words):
    assert train.register_callback_func("Summary", lambda *a: 0) == S.SUCCESS
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    assert train.run_graph(1, inputs) == ([], S.PARAM_INVALID)
    assert any(words in line for line in errors(ge_log)), errors(ge_log)
    assert train.get_variables(["w"]) == ([], S.FAILED), "not built, so no variable yet"
    if inputs:  # BuildGraph checks the inputs it is given; an empty list means "no shapes to check"
        assert train.build_graph(1, inputs) == S.PARAM_INVALID


def test_dynamic_dimensions_take_any_size(predict):
    g = ge.Graph("g")
    x = g.data("x", index=0, shape=[None, 2], dtype="float32")
    g.set_outputs([g.op("Relu", [x])])
    assert predict.add_graph(1, g) == S.SUCCESS
    for rows in (1, 5):
        (out,), ret = predict.run_graph(1, [ones(rows, 2)])
        assert ret == S.SUCCESS and out.shape == (rows, 2)


def test_inputs_that_are_not_arrays_are_converted_or_rejected(predict):
    g = ge.Graph("g")
    g.set_outputs([g.op("Relu", [g.data("x", index=0, shape=[], dtype="float64")])])
    assert predict.add_graph(1, g) == S.SUCCESS
    assert predict.run_graph(1, [2.5])[1] == S.SUCCESS
    assert predict.run_graph(1, ["text"])[1] == S.PARAM_INVALID


def test_graph_that_cannot_be_built(train, ge_log):
    reader = ge.Graph("reader")
    reader.set_outputs([reader.op("Relu", [reader.variable("w")])])
    assert train.add_graph(2, reader) == S.SUCCESS
    assert train.build_graph(2) == S.FAILED
    assert "variable 'w' has no value in this session" in ge_log.text
    assert train.run_graph(2, []) == ([], S.GE_GRAPH_NOT_BUILT)
    assert S.GE_GRAPH_NOT_BUILT == 1343242295
    # once another graph has created w, the same graph builds
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    assert train.build_graph(1) == S.SUCCESS
    (out,), ret = train.run_graph(2, [])
    assert ret == S.SUCCESS and out.shape == (3, 2)


def test_onnxruntime_rejecting_the_model_is_not_built(train, ge_log):
    g = ge.Graph("bad")
    g.set_outputs([g.op("Relu", [g.const("c", ones(2))], bogus=1)])
    assert train.add_graph(1, g) == S.SUCCESS
    assert train.build_graph(1) == S.FAILED
    assert train.run_graph(1, []) == ([], S.GE_GRAPH_NOT_BUILT)
    assert "cannot be built" in ge_log.text


def test_runtime_failure_is_failed_and_leaves_variables(train, ge_log):
    g = ge.Graph("g")
    x = g.data("x", index=0, shape=[None], dtype="float32")
    w = g.variable("w", value=np.zeros(3, F32))
    g.assign(w, g.op("Add", [w, x]))
    assert train.add_graph(1, g) == S.SUCCESS
    assert train.run_graph(1, [ones(4)]) == ([], S.FAILED)
    assert "failed in onnxruntime" in ge_log.text
    np.testing.assert_array_equal(w_value(train), np.zeros(3))


def test_assign_of_another_shape_is_failed_and_leaves_variables(train, ge_log):
    g = ge.Graph("g")
    w = g.variable("w", value=np.zeros(3, F32))
    g.assign(w, g.op("Concat", [w, w], axis=0))
    assert train.add_graph(1, g) == S.SUCCESS
    assert train.run_graph(1, []) == ([], S.FAILED)
    assert "Assign gives variable 'w' float32[6], not float32[3]" in ge_log.text
    np.testing.assert_array_equal(w_value(train), np.zeros(3))


def test_variable_of_another_type_in_a_second_graph_does_not_build(train, ge_log):
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    assert train.build_graph(1) == S.SUCCESS
    g = ge.Graph("other")
    g.set_outputs([g.variable("w", value=np.zeros(3, np.int32))])
    assert train.add_graph(2, g) == S.SUCCESS
    assert train.build_graph(2) == S.FAILED
    assert "variable 'w' is float32[3, 2] in this session" in ge_log.text


# ----- RegisterCallBackFunc -----


@pytest.mark.parametrize("key", ["Other", "", "summary", None, b"Sav"])
def test_only_summary_and_save_keys(train, ge_log, key):
    assert train.register_callback_func(key, lambda *a: 0) == S.PARAM_INVALID
    assert "the keys are 'Summary' and 'Save'" in ge_log.text


def test_callback_must_be_callable(train):
    assert train.register_callback_func("Save", None) == S.PARAM_INVALID


def test_registering_again_replaces_the_callback(train):
    calls = []
    assert train.register_callback_func("Summary", lambda gid, p: calls.append("first")) == S.SUCCESS
    assert train.register_callback_func(b"Summary", lambda gid, p: calls.append("second")) == S.SUCCESS
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    assert train.run_graph(1, [ones(2, 3)])[1] == S.SUCCESS
    assert calls == ["second"]


# ----- callbacks at run time -----


def both_graph() -> ge.Graph:
    """A checkpoint graph that also has a Summary: the variable feeds both, so Summary and Save both fire."""
    g = ge.Graph("both")
    v = g.variable("v", value=np.arange(3, dtype=F32))
    g.summary("v[:Histogram]", v)
    g.save([v])
    return g


def test_summary_then_save_once_each_on_the_callers_thread(train):
    calls = []

    def record(key):
        def callback(graph_id, params):
            calls.append((key, graph_id, sorted(params), threading.get_ident()))
            return 0

        return callback

    assert train.register_callback_func("Save", record("Save")) == S.SUCCESS
    assert train.register_callback_func("Summary", record("Summary")) == S.SUCCESS
    assert train.add_graph(5, both_graph()) == S.SUCCESS
    outputs, ret = train.run_graph(5, [])
    me = threading.get_ident()
    assert ret == S.SUCCESS
    assert calls == [("Summary", 5, ["v[:Histogram]"], me), ("Save", 5, ["v"], me)]
    assert len(outputs) == 1, "Save's variable stays an output; the Summary tensor is taken out"
    np.testing.assert_array_equal(outputs[0], [0, 1, 2])


def test_save_callback_fires_for_variable_to_netoutput(train):
    """GE UT RunGraph_Success_CallBack: a bare Variable -> NetOutput graph in train mode fires Save once."""
    saved = []
    g = ge.Graph("g")
    g.set_outputs([g.variable("Save", value=ones(2))])
    assert train.register_callback_func("Save", lambda gid, p: saved.append(dict(p))) == S.SUCCESS
    assert train.add_graph(1, g) == S.SUCCESS
    assert train.run_graph(1, [])[1] == S.SUCCESS
    assert [list(p) for p in saved] == [["Save"]]


def test_save_in_a_compute_graph_only_adds_outputs(train):
    saved = []
    g = step_graph()
    g.save(["w"])
    assert train.register_callback_func("Summary", lambda *a: 0) == S.SUCCESS
    assert train.register_callback_func("Save", lambda gid, p: saved.append(p)) == S.SUCCESS
    assert train.add_graph(1, g) == S.SUCCESS
    outputs, ret = train.run_graph(1, [ones(2, 3)])
    assert ret == S.SUCCESS
    assert [o.shape for o in outputs] == [(2, 2), (3, 2)]
    assert saved == [], "not a checkpoint graph (GE IsCheckpointGraph), so Save does not fire"


def test_checkpoint_graph_over_variables_of_another_graph(train):
    saved = {}
    assert train.register_callback_func("Summary", lambda *a: 0) == S.SUCCESS
    assert train.register_callback_func("Save", lambda gid, p: saved.update({gid: dict(p)})) == S.SUCCESS
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    assert train.add_graph(2, checkpoint_graph("w")) == S.SUCCESS
    for _ in range(3):
        assert train.run_graph(1, [ones(2, 3)])[1] == S.SUCCESS
    outputs, ret = train.run_graph(2, [])
    assert ret == S.SUCCESS
    np.testing.assert_array_equal(saved[2]["w"], np.full((3, 2), 3))
    np.testing.assert_array_equal(outputs[0], np.full((3, 2), 3))


def test_missing_summary_callback_fails_before_running(train, ge_log):
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    assert train.run_graph(1, [ones(2, 3)]) == ([], S.FAILED)
    assert "No summary callback found, graph_id:1" in errors(ge_log)
    np.testing.assert_array_equal(w_value(train), np.zeros((3, 2)))


def test_missing_save_callback_fails_before_running(train, ge_log):
    assert train.add_graph(2, both_graph()) == S.SUCCESS
    assert train.register_callback_func("Summary", lambda *a: 0) == S.SUCCESS
    assert train.run_graph(2, []) == ([], S.FAILED)
    assert "No checkpoint callback found, graph_id:2" in errors(ge_log)


def test_callback_exception_and_nonzero_return_are_logged(train, ge_log):
    def boom(graph_id, params):
        raise RuntimeError("boom")

    assert train.register_callback_func("Summary", boom) == S.SUCCESS
    assert train.register_callback_func("Save", lambda gid, p: 7) == S.SUCCESS
    assert train.add_graph(3, both_graph()) == S.SUCCESS
    outputs, ret = train.run_graph(3, [])
    assert ret == S.SUCCESS and len(outputs) == 1
    (raised,) = [r for r in ge_log.records if r.exc_info]
    assert "Summary callback raised, graph_id:3" in raised.getMessage()
    assert "Save callback returned 7, graph_id:3" in ge_log.text


def test_params_are_read_only_and_callbacks_see_updated_variables(train):
    seen = {}

    def summary(graph_id, params):
        value = params["loss[:Scalar]"]
        with pytest.raises(ValueError, match="read-only"):
            value[...] = 0
        seen["loss"] = float(value)
        seen["w"] = w_value(train)
        return 0

    assert train.register_callback_func("Summary", summary) == S.SUCCESS
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    assert train.run_graph(1, [ones(2, 3)])[1] == S.SUCCESS
    assert seen["loss"] == 0.0
    np.testing.assert_array_equal(seen["w"], np.ones((3, 2)))


def test_running_the_graph_from_its_own_callback_is_already_running(train):
    codes = []
    rerun = lambda gid, p: codes.append(train.run_graph(gid, [ones(2, 3)])[1])  # noqa: E731
    assert train.register_callback_func("Summary", rerun) == S.SUCCESS
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    assert train.run_graph(1, [ones(2, 3)])[1] == S.SUCCESS
    assert codes == [S.GE_GRAPH_ALREADY_RUNNING]


def test_prediction_mode_fires_nothing_and_keeps_summary_outputs(predict):
    calls = []
    assert predict.register_callback_func("Summary", lambda *a: calls.append(a)) == S.SUCCESS
    assert predict.add_graph(1, step_graph()) == S.SUCCESS
    outputs, ret = predict.run_graph(1, [ones(2, 3)])
    assert ret == S.SUCCESS and calls == []
    assert [o.shape for o in outputs] == [(2, 2), ()], "the Summary tensor stays as a trailing output"


def test_prediction_mode_needs_no_callback(predict):
    assert predict.add_graph(1, both_graph()) == S.SUCCESS
    assert predict.run_graph(1, [])[1] == S.SUCCESS


def test_an_output_wanted_twice_comes_back_as_two_arrays(predict):
    g = ge.Graph("g")
    y = g.op("Relu", [g.data("x", index=0, shape=[2], dtype="float32")])
    g.summary("y", y)
    g.set_outputs([y, y])
    assert predict.add_graph(1, g) == S.SUCCESS
    outputs, _ = predict.run_graph(1, [ones(2)])
    assert len(outputs) == 3
    outputs[0][0] = 5
    assert outputs[1][0] == 1 and outputs[2][0] == 1


def test_a_variable_returned_as_output_is_not_shared_with_the_session(train):
    g = ge.Graph("g")
    w = g.variable("w", value=np.zeros(2, F32))
    g.set_outputs([g.assign(w, g.op("Add", [w, g.const("one", np.ones(2, F32))]))])
    assert train.add_graph(1, g) == S.SUCCESS
    (out,), _ = train.run_graph(1, [])
    out[...] = 100
    np.testing.assert_array_equal(w_value(train), [1, 1])


# ----- GetVariables -----


def test_get_variables(train, ge_log):
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    assert train.get_variables(["w"]) == ([], S.FAILED)
    assert "no variable 'w'" in ge_log.text
    assert train.build_graph(1) == S.SUCCESS
    assert train.get_variables([]) == ([], S.SUCCESS)
    values, ret = train.get_variables([b"w", "w"])
    assert ret == S.SUCCESS and len(values) == 2
    values[0][...] = 9  # copies: the session's value does not change
    np.testing.assert_array_equal(w_value(train), np.zeros((3, 2)))
    with pytest.raises(TypeError):
        train.get_variables("w")


def test_get_variables_never_fires_save(train):
    saved = []
    assert train.register_callback_func("Save", lambda *a: saved.append(a)) == S.SUCCESS
    assert train.add_graph(1, checkpoint_graph("w")) == S.SUCCESS
    assert train.add_graph(2, step_graph()) == S.SUCCESS
    assert train.build_graph(2) == S.SUCCESS
    for _ in range(2):
        assert train.get_variables(["w"])[1] == S.SUCCESS
    assert saved == []


# ----- RunGraphAsync -----


class Done:
    def __init__(self, count: int = 1) -> None:
        self.results: list[tuple[int, list, str]] = []
        self._count = count
        self.event = threading.Event()

    def __call__(self, status, outputs):
        self.results.append((status, outputs, threading.current_thread().name))
        if len(self.results) == self._count:
            self.event.set()

    def wait(self):
        assert self.event.wait(10)
        return self.results


def test_async_never_fires_callbacks(train):
    calls = []
    assert train.register_callback_func("Summary", lambda *a: calls.append(a)) == S.SUCCESS
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    done = Done()
    x = ones(2, 3)
    assert train.run_graph_async(1, [x], done) == S.SUCCESS
    x[...] = 100  # the inputs were copied when queued
    ((status, outputs, thread),) = done.wait()
    assert status == S.SUCCESS and calls == []
    assert thread.startswith("openacl-ge-")
    assert [o.shape for o in outputs] == [(2, 2), ()], "the Summary tensor stays as a trailing output"
    np.testing.assert_array_equal(w_value(train), np.ones((3, 2)))


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_regression_a_forked_childs_run_graph_async_never_ran(train):
    """A session's async worker thread was the parent's: in a forked child, run_graph_async queued the run for a
    thread that did not exist there, and done was never called. The worker is renewed at fork."""
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    done = Done()
    assert train.run_graph_async(1, [ones(2, 3)], done) == S.SUCCESS
    done.wait()  # the parent's worker runs

    def child() -> str:
        again = Done()
        assert train.run_graph_async(1, [ones(2, 3)], again) == S.SUCCESS
        if not again.event.wait(30):
            return "done was never called"
        ((status, outputs, thread),) = again.results
        return f"{status} {len(outputs)} {thread.startswith('openacl-ge-')}"

    assert in_child(child) == f"{S.SUCCESS} 2 True"


def test_async_runs_in_order(train):
    assert train.register_callback_func("Summary", lambda *a: 0) == S.SUCCESS
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    done = Done(3)
    for _ in range(3):
        assert train.run_graph_async(1, [ones(2, 3)], done) == S.SUCCESS
    sums = [float(outputs[1]) for _, outputs, _ in done.wait()]
    assert sums == [0.0, 12.0, 24.0]


def test_async_errors_are_returned_and_passed_to_done(train):
    done = Done(2)
    assert train.run_graph_async(4, [], done) == S.GE_GRAPH_GRAPH_NOT_EXIST
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    assert train.run_graph_async(1, [], done) == S.PARAM_INVALID
    assert [r[0] for r in done.wait()] == [S.GE_GRAPH_GRAPH_NOT_EXIST, S.PARAM_INVALID]
    with pytest.raises(TypeError):
        train.run_graph_async(1, [ones(2, 3)], None)


def test_async_failure_later_reaches_done_only(train):
    g = ge.Graph("reader")
    g.set_outputs([g.variable("nothing")])
    assert train.add_graph(1, g) == S.SUCCESS
    done = Done()
    assert train.run_graph_async(1, [], done) == S.SUCCESS
    assert done.wait()[0][:2] == (S.GE_GRAPH_NOT_BUILT, [])


def test_async_run_queued_behind_a_close_gets_failed(train):
    g = ge.Graph("g")
    g.set_outputs([g.const("c", F32(1))])
    assert train.add_graph(1, g) == S.SUCCESS
    done = Done(2)

    def first(status, outputs):
        train.close()  # from the worker thread: the queued run below finds the session closed
        done(status, outputs)

    release = threading.Event()
    assert train.run_graph_async(1, [], lambda s, o: (release.wait(10), first(s, o))) == S.SUCCESS
    assert train.run_graph_async(1, [], done) == S.SUCCESS
    release.set()
    assert [r[0] for r in done.wait()] == [S.SUCCESS, S.FAILED]


def test_close_stops_the_worker_and_is_idempotent(train):
    g = ge.Graph("g")
    g.set_outputs([g.const("c", F32(1))])
    assert train.add_graph(1, g) == S.SUCCESS
    done = Done()
    assert train.run_graph_async(1, [], done) == S.SUCCESS
    done.wait()
    with train:
        pass
    train.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("openacl-ge-")]
    assert train.run_graph(1, []) == ([], S.FAILED)


def test_argument_types_are_checked_before_anything_else():
    sess = ge.Session()  # GE not initialised: codes come after the type checks
    with pytest.raises(TypeError, match="graph_id must be an int"):
        sess.run_graph(True, [])
    with pytest.raises(TypeError, match="inputs must be a list of arrays"):
        sess.run_graph(1, None)
    with pytest.raises(TypeError, match="inputs must be a list of arrays"):
        sess.build_graph(1, np.ones(2))
    with pytest.raises(TypeError, match="options must be a dict"):
        ge.Session(["ge.graphRunMode"])
    with pytest.raises(TypeError, match="options must be a dict"):
        sess.add_graph(1, ge.Graph("g"), "ge.graphRunMode")


def test_a_dropped_session_ends_its_worker_thread():
    assert ge.ge_initialize() == S.SUCCESS
    train = ge.Session({"ge.graphRunMode": "1"})
    g = ge.Graph("g")
    g.set_outputs([g.const("c", F32(1))])
    assert train.add_graph(1, g) == S.SUCCESS
    done = Done()
    assert train.run_graph_async(1, [], done) == S.SUCCESS
    done.wait()
    (worker,) = [t for t in threading.enumerate() if t.name.startswith("openacl-ge-")]
    del train, done
    gc.collect()  # no close(), no GEFinalize: the session's finalizer stops the thread
    worker.join(10)
    assert not worker.is_alive()


# ----- what a session lets go of, it lets go of after its lock -----


class SessionUser:
    """A callback or allocator whose ``__del__`` calls the session (from a helper thread it waits for at most a
    few seconds, so that a finalizer run under the session's lock fails the test instead of deadlocking it)."""

    def __init__(self, sess: ge.Session, seen: list[str]) -> None:
        self.sess, self.seen = sess, seen

    def __call__(self, graph_id, params) -> int:
        return 0

    def malloc(self, size):  # pragma: no cover - registered, never asked
        raise MemoryError

    def free(self, block):  # pragma: no cover
        pass

    def __del__(self) -> None:
        done: list[bool] = []
        helper = threading.Thread(target=lambda: done.append(self.sess.compiled_model(1) is None), daemon=True)
        helper.start()
        helper.join(5)
        self.seen.append("called the session" if done else "stuck: the finalizer ran under the session lock")


@pytest.fixture
def device0():
    import acl

    assert acl.rt.set_device(0) == 0
    yield
    acl.rt.reset_device(0)


def test_regression_replaced_callback_whose_finalizer_calls_the_session_deadlocked(train):
    seen: list[str] = []
    assert train.register_callback_func("Summary", SessionUser(train, seen)) == S.SUCCESS
    assert train.register_callback_func("Summary", lambda *a: 0) == S.SUCCESS
    gc.collect()
    assert seen == ["called the session"]


def test_regression_replaced_or_unregistered_allocator_whose_finalizer_calls_the_session_deadlocked(train, device0):
    seen: list[str] = []
    assert train.register_external_allocator(0, SessionUser(train, seen)) == S.SUCCESS
    assert train.register_external_allocator(0, SessionUser(train, seen)) == S.SUCCESS
    assert train.unregister_external_allocator(0) == S.SUCCESS
    gc.collect()
    assert seen == ["called the session"] * 2


def test_regression_close_lets_go_of_callbacks_and_allocators_after_the_session_lock(train, device0):
    seen: list[str] = []
    assert train.register_callback_func("Save", SessionUser(train, seen)) == S.SUCCESS
    assert train.register_external_allocator(0, SessionUser(train, seen)) == S.SUCCESS
    train.close()
    gc.collect()
    assert seen == ["called the session"] * 2
