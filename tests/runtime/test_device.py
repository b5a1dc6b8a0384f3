"""Device and context lifetimes: teardown drains with Device.lock released."""

from __future__ import annotations

import threading

import acl
from tests.acl.test_callbacks import ReportThread

SUCCESS = 0
BLOCK = 1


def test_regression_destroy_context_while_a_pending_block_callback_calls_set_device():
    """destroy_context held Device.lock while it drained the context's streams; a pending BLOCK callback that
    called acl.rt.set_device(0) then deadlocked. The drain now runs with the lock released."""
    assert acl.rt.set_device(0) == SUCCESS
    primary = acl.rt.get_context()[0]
    context, _ = acl.rt.create_context(0)
    stream, _ = acl.rt.create_stream()
    reporter = ReportThread(context)
    codes: list[int] = []
    try:
        assert acl.rt.subscribe_report(reporter.tid, stream) == SUCCESS
        gate = threading.Event()
        assert acl.rt.launch_callback(lambda _: gate.wait(10), None, BLOCK, stream) == SUCCESS
        assert acl.rt.launch_callback(lambda _: codes.append(acl.rt.set_device(0)), None, BLOCK, stream) == SUCCESS
        acl.rt.set_context(primary)
        done: list[int] = []

        def destroy() -> None:
            done.append(acl.rt.destroy_context(context))

        worker = threading.Thread(target=destroy)
        worker.start()
        gate.set()
        worker.join(10)
        assert not worker.is_alive(), "destroy_context deadlocked"
        assert done == [SUCCESS] and codes == [SUCCESS]
    finally:
        reporter.close()
    assert acl.rt.reset_device(0) == SUCCESS  # the callback's set_device took a reference of its own
    assert acl.rt.reset_device(0) == SUCCESS


def test_set_device_during_a_reset_keeps_the_device_open():
    """A reference taken while reset_device drains (here by a pending callback) keeps the device as it is."""
    assert acl.rt.set_device(0) == SUCCESS
    context = acl.rt.get_context()[0]
    stream, _ = acl.rt.create_stream()
    reporter = ReportThread(context)
    try:
        assert acl.rt.subscribe_report(reporter.tid, stream) == SUCCESS
        assert acl.rt.launch_callback(lambda _: acl.rt.set_device(0), None, BLOCK, stream) == SUCCESS
        assert acl.rt.reset_device(0) == SUCCESS
        host, _ = acl.rt.malloc_host(8)
        dev, _ = acl.rt.malloc(8, 0)
        assert acl.rt.memcpy_async(dev, 8, host, 8, 1, stream) == SUCCESS  # still open, stream and all
        assert acl.rt.synchronize_stream(stream) == SUCCESS
        acl.rt.unsubscribe_report(reporter.tid, stream)
    finally:
        reporter.close()
    assert acl.rt.reset_device(0) == SUCCESS
