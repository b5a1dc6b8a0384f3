"""What a forked child gets anew: every lock, condition and event of openacl, and every thread and queue.

``os.fork()`` copies the memory but only the thread that forked: a lock another thread held at that moment stays
held for ever in the child, and a thread that served a queue is gone. So openacl makes no lock with ``threading``
directly: it asks this module (``lock``, ``rlock``, ``condition``, ``event``), which remembers each one; and whatever
keeps a thread or a queue registers the function that renews it in a child (``register`` for an object,
``at_child`` for a module's own state). ``process.py``'s one at-fork hook calls ``after_fork_in_child`` first, then
``renew_all()`` (fresh queues, the parent's threads forgotten, before anything in the child logs or fails a task),
mends the scheduler, and last ``renew_all(late=True)`` (renewals that use the runtime, once its LOCK is released).
An object whose destruction would wait for the parent's threads (an onnxruntime session joins its thread pool) is
made ``outlive_fork``: a child never destroys the ones it inherits, not even as garbage that was already unreachable,
nor after it forks in turn.
``tests/test_atfork.py`` walks the package for locks, threads and queues made any other way.

Invariant: every primitive made here is free in a forked child, whichever thread held it at the fork. What it
guarded may be half-changed; the scheduler's tables, which matter most, are mended by ``process.py`` as well.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# Locks, conditions and events made here: each has ``_at_fork_reinit`` (CPython's own at-fork renewal).
_primitives: weakref.WeakSet = weakref.WeakSet()
# Objects with threads or queues -> how to renew them; a module's own state: its renewals, in registration order.
_owners: weakref.WeakKeyDictionary[object, Callable] = weakref.WeakKeyDictionary()
_module_renewals: list[tuple[Callable[[], None], bool]] = []  # (renew, late)
# Objects a forked child must never destroy; ``_held`` holds them strongly from just before a fork until it returns,
# and a child moves them to ``_inherited``, for ever (its memory is the parent's pages, shared until written).
_undying: weakref.WeakSet = weakref.WeakSet()
_held: list[object] = []
_inherited: list[object] = []


def _made(primitive: T) -> T:
    _primitives.add(primitive)
    return primitive


def lock() -> threading.Lock:
    """A ``threading.Lock`` that is free in a forked child."""
    return _made(threading.Lock())


def rlock() -> threading.RLock:
    """A ``threading.RLock`` that is free in a forked child."""
    return _made(threading.RLock())


def condition(guard: threading.Lock | threading.RLock | None = None) -> threading.Condition:
    """A ``threading.Condition`` (over ``guard``, made here too) with its lock free and no waiters in a child."""
    return _made(threading.Condition(guard if guard is not None else lock()))


def event() -> threading.Event:
    """A ``threading.Event`` that keeps its flag in a forked child; its inner lock is free there."""
    return _made(threading.Event())


def register(owner: T, renew: Callable[[T], None]) -> T:
    """Call ``renew(owner)`` in a forked child (``owner`` keeps a thread or a queue). Held weakly: ``renew`` must
    not hold ``owner`` (pass the function, not a bound method)."""
    _owners[owner] = renew
    return owner


def at_child(renew: Callable[[], None], *, late: bool = False) -> Callable[[], None]:
    """Call this module-level function in a forked child (it renews its module's threads or queues); ``late``:
    after the scheduler is mended, because it uses the runtime. Usable as a decorator."""
    _module_renewals.append((renew, late))
    return renew


def outlive_fork(obj: T) -> T:
    """``obj`` owns threads (a pool it joins when destroyed): a forked child keeps the one it inherits for ever."""
    _undying.add(obj)
    return obj


def before_fork() -> None:
    """Just before ``fork()``: hold every ``outlive_fork`` object, so that none dies in the child (a collection
    can run there before any other hook)."""
    # Iterating the WeakSet would let another thread add to it meanwhile; copying its set of references does not.
    _held[:] = [obj for ref in list(_undying.data) if (obj := ref()) is not None]


def after_fork_in_parent() -> None:
    _held.clear()


def after_fork_in_child() -> None:
    """In a forked child, first: the ``outlive_fork`` objects are kept for ever, and every lock, condition and
    event made here is free (conditions lose their waiters, which were the parent's threads)."""
    _inherited.extend(_held)
    _held.clear()
    for primitive in list(_primitives):
        primitive._at_fork_reinit()


def renew_all(*, late: bool = False) -> None:
    """In a forked child, with no lock of ours held: renew every registered object and module (``late``: only the
    modules registered late; otherwise the objects and the other modules)."""
    renewals = [renew for renew, is_late in _module_renewals if is_late == late]
    if not late:
        renewals += [lambda o=owner, f=renew: f(o) for owner, renew in list(_owners.items())]
    for renew in renewals:
        try:
            renew()
        except Exception:  # one renewal failing must not leave the rest of the child unrenewed
            logging.getLogger("openacl").exception("renewing state in a forked child failed")


# ----- what the package walk (tests/test_atfork.py) asks -----


def is_fork_safe(primitive: object) -> bool:
    """Whether ``primitive`` was made here (and so is renewed in a forked child)."""
    try:
        return primitive in _primitives
    except TypeError:  # not weakly referenceable: made elsewhere
        return False


def is_registered(owner: object) -> bool:
    """Whether ``owner`` (an object, or a module by name) has a renewal for forked children."""
    if isinstance(owner, str):
        return any(renew.__module__ == owner for renew, _ in _module_renewals)
    try:
        return owner in _owners
    except TypeError:
        return False
