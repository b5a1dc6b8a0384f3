"""Stream callbacks against raw queue.SimpleQueue baselines, measured side by side in one run.

(a) BLOCK callback round trip (launch_callback + synchronize_stream, served by a report thread)
    vs a two-thread SimpleQueue ping-pong.                                          target ratio <= 1.5
(b) NO_BLOCK callback throughput (launch N, one report thread runs them, synchronize)
    vs its floor, row (b1), measured in the same run.                              target ratio <= 3.0
(b0) (b1) the least a pure-Python launch_callback and report thread can do: argument checks, a deque and a
    wake-up, with no lock (b0) or with one lock shared by the two threads (b1), which is how openacl keeps
    its rules; each against a SimpleQueue producer/consumer that calls the same function (a C queue: for
    scale only, no target).
(c) latency from the stream reaching a callback task to the callback starting, with the report thread
    idle in process_report, vs SimpleQueue put -> blocked get wake-up.             target p50 <= 20 µs

Usage: python benchmarks/callbacks.py [--quick] [--json]
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from collections import deque
from queue import SimpleQueue

from _common import argument_parser, interleaved, print_rows

import openacl
from openacl import trace

openacl.install()
import acl  # noqa: E402

BLOCK, NO_BLOCK = 1, 0


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


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def main() -> int:
    args = argument_parser(__doc__).parse_args()
    scale = 10 if args.quick else 1
    setup = Setup()
    try:
        rt_ours, rt_base = interleaved(
            7, lambda: block_round_trip(setup, 5_000 // scale), lambda: queue_ping_pong(5_000 // scale)
        )
        tp_ours, tp_floor = interleaved(
            3,
            lambda: no_block_throughput(setup, 100_000 // scale),
            lambda: bare_python_throughput(100_000 // scale, shared_lock=True),
            pick=max,
        )
        bare = {
            shared_lock: interleaved(
                3,
                lambda shared_lock=shared_lock: bare_python_throughput(100_000 // scale, shared_lock),
                lambda: queue_throughput(100_000 // scale),
                pick=max,
            )
            for shared_lock in (False, True)
        }
        lat_ours = callback_latency(setup, 3000 // scale)
        lat_base = queue_latency(3000 // scale)
    finally:
        setup.close()

    rows = [
        (
            "(a) BLOCK callback round trip",
            f"{rt_ours * 1e6:.1f} µs",
            f"{rt_base * 1e6:.1f} µs",
            rt_ours / rt_base,
            "<= 1.5",
        ),
        (
            "(b) NO_BLOCK callbacks per second vs (b1)",
            f"{tp_ours:,.0f}",
            f"{tp_floor:,.0f}",
            tp_floor / tp_ours,
            "<= 3.0",
        ),
        *(
            (name, f"{bare[locked][0]:,.0f}", f"{bare[locked][1]:,.0f}", bare[locked][1] / bare[locked][0], "")
            for name, locked in (
                ("(b0) bare Python queue, GIL only, vs SimpleQueue", False),
                ("(b1) bare Python queue, 1 lock, vs SimpleQueue", True),
            )
        ),
        (
            "(c) reached -> started p50",
            f"{percentile(lat_ours, 0.5):.1f} µs",
            f"{percentile(lat_base, 0.5):.1f} µs",
            percentile(lat_ours, 0.5) / percentile(lat_base, 0.5),
            "p50 <= 20 µs",
        ),
        (
            "(c) reached -> started p99",
            f"{percentile(lat_ours, 0.99):.1f} µs",
            f"{percentile(lat_base, 0.99):.1f} µs",
            percentile(lat_ours, 0.99) / percentile(lat_base, 0.99),
            "",
        ),
    ]
    notes = [f"(latency samples: {len(lat_ours)}; mean {statistics.fmean(lat_ours):.1f} µs)"]
    print_rows(rows, args.json, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
