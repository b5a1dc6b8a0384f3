"""A hypothesis state machine over streams, events, copies and callbacks, checked against the stream guarantees.

Three streams share one report thread. Random sequences of ``memcpy_async`` (each stream writes an ever larger
number into its own device cell), BLOCK and NO_BLOCK callbacks, ``record_event`` / ``stream_wait_event``
across streams and ``synchronize_stream`` are checked against what ``runtime/stream.py`` and
``runtime/report.py`` promise:

- every callback runs exactly once, on the report thread, and a stream's callbacks run in launch order;
- a BLOCK callback sees its own stream's cell exactly as the last copy before it left it (the stream is held);
- after ``stream_wait_event``, a BLOCK callback sees the recording stream's cell at least as the copies before
  the record left it;
- when ``synchronize_stream`` returns, every callback launched on that stream before it has run;
- the interleavings of the runtime issue: an event chain across fresh streams completes; a record racing the
  destroy of its stream never strands the event; a callback may unsubscribe or destroy a stream (its own
  stream's destroy is refused with 200001, not a deadlock); a forked child runs its own stream work.
"""

from __future__ import annotations

import os
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

    # ----- the runtime issue's interleavings, on streams of their own -----

    @rule(length=st.integers(2, 60), held=st.booleans())
    def event_chain(self, length: int, held: bool) -> None:
        """Stream k waits for event k-1 and records event k; the head may be held by a BLOCK callback."""
        streams = [acl.rt.create_stream()[0] for _ in range(length)]
        events = [acl.rt.create_event()[0] for _ in range(length)]
        gate = threading.Event()
        if held:
            assert acl.rt.subscribe_report(self.tid, streams[0]) == 0
            assert acl.rt.launch_callback(lambda _: gate.wait(10), None, BLOCK, streams[0]) == 0
        assert acl.rt.record_event(events[0], streams[0]) == 0
        for k in range(1, length):
            assert acl.rt.stream_wait_event(streams[k], events[k - 1]) == 0
            assert acl.rt.record_event(events[k], streams[k]) == 0
        gate.set()
        assert acl.rt.synchronize_event_with_timeout(events[-1], 10_000) == 0
        if held:
            assert acl.rt.unsubscribe_report(self.tid, streams[0]) == 0
        for stream in streams:
            assert acl.rt.destroy_stream(stream) == 0
        for event in events:
            assert acl.rt.destroy_event(event) == 0

    @rule(records=st.integers(1, 30), force=st.booleans())
    def destroy_during_record(self, records: int, force: bool) -> None:
        """Records race the destroy of their stream: each is refused or completes; the event never strands."""
        stream = acl.rt.create_stream()[0]
        event = acl.rt.create_event()[0]
        codes: list[int] = []

        def record() -> None:
            acl.rt.set_context(self.context)
            for _ in range(records):
                codes.append(acl.rt.record_event(event, stream))

        thread = threading.Thread(target=record)
        thread.start()
        assert (acl.rt.destroy_stream_force if force else acl.rt.destroy_stream)(stream) == 0
        thread.join(10)
        assert set(codes) <= {0, 100000}
        assert acl.rt.synchronize_event_with_timeout(event, 10_000) == 0
        assert acl.rt.destroy_event(event) == 0

    @rule(own=st.booleans(), unsubscribe=st.booleans())
    def teardown_inside_a_callback(self, own: bool, unsubscribe: bool) -> None:
        """A callback unsubscribes or destroys a stream: its own (destroy: 200001) or another one with work."""
        target = acl.rt.create_stream()[0]
        host = acl.util.bytes_to_ptr(b"\x01\x02\x03\x04")
        self.keep.append(host)
        assert acl.rt.subscribe_report(self.tid, target) == 0
        scratch = acl.rt.malloc(4, 0)[0]
        assert acl.rt.memcpy_async(scratch, 4, host, 4, H2D, target) == 0
        home = target if own else self.streams[0]
        codes: list[int] = []

        def callback(_data) -> None:
            if unsubscribe:
                codes.append(acl.rt.unsubscribe_report(self.tid, target))
            else:
                codes.append(acl.rt.destroy_stream(target))

        assert acl.rt.launch_callback(callback, None, BLOCK, home) == 0
        assert acl.rt.synchronize_stream_with_timeout(home, 10_000) in (0, 100000)  # home may be gone
        expected = 200001 if own and not unsubscribe else 0
        assert codes == [expected], codes
        if unsubscribe:
            assert acl.rt.destroy_stream(target) == 0
        elif own:
            assert acl.rt.unsubscribe_report(self.tid, target) == 0
            assert acl.rt.destroy_stream(target) == 0
        assert acl.rt.free(scratch) == 0

    @precondition(lambda self: getattr(self, "forks", 0) < 2 and hasattr(os, "fork"))
    @rule()
    def fork(self) -> None:
        """A forked child runs stream work of its own on its own engine threads."""
        self.forks = getattr(self, "forks", 0) + 1
        pid = os.fork()
        if pid == 0:
            status = 9  # the child raised
            try:
                stream, ret = acl.rt.create_stream()
                data = struct.pack("<i", 7)
                ptr = acl.util.bytes_to_ptr(data)
                if ret != 0:
                    status = 2
                elif acl.rt.memcpy_async(self.cells[0], 4, ptr, 4, H2D, stream) != 0:
                    status = 3
                elif (ret := acl.rt.synchronize_stream_with_timeout(stream, 5_000)) != 0:
                    status = 4 if ret == 507046 else 5  # 507046: the child's stream did not finish in 5 s
                else:
                    status = 0 if self._read(0) == 7 else 6
            finally:
                os._exit(status)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status), status
        assert os.WEXITSTATUS(status) == 0, f"the child failed at step {os.WEXITSTATUS(status)}"

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
