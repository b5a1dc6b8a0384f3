"""What VDEC and VENC channels share: a callback stream, one callback per frame sent, and a draining destroy.

A channel owns one internal stream of the creating thread's context, subscribed (``openacl.runtime.report``) to
the thread id set on its channel desc: every frame's callback is launched on that stream as a blocking callback,
so it runs inside that thread's ``process_report`` loop (or inside a wait of that thread), one at a time, in the
order the callbacks were launched (spec dvpp.md §8.1-§8.2, §9).

A sent frame is a ``Pending`` record; the codec resolves records (a picture, an encoded payload, or a failure
code) and each resolved record's callback is launched. VENC keeps its records in a FIFO and launches the resolved
ones at its head (send order); VDEC launches each frame when the decoder gives its picture (display order) or
gives up on it (``vdec.py``).

Decisions where CANN is silent:
- EOS and destroy wait for the callbacks already launched. A wait that would need the calling thread's own
  callback to finish (EOS or destroy from inside one of the channel's callbacks) is refused with
  ``ACL_ERROR_API_NOT_SUPPORT`` (200001) before anything changes: the channel stays usable.
- If the subscribed thread never runs ``process_report`` (alive but not looping), a wait gives up once no callback
  of the channel has started for ``DRAIN_PATIENCE_S`` seconds while none runs: EOS then returns
  ``ACL_ERROR_RT_REPORT_TIMEOUT`` (507012) and the frames keep waiting for the thread; destroy still destroys the
  channel, drops the callbacks that never ran (with one warning) and returns 507012. A slow callback never counts
  as a stall. A subscribed thread that has exited is handled by the runtime (its callbacks are dropped with a
  warning); destroy then also returns 507012, since frames were sent whose callbacks never ran.
- A frame whose result comes once its callback can no longer be launched (the subscribed thread has exited and
  was unsubscribed, or the device was reset under the channel) is dropped the same way: one warning, and
  destroy returns 507012 and still frees the channel and its stream.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

from openacl import atfork
from openacl.errors import AclCode, AclError
from openacl.log import get_logger
from openacl.media.formats import StreamFormat
from openacl.runtime import checker
from openacl.runtime import device as _device
from openacl.runtime import report as _report
from openacl.runtime.fields import only
from openacl.runtime.handles import HandleTable

log = get_logger("media")

DRAIN_PATIENCE_S = 5.0  # how long a wait tolerates a subscribed thread that starts no callback
_SLICE_S = 0.05

_active = threading.local()  # .channels: the channels whose callback this thread is running (innermost last)


def _running_here() -> list:
    channels = getattr(_active, "channels", None)
    if channels is None:
        channels = _active.channels = []
    return channels


class Pending:
    """One sent frame: the user's descs and data, and its result once the codec has one."""

    __slots__ = ("callback", "code", "input", "output", "resolved", "result", "seq", "target", "user_data")

    def __init__(self, callback: Callable, input_handle: int, output_handle: int, user_data: object) -> None:
        self.callback = callback
        self.input = input_handle
        self.output = output_handle
        self.user_data = user_data
        self.target: object = None  # what the output should be, as the send read it
        self.result: object = None
        self.code = 0
        self.resolved = False
        self.seq = 0

    def resolve(self, result: object = None, code: int = 0) -> None:
        self.result, self.code, self.resolved = result, code, True


class CallbackChannel:
    """The stream, subscription and frame FIFO of one VDEC or VENC channel."""

    kind = "channel"  # "vdec" / "venc", for messages

    def __init__(self, thread_id: int) -> None:
        handle = _device.create_stream()
        if checker.enabled:
            checker.disown("stream", handle)  # the channel's: it ends with the channel
        self.stream = _device.streams.get(handle)
        try:
            _report.subscribe(thread_id, self.stream, tracked=False)
        except AclError:
            _device.destroy_stream_object(self.stream, True, f"{self.kind}_create_channel")
            raise
        self.thread_id = thread_id
        self.device_id = self.stream.device_id
        self.lock = atfork.lock()  # guards the codec and the FIFO; never held while user code runs
        self.fifo: deque[Pending] = deque()
        self.sent = 0
        self.launched = 0
        self.started = 0
        self.running = 0
        self.closed = False
        self.dropped = 0  # frames whose callback could not be launched: they never run
        self.notes: list[str] = []  # warnings made under self.lock, logged by emit() once it is released
        self._refused: list[Pending] = []  # records whose callback was refused, let go of by emit() (see launch)
        self._unreported = 0  # dropped frames no warning has counted yet
        self._drop_reason = ""

    # ----- frames -----

    def number(self, record: Pending) -> None:
        """Give a sent frame its sequence number (hold ``self.lock``)."""
        record.seq = self.sent
        self.sent += 1

    def add(self, record: Pending) -> None:
        """Number a sent frame and queue it in the FIFO (hold ``self.lock``)."""
        self.number(record)
        self.fifo.append(record)

    def launch_resolved(self) -> None:
        """Launch the callbacks of the resolved frames at the head of the FIFO (hold ``self.lock``)."""
        fifo = self.fifo
        while fifo and fifo[0].resolved:
            self.launch(fifo.popleft())

    def launch(self, record: Pending) -> None:
        """Launch one resolved frame's callback (hold ``self.lock``).

        A callback the runtime refuses (no subscribed thread any more, a stream torn down by a reset) can never
        run: it is dropped and counted, for one warning (``emit``) and for ``close``'s 507012."""
        try:
            _report.launch(self._run, record, _report.ACL_CALLBACK_BLOCK, self.stream)
        except AclError as exc:
            self.dropped += 1
            self._unreported += 1
            self._drop_reason = str(exc)
            self._refused.append(record)  # it holds the callback and its user_data: not let go under self.lock
        else:
            self.launched += 1

    def emit(self) -> None:
        """Log what was noted under ``self.lock``, and let go of refused records (call without it: logging handlers
        and finalizers are user code)."""
        with self.lock:
            notes, self.notes = self.notes, []
            dropped, reason, self._unreported = self._unreported, self._drop_reason, 0
            refused, self._refused = self._refused, []
        del refused  # the last references to refused callbacks and their user_data may go now
        for note in notes:
            log.warning("%s", note)
        if dropped:
            log.warning(
                "%s channel: %d frame callback(s) dropped, they can no longer run: %s", self.kind, dropped, reason
            )

    def _run(self, record: Pending) -> None:
        """The callback task: runs on the subscribed thread."""
        here = _running_here()
        here.append(self)
        self.running += 1
        self.started += 1
        try:
            self.deliver(record)
        except Exception as exc:  # the user's callback: logged in one line, as pyACL's trampoline does
            log.error("%s channel: frame %d: callback raised %s: %s", self.kind, record.seq, type(exc).__name__, exc)
        finally:
            self.running -= 1
            here.pop()

    def deliver(self, record: Pending) -> None:
        """Prepare the frame's output and call the user's callback (subclasses)."""
        raise NotImplementedError

    # ----- waits -----

    def refuse_inside_own_callback(self, what: str) -> None:
        if self in _running_here():
            raise AclError(
                AclCode.ACL_ERROR_API_NOT_SUPPORT,
                f"{what} inside one of this {self.kind} channel's callbacks would wait for itself",
            )

    def wait_callbacks(self) -> bool:
        """Wait until every launched callback has run; False if the subscribed thread stalled (see module doc)."""
        if self.stream.destroyed:
            return True
        seen = self.started
        last_progress = time.monotonic()
        while True:
            try:
                self.stream.synchronize(_SLICE_S)
                return True
            except AclError as exc:
                if exc.code != AclCode.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT:
                    raise
            now = time.monotonic()
            if self.started != seen or self.running:
                seen, last_progress = self.started, now
            elif now - last_progress > DRAIN_PATIENCE_S:
                return False

    def stalled_error(self, what: str) -> AclError:
        return AclError(
            AclCode.ACL_ERROR_RT_REPORT_TIMEOUT,
            f"{what}: thread {self.thread_id} ran no callback of this {self.kind} channel for "
            f"{DRAIN_PATIENCE_S:g} s (is it looping on process_report?)",
        )

    def close(self) -> None:
        """Drain, unsubscribe and drop the stream (after the codec has flushed); raises 507012 if callbacks
        never ran. The channel is closed either way."""
        self.emit()
        drained = True
        if not self.stream.destroyed:  # a device reset under the channel leaves nothing to wait for or free
            drained = self.wait_callbacks()
            if self.stream.subscription is not None:
                _report.unsubscribe(
                    self.stream.subscription.thread_id, self.stream, reason=f"{self.kind}_destroy_channel"
                )
            _device.destroy_stream_object(self.stream, True, f"{self.kind}_destroy_channel")
        undelivered = self.launched - self.started + self.dropped
        if not drained or undelivered:
            raise AclError(
                AclCode.ACL_ERROR_RT_REPORT_TIMEOUT,
                f"{self.kind}_destroy_channel: {undelivered} frame callback(s) never ran on thread {self.thread_id}",
            )


def destroy_channel_desc(table: HandleTable, lifetime: threading.Lock, handle: int, kind: str) -> None:
    """Destroy a VDEC/VENC channel desc; one whose channel still exists is refused, as DVPP does."""
    with lifetime:
        desc = table.get(handle)
        if desc.channel is not None:
            raise AclError(
                AclCode.ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED, f"{kind} channel of desc {handle:#x} is not destroyed"
            )
        table.remove(handle)


# A channel's stream format: one of DVPP's H.265/H.264 numbers (the VDEC and VENC channel descs' ``entype``).
check_entype = only(
    lambda entype: entype in set(StreamFormat), "entype {} is not a stream format (0 H.265 main, 1..3 H.264)"
)
