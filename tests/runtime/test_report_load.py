"""Many report threads, many streams, many callbacks: none lost, none run twice, order kept per stream."""

from __future__ import annotations

import random
import threading

import pytest

import acl

pytestmark = pytest.mark.slow

REPORT_THREADS = 32
STREAMS = 128
CALLBACKS_PER_STREAM = 1000


def test_32_threads_128_streams_1000_mixed_callbacks_each(ctx):
    stop = threading.Event()
    tids = []

    def serve(args):
        acl.rt.set_context(args[0])
        while not stop.is_set():
            acl.rt.process_report(20)

    for _ in range(REPORT_THREADS):
        tid, ret = acl.util.start_thread(serve, [ctx])
        assert ret == 0
        tids.append(tid)
    streams = [acl.rt.create_stream()[0] for _ in range(STREAMS)]
    owner = {s: tids[i % REPORT_THREADS] for i, s in enumerate(streams)}
    for s in streams:
        assert acl.rt.subscribe_report(owner[s], s) == 0

    seen = {s: [] for s in streams}
    wrong_thread = []

    def make_callback(s):
        log = seen[s]
        expected = owner[s]

        def callback(i):
            log.append(i)
            if threading.get_ident() != expected:
                wrong_thread.append((s, i))

        return callback

    callbacks = {s: make_callback(s) for s in streams}
    rng = random.Random(7)
    # Interleave launches across streams so that every report thread serves several busy streams at once.
    for i in range(CALLBACKS_PER_STREAM):
        for s in streams:
            assert acl.rt.launch_callback(callbacks[s], i, rng.randrange(2), s) == 0
    for s in streams:
        assert acl.rt.synchronize_stream(s) == 0
    for s in streams:
        assert acl.rt.unsubscribe_report(owner[s], s) == 0
    stop.set()
    for tid in tids:
        assert acl.util.stop_thread(tid) == 0

    assert not wrong_thread
    for s in streams:
        assert seen[s] == list(range(CALLBACKS_PER_STREAM))
