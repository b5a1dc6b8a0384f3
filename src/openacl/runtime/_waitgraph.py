"""Would a wait inside a callback wait, in the end, for that callback? Then it would never return.

A running callback holds its stream: any callback keeps ``synchronize`` of its stream from returning, and a
BLOCK callback also keeps the stream from passing it, so an event recorded behind it, and any stream that
waits (``stream_wait_event``) for that event, cannot get on until it returns. A callback running on another
thread returns only once the waits that thread began inside it are over. ``blocker_locked`` follows all of
that (streams -> running callbacks -> their threads' waits, and streams -> event waits -> event records ->
streams) to find out whether the wait needs a callback of the waiting thread itself; the waiting call then
fails with ``ACL_ERROR_API_NOT_SUPPORT`` instead of hanging. So two report threads whose callbacks wait for
each other's streams do not deadlock: the wait that would close the circle is refused.

Waits the runtime cannot see through (a user's own lock or ``threading.Event``) are not followed. The walk
runs only while the waiting thread is inside a callback, under ``LOCK``.
"""

from __future__ import annotations

import threading

from openacl.runtime._sync import RUNNING_BY_THREAD, WAITS_BY_THREAD, callbacks_running_here

_MAX_DEPTH = 256  # deeper chains are not followed (the wait goes ahead, as before)


def blocker_locked(stream=None, seq: int = 0, event=None, gen: int = 0):
    """The callback running on this thread that ``stream`` finishing through ``seq`` (or ``event`` reaching
    ``gen``) needs to return first, or None. Hold ``LOCK``."""
    if not callbacks_running_here():
        return None
    from openacl.runtime import stream as _stream

    walk = _Walk(threading.get_ident(), _stream)
    if stream is not None:
        return walk.stream(stream, seq, finished=True, depth=0)
    return walk.event(event, gen, depth=0)


class _Walk:
    def __init__(self, me: int, module) -> None:
        self.me = me
        self.module = module
        # Snapshots: other threads push and pop their own lists without LOCK.
        self.running = [(thread, list(tasks)) for thread, tasks in list(RUNNING_BY_THREAD.items()) if tasks]
        self.seen: dict[tuple, object] = {}

    def stream(self, stream, seq: int, *, finished: bool, depth: int):
        """Does ``stream`` getting past ``seq`` (``finished``: and every callback up to it returning) need one
        of this thread's callbacks?"""
        key = ("stream", id(stream), seq, finished)
        if key in self.seen or depth > _MAX_DEPTH:
            return self.seen.get(key)
        self.seen[key] = None  # a cycle that does not reach this thread does not count
        found = self._running_on(stream, seq, finished, depth) or self._event_waits(stream, seq, depth)
        self.seen[key] = found
        return found

    def _running_on(self, stream, seq: int, finished: bool, depth: int):
        """A running callback of ``stream`` up to ``seq`` that holds it: ours, or one whose thread waits for us."""
        for thread, tasks in self.running:
            for index, task in enumerate(tasks):
                if task.stream is stream and task.seq <= seq and (finished or task.blocking):
                    if thread == self.me:
                        return task
                    found = self._waits_above(thread, index, depth)
                    if found is not None:
                        return found
        return None

    def _waits_above(self, thread: int, index: int, depth: int):
        """Callback ``index`` of ``thread`` returns only after the waits that thread began inside it (or inside
        callbacks it runs on top of it) are over: does one of those need us?"""
        for level, (stream, seq, event, gen) in list(WAITS_BY_THREAD.get(thread, ())):
            if level <= index:
                continue
            if stream is not None:
                found = self.stream(stream, seq, finished=True, depth=depth + 1)
            else:
                found = self.event(event, gen, depth + 1)
            if found is not None:
                return found
        return None

    def _event_waits(self, stream, seq: int, depth: int):
        """A ``stream_wait_event`` ahead of ``seq`` on ``stream`` whose event needs us."""
        wait_kind = self.module.TaskKind.WAIT
        ahead = ([stream._busy] if stream._busy is not None else []) + list(stream._tasks)
        for task in ahead:
            if task.seq > seq:
                break
            if task.kind is wait_kind and task.event.completed_gen < task.gen:
                found = self.event(task.event, task.gen, depth + 1)
                if found is not None:
                    return found
        return None

    def event(self, event, gen: int, depth: int):
        """Does ``event`` reaching ``gen`` need one of this thread's callbacks? Only if every record that would
        get it there is stuck behind one (a later record passing on a free stream completes the event too)."""
        if event.completed_gen >= gen:
            return None
        key = ("event", id(event), gen)
        if key in self.seen or depth > _MAX_DEPTH:
            return self.seen.get(key)
        self.seen[key] = None
        record_kind = self.module.TaskKind.RECORD
        found = None
        for stream in self.module.streams.values():
            for task in stream._tasks:
                if task.kind is record_kind and task.event is event and task.gen >= gen:
                    blocker = self.stream(stream, task.seq, finished=False, depth=depth + 1)
                    if blocker is None:
                        return None  # this record can pass without us
                    found = blocker
        self.seen[key] = found
        return found


def refuse_locked(what: str, stream=None, seq: int = 0, event=None, gen: int = 0) -> None:
    """Raise ``ACL_ERROR_API_NOT_SUPPORT`` if the wait for ``what`` needs a callback this thread is running.
    Hold ``LOCK``; call it where the wait is attached, so that no other wait can slip in between."""
    blocker = blocker_locked(stream, seq, event, gen)
    if blocker is not None:
        from openacl.errors import AclCode, AclError

        raise AclError(
            AclCode.ACL_ERROR_API_NOT_SUPPORT,
            f"{what} cannot complete before the callback this thread is running on stream {blocker.stream.id} "
            "returns: waiting inside that callback would deadlock",
        )
