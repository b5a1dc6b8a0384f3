"""Waiting: the waiter a thread blocks on, and the typed targets every runtime wait names.

A target says what a wait waits for, so that the wait graph can follow it:
- ``StreamDone(stream, seq)``: every task of ``stream`` up to ``seq`` has finished (NO_BLOCK callbacks too);
- ``EventReached(event, gen)``: ``event``'s records up to generation ``gen`` have been passed;
- ``TaskDone(task)``: a running callback has returned.

A plain waiter blocks on a lock. A report thread's waiter blocks on that thread's report queue instead and
keeps running the callbacks it is subscribed for while it waits, so a report thread that synchronizes a stream
it serves never waits for itself.
"""

from __future__ import annotations

import _thread
import threading
import time
from collections.abc import Callable
from queue import Empty, SimpleQueue
from typing import Protocol

from openacl.errors import AclCode, AclError
from openacl.runtime.sched import lock as _lock
from openacl.runtime.sched import waitgraph
from openacl.runtime.sched.task import FINISHED, Task

# How often (seconds) a waiting thread runs the idle hooks, without LOCK: report.py reaps report threads that
# have exited there, so work that only they could run does not hang a waiter forever.
SLICE = 0.2
IDLE_HOOKS: list[Callable[[], None]] = []


class Wake:
    """Put on a report queue to wake a thread blocked in ``process_report`` without giving it work."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class ReportQueue(Protocol):
    """What a waiting report thread needs of its report hub entry (``report.ReportThread``)."""

    queue: SimpleQueue

    def serve(self, item: object) -> None: ...


# Report threads by thread ident, kept by report.py. A waiting report thread keeps serving its reports.
REPORT_THREADS: dict[int, ReportQueue] = {}


class Waiter:
    """One thread waiting, released by whoever makes one of its targets true (under ``LOCK``)."""

    __slots__ = ("_lock", "done", "queue")

    def __init__(self, queue: SimpleQueue | None = None) -> None:
        self.done = False
        self.queue = queue
        self._lock = None
        if queue is None:
            self._lock = _thread.allocate_lock()
            self._lock.acquire()

    def release(self) -> None:
        """Mark done and wake the waiting thread (no-op once done, e.g. after a timeout). Hold ``LOCK``."""
        if self.done:
            return
        self.done = True
        if self.queue is not None:
            self.queue.put(Wake("waiter released"))
        else:
            self._lock.release()

    def block(self, timeout: float) -> bool:
        """Plain waiters only: wait up to ``timeout`` seconds. True once released."""
        return self._lock.acquire(timeout=timeout)


class Target(waitgraph.Target, Protocol):
    """A wait target as waiting uses it: whether it holds, and who to tell once it does."""

    def done_locked(self) -> bool: ...

    def attach_locked(self, waiter: Waiter) -> None: ...


class StreamDone:
    """Every task of ``stream`` up to ``seq`` has finished."""

    __slots__ = ("seq", "stream")

    def __init__(self, stream, seq: int) -> None:
        self.stream, self.seq = stream, seq

    def done_locked(self) -> bool:
        return self.stream.done_through_locked() >= self.seq

    def attach_locked(self, waiter: Waiter) -> None:
        self.stream.add_waiter_locked(self.seq, waiter)

    def follow(self, walk: waitgraph.Walk, depth: int) -> Task | None:
        return walk.stream(self.stream, self.seq, depth, finished=True)

    def describe(self) -> str:
        return f"stream {self.stream.id} finishing its work"


class EventReached:
    """``event`` has completed generation ``gen``."""

    __slots__ = ("event", "gen")

    def __init__(self, event, gen: int) -> None:
        self.event, self.gen = event, gen

    def done_locked(self) -> bool:
        return self.event.reached_locked(self.gen)

    def attach_locked(self, waiter: Waiter) -> None:
        self.event.add_waiter_locked(self.gen, waiter)

    def follow(self, walk: waitgraph.Walk, depth: int) -> Task | None:
        return walk.event(self.event, self.gen, depth)

    def describe(self) -> str:
        return f"event {self.event.id} completing"


class TaskDone:
    """The running callback ``task`` has returned."""

    __slots__ = ("task",)

    def __init__(self, task: Task) -> None:
        self.task = task

    def done_locked(self) -> bool:
        return self.task.state in FINISHED

    def attach_locked(self, waiter: Waiter) -> None:
        task = self.task
        task.waiters = [*(task.waiters or ()), waiter]

    def follow(self, walk: waitgraph.Walk, depth: int) -> Task | None:
        return None if self.done_locked() else walk.callback(self.task, depth)

    def describe(self) -> str:
        return f"the callback running on stream {self.task.stream.id} returning"


def timeout_from_ms(timeout_ms: int) -> float | None:
    """pyACL timeouts: -1 waits forever, a positive value is milliseconds; anything else is invalid."""
    if timeout_ms == -1:
        return None
    if timeout_ms <= 0:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"timeout {timeout_ms} ms: use -1 or a positive value")
    return timeout_ms / 1000


def wait(prepare: Callable[[], list[Target]], timeout: float | None) -> bool:
    """Block until every target holds; False when ``timeout`` (seconds; None = forever) ran out first.

    ``prepare()`` runs with ``LOCK`` held and returns the targets; it may check and change state in the same
    critical section (it raises to refuse). A wait that would need a callback this thread is running is
    refused there too (``ACL_ERROR_API_NOT_SUPPORT``), and while it lasts the wait graph sees it.

    A timeout bounds the whole wait, taking ``LOCK`` included: whatever holds it, the wait returns in time.
    """
    registered: tuple[int, list[Target]] | None = None
    deadline = None if timeout is None else time.monotonic() + timeout
    if not _lock.acquire(timeout):
        return False
    try:
        pending = _pending_locked(prepare())
        if not pending:
            return True
        me = threading.get_ident()
        reporter = REPORT_THREADS.get(me)
        depth = len(waitgraph.callbacks_running_here())
        if depth:
            for target in pending:
                waitgraph.refuse_locked(target)
            registered = (depth, pending)
            waitgraph.WAITS_BY_THREAD.setdefault(me, []).append(registered)
        waiter = _attach_locked(pending, reporter)
    finally:
        _lock.release()
    try:
        while True:
            if not _block(waiter, reporter, deadline):
                return False
            if len(pending) == 1:  # a target releases its waiters only once it holds
                return True
            if not _lock.acquire(_remaining(deadline)):
                return False
            try:
                pending = _pending_locked(pending)
                if not pending:
                    return True
                waiter = _attach_locked(pending, reporter)
            finally:
                _lock.release()
    finally:
        if registered is not None:
            with _lock.locked:
                waits = waitgraph.WAITS_BY_THREAD.get(me)
                if waits is not None:
                    waits.remove(registered)
                    if not waits:
                        del waitgraph.WAITS_BY_THREAD[me]


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.monotonic()


def release_reached_locked(waiters: list[tuple[int, Waiter]], reached: int) -> list[tuple[int, Waiter]]:
    """Release the waiters whose target (a sequence number, a generation) is at most ``reached``; return the
    ones still waiting (those that timed out meanwhile are forgotten). Hold ``LOCK``."""
    still = []
    for target, waiter in waiters:
        if target <= reached:
            waiter.release()
        elif not waiter.done:
            still.append((target, waiter))
    return still


def _pending_locked(targets: list[Target]) -> list[Target]:
    """The targets that do not hold yet (a plain loop: a comprehension is a function call on 3.11)."""
    pending = []
    for target in targets:
        if not target.done_locked():
            pending.append(target)
    return pending


def _attach_locked(pending: list[Target], reporter: ReportQueue | None) -> Waiter:
    waiter = Waiter(reporter.queue if reporter is not None else None)
    for target in pending:
        target.attach_locked(waiter)
    return waiter


def _block(waiter: Waiter, reporter: ReportQueue | None, deadline: float | None) -> bool:
    """Wait for ``waiter`` to be released; False at ``deadline``. A report thread serves its reports meanwhile."""
    while True:
        if waiter.done:
            return True
        remaining = SLICE if deadline is None else min(SLICE, deadline - time.monotonic())
        if remaining <= 0:
            if not _lock.acquire(SLICE):  # LOCK is wedged: give up all the same (a late release does no harm)
                waiter.done = True
                return False
            try:
                if waiter.done:
                    return True
                waiter.done = True  # stop whoever would release it from touching a lock nobody waits on
                return False
            finally:
                _lock.release()
        if reporter is not None:
            try:
                item = reporter.queue.get(timeout=remaining)
            except Empty:
                item = None
            if item is not None and not isinstance(item, Wake):
                reporter.serve(item)
        elif waiter.block(remaining):
            return True
        if not waiter.done:
            for hook in list(IDLE_HOOKS):
                hook()
