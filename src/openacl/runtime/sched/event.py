"""Events: markers recorded on a stream, complete when the stream passes them.

Generations: ``record`` numbers each record; ``completed_gen`` is the newest record passed. A
``stream_wait_event`` waits for the newest record made when it was enqueued (none: no wait).

Invariant: a record's generation is assigned in the same critical section as its enqueue, after the stream has
been checked to accept it, so a refused record leaves the event as it was (no generation that no record will
ever complete). Each event keeps its pending records (enqueued, not yet passed), which is all the wait graph
needs to know about it.
"""

from __future__ import annotations

import itertools
from typing import Protocol

from openacl import trace
from openacl.errors import AclCode, AclError
from openacl.runtime import checker
from openacl.runtime.sched import lock as _lock
from openacl.runtime.sched import tracing
from openacl.runtime.sched.task import Task, TaskKind, TaskState
from openacl.runtime.sched.waiting import EventReached, Waiter, release_reached_locked, wait


class Stream(Protocol):
    """What an event needs of the stream it is recorded on (``sched.stream.Stream``, which imports this module)."""

    def check_open_locked(self) -> None: ...

    def enqueue_locked(self, task: Task) -> None: ...


ACL_EVENT_STATUS_COMPLETE, ACL_EVENT_STATUS_NOT_READY = 0, 1
ACL_EVENT_RECORDED_STATUS_NOT_READY, ACL_EVENT_RECORDED_STATUS_COMPLETE = 0, 1
EVENT_FLAGS = 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x20  # SYNC, CAPTURE_STREAM_PROGRESS, EXTERNAL, TIME_LINE, ...

_event_ids = itertools.count(1)


class Event:
    """A marker recorded on streams of one device."""

    def __init__(self, device_id: int, flags: int) -> None:
        self.id = next(_event_ids)  # small and unique, for logs and traces
        self.device_id = device_id
        self.flags = flags
        self.handle = 0
        self.recorded_gen = 0
        self.completed_gen = 0
        self.timestamp_ns: int | None = None
        self.is_reset = False
        self._pending: list[Task] = []  # RECORD tasks enqueued and not yet passed
        self._held: list[Task] = []  # WAIT tasks holding their streams until this event gets on
        self._waiters: list[tuple[int, Waiter]] = []

    def __repr__(self) -> str:
        return f"<Event {self.id} recorded={self.recorded_gen} completed={self.completed_gen}>"

    # ----- enqueueing (any thread) -----

    def record(self, stream: Stream) -> None:
        task = Task(TaskKind.RECORD, "record_event")
        task.event = self
        with _lock.locked:
            stream.check_open_locked()
            self.recorded_gen += 1
            task.gen = self.recorded_gen
            self._pending.append(task)
            stream.enqueue_locked(task)
        if checker.enabled:
            checker.on_record(self, stream)

    def reset(self, stream: Stream) -> None:
        task = Task(TaskKind.RESET, "reset_event")
        task.event = self
        with _lock.locked:
            stream.check_open_locked()
            stream.enqueue_locked(task)

    def wait_on(self, stream: Stream) -> None:
        """``stream`` waits for the newest record made so far (no wait if never recorded)."""
        task = Task(TaskKind.WAIT, "stream_wait_event")
        task.event = self
        with _lock.locked:
            stream.check_open_locked()
            task.gen = self.recorded_gen
            stream.enqueue_locked(task)
        if checker.enabled:
            checker.on_stream_wait(stream, self)

    # ----- passing (LOCK held, by whichever thread advances the stream) -----

    def pass_record_locked(self, task: Task) -> None:
        """The stream reached a record (or a forced destroy dropped it: nobody may wait for it forever)."""
        if trace.recorder is not None:
            tracing.event_task(task)
        if task in self._pending:
            self._pending.remove(task)
        if task.gen > self.completed_gen:
            self.completed_gen = task.gen
        self.timestamp_ns = trace.now_ns()
        self.is_reset = False
        completed = self.completed_gen
        if self._held:
            still = []
            for wait_task in self._held:
                if wait_task.gen <= completed:
                    wait_task.state = TaskState.DONE
                    if trace.recorder is not None:
                        tracing.event_wait(wait_task, self.timestamp_ns, self.timestamp_ns)
                    # Not a direct call: the resumed stream may pass a record of another event, which resumes
                    # another stream ... a chain of thousands would recurse. The lock holder runs these in a loop.
                    _lock.soon(wait_task.stream.resume_locked, wait_task)
                else:
                    still.append(wait_task)
            self._held = still
        if self._waiters:
            self._waiters = release_reached_locked(self._waiters, completed)

    def pass_reset_locked(self, task: Task) -> None:
        if trace.recorder is not None:
            tracing.event_task(task)
        self.is_reset = True
        self.timestamp_ns = None

    def hold_locked(self, task: Task) -> bool:
        """A stream reached ``stream_wait_event`` ``task``: True if it must wait (it is then held)."""
        if self.completed_gen >= task.gen:
            return False
        self._held.append(task)
        return True

    def release_hold_locked(self, task: Task) -> None:
        """A forced destroy drops a held wait."""
        if task in self._held:
            self._held.remove(task)

    # ----- views (LOCK held): for the wait graph and the waiting targets -----

    def reached_locked(self, gen: int) -> bool:
        return self.completed_gen >= gen

    def pending_records_locked(self, gen: int) -> list[Task]:
        """The records not passed yet that would bring the event to ``gen``."""
        return [task for task in self._pending if task.gen >= gen]

    def add_waiter_locked(self, gen: int, waiter: Waiter) -> None:
        self._waiters.append((gen, waiter))

    # ----- waiting and queries (any thread) -----

    def synchronize(self, timeout: float | None = None) -> None:
        """Wait for the newest record made so far; 507047 on timeout."""
        begin = trace.now_ns() if trace.recorder is not None else 0
        targets: list[EventReached] = []

        def prepare() -> list[EventReached]:
            targets.append(EventReached(self, self.recorded_gen))
            return targets

        done = wait(prepare, timeout)
        if trace.recorder is not None:
            tracing.synchronize("synchronize_event", begin, event=self.id, gen=targets[0].gen, timed_out=not done)
        if not done:
            raise AclError(AclCode.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, f"event not complete after {timeout * 1000:g} ms")
        if checker.enabled:
            checker.on_event_reached(self)

    def query(self) -> int:
        with _lock.locked:
            done = self.completed_gen >= self.recorded_gen
        if done and checker.enabled:
            checker.on_event_reached(self)
        return ACL_EVENT_STATUS_COMPLETE if done else ACL_EVENT_STATUS_NOT_READY

    def query_status(self) -> int:
        with _lock.locked:
            done = self.recorded_gen > 0 and self.completed_gen >= self.recorded_gen and not self.is_reset
        if done and checker.enabled:
            checker.on_event_reached(self)
        return ACL_EVENT_RECORDED_STATUS_COMPLETE if done else ACL_EVENT_RECORDED_STATUS_NOT_READY

    def statistics(self) -> dict:
        with _lock.locked:
            return {
                "recorded_gen": self.recorded_gen,
                "completed_gen": self.completed_gen,
                "pending_records": len(self._pending),
                "holding_streams": len(self._held),
            }


def elapsed_ms(start: Event, end: Event) -> float:
    with _lock.locked:
        for name, event in (("start", start), ("end", end)):
            if event.timestamp_ns is None or event.completed_gen < event.recorded_gen:
                raise AclError(AclCode.ACL_ERROR_RT_EVENT_NOT_COMPLETE, f"{name} event has no completed record")
        return (end.timestamp_ns - start.timestamp_ns) / 1e6
