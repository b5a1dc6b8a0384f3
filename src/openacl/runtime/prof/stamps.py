"""msproftx (``aclprofCreateStamp`` .. ``aclprofRangeStop``) and step stamps: the program's own marks and
ranges, put on the timeline (``openacl.trace``, category ``msproftx``) when it records.

- A stamp carries a trace message (``set_stamp_trace_message``); ``mark`` is a zero-length span named after it.
- ``push`` / ``pop`` nest per thread: ``pop`` ends the thread's last ``push`` (INVALID_PARAM when none is open).
- ``range_start`` returns a range id (1, 2, ... never reused); ``range_stop`` of an unknown id is INVALID_PARAM.
  A range may end on another thread; it lies on the msproftx track of the thread that started it.
- ``mark_ex`` puts the mark on a stream: it is stamped when the stream reaches it, in stream order.
- ``get_step_timestamp`` stamps a step's start (``ACL_STEP_START`` 0) or end (``ACL_STEP_END`` 1) as the stream
  reaches it; an end spans the step on the timeline.

Decision: none of these needs ``acl.prof.init``; with no recorder running they keep their state and record nothing.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field

from openacl import atfork, trace
from openacl.errors import AclCode, AclError
from openacl.runtime import device as _device
from openacl.runtime.handles import HandleTable
from openacl.runtime.sched.task import work_task

_INVALID = AclCode.ACL_ERROR_INVALID_PARAM
ACL_STEP_START, ACL_STEP_END = 0, 1
CATEGORY = "msproftx"


@dataclass
class Stamp:
    message: str = ""


@dataclass
class StepInfo:
    started_ns: dict[int, int] = field(default_factory=dict)  # stream id -> when the stream reached the start


stamps: HandleTable[Stamp] = HandleTable("profiling stamp")
step_infos: HandleTable[StepInfo] = HandleTable("profiling step info")

_local = threading.local()
_ranges: dict[int, tuple[str, int, int]] = {}  # range id -> (message, start_ns, thread)
_range_ids = itertools.count(1)
_ranges_lock = atfork.lock()


def _record(name: str, start_ns: int, end_ns: int, **args: object) -> None:
    rec = trace.recorder
    if rec is not None:
        rec.add(name, CATEGORY, start_ns, start_ns, end_ns, **args)


def create_stamp() -> int:
    return stamps.add(Stamp())


def destroy_stamp(handle: int) -> None:
    stamps.remove(handle)


def set_trace_message(handle: int, message: str, length: int) -> None:
    """The first ``length`` bytes of ``message`` (a C length: a trailing NUL may be counted)."""
    stamp = stamps.get(handle)
    data = message.encode("utf-8")
    if not 0 < length <= len(data) + 1:
        raise AclError(_INVALID, f"message length {length} is not in 1..{len(data) + 1}")
    stamp.message = data[:length].rstrip(b"\x00").decode("utf-8", "ignore")


def mark(handle: int) -> None:
    now = trace.now_ns()
    _record(stamps.get(handle).message or "mark", now, now)


def _stack() -> list[tuple[str, int]]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def push(handle: int) -> None:
    _stack().append((stamps.get(handle).message or "push", trace.now_ns()))


def pop() -> None:
    stack = _stack()
    if not stack:
        raise AclError(_INVALID, "acl.prof.pop with no acl.prof.push open on this thread")
    message, start_ns = stack.pop()
    _record(message, start_ns, trace.now_ns())


def range_start(handle: int) -> int:
    message = stamps.get(handle).message or "range"
    with _ranges_lock:
        range_id = next(_range_ids) & 0xFFFFFFFF
        _ranges[range_id] = (message, trace.now_ns(), threading.get_native_id())
    return range_id


def range_stop(range_id: int) -> None:
    with _ranges_lock:
        found = _ranges.pop(range_id, None)
    if found is None:
        raise AclError(_INVALID, f"range {range_id} was not started or is already stopped")
    message, start_ns, thread = found
    rec = trace.recorder
    if rec is not None:
        rec.add_on_track(
            (CATEGORY, thread),
            f"msproftx ranges (thread {thread})",
            message,
            CATEGORY,
            start_ns,
            start_ns,
            trace.now_ns(),
        )


def mark_ex(message: str, stream_handle: int) -> None:
    """A mark the stream passes in order (a task on it)."""
    if not message:
        raise AclError(_INVALID, "mark_ex message is empty")
    stream = _device.resolve_in_context(stream_handle)

    def reached() -> None:
        now = trace.now_ns()
        _record(message, now, now, stream=stream.id)

    stream.enqueue(work_task("prof_mark_ex", reached))


def create_step_info() -> int:
    return step_infos.add(StepInfo())


def destroy_step_info(handle: int) -> None:
    step_infos.remove(handle)


def step_timestamp(handle: int, tag: int, stream_handle: int) -> None:
    info = step_infos.get(handle)
    if tag not in (ACL_STEP_START, ACL_STEP_END):
        raise AclError(_INVALID, f"step tag {tag} is neither ACL_STEP_START (0) nor ACL_STEP_END (1)")
    stream = _device.resolve_in_context(stream_handle)

    def reached() -> None:
        now = trace.now_ns()
        if tag == ACL_STEP_START:
            info.started_ns[stream.id] = now
        elif (start := info.started_ns.pop(stream.id, None)) is not None:
            _record("step", start, now, stream=stream.id)

    stream.enqueue(work_task("prof_step_start" if tag == ACL_STEP_START else "prof_step_end", reached))


def reset() -> None:
    with _ranges_lock:
        _ranges.clear()
    _local.__dict__.clear()
