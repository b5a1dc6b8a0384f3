"""The run plan: a run of an unchanged graph with inputs of unchanged kinds takes the kept plan, and every change it
depends on is seen (graph removed and re-added, input dtype/shape/count, callbacks, variables, the session's life),
with the same codes, lines and callbacks as the full path."""

from __future__ import annotations

import gc
import logging
import os
import threading

import numpy as np
import pytest

from openacl import ge
from openacl.errors import GeStatus as S
from openacl.graph_engine import errmsg
from tests.forking import in_child
from tests.ge.test_session import SessionUser, checkpoint_graph, ones, step_graph, w_value

F32 = np.float32


def planned(sess: ge.Session, graph_id: int) -> None:
    """The session kept a plan for ``graph_id``: the next run that fits takes it (what these tests exercise)."""
    assert graph_id in sess._engine._plans


def unary_graph(op: str, name: str = "g") -> ge.Graph:
    g = ge.Graph(name)
    g.set_outputs([g.op(op, [g.data("x", index=0, shape=[None], dtype="float32")])])
    return g


def test_the_same_graph_removed_and_readded_under_its_id_runs_the_new_graph(predict):
    assert predict.add_graph(1, unary_graph("Relu")) == S.SUCCESS
    x = np.array([-1, 2], F32)
    for _ in range(2):
        (out,), _ = predict.run_graph(1, [x])
        np.testing.assert_array_equal(out, [0, 2])
    planned(predict, 1)
    assert predict.remove_graph(1) == S.SUCCESS
    assert predict.run_graph(1, [x]) == ([], S.GE_GRAPH_GRAPH_NOT_EXIST)
    assert predict.add_graph(1, unary_graph("Neg")) == S.SUCCESS
    (out,), _ = predict.run_graph(1, [x])
    np.testing.assert_array_equal(out, [1, -2])


def test_readding_or_editing_a_planned_graph_keeps_the_first_graph(predict):
    g = ge.Graph("g")
    x = g.data("x", index=0, shape=[2], dtype="float32")
    g.set_outputs([g.op("Relu", [x])])
    assert predict.add_graph(1, g) == S.SUCCESS
    x = np.array([-1, 2], F32)
    predict.run_graph(1, [x])
    planned(predict, 1)
    g.set_outputs([g.op("Neg", [g.data("x2", index=0, shape=[2], dtype="float32")])])  # AddGraph took a snapshot
    assert predict.add_graph(1, unary_graph("Neg", "other")) == S.SUCCESS  # an existing id keeps the first graph
    (out,), _ = predict.run_graph(1, [x])
    np.testing.assert_array_equal(out, [0, 2])


def test_inputs_of_another_kind_leave_the_plan_and_are_checked(predict, ge_log):
    assert predict.add_graph(1, unary_graph("Neg")) == S.SUCCESS
    assert predict.run_graph(1, [ones(2)])[1] == S.SUCCESS
    planned(predict, 1)
    (out,), ret = predict.run_graph(1, [ones(5)])  # a dynamic dimension takes another size
    assert ret == S.SUCCESS and out.shape == (5,)
    assert predict.run_graph(1, [np.ones(2, np.float64)]) == ([], S.PARAM_INVALID)
    assert "has dtype float64, expected float32" in ge_log.text
    assert predict.run_graph(1, [ones(2, 2)]) == ([], S.PARAM_INVALID)
    assert predict.run_graph(1, [ones(2), ones(2)]) == ([], S.PARAM_INVALID)
    (out,), ret = predict.run_graph(1, [[F32(1), F32(-2)]])  # not an array: converted, as on the full path
    assert ret == S.SUCCESS
    np.testing.assert_array_equal(out, [-1, 2])
    big_endian = np.ones(2, ">f4")
    assert predict.run_graph(1, [big_endian]) == ([], S.PARAM_INVALID)


def test_a_bool_graph_id_or_an_array_of_inputs_never_takes_the_plan(predict):
    """The plan is found by graph id, and True == 1; an array of arrays iterates like a list: the planned path
    refuses both as the full path does (TypeError), instead of running graph 1."""
    assert predict.add_graph(1, unary_graph("Neg")) == S.SUCCESS
    predict.run_graph(1, [ones(2)])
    planned(predict, 1)
    with pytest.raises(TypeError, match="graph_id must be an int"):
        predict.run_graph(True, [ones(2)])
    with pytest.raises(TypeError, match="inputs must be a list"):
        predict.run_graph(1, ones(1, 2))


def test_a_replaced_callback_fires_instead_of_the_planned_one(train):
    calls: list[str] = []
    assert train.register_callback_func("Summary", lambda gid, p: calls.append("first")) == S.SUCCESS
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    for _ in range(2):
        assert train.run_graph(1, [ones(2, 3)])[1] == S.SUCCESS
    planned(train, 1)
    assert train.register_callback_func(b"Summary", lambda gid, p: calls.append("second")) == S.SUCCESS
    assert train.run_graph(1, [ones(2, 3)])[1] == S.SUCCESS
    assert calls == ["first", "first", "second"]


def test_a_save_callback_registered_later_is_used_by_the_planned_checkpoint_graph(train):
    saved: list[float] = []
    assert train.register_callback_func("Summary", lambda gid, p: 0) == S.SUCCESS
    assert train.add_graph(1, step_graph()) == S.SUCCESS  # w <- w + 1
    assert train.add_graph(2, checkpoint_graph("w")) == S.SUCCESS
    assert train.run_graph(1, [ones(2, 3)])[1] == S.SUCCESS
    assert train.run_graph(2, []) == ([], S.FAILED)  # no Save callback yet: nothing ran, no plan kept
    assert 2 not in train._engine._plans
    assert train.register_callback_func("Save", lambda gid, p: saved.append(float(p["w"][0, 0]))) == S.SUCCESS
    for _ in range(2):
        assert train.run_graph(2, [])[1] == S.SUCCESS
    planned(train, 2)
    assert train.run_graph(1, [ones(2, 3)])[1] == S.SUCCESS
    assert train.run_graph(2, [])[1] == S.SUCCESS  # the plan reads the variable as it is now
    assert saved == [1.0, 1.0, 2.0]


def test_a_variable_changed_by_another_graph_is_read_by_the_planned_graph(train):
    assert train.register_callback_func("Summary", lambda gid, p: 0) == S.SUCCESS
    assert train.add_graph(1, step_graph()) == S.SUCCESS  # y = x @ w; w <- w + 1
    reader = ge.Graph("reader")
    w = reader.variable("w")
    reader.set_outputs([reader.op("ReduceSum", [w], keepdims=0)])
    assert train.add_graph(2, reader) == S.SUCCESS
    assert train.run_graph(1, [ones(2, 3)])[1] == S.SUCCESS
    for expected in (6.0, 6.0):
        (total,), _ = train.run_graph(2, [])
        assert total == expected
    planned(train, 2)
    (y,), _ = train.run_graph(1, [ones(2, 3)])
    np.testing.assert_array_equal(y, np.full((2, 2), 3.0))  # the planned step read w = 1 and left w = 2
    (total,), _ = train.run_graph(2, [])
    assert total == 12.0
    np.testing.assert_array_equal(w_value(train), np.full((3, 2), 2.0))


def test_the_planned_graph_run_from_its_own_callback_is_already_running(train):
    codes = []
    rerun = lambda gid, p: codes.append(train.run_graph(gid, [ones(2, 3)])[1])  # noqa: E731
    assert train.register_callback_func("Summary", rerun) == S.SUCCESS
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    for _ in range(2):
        assert train.run_graph(1, [ones(2, 3)])[1] == S.SUCCESS
    planned(train, 1)
    assert codes == [S.GE_GRAPH_ALREADY_RUNNING] * 2


def test_a_planned_run_that_fails_is_failed_with_the_same_line(predict, ge_log):
    g = ge.Graph("g")
    x = g.data("x", index=0, shape=[3], dtype="float32")
    g.set_outputs([g.op("Gather", [x, g.data("i", index=1, shape=[1], dtype="int64")])])
    assert predict.add_graph(1, g) == S.SUCCESS
    assert predict.run_graph(1, [ones(3), np.array([1])])[1] == S.SUCCESS
    planned(predict, 1)
    errmsg.clear()
    assert predict.run_graph(1, [ones(3), np.array([7])]) == ([], S.FAILED)
    lines = [r.getMessage() for r in ge_log.records if r.levelno >= logging.ERROR and r.name.startswith("openacl")]
    assert lines[-1].startswith("RunGraph: graph 1 failed in onnxruntime: ")
    assert errmsg.take() == lines[-1]


def test_regression_a_summary_tensor_also_returned_changed_under_the_callback_when_the_output_was_written(train):
    """A Summary tensor that is also an output was handed to the callback as a view of that output: a callback that
    kept it (a sink queueing it) saw what the program later wrote into the output. It gets a read-only copy now.
    Each run, planned or not, also keeps a tensor wanted twice and a returned variable apart."""
    seen = []
    g = ge.Graph("g")
    w = g.variable("w", value=np.zeros(2, F32))
    new_w = g.assign(w, g.op("Add", [w, g.data("x", index=0, shape=[2], dtype="float32")]))
    g.summary("new_w", new_w)
    g.set_outputs([new_w, new_w])
    assert train.register_callback_func("Summary", lambda gid, p: seen.append(p["new_w"])) == S.SUCCESS
    assert train.add_graph(1, g) == S.SUCCESS
    for step in (1, 2, 3):
        (a, b), ret = train.run_graph(1, [ones(2)])
        assert ret == S.SUCCESS
        a[...] = 100
        assert b.tolist() == [step, step] and not seen[-1].flags.writeable
        np.testing.assert_array_equal(w_value(train), [step, step])
    planned(train, 1)
    assert [p.tolist() for p in seen] == [[1, 1], [2, 2], [3, 3]]


def test_a_closed_or_finalized_session_refuses_its_planned_graph(train, ge_log):
    assert train.register_callback_func("Summary", lambda gid, p: 0) == S.SUCCESS
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    assert train.run_graph(1, [ones(2, 3)])[1] == S.SUCCESS
    planned(train, 1)
    other = ge.Session({"ge.graphRunMode": "1"})
    assert other.register_callback_func("Summary", lambda gid, p: 0) == S.SUCCESS
    assert other.add_graph(1, step_graph()) == S.SUCCESS
    assert other.run_graph(1, [ones(2, 3)])[1] == S.SUCCESS
    planned(other, 1)
    train.close()
    assert train.run_graph(1, [ones(2, 3)]) == ([], S.FAILED)
    assert "the session is closed" in ge_log.text
    assert ge.ge_finalize() == S.SUCCESS
    assert other.run_graph(1, [ones(2, 3)]) == ([], S.GE_CLI_GE_NOT_INITIALIZED)
    assert ge.ge_initialize() == S.SUCCESS
    assert other.run_graph(1, [ones(2, 3)]) == ([], S.FAILED)


def test_a_callback_a_plan_held_is_let_go_of_after_the_session_lock(train):
    seen: list[str] = []
    assert train.register_callback_func("Summary", SessionUser(train, seen)) == S.SUCCESS
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    assert train.run_graph(1, [ones(2, 3)])[1] == S.SUCCESS
    planned(train, 1)  # the plan holds the callback too
    assert train.register_callback_func("Summary", lambda *a: 0) == S.SUCCESS
    gc.collect()
    assert seen == ["called the session"]


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_regression_a_graph_running_on_another_thread_at_fork_was_running_for_ever_in_the_child(train):
    """A graph's "running" mark was a flag: a child forked while another thread ran the graph inherited it set, and
    every run there was GE_GRAPH_ALREADY_RUNNING. It is a lock made free in a forked child."""
    inside, release = threading.Event(), threading.Event()

    def summary(graph_id, params) -> int:
        if threading.current_thread().name == "runner":
            inside.set()
            release.wait(30)
        return 0

    assert train.register_callback_func("Summary", summary) == S.SUCCESS
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    runner = threading.Thread(target=lambda: train.run_graph(1, [ones(2, 3)]), name="runner", daemon=True)
    runner.start()
    try:
        assert inside.wait(30), "the runner never reached its callback"
        answer = in_child(lambda: " ".join(str(int(train.run_graph(1, [ones(2, 3)])[1])) for _ in range(2)))
    finally:
        release.set()
        runner.join(30)
    assert answer == f"{int(S.SUCCESS)} {int(S.SUCCESS)}"


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_regression_a_callback_that_forks_left_run_graph_raising_in_the_child(train):
    """A Summary callback runs while its graph's run lock is held; a child forked there got that lock made free, and
    its run_graph, returning from the callback, released it again: a raw RuntimeError out of run_graph. The child's
    run now ends as the parent's does."""
    parent, (read, write) = os.getpid(), os.pipe()

    def summary(graph_id, params) -> int:
        os.fork()  # parent and child both return from the callback
        return 0

    assert train.register_callback_func("Summary", summary) == S.SUCCESS
    assert train.add_graph(1, step_graph()) == S.SUCCESS
    try:
        status = str(int(train.run_graph(1, [ones(2, 3)])[1]))
    except BaseException as exc:  # what the child saw, sent to the parent
        status = f"raised {type(exc).__name__}: {exc}"
    if os.getpid() != parent:
        os.write(write, status.encode())
        os._exit(0)
    os.close(write)
    os.wait()
    assert status == str(int(S.SUCCESS))
    assert os.read(read, 200).decode() == str(int(S.SUCCESS))
