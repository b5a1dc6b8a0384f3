"""``openacl demo``: the stream-callback system at work, written as a pyACL program would be.

Two streams share one report thread (``acl.util.start_thread`` looping ``process_report``). On each stream,
every step copies a value to device memory (``memcpy_async``) and queues a BLOCK callback that copies it back
inside the callback, as the official sample does, and checks it; every tenth step also queues a NO_BLOCK
callback. The report says whether every callback ran once, in order, on the report thread, with the data the
stream had produced, and how long the stream took to hand each callback to that thread.
"""

from __future__ import annotations

import struct
import threading
import time

from rich.console import Console
from rich.table import Table

from openacl import acl, trace

ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
ACL_CALLBACK_NO_BLOCK, ACL_CALLBACK_BLOCK = 0, 1


def _check(ret: int, what: str) -> None:
    if ret != 0:
        raise RuntimeError(f"{what} returned {ret}")


class _StreamWork:
    """One stream's data and what its callbacks saw."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.host_in = struct.pack(f"<{steps}i", *range(steps))
        self.host_in_ptr = acl.util.bytes_to_ptr(self.host_in)
        self.dev, ret = acl.rt.malloc(4 * steps, ACL_MEM_MALLOC_NORMAL_ONLY)
        _check(ret, "malloc")
        self.host_out, ret = acl.rt.malloc_host(4)
        _check(ret, "malloc_host")
        self.stream, ret = acl.rt.create_stream()
        _check(ret, "create_stream")
        self.seen: list[int] = []
        self.wrong: list[int] = []
        self.threads: set[int] = set()
        self.no_block = 0

    def post_process(self, step: int) -> None:
        """A BLOCK callback: read the step's result back from device memory and check it."""
        self.threads.add(threading.get_ident())
        acl.rt.memcpy(self.host_out, 4, self.dev + 4 * step, 4, ACL_MEMCPY_DEVICE_TO_HOST)
        (value,) = struct.unpack("<i", acl.util.ptr_to_bytes(self.host_out, 4))
        self.seen.append(step)
        if value != step:
            self.wrong.append(step)

    def count(self, _user_data: object) -> None:
        self.threads.add(threading.get_ident())
        self.no_block += 1

    def enqueue(self) -> None:
        for step in range(self.steps):
            offset = 4 * step
            acl.rt.memcpy_async(
                self.dev + offset, 4, self.host_in_ptr + offset, 4, ACL_MEMCPY_HOST_TO_DEVICE, self.stream
            )
            acl.rt.launch_callback(self.post_process, step, ACL_CALLBACK_BLOCK, self.stream)
            if step % 10 == 0:
                acl.rt.launch_callback(self.count, None, ACL_CALLBACK_NO_BLOCK, self.stream)


def run_demo(callbacks: int = 1000, quiet: bool = False, streams: int = 2) -> int:
    console = Console()
    recorder = trace.start()
    started = time.perf_counter()
    _check(acl.init(), "acl.init")
    _check(acl.rt.set_device(0), "set_device")
    context, ret = acl.rt.create_context(0)
    _check(ret, "create_context")
    exit_flag = threading.Event()

    def report_loop(args: list) -> None:
        acl.rt.set_context(args[0])
        while not exit_flag.is_set():
            acl.rt.process_report(args[1])

    report_tid, ret = acl.util.start_thread(report_loop, [context, 50])
    _check(ret, "start_thread")
    work = [_StreamWork(callbacks) for _ in range(streams)]
    for item in work:
        _check(acl.rt.subscribe_report(report_tid, item.stream), "subscribe_report")
    for item in work:
        item.enqueue()
    for item in work:
        _check(acl.rt.synchronize_stream(item.stream), "synchronize_stream")
    for item in work:
        _check(acl.rt.unsubscribe_report(report_tid, item.stream), "unsubscribe_report")
    exit_flag.set()
    _check(acl.util.stop_thread(report_tid), "stop_thread")
    for item in work:
        acl.rt.destroy_stream(item.stream)
        acl.rt.free(item.dev)
        acl.rt.free_host(item.host_out)
    acl.rt.destroy_context(context)
    acl.rt.reset_device(0)
    acl.finalize()
    elapsed = time.perf_counter() - started
    trace.stop()

    latencies = sorted(
        (span.start_ns - span.queued_ns) / 1000 for span in recorder.spans if span.category == "callback"
    )
    ok = True
    table = Table(title="openacl demo: stream callbacks")
    table.add_column("stream")
    table.add_column("BLOCK callbacks run", justify="right")
    table.add_column("in order", justify="center")
    table.add_column("data checked", justify="center")
    table.add_column("NO_BLOCK run", justify="right")
    table.add_column("ran on report thread", justify="center")
    for index, item in enumerate(work):
        in_order = item.seen == list(range(item.steps))
        data_ok = not item.wrong
        on_thread = item.threads == {report_tid}
        expected_no_block = len(range(0, item.steps, 10))
        ok = ok and in_order and data_ok and on_thread and item.no_block == expected_no_block
        table.add_row(
            str(index),
            f"{len(item.seen)}/{item.steps}",
            "yes" if in_order else "NO",
            "yes" if data_ok else f"{len(item.wrong)} wrong",
            f"{item.no_block}/{expected_no_block}",
            "yes" if on_thread else "NO",
        )
    total = sum(len(item.seen) + item.no_block for item in work)
    if not quiet:
        console.print(table)
        if latencies:
            p50 = latencies[len(latencies) // 2]
            p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
            console.print(f"stream reached a callback -> callback started: p50 {p50:.1f} µs, p99 {p99:.1f} µs")
        console.print(
            "Look further: [bold]openacl run examples/stream_callbacks.py[/bold] runs the canonical pyACL sample; "
            "[bold]python benchmarks/callbacks.py[/bold] measures callbacks against raw queues."
        )
    verdict = "all checks passed" if ok else "SOME CHECKS FAILED"
    console.print(f"{total} callbacks on {streams} streams in {elapsed:.2f} s: {verdict}")
    return 0 if ok else 1
