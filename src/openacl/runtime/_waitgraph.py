"""Would a wait inside a callback wait for that callback? Then it would never return.

A running callback holds its stream: any callback keeps ``synchronize`` of its stream from returning, and a
BLOCK callback also keeps the stream from passing it, so an event recorded behind it, and any stream that
waits (``stream_wait_event``) for that event, cannot get on until it returns. A thread that runs callbacks
and then waits for something that needs one of its own running callbacks to return is waiting for itself.
``blocker_locked`` follows the waits (streams -> event waits -> event records -> streams) to find out; the
waiting call then fails with ``ACL_ERROR_API_NOT_SUPPORT`` instead of hanging.

Only this thread's callbacks are considered: two threads whose callbacks wait for each other still deadlock,
as two threads taking two locks in opposite orders do. The walk runs only while the waiting thread is inside
a callback, under ``LOCK``.
"""

from __future__ import annotations

from openacl.runtime._sync import running_callbacks

_MAX_DEPTH = 256  # deeper chains are not followed (the wait goes ahead, as before)


def blocker_locked(stream=None, seq: int = 0, event=None, gen: int = 0):
    """The callback running on this thread that ``stream`` finishing through ``seq`` (or ``event`` reaching
    ``gen``) needs to return first, or None. Hold ``LOCK``."""
    mine = running_callbacks()
    if not mine:
        return None
    from openacl.runtime import stream as _stream

    walk = _Walk(mine, _stream)
    if stream is not None:
        return walk.stream(stream, seq, finished=True, depth=0)
    return walk.event(event, gen, depth=0)


class _Walk:
    def __init__(self, mine: list, module) -> None:
        self.mine = mine
        self.module = module
        self.seen: dict[tuple, object] = {}

    def stream(self, stream, seq: int, *, finished: bool, depth: int):
        """Does ``stream`` getting past ``seq`` (``finished``: and every callback up to it returning) need one
        of ``mine``?"""
        for task in self.mine:
            if task.stream is stream and task.seq <= seq and (finished or task.blocking):
                return task
        key = ("stream", id(stream), seq)
        if key in self.seen or depth > _MAX_DEPTH:
            return self.seen.get(key)
        self.seen[key] = None  # a cycle does not count as blocked by us
        wait_kind = self.module.TaskKind.WAIT
        ahead = ([stream._busy] if stream._busy is not None else []) + list(stream._tasks)
        for task in ahead:
            if task.seq > seq:
                break
            if task.kind is wait_kind and task.event.completed_gen < task.gen:
                found = self.event(task.event, task.gen, depth + 1)
                if found is not None:
                    self.seen[key] = found
                    return found
        return None

    def event(self, event, gen: int, depth: int):
        """Does ``event`` reaching ``gen`` need one of ``mine``? Only if every record that would get it there
        is stuck behind one (a later record passing on a free stream completes the event too)."""
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


def refuse_waiting_for_own_callback(what: str, stream=None, seq: int = 0, event=None, gen: int = 0) -> None:
    """Raise ``ACL_ERROR_API_NOT_SUPPORT`` if the wait for ``what`` needs a callback this thread is running."""
    if not running_callbacks():
        return
    from openacl.errors import AclCode, AclError
    from openacl.runtime._sync import LOCK

    with LOCK:
        blocker = blocker_locked(stream, seq, event, gen)
    if blocker is not None:
        raise AclError(
            AclCode.ACL_ERROR_API_NOT_SUPPORT,
            f"{what} cannot complete before the callback this thread is running on stream {blocker.stream.id} "
            "returns: waiting inside that callback would deadlock",
        )
