"""One entry of a stream's queue: a task, its kind and where it is in its life."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from openacl import trace
from openacl.runtime.sched import lock as _lock


class Waker(Protocol):
    """What a task wakes when it finishes (``waiting.Waiter``; named here so that task imports nothing above it)."""

    def release(self) -> None: ...


class TaskKind:
    """What a task does.

    This class and ``TaskState`` hold plain strings, not ``enum.Enum`` members: an Enum member lookup costs
    about 70 ns on Python 3.11, and they are read several times per callback.
    """

    WORK = "work"  # runs on an engine thread: copies, model executions
    CALLBACK = "callback"
    RECORD = "record_event"
    RESET = "reset_event"
    WAIT = "wait_event"


class TaskState:
    """Where a task is in its life (plain strings, see ``TaskKind``)."""

    PENDING = "pending"  # in its stream's queue
    POSTED = "posted"  # a callback handed to its report thread, not yet started
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"  # WORK whose function raised; the stream's next synchronize reports it
    DROPPED = "dropped"  # will never run (unsubscribed, stream destroyed by force, fork, shutdown)


FINISHED = frozenset((TaskState.DONE, TaskState.FAILED, TaskState.DROPPED))


class Task:
    """One entry of a stream's queue. Its fields change only under ``LOCK``.

    Invariant: only WORK tasks (``work``) and CALLBACK tasks (``fn``, ``user_data``) carry the user's objects,
    and a finished task carries none (``finish_locked``; ``Stream.callback_finished_locked``): a task can then
    be dropped anywhere, under ``LOCK`` too, without running a finalizer there.
    """

    __slots__ = (
        "blocking",
        "event",
        "fn",
        "gen",
        "kind",
        "name",
        "queued_ns",
        "reached_ns",
        "seq",
        "site",
        "state",
        "stream",
        "thread",
        "user_data",
        "waiters",
        "work",
    )

    def __init__(
        self,
        kind: str,
        name: str,
        work: Callable[[], None] | None = None,
        fn: Callable[[object], object] | None = None,
        user_data: object = None,
        blocking: bool = False,
    ) -> None:
        self.kind = kind
        self.name = name
        self.state = TaskState.PENDING
        self.stream: Any = None  # the sched.stream.Stream it was enqueued on
        self.seq = 0  # the stream's sequence number, given by the enqueue
        self.work = work
        self.fn = fn
        self.user_data = user_data
        self.blocking = blocking
        self.event: Any = None  # RECORD / RESET / WAIT: the sched.event.Event
        self.gen = 0  # RECORD: the generation it completes; WAIT: the one it waits for
        self.thread = 0  # CALLBACK: the thread running it, while it runs; WORK: the thread that submitted it
        self.waiters: list[Waker] | None = None
        self.queued_ns = trace.now_ns() if trace.recorder is not None else 0
        self.reached_ns = 0
        self.site: tuple | None = None  # CALLBACK under openacl check: where it was launched (``checker.raw_site``)

    def __repr__(self) -> str:
        where = f" stream={self.stream.id}" if self.stream is not None else ""
        return f"<Task {self.name} #{self.seq}{where} {self.state}>"

    def finish_locked(self, state: str) -> None:
        """The task is over (``DONE``, ``FAILED`` or ``DROPPED``): wake whoever waits for it, and let go of its
        payload after ``LOCK`` is released (its last reference may run a finalizer: user code)."""
        self.state = state
        work, fn, user_data = self.work, self.fn, self.user_data
        if work is not None or fn is not None or user_data is not None:
            self.work = self.fn = self.user_data = None
            _lock.bury(work, fn, user_data)
        waiters = self.waiters
        if waiters:
            self.waiters = None
            for waiter in waiters:
                waiter.release()


def work_task(name: str, work: Callable[[], None]) -> Task:
    """A task that runs ``work()`` on an engine thread when its stream reaches it; ``thread`` is the submitting
    thread (what an exception-info record names)."""
    task = Task(TaskKind.WORK, name, work)
    task.thread = threading.get_ident()
    return task
