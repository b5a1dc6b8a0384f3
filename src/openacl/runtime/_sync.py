"""The runtime's one scheduling lock and the waiter that user threads block on.

All scheduling state (stream queues, task states, event generations, subscriptions) is guarded by ``LOCK``.
Under the GIL a single lock costs little and keeps every state change easy to reason about.

Invariant: no user code (callbacks, thread functions) and no blocking wait ever runs while ``LOCK`` is held.
"""

from __future__ import annotations

import _thread
import threading
import time
from queue import Empty, SimpleQueue

from openacl.errors import AclCode, AclError

LOCK = threading.Lock()


def wait_for_lock() -> None:
    """LOCK was busy: take it, yielding the GIL between tries. For the callback hot paths, which do
    ``if not LOCK.acquire(False): wait_for_lock()`` instead of ``with LOCK``.

    A blocking ``acquire`` gets LOCK the moment it is released, but then still waits for the GIL while
    holding it; the thread that has the GIL blocks on LOCK at its next callback and hands the GIL back, and
    so on, callback after callback: a lock convoy, two thread switches per callback (NO_BLOCK callbacks ran
    at half speed). Trying without blocking never holds LOCK while waiting for the GIL. LOCK is never held
    across a blocking wait, so the holder releases it as soon as it runs again; should it not (a log line
    written to a stalled pipe under LOCK), the tries stop after a while and the thread blocks.
    """
    for _ in range(_LOCK_TRIES):
        time.sleep(0)  # let the holder have the GIL
        if LOCK.acquire(False):
            return
    LOCK.acquire()


_LOCK_TRIES = 64


class Wake:
    """Put on a report queue to wake a thread blocked in ``process_report`` without giving it work."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class Waiter:
    """One thread waiting for one condition, released by whoever makes the condition true.

    A plain waiter blocks on a lock. A waiter made by a report thread instead blocks on that thread's report
    queue, so that while it waits it can keep running the callbacks it is subscribed for (otherwise a report
    thread that synchronizes a stream it serves would wait for itself).
    """

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
        """Plain waiters only: wait up to ``timeout`` seconds (negative: forever). True once released."""
        return self._lock.acquire(timeout=timeout)


# Report threads by thread ident, kept by report.py: objects with ``queue`` (their SimpleQueue) and
# ``serve(item)``, which runs one queued report. A waiting report thread keeps serving its reports.
REPORT_THREADS: dict[int, object] = {}

# Called (without LOCK) every ``SLICE`` seconds while a thread waits: report.py reaps report threads that
# have exited, so work that only they could run does not hang a waiter forever.
IDLE_HOOKS: list = []
SLICE = 0.2

# Callbacks running on each thread, innermost last; a wait that needs one of them to finish would deadlock.
running = threading.local()

# The wait graph (``_waitgraph``) looks across threads: the running-callback list of every thread that has
# run one (pushed and popped by that thread), and, for threads inside callbacks, what they are waiting for:
# ``(depth, (stream, seq, event, gen))`` innermost last, ``depth`` being how many callbacks were running when
# the wait began. Waits are added and removed under ``LOCK``.
RUNNING_BY_THREAD: dict[int, list] = {}
WAITS_BY_THREAD: dict[int, list] = {}


def running_callbacks() -> list:
    """This thread's running-callback stack, made (and shown to the wait graph) on first use: for runners."""
    tasks = getattr(running, "tasks", None)
    if tasks is None:
        tasks = running.tasks = []
        RUNNING_BY_THREAD[threading.get_ident()] = tasks
    return tasks


def callbacks_running_here() -> list | tuple:
    """The callbacks running on this thread, innermost last; makes nothing for a thread that never ran one."""
    return getattr(running, "tasks", ())


def timeout_from_ms(timeout_ms: int) -> float | None:
    """pyACL timeouts: -1 waits forever, a positive value is milliseconds; anything else is invalid."""
    if timeout_ms == -1:
        return None
    if timeout_ms <= 0:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"timeout {timeout_ms} ms: use -1 or a positive value")
    return timeout_ms / 1000


def wait(attach, timeout: float | None, target: tuple | None = None) -> bool:
    """Block until a condition holds; False when ``timeout`` (seconds; None = forever) ran out first.

    ``attach(waiter)`` is called with ``LOCK`` held: it returns True if the condition already holds, else
    it arranges for ``waiter.release()`` to be called (under ``LOCK``) once it does. ``target``
    (``(stream, seq, event, gen)``) says what is waited for, so that the wait graph sees this wait while it
    lasts if this thread is inside a callback.
    """
    me = threading.get_ident()
    reporter = REPORT_THREADS.get(me)
    waiter = Waiter(reporter.queue if reporter is not None else None)
    waits = None
    with LOCK:
        if attach(waiter):
            return True
        depth = len(callbacks_running_here())
        if target is not None and depth:
            waits = WAITS_BY_THREAD.setdefault(me, [])
            waits.append((depth, target))
    try:
        return _block(waiter, reporter, timeout)
    finally:
        if waits is not None:
            with LOCK:
                waits.pop()
                if not waits:
                    del WAITS_BY_THREAD[me]


def _block(waiter: Waiter, reporter, timeout: float | None) -> bool:
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        if waiter.done:
            return True
        remaining = SLICE if deadline is None else min(SLICE, deadline - time.monotonic())
        if remaining <= 0:
            with LOCK:
                if waiter.done:
                    return True
                waiter.done = True  # stop whoever would release it from touching a lock nobody waits on
                return False
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
