"""Timeouts: the process-wide operator timeouts, and a device-wide synchronize with a deadline.

``set_op_wait_timeout`` (seconds an event wait of an operator may take) and ``set_op_execute_time_out``
(seconds an operator may run) are process settings in CANN, 0 meaning "no limit". openacl keeps them and reports
the execute timeout back (``get_op_execute_timeout``, in milliseconds); neither shortens a run here, since
ONNX Runtime executions and event waits are not cut off by openacl.
"""

from __future__ import annotations

import time

from openacl import atfork
from openacl.errors import AclCode, AclError
from openacl.runtime import device as _device

_lock = atfork.lock()
_op_wait_timeout_s = 0
_op_execute_timeout_s = 0


def set_op_wait_timeout(seconds: int) -> None:
    global _op_wait_timeout_s
    with _lock:
        _op_wait_timeout_s = seconds


def set_op_execute_timeout(seconds: int) -> None:
    global _op_execute_timeout_s
    with _lock:
        _op_execute_timeout_s = seconds


def op_execute_timeout_ms() -> int:
    return _op_execute_timeout_s * 1000


def synchronize_device(timeout_ms: int) -> None:
    """Wait for every stream of the current device; -1 waits forever, other negatives are refused.

    The deadline covers all the streams together; on timeout it raises the stream's 507046.
    """
    if timeout_ms < -1:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"timeout {timeout_ms} ms is below -1")
    if timeout_ms == -1:
        _device.synchronize_device()
        return
    deadline = time.monotonic() + timeout_ms / 1000
    device = _device.current_device()
    for ctx in list(device.contexts):
        for stream in list(ctx.streams):
            if not stream.destroyed:
                stream.synchronize(max(deadline - time.monotonic(), 0.0))


def reset() -> None:
    global _op_wait_timeout_s, _op_execute_timeout_s
    with _lock:
        _op_wait_timeout_s = _op_execute_timeout_s = 0
