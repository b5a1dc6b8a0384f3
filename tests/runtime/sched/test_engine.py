"""Engines: a task that raises anything fails alone; work after shutdown is refused with a code."""

from __future__ import annotations

import threading

import pytest

import acl
from openacl.errors import AclCode, AclError
from openacl.runtime import device as rt_device
from openacl.runtime.sched.task import work_task

SUCCESS = 0


class Escape(BaseException):
    """Not an Exception: what used to escape the engine worker and leave its stream RUNNING forever."""


@pytest.mark.parametrize("raised", [Escape, KeyboardInterrupt, SystemExit, RuntimeError])
def test_regression_exception_escaping_an_engine_worker_fails_the_task_and_the_stream_goes_on(
    ctx, stream, acl_log, raised
):
    s = rt_device.resolve(stream)
    ran: list[str] = []

    def boom() -> None:
        raise raised("from the task")

    s.enqueue(work_task("boom", boom))
    s.enqueue(work_task("after", lambda: ran.append("after")))
    assert acl.rt.synchronize_stream_with_timeout(stream, 5_000) == AclCode.ACL_ERROR_RT_INTERNAL_ERROR
    assert ran == ["after"]
    assert any("boom failed" in r.getMessage() for r in acl_log.records)
    assert acl.rt.synchronize_stream_with_timeout(stream, 5_000) == SUCCESS  # reported once
    assert s.statistics()["state"] == "idle"


def test_a_scheduler_bug_inside_run_on_engine_leaves_the_stream_runnable(ctx, stream, monkeypatch, acl_log):
    """Even an exception raised by the scheduler's own bookkeeping fails the task rather than the stream."""
    from openacl.runtime.sched import stream as sched_stream

    s = rt_device.resolve(stream)
    real = sched_stream.Stream.advance_locked
    calls = {"n": 0}

    def flaky(self):
        calls["n"] += 1
        if self is s and calls["n"] == 1 and self.state == sched_stream.StreamState.RUNNING:
            raise RuntimeError("scheduler bug")
        return real(self)

    monkeypatch.setattr(sched_stream.Stream, "advance_locked", flaky)
    ran = threading.Event()
    s.enqueue(work_task("work", ran.set))
    monkeypatch.setattr(sched_stream.Stream, "advance_locked", real)
    assert acl.rt.synchronize_stream_with_timeout(stream, 5_000) in (SUCCESS, AclCode.ACL_ERROR_RT_INTERNAL_ERROR)
    assert s.statistics()["state"] in ("idle", "queued")


def test_work_after_the_engine_shut_down_gets_107022(ctx, stream):
    s = rt_device.resolve(stream)
    s.engine.shutdown()
    with pytest.raises(AclError) as info:
        s.enqueue(work_task("late", lambda: None))
    assert info.value.code == AclCode.ACL_ERROR_RT_DEVICE_TASK_ABORT
    host, dev = acl.rt.malloc_host(8)[0], acl.rt.malloc(8, 0)[0]
    assert acl.rt.memcpy_async(dev, 8, host, 8, 1, stream) == AclCode.ACL_ERROR_RT_DEVICE_TASK_ABORT


def test_engine_threads_are_started_outside_the_lock(ctx, stream):
    from openacl.runtime.sched import lock

    seen: list[bool] = []
    real_start = threading.Thread.start

    def start(self):
        if self.name.startswith("openacl-engine"):
            seen.append(lock.LOCK.locked())
        real_start(self)

    threading.Thread.start = start
    try:
        host, dev = acl.rt.malloc_host(8)[0], acl.rt.malloc(8, 0)[0]
        assert acl.rt.memcpy_async(dev, 8, host, 8, 1, stream) == SUCCESS
        assert acl.rt.synchronize_stream(stream) == SUCCESS
    finally:
        threading.Thread.start = real_start
    assert seen and not any(seen)
