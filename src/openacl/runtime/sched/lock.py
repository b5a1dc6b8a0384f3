"""The scheduling lock, and what its holder does on the way out.

All scheduling state (stream queues, task states, event generations, subscriptions, per-thread waits) is
guarded by ``LOCK``. Under the GIL one lock costs little and keeps every state change easy to reason about.

Code that runs with ``LOCK`` held (functions named ``*_locked``) never calls out of the runtime. What it would
call out to (a log record, which runs the user's logging handlers; a thread start; a wake-up of a waiting
thread is fine, it only releases a primitive lock) it hands to ``defer``; work that would otherwise recurse
(an event completing resumes a stream, whose next task records an event, which resumes another stream ...)
it hands to ``soon``. ``release()`` runs the ``soon`` list, still under ``LOCK``, until it is empty (one loop,
however long the chain), then releases ``LOCK``, then runs the deferred actions.

Invariant: no user code (callbacks, thread functions, logging handlers, finalizers), no thread start and no
blocking wait runs while ``LOCK`` is held. ``tests/runtime/sched/test_lock.py`` holds the rule to account.

Finalizers are user code too: the ``__del__`` of an object whose last reference a locked section lets go runs
right there, on the holder's thread (acllite frees memory in ``__del__``; a GE-PY output gives its block back
to the user's allocator). So a locked section never releases the last reference to a task's work, a callback,
its ``user_data`` or anything they hold: it hands them to ``bury``, and ``release()`` drops them after
``LOCK`` is let go (``Task.finish_locked`` buries every finished task's payload, which makes the rule
structural: a finished task holds nothing of the user's, wherever it is dropped later).

The one finalizer the runtime cannot move out: the cyclic garbage collector's, which runs on whichever thread
allocates when a collection is due, inside a locked section too. A runtime call from such a finalizer, on the
thread that holds ``LOCK``, would wait for itself: it gets ``ACL_ERROR_API_NOT_SUPPORT`` instead (``acquire``).
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from openacl import atfork
from openacl.errors import AclCode, AclError
from openacl.log import get_logger

log = get_logger("rt")

LOCK = atfork.lock()

# Both lists belong to whoever holds LOCK; only the holder appends to or drains them. The deferred list is also
# the graveyard: an entry's arguments are references that must outlive LOCK's hold (``bury``).
_soon: deque[tuple[Callable[..., Any], tuple]] = deque()
_deferred: list[tuple[Callable[..., Any], tuple]] = []

_LOCK_TRIES = 64
# How long a runtime call from a garbage collector's finalizer waits for LOCK before it concludes that its own
# thread holds it (a holder lets go within microseconds: it never waits or calls out while it holds LOCK).
_COLLECTOR_PATIENCE = 2.0

# The same two lists, for the callback hot paths, which release inline: ``if SOON or DEFERRED: release()``
# ``else: LOCK.release()`` (a Python call costs as much as the rest of a short critical section).
SOON, DEFERRED = _soon, _deferred


def acquire(timeout: float | None = None) -> bool:
    """Take ``LOCK`` without a lock convoy; False if ``timeout`` seconds (None: no limit) ran out first.

    A blocking ``acquire`` gets LOCK the moment it is released, but then still waits for the GIL while
    holding it; the thread that has the GIL blocks on LOCK at its next callback and hands the GIL back, and so
    on, callback after callback: two thread switches per callback (NO_BLOCK callbacks ran at half speed).
    Trying without blocking never holds LOCK while waiting for the GIL. LOCK is never held across a blocking
    wait or a call out of the runtime, so the holder lets go as soon as it runs again; the tries stop after a
    while anyway and the thread blocks (for ``timeout`` at most: a wait with a timeout keeps it, whatever
    holds LOCK).
    """
    if LOCK.acquire(False):
        return True
    for _ in range(_LOCK_TRIES):
        time.sleep(0)  # let the holder have the GIL
        if LOCK.acquire(False):
            return True
    if getattr(_collecting, "under_lock", False):
        return _acquire_in_collection(timeout)
    return LOCK.acquire(True, -1 if timeout is None else max(timeout, 0.0))


def _acquire_in_collection(timeout: float | None) -> bool:
    """A finalizer the garbage collector runs, begun while LOCK was held (perhaps by this very thread)."""
    patience = _COLLECTOR_PATIENCE if timeout is None else min(max(timeout, 0.0), _COLLECTOR_PATIENCE)
    if LOCK.acquire(True, patience):
        return True
    if timeout is not None and timeout <= _COLLECTOR_PATIENCE:
        return False
    raise AclError(
        AclCode.ACL_ERROR_API_NOT_SUPPORT,
        "a finalizer run by the garbage collector while the runtime was busy on this thread called the runtime; "
        "break the reference cycle (or free explicitly) so that it does not wait for itself",
    )


# Per thread: whether the collection this thread is running began while LOCK was held.
_collecting = threading.local()


def _note_collection(phase: str, _info: dict) -> None:
    """``gc.callbacks``: finalizers of cyclic garbage run on the collecting thread, wherever it was."""
    _collecting.under_lock = phase == "start" and LOCK.locked()


gc.callbacks.append(_note_collection)


def release() -> None:
    """Drain the ``soon`` list, release ``LOCK``, then run what was deferred (in the order it was deferred).

    Invariant: ``actions`` holds every deferred entry (and with it every buried reference) until ``LOCK`` has
    been released; they are dropped when this function returns, on the releasing thread.
    """
    while _soon:
        fn, args = _soon.popleft()
        try:
            fn(*args)
        except Exception as exc:  # a bug in the runtime: LOCK must still be released, the chain go on
            log_locked(log, logging.ERROR, "scheduler step %r failed", fn, exc=exc)
        _deferred.append((_keep, (fn, args)))  # the step's references go after LOCK, as every buried one
    if not _deferred:
        LOCK.release()
        return
    actions = _deferred[:]
    _deferred.clear()
    LOCK.release()
    for fn, args in actions:
        fn(*args)


class _Locked:
    """``with locked:`` is ``acquire()`` ... ``release()``; on an exception the lists are still drained."""

    __slots__ = ()

    def __enter__(self) -> None:
        if not LOCK.acquire(False):  # what acquire() does first, without its call
            acquire()

    def __exit__(self, *exc: object) -> None:
        if _soon or _deferred:
            release()
        else:
            LOCK.release()


locked = _Locked()


def soon(fn: Callable[..., Any], *args: Any) -> None:
    """Hold ``LOCK``: run ``fn(*args)`` before ``LOCK`` is released, after the current step (no recursion)."""
    _soon.append((fn, args))


def defer(fn: Callable[..., Any], *args: Any) -> None:
    """Hold ``LOCK``: run ``fn(*args)`` once ``LOCK`` has been released, on the releasing thread."""
    _deferred.append((fn, args))


def _keep(*_refs: object) -> None:
    """The action of a graveyard entry: nothing; its arguments are what it keeps alive until LOCK is released."""


def bury(*refs: object) -> None:
    """Hold ``LOCK``: keep ``refs`` alive until ``LOCK`` is released, so that their last reference (and any
    finalizer it runs: user code) goes on the releasing thread after the release, never under ``LOCK``."""
    _deferred.append((_keep, refs))


def log_locked(logger, level: int, msg: str, *args: object, exc: BaseException | None = None) -> None:
    """Hold ``LOCK``: log after it is released (a logging handler is user code).

    The record is made now, so it names the code that logged it (not this module) and the thread and time it
    happened at; only handing it to the handlers waits.
    """
    if logger.isEnabledFor(level):
        filename, line, function, _ = logger.findCaller(stacklevel=2)
        exc_info = (type(exc), exc, exc.__traceback__) if exc is not None else None
        record = logger.makeRecord(logger.name, level, filename, line, msg, args, exc_info, function)
        _deferred.append((logger.handle, (record,)))


def start_thread_locked(thread: threading.Thread) -> None:
    """Hold ``LOCK``: start ``thread`` once it is released (a thread start waits for the new thread)."""
    _deferred.append((thread.start, ()))


def reinit_after_fork() -> None:
    """In a forked child, after ``atfork.after_fork_in_child`` freed LOCK: the lists were the parent's holder's."""
    _soon.clear()
    _deferred.clear()
