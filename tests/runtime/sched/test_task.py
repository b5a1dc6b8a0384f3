"""Tasks: the callback hot path (``device.post_no_block``) builds the task the constructor builds."""

from __future__ import annotations

import threading

import pytest

from openacl import trace
from openacl.runtime import device, report
from openacl.runtime.sched.task import Task, TaskKind, TaskState


def _fields(task: Task) -> dict:
    return {name: getattr(task, name) for name in Task.__slots__}


def _noop(_data: object) -> None:
    pass


@pytest.mark.parametrize("tracing", [False, True])
def test_the_hot_path_builds_every_slot_as_the_constructor_does(stream, tracing):
    data = object()
    target = device.resolve(stream)
    report.subscribe(threading.get_ident(), target)
    if tracing:
        trace.start()
    try:
        built = Task(TaskKind.CALLBACK, "callback", None, _noop, data, False)
        assert device.post_no_block(_noop, data, report.ACL_CALLBACK_NO_BLOCK, stream)
        posted = target.subscription.queue.get_nowait()
        target.subscription.queue.put(posted)  # back in its place: the callback runs below
        fields, expected = _fields(posted), _fields(built)
        assert (fields.pop("queued_ns") > 0) == (expected.pop("queued_ns") > 0) == tracing
        assert (fields.pop("reached_ns") > 0) == tracing and expected.pop("reached_ns") == 0
        # what posting sets, as Stream.enqueue sets it
        assert (fields.pop("state"), expected.pop("state")) == (TaskState.POSTED, TaskState.PENDING)
        assert (fields.pop("stream"), expected.pop("stream")) == (target, None)
        assert fields.pop("seq") >= expected.pop("seq") == 0
        assert fields == expected
        assert posted.fn is _noop and posted.user_data is data and posted.blocking is False
        report.process_report(1000)
    finally:
        if tracing:
            trace.stop()
        report.unsubscribe(threading.get_ident(), target)
