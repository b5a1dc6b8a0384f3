"""Tasks: the hot path's callback factory builds what the constructor builds."""

from __future__ import annotations

import pytest

from openacl import trace
from openacl.runtime.sched.task import Task, TaskKind, callback_task


def _fields(task: Task) -> dict:
    return {name: getattr(task, name) for name in Task.__slots__}


@pytest.mark.parametrize("tracing", [False, True])
def test_callback_task_sets_every_slot_as_the_constructor_does(tracing):
    data = object()
    if tracing:
        trace.start()
    try:
        built = Task(TaskKind.CALLBACK, "callback", None, print, data, False)
        made = callback_task(print, data)
    finally:
        if tracing:
            trace.stop()
    fields, expected = _fields(made), _fields(built)
    assert (fields.pop("queued_ns") > 0) == (expected.pop("queued_ns") > 0) == tracing
    assert fields == expected
    assert made.fn is print and made.user_data is data and made.blocking is False
