"""The exception-info callback: one record per failed stream task, on the runtime's own thread."""

from __future__ import annotations

import os
import struct
import threading

import numpy as np
import pytest

import acl
from openacl.errors import AclCode
from openacl.runtime import device as rt_device
from openacl.runtime.sched.task import work_task
from tests.conftest import hold_stream
from tests.forking import in_child

SUCCESS = 0
NO_INFO = 0xFFFFFFFF


class Recorder:
    """An exception-info callback that reads every field, through the getters and through ptr_to_bytes."""

    def __init__(self) -> None:
        self.records: list[dict] = []
        self.arrived = threading.Event()

    def __call__(self, info: int) -> None:
        raw = struct.unpack("<5I", acl.util.ptr_to_bytes(info, 20))
        self.records.append(
            {
                "code": acl.rt.get_error_code_from_exception_info(info),
                "task": acl.rt.get_task_id_from_exception_info(info),
                "stream": acl.rt.get_stream_id_from_exception_info(info),
                "thread": acl.rt.get_thread_id_from_exception_info(info),
                "device": acl.rt.get_device_id_from_exception_info(info),
                "raw": raw,
                "on": threading.current_thread().name,
                "info": info,
            }
        )
        self.arrived.set()


@pytest.fixture
def recorder():
    fn = Recorder()
    assert acl.rt.set_exception_info_callback(fn) == SUCCESS
    yield fn
    acl.rt.set_exception_info_callback(None)


def _fail(stream: int, exc: BaseException) -> None:
    def work() -> None:
        raise exc

    rt_device.resolve(stream).enqueue(work_task("failing", work))


def test_a_failed_task_is_reported_once_with_its_ids(ctx, stream, recorder):
    _fail(stream, RuntimeError("boom"))
    assert acl.rt.synchronize_stream(stream) == AclCode.ACL_ERROR_RT_INTERNAL_ERROR  # the task's code, as CANN
    assert recorder.arrived.wait(5)
    (record,) = recorder.records
    assert record["code"] == AclCode.ACL_ERROR_RT_INTERNAL_ERROR
    assert record["stream"] == acl.rt.stream_get_id(stream)[0]
    assert record["device"] == 0
    assert record["thread"] == threading.get_ident() & 0xFFFFFFFF  # the thread that submitted the task
    assert record["task"] == 1  # its sequence number on the stream
    assert record["raw"] == (record["task"], record["stream"], record["thread"], record["device"], record["code"])
    assert record["on"] == "openacl-exception"
    assert acl.rt.get_error_code_from_exception_info(record["info"]) == NO_INFO  # valid during the call only


@pytest.mark.parametrize("where", ["calling_thread", "engine_thread"])
def test_regression_work_run_on_the_calling_thread_reports_as_from_an_engine(ctx, stream, recorder, where):
    """Work a small operator runs on the calling thread (``run_here_if_idle``, which builds its task without the
    work) fails the stream with the same code, record and ids as from an engine thread."""
    s = rt_device.resolve(stream)

    def work() -> None:
        raise RuntimeError("boom")

    if where == "calling_thread":
        assert s.run_here_if_idle("failing", work, ()) is True
    else:
        s.enqueue(work_task("failing", work))
    assert acl.rt.synchronize_stream(stream) == AclCode.ACL_ERROR_RT_INTERNAL_ERROR
    assert recorder.arrived.wait(5)
    (record,) = recorder.records
    assert record["code"] == AclCode.ACL_ERROR_RT_INTERNAL_ERROR
    assert record["task"] == 1 and record["stream"] == acl.rt.stream_get_id(stream)[0]
    assert record["thread"] == threading.get_ident() & 0xFFFFFFFF
    assert acl.rt.synchronize_stream(stream) == SUCCESS


def test_getters_answer_0xffffffff_for_0_and_for_unknown_addresses():
    for getter in (
        acl.rt.get_error_code_from_exception_info,
        acl.rt.get_task_id_from_exception_info,
        acl.rt.get_stream_id_from_exception_info,
        acl.rt.get_thread_id_from_exception_info,
        acl.rt.get_device_id_from_exception_info,
    ):
        assert getter(0) == NO_INFO
        assert getter(0x1234) == NO_INFO
        with pytest.raises(TypeError, match="args parse failed"):
            getter("x")


def test_set_exception_info_callback_parses_as_pyacl():
    assert acl.rt.set_exception_info_callback() == SUCCESS  # no argument: unset
    assert acl.rt.set_exception_info_callback(None) == SUCCESS
    with pytest.raises(TypeError, match=r"acl\.rt\.set_exception_info_callback args parse failed"):
        acl.rt.set_exception_info_callback(42)


def test_regression_a_callback_that_raised_gets_none_of_the_records_queued_for_it(ctx, stream, acl_log):
    """Three failures are queued while the callback's first call is still running; it then raises. The two
    records queued behind it used to be delivered anyway; pyACL stops calling a callback that raised."""
    calls: list[int] = []
    queued = threading.Event()

    def bad(info: int) -> None:
        calls.append(info)
        queued.wait(5)  # the other two failures are queued meanwhile
        raise ValueError("in the callback")

    assert acl.rt.set_exception_info_callback(bad) == SUCCESS
    for _ in range(3):
        _fail(stream, RuntimeError("boom"))
        acl.rt.synchronize_stream(stream)
    queued.set()
    for _ in range(250):
        if any("InfoCallback wrong out" in r.getMessage() for r in acl_log.records):
            break
        threading.Event().wait(0.02)
    _fail(stream, RuntimeError("later"))
    acl.rt.synchronize_stream(stream)
    threading.Event().wait(0.1)
    assert len(calls) == 1
    assert any("InfoCallback wrong out" in r.getMessage() and r.name == "openacl.app" for r in acl_log.records)


def test_a_copy_whose_memory_was_freed_before_it_ran_is_reported(ctx, stream, recorder, gate):
    src, _ = acl.rt.malloc_host(64)
    dst, _ = acl.rt.malloc(64, 0)
    hold_stream(stream, gate)
    assert acl.rt.memcpy_async(dst, 64, src, 64, 1, stream) == SUCCESS
    assert acl.rt.free_host(src) == SUCCESS
    gate.set()
    code = acl.rt.synchronize_stream(stream)
    assert code == AclCode.ACL_ERROR_RT_DEVICE_MEM_ERROR
    assert recorder.arrived.wait(5)
    assert recorder.records[0]["code"] == code


def test_a_model_run_onnxruntime_rejects_is_reported(ctx, stream, recorder, tmp_path):
    """A Gather whose index is out of range passes every check before the run; onnxruntime refuses it."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Gather", ["data", "index"], ["out"])],
        "gather",
        [helper.make_tensor_value_info("index", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1])],
        [helper.make_tensor("data", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])],
    )
    path = tmp_path / "gather.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    from tests.model_io import ModelIO

    io = ModelIO(path)
    ptr, size = io.inputs[1][0]
    index = np.array([10], np.int64).tobytes()
    assert acl.rt.memcpy(ptr, size, acl.util.bytes_to_ptr(index), size, 1) == SUCCESS
    assert acl.mdl.execute_async(io.model_id, io.inputs[0], io.outputs[0], stream) == SUCCESS
    code = acl.rt.synchronize_stream(stream)
    assert code == AclCode.ACL_ERROR_FAILURE
    assert recorder.arrived.wait(5)
    (record,) = recorder.records
    assert record["code"] == code and record["stream"] == acl.rt.stream_get_id(stream)[0]


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_regression_forked_child_task_failure_never_reached_the_exception_callback(ctx, stream, recorder):
    """The callback's delivery thread was the parent's: in a forked child, a failing task's record was queued for a
    thread that did not exist there, and the callback the parent set never ran. The thread is renewed at fork."""
    assert any(t.name == "openacl-exception" for t in threading.enumerate())  # the parent's delivery thread

    def child() -> str:
        _fail(stream, RuntimeError("a failure in the child"))
        acl.rt.synchronize_stream_with_timeout(stream, 5_000)
        if not recorder.arrived.wait(10):
            return "no record reached the callback"
        (record,) = recorder.records
        return f"code={record['code']} on={record['on']}"

    assert in_child(child) == f"code={AclCode.ACL_ERROR_RT_INTERNAL_ERROR} on=openacl-exception"
