"""Events against the scheduler: generations, pending records, chains across streams."""

from __future__ import annotations

import threading

import pytest

import acl
from openacl.errors import AclCode, AclError
from openacl.runtime import device as rt_device
from openacl.runtime.sched.task import work_task
from tests.acl.test_callbacks import Held, ReportThread

SUCCESS = 0
BLOCK = 1


@pytest.mark.slow
def test_regression_event_chain_of_5000_streams_resumes_iteratively(ctx):
    """Stream k waits for event k-1 and records event k; the head is held by a BLOCK callback. Releasing the
    head used to resume the chain recursively under LOCK (RecursionError near 330 streams, the last stream
    hung); the chain now resumes in a loop and the last event completes."""
    count = 5000
    reporter = ReportThread(ctx)
    try:
        head = acl.rt.create_stream()[0]
        assert acl.rt.subscribe_report(reporter.tid, head) == SUCCESS
        held = Held()
        assert acl.rt.launch_callback(held, None, BLOCK, head) == SUCCESS
        events = [acl.rt.create_event()[0] for _ in range(count)]
        assert acl.rt.record_event(events[0], head) == SUCCESS
        streams = [head]
        for k in range(1, count):
            s = acl.rt.create_stream()[0]
            streams.append(s)
            assert acl.rt.stream_wait_event(s, events[k - 1]) == SUCCESS
            assert acl.rt.record_event(events[k], s) == SUCCESS
        assert held.entered.wait(10)
        assert acl.rt.query_event(events[-1]) == (1, SUCCESS)  # not ready: the whole chain is held
        held.release.set()
        assert acl.rt.synchronize_event_with_timeout(events[-1], 30_000) == SUCCESS
        assert acl.rt.synchronize_stream_with_timeout(streams[-1], 30_000) == SUCCESS
        assert set(reporter.codes) <= {SUCCESS, 507012, 107012}  # no 500000 from the chain
        acl.rt.unsubscribe_report(reporter.tid, head)
    finally:
        reporter.close()


def test_regression_record_event_racing_destroy_stream_never_strands_the_event(ctx):
    """One thread creates and destroys streams in a loop, another records one event on whichever stream is
    current. A refused record used to have counted its generation already, so synchronize_event never
    returned; now a refused record leaves the event as it was."""
    event = acl.rt.create_event()[0]
    current: list[int] = [acl.rt.create_stream()[0]]
    stop = threading.Event()
    codes: list[int] = []

    recording = threading.Event()

    def churn() -> None:
        acl.rt.set_context(ctx)
        recording.wait(10)
        for _ in range(300):
            old = current[0]
            current[0] = acl.rt.create_stream()[0]
            acl.rt.destroy_stream(old)
        stop.set()

    def record() -> None:
        acl.rt.set_context(ctx)
        while not stop.is_set():
            codes.append(acl.rt.record_event(event, current[0]))
            recording.set()

    threads = [threading.Thread(target=churn), threading.Thread(target=record)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert set(codes) <= {SUCCESS, AclCode.ACL_ERROR_INVALID_PARAM}
    assert acl.rt.synchronize_event_with_timeout(event, 5_000) == SUCCESS
    assert SUCCESS in codes
    assert acl.rt.query_event(event) == (0, SUCCESS)


def test_a_refused_record_leaves_the_generation_alone(ctx):
    s = acl.rt.create_stream()[0]
    stream = rt_device.resolve(s)
    event = rt_device.events.get(acl.rt.create_event()[0])
    assert acl.rt.destroy_stream(s) == SUCCESS
    with pytest.raises(AclError):
        event.record(stream)
    assert event.statistics() == {"recorded_gen": 0, "completed_gen": 0, "pending_records": 0, "holding_streams": 0}


def test_pending_records_are_kept_by_the_event_until_passed(ctx, stream):
    gate = threading.Event()
    s = rt_device.resolve(stream)
    s.enqueue(work_task("gate", gate.wait))
    handle = acl.rt.create_event()[0]
    event = rt_device.events.get(handle)
    assert acl.rt.record_event(handle, stream) == SUCCESS
    assert acl.rt.record_event(handle, stream) == SUCCESS
    assert event.statistics()["pending_records"] == 2
    gate.set()
    assert acl.rt.synchronize_event(handle) == SUCCESS
    assert event.statistics() == {"recorded_gen": 2, "completed_gen": 2, "pending_records": 0, "holding_streams": 0}
