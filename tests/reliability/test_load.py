"""Load: the documented maximum of subscribed report threads, and thousands of busy streams on one device.

tests/runtime/test_report_load.py covers 32 threads x 128 streams x 1,000 callbacks and
tests/acl/test_callbacks.py the 1,025th subscription with made-up thread ids; here every one of the 1,024
threads is real and serving, and 2,048 streams carry copies, events, callbacks and model runs at once.
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np

import acl
from openacl.errors import AclCode
from openacl.runtime import report
from tests.model_io import ModelIO, demo_input, reference
from tests.reliability.reporters import BlockedReporter

NO_BLOCK, BLOCK = 0, 1
SUCCESS = 0
H2D, D2H = 1, 2
RT_THREAD_SUBSCRIBE = AclCode.ACL_ERROR_RT_THREAD_SUBSCRIBE  # 107012
RT_INTERNAL_ERROR = AclCode.ACL_ERROR_RT_INTERNAL_ERROR  # 507000: more than MAX_THREADS subscribed threads
STREAMS = 2048


def test_1024_real_report_threads_serve_their_streams_and_the_1025th_is_rejected(ctx):
    assert report.MAX_THREADS == 1024
    go = threading.Event()
    servers = [BlockedReporter(go=go) for _ in range(report.MAX_THREADS + 1)]
    streams = [acl.rt.create_stream()[0] for _ in range(report.MAX_THREADS + 1)]
    try:
        codes = [acl.rt.subscribe_report(srv.tid, s) for srv, s in zip(servers, streams, strict=True)]
        assert codes[: report.MAX_THREADS] == [SUCCESS] * report.MAX_THREADS
        assert codes[-1] == RT_INTERNAL_ERROR  # the 1,025th thread
        assert report.subscribed_thread_count() == report.MAX_THREADS
        # a subscribed thread may take more streams: the limit counts threads
        assert acl.rt.subscribe_report(servers[0].tid, streams[-1]) == SUCCESS
        go.set()

        ran_on: dict[tuple[int, int], int] = {}
        lock = threading.Lock()

        def record(key):
            with lock:
                ran_on[key] = threading.get_ident()

        for i, s in enumerate(streams):
            assert acl.rt.launch_callback(record, (i, BLOCK), BLOCK, s) == SUCCESS
            assert acl.rt.launch_callback(record, (i, NO_BLOCK), NO_BLOCK, s) == SUCCESS
        for s in streams:
            assert acl.rt.synchronize_stream(s) == SUCCESS
        owner = [srv.tid for srv in servers[: report.MAX_THREADS]] + [servers[0].tid]
        assert ran_on == {(i, kind): owner[i] for i in range(len(streams)) for kind in (BLOCK, NO_BLOCK)}
    finally:
        go.set()
        for i, s in enumerate(streams[: report.MAX_THREADS]):
            assert acl.rt.unsubscribe_report(servers[i].tid, s) in (SUCCESS, AclCode.ACL_ERROR_RT_STREAM_SUBSCRIBE)
        acl.rt.unsubscribe_report(servers[0].tid, streams[-1])
        for srv in servers:
            assert acl.util.stop_thread(srv.tid) == SUCCESS
    assert all(srv.codes[-1] == RT_THREAD_SUBSCRIBE for srv in servers)  # each woke when unsubscribed
    assert report.subscribed_thread_count() == 0
    me = threading.get_ident()  # the room is free again
    assert acl.rt.subscribe_report(me, streams[-1]) == SUCCESS
    assert acl.rt.unsubscribe_report(me, streams[-1]) == SUCCESS


def test_2048_streams_with_work_on_one_device_all_complete(ctx):
    """Every stream copies its own data in and out, runs a callback and records an event that the next stream
    waits for (chains of 8 streams); every 32nd stream also runs the model. One synchronize_device
    later everything is done and right, on a bounded pool of engine threads."""
    go = threading.Event()
    servers = [BlockedReporter(go=go) for _ in range(8)]
    streams = [acl.rt.create_stream()[0] for _ in range(STREAMS)]
    for i, s in enumerate(streams):
        assert acl.rt.subscribe_report(servers[i % len(servers)].tid, s) == SUCCESS
    go.set()
    size = 260
    payloads = [np.full(256, i % 251, np.uint8).tobytes() + i.to_bytes(4, "little") for i in range(STREAMS)]
    source = b"".join(payloads)  # one host buffer (one registration), each stream copying its own slice
    base = acl.util.bytes_to_ptr(source)
    device = [acl.rt.malloc(size, 0)[0] for _ in range(STREAMS)]
    host = [acl.rt.malloc_host(size)[0] for _ in range(STREAMS)]
    events = [acl.rt.create_event()[0] for _ in range(STREAMS)]
    io = ModelIO()
    x = demo_input(3)
    model_streams = streams[::32]
    outputs = {s: [] for s in model_streams}
    called: list[int] = []

    start = time.monotonic()
    for i, s in enumerate(streams):
        if i % 8:
            assert acl.rt.stream_wait_event(s, events[i - 1]) == SUCCESS
        assert acl.rt.memcpy_async(device[i], size, base + i * size, size, H2D, s) == SUCCESS
        assert acl.rt.memcpy_async(host[i], size, device[i], size, D2H, s) == SUCCESS
        if s in outputs:
            io.load_input(x, s)
            assert acl.mdl.execute_async(io.model_id, io.inputs[0], io.outputs[0], s) == SUCCESS
            assert acl.rt.launch_callback(lambda out: out.append(io.read_outputs()[0]), outputs[s], BLOCK, s) == 0
        assert acl.rt.launch_callback(called.append, i, i % 2, s) == SUCCESS
        assert acl.rt.record_event(events[i], s) == SUCCESS
    assert acl.rt.synchronize_device() == SUCCESS
    elapsed = time.monotonic() - start

    assert sorted(called) == list(range(STREAMS))
    for i in range(STREAMS):
        assert acl.util.ptr_to_bytes(host[i], size) == payloads[i]
        assert acl.rt.query_event(events[i]) == (0, SUCCESS)
    want = reference(x=x)[0]
    for got in outputs.values():
        np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)
    engines = [t for t in threading.enumerate() if t.name.startswith("openacl-engine-d0-")]
    assert 0 < len(engines) <= (int(os.environ.get("OPENACL_ENGINE_THREADS", "0")) or max(2, os.cpu_count() or 2))
    assert elapsed < 60

    for i, s in enumerate(streams):
        assert acl.rt.unsubscribe_report(servers[i % len(servers)].tid, s) == SUCCESS
    for srv in servers:
        assert acl.util.stop_thread(srv.tid) == SUCCESS
    for i, s in enumerate(streams):
        assert acl.rt.destroy_event(events[i]) == SUCCESS
        assert acl.rt.destroy_stream(s) == SUCCESS
        acl.rt.free(device[i])
        acl.rt.free_host(host[i])


def test_regression_bytes_to_ptr_on_one_buffer_in_a_loop_does_not_grow_the_address_space(ctx):
    """Found by benchmarks/soak.py: every bytes_to_ptr / numpy_to_ptr call registered the object's memory
    again, so a program that passes the same host buffer each iteration (as the samples do) grew openacl's
    address space by one region per call, without bound (and each registration got slower)."""
    import warnings

    from openacl.runtime import memory

    data = bytes(range(256)) * 16
    array = np.arange(1024, dtype=np.float32)
    dev, _ = acl.rt.malloc(len(data), 0)
    before = len(memory.space.regions())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(20_000):
            ptr = acl.util.bytes_to_ptr(data)
            assert acl.rt.memcpy(dev, len(data), ptr, len(data), H2D) == SUCCESS
            acl.util.numpy_to_ptr(array)
    assert len(memory.space.regions()) - before <= 2
    assert acl.util.ptr_to_bytes(acl.util.bytes_to_ptr(data), len(data)) == data
    copy = bytes(bytearray(data))  # an equal but distinct object is still registered on its own
    assert acl.util.ptr_to_bytes(acl.util.bytes_to_ptr(copy), len(copy)) == data
    array.flags.writeable = False  # a change of writability is honoured: the new registration is read-only
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ptr = acl.util.numpy_to_ptr(array)
    assert acl.rt.memcpy(ptr, 16, dev, 16, D2H) == AclCode.ACL_ERROR_INVALID_PARAM
    acl.rt.free(dev)
