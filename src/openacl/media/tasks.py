"""DVPP operations as stream tasks (spec §7).

Each operation is checked when it is called (the host-side checks, whose code the call returns), then queued on
its stream as one WORK task, ordered with copies, events and callbacks. The task does the device's part: it
reads the input memory, computes, writes the output memory and writes the results back into the output
descriptor (``ret_code`` 0). A failure found while it runs (a JPEG whose data does not decode, an encoded
picture larger than its buffer) sets the output desc's ``ret_code`` to 1, fails the task (the stream logs one
line and its next ``synchronize_stream`` returns the code) and leaves the stream usable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from openacl.errors import AclError
from openacl.media.descs import PicDesc
from openacl.runtime import checker
from openacl.runtime import device as _device
from openacl.runtime import memory as _memory
from openacl.runtime.sched.stream import Stream
from openacl.runtime.sched.task import work_task

DEVICE_FAILURE = 1  # what a failed picture's ret_code holds


def stream_for(handle: int) -> Stream:
    return _device.resolve(handle)


def submit(
    stream: Stream,
    name: str,
    work: Callable[[], None],
    outputs: Sequence[PicDesc] = (),
    writes: Sequence[np.ndarray] = (),
    reads: Sequence[np.ndarray] = (),
) -> None:
    """Queue ``work`` on ``stream``; ``outputs`` get ret_code 0 when it succeeds, 1 when it fails. ``writes`` are
    the views of memory ``work`` fills: each must still be live memory when the task runs (507053 otherwise).
    ``reads`` are the views it reads; both are the task's ranges for ``openacl check`` (races, uninitialized)."""
    at = checker.site() if checker.enabled else None
    if checker.enabled:
        checker.on_task(stream, f"dvpp {name}", _ranges(reads), _ranges(writes))

    def run() -> None:
        if checker.enabled:
            for addr, size in _ranges(reads):
                _memory.note_read(addr, size, f"dvpp {name}", at)
        try:
            for view in writes:
                _memory.check_task_view(view, f"dvpp {name}")
            work()
        except AclError:
            for desc in outputs:
                desc.ret_code = DEVICE_FAILURE
            raise
        for desc in outputs:
            desc.ret_code = 0

    stream.enqueue(work_task(f"dvpp {name}", run))


def _ranges(views: Sequence[np.ndarray]) -> list[tuple[int, int]]:
    """(address, size) of each view's bytes."""
    spans = (np.lib.array_utils.byte_bounds(view) for view in views)
    return [(low, high - low) for low, high in spans]
