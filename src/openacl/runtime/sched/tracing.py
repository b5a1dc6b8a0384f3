"""Spans for the timeline (``openacl.trace``): what the scheduler did, one function per kind of span.

Callers check ``trace.recorder is not None`` first, so tracing costs one attribute read when it is off.
Recording only appends to the recorder (no user code), so these may be called with ``LOCK`` held.
"""

from __future__ import annotations

import threading

from openacl import trace
from openacl.runtime.sched.task import Task


def event_task(task: Task) -> None:
    """A record_event / reset_event passed now: a zero-length span on the thread passing it."""
    rec = trace.recorder
    if rec is None:
        return
    now = trace.now_ns()
    event = task.event
    rec.add(
        task.name,
        "event",
        task.queued_ns or now,
        now,
        now,
        stream=task.stream.id,
        event=event.id,
        gen=task.gen,
        handle=f"{event.handle:#x}",
    )


def event_wait(task: Task, start_ns: int, end_ns: int, **extra: object) -> None:
    """A stream_wait_event held its stream from ``start_ns`` to ``end_ns``: a span on the stream's track."""
    rec = trace.recorder
    if rec is None:
        return
    stream = task.stream
    start_ns = task.reached_ns or start_ns
    rec.add_on_track(
        ("stream", stream.device_id, stream.id),
        f"stream {stream.id} (device {stream.device_id})",
        task.name,
        "wait",
        task.queued_ns or start_ns,
        start_ns,
        end_ns,
        stream=stream.id,
        event=task.event.id,
        gen=task.gen,
        released_by_tid=threading.get_native_id(),
        **extra,
    )


def work(task: Task, start_ns: int) -> None:
    """A WORK task ran on this engine thread from ``start_ns`` until now."""
    rec = trace.recorder
    if rec is None:
        return
    stream = task.stream
    rec.add(
        task.name,
        "task",
        task.queued_ns or start_ns,
        start_ns,
        trace.now_ns(),
        stream=stream.id,
        device=stream.device_id,
    )


def callback(task: Task, fn: object, start_ns: int) -> None:
    """Callback ``fn`` (``task`` no longer holds it) ran on this report thread from ``start_ns`` until now."""
    rec = trace.recorder
    if rec is None:
        return
    posted = task.reached_ns or start_ns
    rec.add(
        getattr(fn, "__qualname__", "callback"),
        "callback",
        posted,
        start_ns,
        trace.now_ns(),
        stream=task.stream.id,
        flag="BLOCK" if task.blocking else "NO_BLOCK",
        report_thread=threading.get_ident(),
        queued_ns=task.queued_ns or posted,
        posted_ns=posted,
    )


def synchronize(name: str, begin_ns: int, **args: object) -> None:
    """A synchronize call waited from ``begin_ns`` until now."""
    rec = trace.recorder
    if rec is not None:
        rec.add(name, "sync", begin_ns, begin_ns, trace.now_ns(), **args)
