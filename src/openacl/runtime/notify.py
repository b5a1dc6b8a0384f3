"""Notifies: one-shot signals between streams, ordered through the scheduler like events.

``record_notify`` sets the notify when its stream reaches the record; ``wait_and_reset_notify`` holds its stream
until the notify is set, then clears it and lets the stream go on. Unlike an event wait, a notify wait does not
look at the records made before it was enqueued: it waits for whichever record comes first, even one enqueued
later, and each record lets one wait through (a record with no wait held leaves the notify set for the next).

A notify passes through a stream's queue as a RECORD or WAIT task whose ``event`` is the notify: it offers the
stream and the wait graph the same methods an ``Event`` does (``pass_record_locked``, ``hold_locked``,
``release_hold_locked``, ``reached_locked``, ``pending_records_locked``), so the scheduler orders both one way.

Invariants: every field changes under the scheduling ``LOCK`` only. ``set`` and ``_held`` are never both
true/non-empty: a record that finds a held wait releases it instead of setting the notify, and a wait that finds
the notify set clears it instead of holding its stream.

Differences from CANN: a wait's timeout is accepted (0..2**32-1 ms) but does not cut the wait short, as with
event waits here (``runtime/timeouts.py``). Each device holds at most 8192 notifies, the Atlas A2/A3 limit.
"""

from __future__ import annotations

import itertools

from openacl import trace
from openacl.errors import AclCode, AclError
from openacl.runtime import checker
from openacl.runtime import device as _device
from openacl.runtime.handles import HandleTable
from openacl.runtime.sched import lock as _lock
from openacl.runtime.sched import tracing
from openacl.runtime.sched.stream import Stream
from openacl.runtime.sched.task import Task, TaskKind, TaskState

MAX_PER_DEVICE = 8192
MAX_TIMEOUT_MS = (1 << 32) - 1

notifies: HandleTable[Notify] = HandleTable("notify")
_notify_ids = itertools.count(0)


class Notify:
    """A signal recorded on one stream and waited for (and cleared) on another."""

    def __init__(self, device_id: int) -> None:
        self.id = next(_notify_ids)
        self.device_id = device_id
        self.handle = 0
        self.gen = 0  # how many records have passed: for traces, and what a task's ``gen`` shows
        self.set = False
        self._pending: list[Task] = []  # RECORD tasks enqueued and not yet passed
        self._held: list[Task] = []  # WAIT tasks holding their streams, oldest first

    def __repr__(self) -> str:
        return f"<Notify {self.id} set={self.set} held={len(self._held)}>"

    # ----- enqueueing (any thread) -----

    def record(self, stream: Stream) -> None:
        task = Task(TaskKind.RECORD, "record_notify")
        task.event = self
        with _lock.locked:
            stream.check_open_locked()
            self._pending.append(task)
            stream.enqueue_locked(task)
        if checker.enabled:
            checker.on_notify_record(self, stream)

    def wait_and_reset(self, stream: Stream, timeout_ms: int) -> None:
        if not 0 <= timeout_ms <= MAX_TIMEOUT_MS:
            raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"timeout {timeout_ms} ms is not in 0..{MAX_TIMEOUT_MS}")
        task = Task(TaskKind.WAIT, "wait_and_reset_notify")
        task.event = self
        with _lock.locked:
            stream.check_open_locked()
            stream.enqueue_locked(task)
        if checker.enabled:
            checker.on_notify_wait(self, stream)

    def reset(self) -> None:
        """Clear the notify now (``notify_batch_reset``): a record already passed no longer lets a wait through."""
        with _lock.locked:
            self.set = False

    # ----- passing (LOCK held, by whichever thread advances the stream) -----

    def pass_record_locked(self, task: Task) -> None:
        """The stream reached a record (or a forced destroy dropped it: nobody may wait for it forever)."""
        if task in self._pending:
            self._pending.remove(task)
        self.gen += 1
        task.gen = self.gen
        if trace.recorder is not None:
            tracing.event_task(task)
        if not self._held:
            self.set = True
            return
        wait_task = self._held.pop(0)
        wait_task.state = TaskState.DONE
        if trace.recorder is not None:
            now = trace.now_ns()
            tracing.event_wait(wait_task, now, now)
        _lock.soon(wait_task.stream.resume_locked, wait_task)

    def hold_locked(self, task: Task) -> bool:
        """A stream reached a wait: True if it must hold (the notify is not set); otherwise the wait clears it."""
        if self.set:
            self.set = False
            return False
        self._held.append(task)
        return True

    def release_hold_locked(self, task: Task) -> None:
        """A forced destroy drops a held wait."""
        if task in self._held:
            self._held.remove(task)

    # ----- views (LOCK held): for the stream's and the wait graph's questions -----

    def reached_locked(self, _gen: int) -> bool:
        """Would a wait reaching the notify now go on at once?"""
        return self.set

    def pending_records_locked(self, _gen: int) -> list[Task]:
        """The records not passed yet, any of which would let a wait through."""
        return list(self._pending)

    def statistics(self) -> dict:
        with _lock.locked:
            return {
                "set": self.set,
                "passed_records": self.gen,
                "pending_records": len(self._pending),
                "holding_streams": len(self._held),
            }


def create(flag: int) -> int:
    """A notify on the current device; ``flag`` is reserved (0)."""
    if flag != 0:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"flag {flag} must be 0")
    device_id = _device.current_device().id
    if sum(1 for n in notifies.values() if n.device_id == device_id) >= MAX_PER_DEVICE:
        raise AclError(AclCode.ACL_ERROR_RT_NO_NOTIFY_RESOURCE, f"device {device_id} has {MAX_PER_DEVICE} notifies")
    notify = Notify(device_id)
    notify.handle = notifies.add(notify)
    return notify.handle


def destroy(handle: int) -> None:
    """Forget the handle; records and waits already queued still pass (the tasks hold the notify)."""
    notifies.remove(handle)


def _on_device(notify: Notify, stream: Stream) -> Stream:
    if stream.device_id != notify.device_id:
        raise AclError(
            AclCode.ACL_ERROR_INVALID_PARAM,
            f"notify of device {notify.device_id} used on a stream of device {stream.device_id}",
        )
    return stream


def record(handle: int, stream_handle: int) -> None:
    notify = notifies.get(handle)
    notify.record(_on_device(notify, _device.resolve(stream_handle)))


def wait_and_reset(handle: int, stream_handle: int, timeout_ms: int) -> None:
    notify = notifies.get(handle)
    notify.wait_and_reset(_on_device(notify, _device.resolve(stream_handle)), timeout_ms)


def notify_id(handle: int) -> int:
    return notifies.get(handle).id


def batch_reset(handles: list[int]) -> None:
    """Clear every notify of ``handles``; all are looked up first, so an unknown one changes none."""
    if not handles:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, "no notify to reset")
    for notify in [notifies.get(h) for h in handles]:
        notify.reset()
