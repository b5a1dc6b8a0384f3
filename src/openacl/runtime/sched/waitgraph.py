"""Would a wait inside a callback wait, in the end, for that callback? Then it would never return.

A running callback holds its stream: any callback keeps ``synchronize`` of its stream from returning, and a
BLOCK callback also keeps the stream from passing it, so an event recorded behind it, and any stream that
waits (``stream_wait_event``) for that event, cannot get on until it returns. A callback running on another
thread returns only once the waits that thread began inside it are over, and every wait the runtime makes
names what it waits for (a ``waiting`` target: a stream done through a task, an event reaching a
generation, a running callback returning). ``blocker_locked`` follows all of that (stream -> its running
callbacks -> their threads' waits; stream -> its event waits -> the event's pending records -> their
streams; callback -> its thread's waits) to find out whether a wait needs a callback of the waiting thread
itself; the waiting call then fails with ``ACL_ERROR_API_NOT_SUPPORT`` instead of hanging. So report threads
whose callbacks wait for each other's streams, events or returns do not deadlock: the wait that would close
the circle is refused.

The walk reads only public ``*_locked`` views of streams and events, and the two registries below, all under
``LOCK``; it runs only while the waiting thread is inside a callback. Waits the runtime cannot see through (a
user's own lock or ``threading.Event``) are not followed.
"""

from __future__ import annotations

import threading
from typing import Protocol

from openacl.errors import AclCode, AclError
from openacl.runtime.sched.task import Task


class Target(Protocol):
    """What a wait waits for (the kinds are in ``waiting``): the walk follows it, the refusal names it."""

    def follow(self, walk: Walk, depth: int) -> Task | None: ...

    def describe(self) -> str: ...


_MAX_DEPTH = 256  # deeper chains are not followed (the wait goes ahead)

# Invariant: both registries change only under LOCK. RUNNING_BY_THREAD[t] is the stack of callbacks running on
# thread t, innermost last (pushed when a callback is claimed, popped when it finishes). WAITS_BY_THREAD[t]
# lists what thread t waits for while inside callbacks: ``(depth, targets)``, innermost last, ``depth``
# being how many callbacks were running on t when the wait began.
RUNNING_BY_THREAD: dict[int, list[Task]] = {}
WAITS_BY_THREAD: dict[int, list[tuple[int, list[Target]]]] = {}

_local = threading.local()


def running_stack() -> list[Task]:
    """This thread's running-callback stack, made (and shown to the walk) on first use. Hold ``LOCK``."""
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
        RUNNING_BY_THREAD[threading.get_ident()] = stack
    return stack


def callbacks_running_here() -> list[Task] | tuple[()]:
    """The callbacks running on this thread, innermost last; makes nothing for a thread that never ran one."""
    return getattr(_local, "stack", ())


def blocker_locked(target: Target) -> Task | None:
    """The callback running on this thread that ``target`` needs to return first, or None. Hold ``LOCK``."""
    if not callbacks_running_here():
        return None
    return target.follow(Walk(threading.get_ident()), 0)


def refuse_locked(target: Target) -> None:
    """Raise ``ACL_ERROR_API_NOT_SUPPORT`` if waiting for ``target`` needs a callback this thread is running.
    Hold ``LOCK``; call it in the critical section that attaches the wait, so no other wait slips in between."""
    blocker = blocker_locked(target)
    if blocker is not None and getattr(target, "stream", None) is blocker.stream and hasattr(target, "seq"):
        raise AclError(
            AclCode.ACL_ERROR_API_NOT_SUPPORT,
            f"stream {blocker.stream.id}: waiting for the stream inside one of its own callbacks would deadlock",
        )
    if blocker is not None:
        raise AclError(
            AclCode.ACL_ERROR_API_NOT_SUPPORT,
            f"{target.describe()} cannot happen before the callback this thread is running on stream "
            f"{blocker.stream.id} returns: waiting inside that callback would deadlock",
        )


def reset() -> None:
    """Process reset / forked child: no thread runs a callback or waits."""
    RUNNING_BY_THREAD.clear()
    WAITS_BY_THREAD.clear()
    _local.__dict__.clear()


class Walk:
    """One search from the waiting thread ``me``; ``seen`` cuts circles that do not reach ``me``."""

    def __init__(self, me: int) -> None:
        self.me = me
        self.seen: dict[tuple, Task | None] = {}

    def _visit(self, key: tuple, depth: int) -> tuple[bool, Task | None]:
        if key in self.seen or depth > _MAX_DEPTH:
            return False, self.seen.get(key)
        self.seen[key] = None  # a circle that does not reach this thread does not count
        return True, None

    def stream(self, stream, seq: int, depth: int, *, finished: bool) -> Task | None:
        """Does ``stream`` getting past ``seq`` (``finished``: and every callback up to it returning) need one of
        this thread's callbacks?"""
        fresh, found = self._visit(("stream", id(stream), seq, finished), depth)
        if not fresh:
            return found
        found = None
        for task in stream.callbacks_running_locked(seq, finished=finished):
            found = self.callback(task, depth + 1)
            if found is not None:
                break
        else:
            for task in stream.event_waits_locked(seq):
                found = self.event(task.event, task.gen, depth + 1)
                if found is not None:
                    break
        self.seen[("stream", id(stream), seq, finished)] = found
        return found

    def event(self, event, gen: int, depth: int) -> Task | None:
        """Does ``event`` reaching ``gen`` need one of this thread's callbacks? Only if every record that would
        get it there is stuck behind one (a later record passing on a free stream completes the event too)."""
        if event.reached_locked(gen):
            return None
        fresh, found = self._visit(("event", id(event), gen), depth)
        if not fresh:
            return found
        found = None
        for record in event.pending_records_locked(gen):
            blocker = self.stream(record.stream, record.seq, depth + 1, finished=False)
            if blocker is None:
                found = None
                break  # this record can pass without us
            found = blocker
        self.seen[("event", id(event), gen)] = found
        return found

    def callback(self, task: Task, depth: int) -> Task | None:
        """Does the running callback ``task`` returning need one of this thread's callbacks?

        Ours: yes, that one. Another thread's: it returns only after the waits its thread began inside it (or
        inside callbacks running on top of it) are over."""
        if task.thread == self.me:
            return task
        fresh, found = self._visit(("callback", id(task)), depth)
        if not fresh:
            return found
        found = None
        stack = RUNNING_BY_THREAD.get(task.thread, ())
        index = next((i for i, t in enumerate(stack) if t is task), None)
        if index is not None:
            for level, targets in WAITS_BY_THREAD.get(task.thread, ()):
                if level <= index:
                    continue
                for target in targets:
                    found = target.follow(self, depth + 1)
                    if found is not None:
                        break
                if found is not None:
                    break
        self.seen[("callback", id(task))] = found
        return found
