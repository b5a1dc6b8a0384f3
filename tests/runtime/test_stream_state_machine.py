"""A hypothesis state machine over streams, events, copies and callbacks, checked against the stream guarantees.

Three streams share one report thread. Random sequences of ``memcpy_async`` (each stream writes an ever larger
number into its own device cell), BLOCK and NO_BLOCK callbacks, ``record_event`` / ``stream_wait_event``
across streams and ``synchronize_stream`` are checked against what ``runtime/stream.py`` and
``runtime/report.py`` promise:

- every callback runs exactly once, on the report thread, and a stream's callbacks run in launch order;
- a BLOCK callback sees its own stream's cell exactly as the last copy before it left it (the stream is held);
- after ``stream_wait_event``, a BLOCK callback sees the recording stream's cell at least as the copies before
  the record left it;
- when ``synchronize_stream`` returns, every callback launched on that stream before it has run.
"""

from __future__ import annotations

import struct
import threading

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import acl
from openacl import process

NO_BLOCK, BLOCK = 0, 1
H2D = 1
STREAMS = 3
EVENTS = 2


class StreamMachine(RuleBasedStateMachine):
    @initialize()
    def setup(self) -> None:
        assert acl.rt.set_device(0) == 0
        self.context, ret = acl.rt.create_context(0)
        assert ret == 0
        self.streams = [acl.rt.create_stream()[0] for _ in range(STREAMS)]
        self.events = [acl.rt.create_event()[0] for _ in range(EVENTS)]
        self.cells = [acl.rt.malloc(4, 0)[0] for _ in range(STREAMS)]
        for cell in self.cells:
            assert acl.rt.memset(cell, 4, 0, 4) == 0
        self.written = [0] * STREAMS  # the last value queued into each stream's cell
        self.launched: list[list[int]] = [[] for _ in range(STREAMS)]
        self.ran: list[list[int]] = [[] for _ in range(STREAMS)]
        self.wrong: list[str] = []
        self.threads: set[int] = set()
        self.recorded: dict[int, tuple[int, int]] = {}  # event -> (stream, value written before the record)
        self.floors: list[dict[int, int]] = [{} for _ in range(STREAMS)]  # waits: stream -> other -> min value
        self.keep: list[bytes] = []
        self.stop = threading.Event()

        def serve(args):
            acl.rt.set_context(args[0])
            while not self.stop.is_set():
                acl.rt.process_report(20)

        self.tid, ret = acl.util.start_thread(serve, [self.context])
        assert ret == 0
        for stream in self.streams:
            assert acl.rt.subscribe_report(self.tid, stream) == 0
        self.sequence = 0

    def _read(self, index: int) -> int:
        return struct.unpack("<i", acl.util.ptr_to_bytes(self.cells[index], 4))[0]

    @rule(s=st.integers(0, STREAMS - 1))
    def copy(self, s: int) -> None:
        self.written[s] += 1
        data = struct.pack("<i", self.written[s])
        self.keep.append(data)
        ptr = acl.util.bytes_to_ptr(data)
        assert acl.rt.memcpy_async(self.cells[s], 4, ptr, 4, H2D, self.streams[s]) == 0

    @rule(s=st.integers(0, STREAMS - 1), blocking=st.booleans())
    def launch(self, s: int, blocking: bool) -> None:
        self.sequence += 1
        number = self.sequence
        own = self.written[s]
        floors = dict(self.floors[s])

        def callback(_data) -> None:
            self.threads.add(threading.get_ident())
            self.ran[s].append(number)
            if blocking:
                seen = self._read(s)
                if seen != own:
                    self.wrong.append(f"stream {s} callback {number}: cell {seen}, expected {own}")
                for other, low in floors.items():
                    if self._read(other) < low:
                        self.wrong.append(f"stream {s} callback {number}: stream {other}'s cell below {low}")

        self.launched[s].append(number)
        assert acl.rt.launch_callback(callback, None, BLOCK if blocking else NO_BLOCK, self.streams[s]) == 0

    @rule(s=st.integers(0, STREAMS - 1), e=st.integers(0, EVENTS - 1))
    def record(self, s: int, e: int) -> None:
        assert acl.rt.record_event(self.events[e], self.streams[s]) == 0
        self.recorded[e] = (s, self.written[s])

    @precondition(lambda self: bool(self.recorded))
    @rule(s=st.integers(0, STREAMS - 1), data=st.data())
    def wait(self, s: int, data) -> None:
        e = data.draw(st.sampled_from(sorted(self.recorded)))
        source, value = self.recorded[e]
        assert acl.rt.stream_wait_event(self.streams[s], self.events[e]) == 0
        if source != s:
            self.floors[s][source] = max(self.floors[s].get(source, 0), value)

    @rule(s=st.integers(0, STREAMS - 1))
    def synchronize(self, s: int) -> None:
        assert acl.rt.synchronize_stream_with_timeout(self.streams[s], 10_000) == 0
        assert self.ran[s] == self.launched[s]

    @invariant()
    def callbacks_in_launch_order_and_correct(self) -> None:
        if not hasattr(self, "ran"):
            return
        for s in range(STREAMS):
            ran = list(self.ran[s])
            assert ran == self.launched[s][: len(ran)], f"stream {s} ran {ran}"
        assert not self.wrong, self.wrong

    def teardown(self) -> None:
        if not hasattr(self, "streams"):
            return
        try:
            for s, stream in enumerate(self.streams):
                assert acl.rt.synchronize_stream_with_timeout(stream, 10_000) == 0
                assert self.ran[s] == self.launched[s]
            assert self.threads <= {self.tid}
            assert not self.wrong, self.wrong
        finally:
            for stream in self.streams:
                acl.rt.unsubscribe_report(self.tid, stream)
            self.stop.set()
            acl.util.stop_thread(self.tid)
            process.reset(force=True)


StreamMachine.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_stream_state_machine = StreamMachine.TestCase
