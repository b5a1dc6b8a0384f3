"""Threads for ``acl.util.start_thread`` / ``stop_thread``.

As in pyACL, the id returned is the thread's pthread id (``threading.get_ident()`` of the new thread), the one
``subscribe_report`` expects; ``thr_func(args)`` runs once (``thr_func()`` when args is None); an exception
in it is printed and re-raised by ``stop_thread`` as ``RuntimeError``. ``stop_thread`` only joins: the program
tells its thread to stop (an exit flag), as the pyACL samples do.
"""

from __future__ import annotations

import errno
import threading
import traceback

from openacl import atfork


class ThreadFailed(RuntimeError):
    """The thread function raised; pyACL's ``stop_thread`` raises this text as a RuntimeError."""


# CPython may give a new thread the id of one that has exited but was not yet stopped; pyACL's pthread ids stay
# unique until pthread_join. So each id keeps its threads in start order, and stop_thread joins the oldest.
_threads: dict[int, list[_UtilThread]] = {}
_lock = atfork.lock()


class _UtilThread(threading.Thread):
    def __init__(self, func, args) -> None:
        super().__init__(name="acl-util-thread", daemon=True)
        self._func = func
        self._args = args
        self.error: BaseException | None = None
        self.started_ident = atfork.event()

    def run(self) -> None:
        try:
            if self._args is None:
                self._func()
            else:
                self._func(self._args)
        except BaseException as exc:
            self.error = exc
            traceback.print_exc()


@atfork.at_child
def _forget_parent_threads() -> None:
    """A forked child has only the thread that forked: the other ids answer ESRCH, as pthread_join would."""
    me = threading.current_thread()
    kept = {ident: [t for t in started if t is me] for ident, started in _threads.items()}
    _threads.clear()
    _threads.update({ident: started for ident, started in kept.items() if started})


def start_thread(func, args) -> int:
    """Start ``func`` on a new thread; return its id."""
    thread = _UtilThread(func, args)
    thread.start()
    with _lock:
        _threads.setdefault(thread.ident, []).append(thread)
    return thread.ident


def stop_thread(thread_id: int) -> int:
    """Join a thread from ``start_thread``; returns 0, or the errno pthread_join would (ESRCH, EDEADLK)."""
    with _lock:
        started = _threads.get(thread_id)
        thread = started[0] if started else None
    if thread is None:
        return errno.ESRCH
    if thread is threading.current_thread():
        return errno.EDEADLK
    thread.join()
    with _lock:
        started = _threads.get(thread_id, [])
        if thread in started:
            started.remove(thread)
        if not started:
            _threads.pop(thread_id, None)
    if thread.error is not None:
        exc = thread.error
        raise ThreadFailed(f"exception={type(exc).__name__},msg=thread call failed;{exc}")
    return 0
