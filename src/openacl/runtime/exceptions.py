"""What went wrong, per thread: the last runtime error and the recent error messages.

CANN keeps two thread-local records of failures, and so does this module:

- the **last runtime error** (``acl.rt.get_last_error`` / ``peek_at_last_error``): the code of the newest failed
  call whose code is a runtime one (``1070xx``, ``2070xx``, ``5070xx``, what CANN's runtime layer returns).
  ACL-layer codes (``1000xx`` parameter checks and the like) are not recorded, as in CANN, where they are
  returned before the runtime is reached. Successful calls leave it alone; ``get`` clears it, ``peek`` does not.
- the **recent error messages** (``acl.get_recent_err_msg``): one line per failed call of any kind, newest
  first; reading them clears them. At most :data:`MAX_MESSAGES` are kept (CANN warns that unread messages
  pile up or get lost: here the oldest are dropped).

Both are per thread (a new thread starts with none) and are forgotten by :func:`reset` (process reset), for
every thread at once: each record carries the reset generation it was written in.

The **exception-info callback** (``acl.rt.set_exception_info_callback``) is here too. Every stream task that
fails (a model run onnxruntime rejects, a copy whose memory was freed before it ran, anything a task's work
raises, a dump write that fails) makes one record: the failing code, the task id (its sequence number on its
stream), the stream id (what ``stream_get_id`` answers), the id of the thread that submitted the task and the
device id. Decisions where CANN is silent:

- The callback runs on one runtime thread of its own, ``openacl-exception`` (CANN: a runtime-internal thread),
  in the order the tasks failed, never under a runtime lock; the failing stream does not wait for it.
- ``fn(info)`` gets the address of a 20-byte ``aclrtExceptionInfo`` (five uint32: task id, stream id, thread
  id, device id, code), readable with ``acl.util.ptr_to_bytes`` and the ``get_*_from_exception_info`` getters
  during the call only; afterwards (or for any other address) the getters answer 0xFFFFFFFF, as for 0.
- One process-wide slot; setting it again replaces the function, ``None`` (or no argument) unsets it. Failures
  while no function is set are not kept for one set later (set it before launching the work, as CANN says).
- If ``fn`` raises, "InfoCallback wrong out" is logged at ERROR on the application log and the slot is
  cleared, as pyACL does: ``fn`` is not called again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from queue import SimpleQueue

import numpy as np

from openacl import atfork
from openacl.errors import AclCode, AclError
from openacl.log import get_logger
from openacl.runtime import memory
from openacl.runtime.sched import stream as _stream
from openacl.runtime.sched.task import Task

app_log = get_logger("app")

ACL_RT_THREAD_LEVEL = 0
MAX_MESSAGES = 64

# The code families CANN's runtime layer returns (rt_error_codes.h): 107xxx, 207xxx, 507xxx.
_RUNTIME_CODE_FAMILIES = (107, 207, 507)

_local = threading.local()
_generation = 0


class _Record:
    """One thread's failure record (only its own thread touches it, so it needs no lock)."""

    __slots__ = ("generation", "last_error", "messages")

    def __init__(self) -> None:
        self.generation = _generation
        self.last_error = 0
        self.messages: list[str] = []


def _record() -> _Record:
    record = getattr(_local, "record", None)
    if record is None or record.generation != _generation:
        record = _local.record = _Record()
    return record


def is_runtime_code(code: int) -> bool:
    """Whether CANN's runtime layer (not the ACL layer in front of it) returns ``code``."""
    return code > 0 and code // 1000 in _RUNTIME_CODE_FAMILIES


def record_failure(api_name: str, error: AclError) -> None:
    """Note a failed call of ``api_name`` in the calling thread (the facade calls this once per failure)."""
    record = _record()
    if is_runtime_code(error.code):
        record.last_error = error.code
    record.messages.insert(0, f"{api_name}: {error}")
    del record.messages[MAX_MESSAGES:]


def _check_level(level: int) -> None:
    if level != ACL_RT_THREAD_LEVEL:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"last-error level {level} is not 0 (ACL_RT_THREAD_LEVEL)")


def get_last_error(level: int) -> int:
    """The calling thread's last runtime error code (0 if none), which is then cleared."""
    _check_level(level)
    record = _record()
    code, record.last_error = record.last_error, 0
    return code


def peek_last_error(level: int) -> int:
    """The calling thread's last runtime error code (0 if none), left in place."""
    _check_level(level)
    return _record().last_error


def take_recent_messages() -> str | None:
    """The calling thread's failure messages, newest first, one per line, then cleared; None if there are none."""
    record = _record()
    if not record.messages:
        return None
    text = "\n".join(record.messages)
    record.messages = []
    return text


def reset() -> None:
    """Forget every thread's records, the exception-info callback and its thread (process reset)."""
    global _generation, _callback
    _generation += 1
    _callback = None
    _deliverer.stop()


# ----- the exception-info callback -----

NO_INFO = 0xFFFFFFFF  # what the getters answer for 0, or an address that is no live record
_FIELDS = ("task_id", "stream_id", "thread_id", "device_id", "error_code")  # aclrtExceptionInfo's order

_callback: Callable[[int], object] | None = None
_live: dict[int, np.ndarray] = {}  # address -> the record being delivered (only during the call)


class _Deliverer:
    """The thread that calls the exception-info callback; started when a callback is set (outside any lock)."""

    def __init__(self) -> None:
        self.queue: SimpleQueue = SimpleQueue()
        self.thread: threading.Thread | None = None
        self.guard = atfork.lock()

    def start(self) -> None:
        with self.guard:
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="openacl-exception", daemon=True)
                self.thread.start()

    def stop(self) -> None:
        with self.guard:
            thread, self.thread = self.thread, None
        if thread is not None:
            self.queue.put(None)
            if thread is not threading.current_thread():
                thread.join(5)

    def _run(self) -> None:
        while True:
            item = self.queue.get()
            if item is None:
                return
            fn, values = item
            _deliver(fn, values)

    def renew_in_child(self) -> None:
        """A forked child: the thread is the parent's (records it had queued are the parent's to deliver); a
        callback the parent set reaches the child's own failures on a thread of the child's."""
        self.queue = SimpleQueue()
        self.thread = None
        if _callback is not None:
            self.start()


_deliverer = atfork.register(_Deliverer(), _Deliverer.renew_in_child)


def set_callback(fn: Callable[[int], object] | None) -> None:
    """``aclrtSetExceptionInfoCallback``: the one process-wide slot (None unsets it)."""
    global _callback
    if fn is not None:
        _deliverer.start()
    _callback = fn


def _on_task_failed_locked(task: Task, error: AclError) -> None:
    """A stream task failed (LOCK held): hand its record to the delivery thread; no user code runs here."""
    fn = _callback
    if fn is None:
        return
    stream = task.stream
    values = (task.seq, stream.id, task.thread, stream.device_id, int(error.code))
    _deliverer.queue.put((fn, values))


_stream.FAILURE_HOOKS.append(_on_task_failed_locked)


def _deliver(fn: Callable[[int], object], values: tuple[int, ...]) -> None:
    """Call ``fn`` with one record, unless the slot no longer holds it (unset, replaced, or dropped because an
    earlier call raised: records already queued for it are not delivered either)."""
    global _callback
    if _callback is not fn:
        return
    info = np.array([v & 0xFFFFFFFF for v in values], np.uint32)
    with memory.lent(info) as address:
        _live[address] = info
        try:
            fn(address)
        except Exception:
            app_log.error("InfoCallback wrong out")
            if _callback is fn:
                _callback = None  # pyACL drops the callback that raised
        finally:
            del _live[address]


def field(address: int, name: str) -> int:
    """One field of the record at ``address`` while its callback runs; 0xFFFFFFFF otherwise."""
    info = _live.get(address)
    return NO_INFO if info is None else int(info[_FIELDS.index(name)])
