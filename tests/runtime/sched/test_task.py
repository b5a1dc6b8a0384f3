"""Tasks: the callback hot path (``device.launch_entry``) builds the task the constructor builds."""

from __future__ import annotations

import threading

import pytest

import acl
from openacl import trace
from openacl.runtime import device, report
from openacl.runtime.sched.task import Task, TaskKind, TaskState


def _fields(task: Task) -> dict:
    return {name: getattr(task, name) for name in Task.__slots__}


def _noop(_data: object) -> None:
    pass


def _handed_on(*args, **kwargs) -> int:
    pytest.fail(f"the common call was handed on: {args} {kwargs}")


@pytest.mark.parametrize("tracing", [False, True])
def test_the_hot_path_builds_every_slot_as_the_constructor_does(stream, tracing):
    data = object()
    launch = device.launch_entry(_handed_on)
    target = device.resolve(stream)
    report.subscribe(threading.get_ident(), target)
    if tracing:
        trace.start()
    try:
        built = Task(TaskKind.CALLBACK, "callback", None, _noop, data, False)
        assert launch(_noop, data, report.ACL_CALLBACK_NO_BLOCK, stream) == 0
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


def test_the_entry_hands_every_other_call_on_untouched(stream):
    """What the entry does not post goes to the wrapper with exactly the arguments given (none made up for the
    ones left out), and nothing posted."""
    seen = []

    def whole(*args, **kwargs) -> int:
        seen.append((args, kwargs))
        return 7

    launch = device.launch_entry(whole)
    target = device.resolve(stream)
    calls = [
        (),
        (_noop,),
        (_noop, None),
        (_noop, None, report.ACL_CALLBACK_NO_BLOCK),
        (_noop, None, report.ACL_CALLBACK_BLOCK, stream),  # BLOCK: the whole way
        (_noop, None, True, stream),  # not a plain int
        (_noop, None, 0.0, stream),
        (_noop, None, report.ACL_CALLBACK_NO_BLOCK, stream, 5),
        (None, None, report.ACL_CALLBACK_NO_BLOCK, stream),  # not callable
        (_noop, None, report.ACL_CALLBACK_NO_BLOCK, stream),  # not subscribed
        (_noop, None, report.ACL_CALLBACK_NO_BLOCK, -1),
    ]
    for args in calls:
        assert launch(*args) == 7
    assert launch(_noop, None, report.ACL_CALLBACK_NO_BLOCK, stream=stream) == 7
    assert seen == [(args, {}) for args in calls] + [((_noop, None, report.ACL_CALLBACK_NO_BLOCK), {"stream": stream})]
    assert target.subscription is None and not target._in_flight


def test_acl_launch_callback_is_the_entry_with_the_wrappers_name():
    assert acl.rt.launch_callback.__name__ == "launch_callback"
    assert acl.rt.launch_callback.acl_name == "acl.rt.launch_callback"
    assert acl.rt.launch_callback.acl_format == "OOik"
    assert acl.rt.launch_callback.__code__.co_filename == device.__file__


def test_the_entry_hands_a_call_it_cannot_allocate_for_on(stream):
    """Out of memory building the task, nothing posted yet: the call goes to the wrapper, whose answer is
    ACL_ERROR_BAD_ALLOC with one log line."""

    class NoMemory:
        def __new__(cls, *args):
            raise MemoryError

    handed_on = []
    # The entry takes ``Task.__new__`` once, when it is made: made while ``Task`` names a class that cannot be
    # allocated, it keeps that one's (``Task`` itself is left alone: a class's ``__new__`` cannot be put back).
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(device, "Task", NoMemory)
        launch = device.launch_entry(lambda *args: handed_on.append(args) or 200000)
    target = device.resolve(stream)
    report.subscribe(threading.get_ident(), target)
    try:
        assert launch(_noop, None, report.ACL_CALLBACK_NO_BLOCK, stream) == 200000
    finally:
        report.unsubscribe(threading.get_ident(), target)
    assert handed_on == [(_noop, None, report.ACL_CALLBACK_NO_BLOCK, stream)] and not target._in_flight
