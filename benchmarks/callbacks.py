"""Stream callbacks against raw queue.SimpleQueue baselines, measured side by side in one run.

(a) BLOCK callback round trip (launch_callback + synchronize_stream, served by a report thread)
    vs a two-thread SimpleQueue ping-pong.                                          target ratio <= 1.5
(b) NO_BLOCK callback throughput (launch N, one report thread runs them, synchronize)
    vs its floor, row (b1), measured in the same run.                              target ratio <= 4.0
(b cpu) the same runs' process CPU time per callback, ours vs (b1): what wall time hides on a shared machine.
(b0) (b1) the least a pure-Python launch_callback and report thread can do: argument checks, a deque and a
    wake-up, with no lock (b0) or with one lock shared by the two threads (b1), which is how openacl keeps
    its rules; each against a SimpleQueue producer/consumer that calls the same function (a C queue: for
    scale only, no target).
(c) latency from the stream reaching a callback task to the callback starting, with the report thread
    idle in process_report, vs SimpleQueue put -> blocked get wake-up.             target p50 <= 20 µs

Each figure is the median of interleaved rounds (baseline, then openacl, round after round); its spread is
the rounds' ratios, min-max, flagged "moved" when it exceeds 20 % of the median.

Usage: python benchmarks/callbacks.py [--quick] [--json]
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from queue import SimpleQueue

from _common import Rounds, argument_parser, print_rows, ratio_rounds, rounds_row, row

import openacl
from openacl import trace

openacl.install()
import acl  # noqa: E402

BLOCK, NO_BLOCK = 1, 0
LATENCY_P50_TARGET_US = 20.0


def _noop(_data: object) -> None:
    pass


class Setup:
    """Device, context, stream and a report thread blocked in process_report(-1) between callbacks."""

    def __init__(self) -> None:
        acl.init()
        acl.rt.set_device(0)
        self.ctx, _ = acl.rt.create_context(0)
        self.stream, _ = acl.rt.create_stream()
        self.stop = False

        def serve(args):
            acl.rt.set_context(args[0])
            while not self.stop:
                acl.rt.process_report(100)

        self.tid, _ = acl.util.start_thread(serve, [self.ctx])
        assert acl.rt.subscribe_report(self.tid, self.stream) == 0

    def close(self) -> None:
        acl.rt.unsubscribe_report(self.tid, self.stream)
        self.stop = True
        acl.util.stop_thread(self.tid)
        acl.rt.destroy_stream(self.stream)
        acl.rt.destroy_context(self.ctx)
        acl.rt.reset_device(0)
        acl.finalize()


# ----- (a) round trip -----


def block_round_trip(setup: Setup, n: int) -> float:
    stream, launch, sync = setup.stream, acl.rt.launch_callback, acl.rt.synchronize_stream
    start = time.perf_counter()
    for _ in range(n):
        launch(_noop, None, BLOCK, stream)
        sync(stream)
    return (time.perf_counter() - start) / n


def queue_ping_pong(n: int) -> float:
    ping, pong = SimpleQueue(), SimpleQueue()

    def echo():
        while True:
            item = ping.get()
            if item is None:
                return
            fn, data = item
            fn(data)
            pong.put(data)

    thread = threading.Thread(target=echo)
    thread.start()
    item = (_noop, None)
    start = time.perf_counter()
    for _ in range(n):
        ping.put(item)
        pong.get()
    elapsed = (time.perf_counter() - start) / n
    ping.put(None)
    thread.join()
    return elapsed


# ----- (b) throughput -----


def no_block_throughput(setup: Setup, n: int) -> float:
    stream, launch = setup.stream, acl.rt.launch_callback
    start = time.perf_counter()
    for i in range(n):
        launch(_noop, i, NO_BLOCK, stream)
    acl.rt.synchronize_stream(stream)
    return n / (time.perf_counter() - start)


def queue_throughput(n: int) -> float:
    queue: SimpleQueue = SimpleQueue()
    done = threading.Event()

    def consume():
        for _ in range(n):
            fn, data = queue.get()
            fn(data)
        done.set()

    thread = threading.Thread(target=consume)
    thread.start()
    start = time.perf_counter()
    for i in range(n):
        queue.put((_noop, i))
    done.wait()
    rate = n / (time.perf_counter() - start)
    thread.join()
    return rate


def bare_python_throughput(n: int, shared_lock: bool) -> float:
    """(b) for the least a pure-Python launch_callback and report thread can do, with none of openacl's rules.

    ``launch`` checks its arguments, appends and wakes the report thread if it sleeps; the report thread
    drains and calls. With ``shared_lock`` both sides take one lock per callback, as openacl does (and the
    way it does) to keep its rules: stream order, drop before start, synchronize. Without it they rely on
    the GIL alone.
    """
    lock = threading.Lock()

    def wait_for(lock: threading.Lock) -> None:  # as openacl takes its lock: see runtime/sched/lock.acquire
        while not lock.acquire(False):
            time.sleep(0)

    pending: deque = deque()
    wake: SimpleQueue = SimpleQueue()
    asleep = [True]
    done = threading.Event()

    def launch(fn, user_data, block_type, stream) -> int:
        if not callable(fn) or type(block_type) is not int or type(stream) is not int:
            raise TypeError("args parse failed")
        if shared_lock and not lock.acquire(False):
            wait_for(lock)
        pending.append((fn, user_data))
        if asleep[0]:
            asleep[0] = False
            wake.put(None)
        if shared_lock:
            lock.release()
        return 0

    def report() -> None:
        ran = 0
        while ran < n:
            wake.get()
            asleep[0] = True  # before draining: a launch after the last popleft sees it and wakes us again
            while True:
                if shared_lock and not lock.acquire(False):
                    wait_for(lock)
                try:
                    fn, user_data = pending.popleft()
                except IndexError:
                    break
                finally:
                    if shared_lock:
                        lock.release()
                fn(user_data)
                ran += 1
        done.set()

    thread = threading.Thread(target=report)
    thread.start()
    start = time.perf_counter()
    for i in range(n):
        launch(_noop, i, NO_BLOCK, 1)
    done.wait()
    rate = n / (time.perf_counter() - start)
    thread.join()
    return rate


def cpu_per_item(run: Callable[[], float], n: int, into: list[float]) -> float:
    """``run()``, noting the process CPU time it took per item in ``into``: on a shared machine, where wall time
    also measures the neighbours, what each side costs."""
    start = time.process_time()
    value = run()
    into.append((time.process_time() - start) / n)
    return value


# ----- (c) latency -----


def callback_latency(setup: Setup, n: int) -> list[float]:
    recorder = trace.start()
    for i in range(n):
        acl.rt.launch_callback(_noop, i, NO_BLOCK, setup.stream)
        time.sleep(0.0005)  # let the report thread go back to waiting
    acl.rt.synchronize_stream(setup.stream)
    trace.stop()
    return [(s.start_ns - s.queued_ns) / 1000 for s in recorder.spans if s.category == "callback"]


def queue_latency(n: int) -> list[float]:
    queue: SimpleQueue = SimpleQueue()
    out: list[float] = []

    def consume():
        while True:
            stamp = queue.get()
            if stamp is None:
                return
            out.append((time.perf_counter_ns() - stamp) / 1000)

    thread = threading.Thread(target=consume)
    thread.start()
    for _ in range(n):
        queue.put(time.perf_counter_ns())
        time.sleep(0.0005)
    queue.put(None)
    thread.join()
    return out


def _micro(microseconds: float) -> str:
    return f"{microseconds:.1f} µs"


def _seconds_as_micro(seconds: float) -> str:
    return _micro(seconds * 1e6)


def _seconds_as_ns(seconds: float) -> str:
    return f"{seconds * 1e9:,.0f} ns"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def main() -> int:
    args = argument_parser(__doc__).parse_args()
    scale = 10 if args.quick else 1
    rounds = 3 if args.quick else 9
    setup = Setup()
    try:
        round_trip = ratio_rounds(
            rounds, lambda: block_round_trip(setup, 3_000 // scale), lambda: queue_ping_pong(3_000 // scale)
        )
        n = 30_000 // scale
        cpu: tuple[list[float], list[float]] = ([], [])
        throughput = ratio_rounds(
            rounds,
            lambda: cpu_per_item(lambda: no_block_throughput(setup, n), n, cpu[0]),
            lambda: cpu_per_item(lambda: bare_python_throughput(n, shared_lock=True), n, cpu[1]),
            higher_is_better=True,
        )
        bare = {
            shared_lock: ratio_rounds(
                rounds,
                lambda shared_lock=shared_lock: bare_python_throughput(30_000 // scale, shared_lock),
                lambda: queue_throughput(30_000 // scale),
                higher_is_better=True,
            )
            for shared_lock in (False, True)
        }
        latencies = [(callback_latency(setup, 600 // scale), queue_latency(600 // scale)) for _ in range(rounds)]
    finally:
        setup.close()

    p50 = Rounds(*(tuple(percentile(side, 0.5) for side in sides) for sides in zip(*latencies, strict=True)))
    lat_ours = [value for ours, _ in latencies for value in ours]
    lat_base = [value for _, base in latencies for value in base]
    rows = [
        rounds_row("(a) BLOCK callback round trip", round_trip, _seconds_as_micro, "<= 1.5"),
        rounds_row("(b) NO_BLOCK callbacks per second vs (b1)", throughput, "{:,.0f}".format, "<= 4.0"),
        rounds_row("(b cpu) NO_BLOCK CPU time per callback vs (b1)", Rounds(*map(tuple, cpu)), _seconds_as_ns, ""),
        rounds_row("(b0) bare Python queue, GIL only, vs SimpleQueue", bare[False], "{:,.0f}".format, ""),
        rounds_row("(b1) bare Python queue, 1 lock, vs SimpleQueue", bare[True], "{:,.0f}".format, ""),
        row(
            "(c) reached -> started p50",
            _micro(p50.ours_median),
            _micro(p50.baseline_median),
            p50.ratio,
            "p50 <= 20 µs",
            spread=(p50.low, p50.high),
            within=p50.ours_median <= LATENCY_P50_TARGET_US,
        ),
        row(
            "(c) reached -> started p99",
            _micro(percentile(lat_ours, 0.99)),
            _micro(percentile(lat_base, 0.99)),
            percentile(lat_ours, 0.99) / percentile(lat_base, 0.99),
            "",
        ),
    ]
    notes = [
        f"median of {rounds} interleaved rounds (baseline, then openacl); spread: the rounds' ratios, min-max",
        f"(latency samples: {len(lat_ours)}; mean {statistics.fmean(lat_ours):.1f} µs)",
    ]
    print_rows(rows, args.json, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
