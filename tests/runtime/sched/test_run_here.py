"""``Stream.run_here_if_idle``: a WORK task run on the calling thread keeps every stream guarantee."""

from __future__ import annotations

import threading

import pytest

import acl
from openacl.errors import AclError
from openacl.runtime import device as stream_mod
from openacl.runtime.sched.stream import ACL_STREAM_STATUS_COMPLETE
from openacl.runtime.sched.task import work_task


def test_idle_stream_runs_the_task_here(stream):
    s = stream_mod.resolve(stream)
    ran = []
    assert s.run_here_if_idle(work_task("here", lambda: ran.append(threading.current_thread()))) is True
    assert ran == [threading.current_thread()]
    assert s.query() == ACL_STREAM_STATUS_COMPLETE


def test_busy_stream_queues_the_task_in_order(stream):
    s = stream_mod.resolve(stream)
    gate, order = threading.Event(), []
    s.enqueue(work_task("gate", lambda: (gate.wait(10), order.append("gate"))))
    assert s.run_here_if_idle(work_task("second", lambda: order.append("second"))) is False
    assert order == []
    gate.set()
    s.synchronize()
    assert order == ["gate", "second"]


def test_work_enqueued_while_it_runs_here_waits_behind_it(stream):
    s = stream_mod.resolve(stream)
    started, release, order = threading.Event(), threading.Event(), []

    def slow() -> None:
        started.set()
        release.wait(10)
        order.append("here")

    runner = threading.Thread(target=lambda: s.run_here_if_idle(work_task("here", slow)))
    runner.start()
    assert started.wait(10)
    s.enqueue(work_task("after", lambda: order.append("after")))
    done = threading.Event()
    waiter = threading.Thread(target=lambda: (s.synchronize(), done.set()))
    waiter.start()
    assert not done.wait(0.05)  # synchronize waits for the task running on the other thread
    release.set()
    runner.join(10)
    waiter.join(10)
    assert done.is_set() and order == ["here", "after"]


def test_a_failure_here_is_the_streams(stream):
    s = stream_mod.resolve(stream)

    def fail() -> None:
        raise RuntimeError("boom")

    assert s.run_here_if_idle(work_task("fails", fail)) is True
    with pytest.raises(AclError):
        s.synchronize()
    assert acl.rt.synchronize_stream(stream) == 0  # reported once
