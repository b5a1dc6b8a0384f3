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

The exception-info callback (``acl.rt.set_exception_info_callback``) will live here too; it is not written yet.
"""

from __future__ import annotations

import threading

from openacl.errors import AclCode, AclError

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
    """Forget every thread's records (process reset)."""
    global _generation
    _generation += 1
