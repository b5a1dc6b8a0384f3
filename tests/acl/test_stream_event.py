"""Streams and events: lifetimes, synchronization, timeouts, queries and ordering between streams."""

from __future__ import annotations

import ctypes
import os
import threading

import pytest

import acl
from openacl.errors import AclCode, AclError
from openacl.runtime import device as rt_device
from openacl.runtime.sched.task import work_task

INVALID = AclCode.ACL_ERROR_INVALID_PARAM
NO_CONTEXT = AclCode.ACL_ERROR_RT_CONTEXT_NULL
STREAM_COMPLETE, STREAM_NOT_READY = 0, 1
EVENT_COMPLETE, EVENT_NOT_READY = 0, 1
RECORDED_NOT_READY, RECORDED_COMPLETE = 0, 1


def logged(caplog, qualname: str, code: int) -> list[str]:
    head = f"{qualname}: {AclCode(code).name}({code}): "
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(head)]


def engine_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("openacl-engine-") and t.is_alive()]


@pytest.fixture
def gates():
    """Events that WORK tasks wait on; all set at teardown so no engine thread stays blocked."""
    made: list[threading.Event] = []

    def make() -> threading.Event:
        event = threading.Event()
        made.append(event)
        return event

    yield make
    for event in made:
        event.set()


def enqueue(stream: int, fn, name: str = "work") -> None:
    """Queue a WORK task through the runtime (pyACL has no call that queues Python code as stream work)."""
    rt_device.resolve(stream).enqueue(work_task(name, fn))


def hold(stream: int, gate: threading.Event, started: threading.Event | None = None) -> None:
    def work():
        if started is not None:
            started.set()
        assert gate.wait(10)

    enqueue(stream, work, "gate")


def new_stream() -> int:
    handle, ret = acl.rt.create_stream()
    assert ret == 0
    return handle


def new_event(flag: int | None = None) -> int:
    handle, ret = acl.rt.create_event() if flag is None else acl.rt.create_event_with_flag(flag)
    assert ret == 0
    return handle


# ----- streams -----


def test_create_and_destroy_stream(ctx):
    stream = new_stream()
    assert stream != 0
    assert acl.rt.stream_query(stream) == (STREAM_COMPLETE, 0)
    assert acl.rt.destroy_stream(stream) == 0


def test_create_stream_without_a_context(acl_log):
    assert acl.rt.create_stream() == (0, NO_CONTEXT)
    assert acl.rt.create_stream_with_config(0, 0) == (0, NO_CONTEXT)
    assert logged(acl_log, "acl.rt.create_stream", 107002)


@pytest.mark.parametrize("priority", range(8))
def test_create_stream_with_config_priorities(ctx, priority):
    stream, ret = acl.rt.create_stream_with_config(priority, 0)
    assert ret == 0
    assert rt_device.resolve(stream).priority == priority


@pytest.mark.parametrize(
    ("priority", "flag", "detail"), [(8, 0, "priority 8"), (100, 0, "priority 100"), (0, 0x100, "flag")]
)
def test_create_stream_with_config_invalid(ctx, acl_log, priority, flag, detail):
    assert acl.rt.create_stream_with_config(priority, flag) == (0, INVALID)
    (line,) = logged(acl_log, "acl.rt.create_stream_with_config", 100000)
    assert detail in line


def test_destroy_stream_errors(ctx, acl_log):
    stream = new_stream()
    assert acl.rt.destroy_stream(0) == INVALID  # the default stream goes with its context
    assert acl.rt.destroy_stream(stream) == 0
    assert acl.rt.destroy_stream(stream) == INVALID
    assert acl.rt.destroy_stream_force(stream) == INVALID
    assert acl.rt.destroy_stream(0xBAD0) == INVALID
    assert len(logged(acl_log, "acl.rt.destroy_stream", 100000)) == 3
    assert logged(acl_log, "acl.rt.destroy_stream_force", 100000)
    assert acl.rt.synchronize_stream(0) == 0  # the default stream is still there


def test_default_stream_handle_cannot_be_destroyed(ctx, acl_log):
    default = rt_device.resolve(0)
    assert acl.rt.destroy_stream(default.handle) == INVALID
    (line,) = logged(acl_log, "acl.rt.destroy_stream", 100000)
    assert "default stream" in line
    assert acl.rt.stream_get_id(default.handle)[1] == 0


def test_stale_stream_handles(ctx, acl_log):
    stream = new_stream()
    assert acl.rt.destroy_stream(stream) == 0
    assert acl.rt.synchronize_stream(stream) == INVALID
    assert acl.rt.stream_query(stream) == (STREAM_NOT_READY, INVALID)
    assert acl.rt.stream_get_id(stream) == (0, INVALID)
    assert acl.rt.memset_async(0, 0, 0, 0, stream) == INVALID
    (line,) = logged(acl_log, "acl.rt.synchronize_stream", 100000)
    assert "does not exist" in line


def order_after_held_work(stream, gate, label, call) -> list:
    """Hold ``stream`` at ``gate`` with work queued behind it, run ``call`` on another thread, open the gate."""
    order = []
    hold(stream, gate)
    enqueue(stream, lambda: order.append("work"))
    other = threading.Thread(target=lambda: order.append((label, call(stream))))
    other.start()
    gate.set()
    other.join()
    return order


def test_destroy_stream_waits_for_its_work(ctx, gates):
    stream = new_stream()
    order = order_after_held_work(stream, gates(), "destroyed", acl.rt.destroy_stream)
    assert order == ["work", ("destroyed", 0)]


def test_destroy_stream_force_drops_queued_work(ctx, gates):
    """A stream held by stream_wait_event: the forced destroy drops its queue and returns at once."""
    producer, consumer = new_stream(), new_stream()
    event = new_event()
    gate = gates()
    ran = []
    hold(producer, gate)
    assert acl.rt.record_event(event, producer) == 0
    assert acl.rt.stream_wait_event(consumer, event) == 0
    enqueue(consumer, lambda: ran.append("consumer work"))
    assert acl.rt.stream_query(consumer) == (STREAM_NOT_READY, 0)
    assert acl.rt.destroy_stream_force(consumer) == 0  # does not wait for the producer
    assert acl.rt.stream_query(consumer)[1] == INVALID
    gate.set()
    assert acl.rt.synchronize_stream(producer) == 0
    assert ran == []


def test_enqueue_on_a_destroyed_stream_is_refused(ctx):
    stream = new_stream()
    s = rt_device.resolve(stream)
    assert acl.rt.destroy_stream(stream) == 0
    with pytest.raises(AclError) as info:
        s.enqueue(work_task("late", lambda: None))
    assert info.value.code == INVALID


def test_synchronize_stream_runs_work_in_order(ctx):
    stream = new_stream()
    order = []
    for i in range(50):
        enqueue(stream, lambda i=i: order.append(i))
    assert acl.rt.synchronize_stream(stream) == 0
    assert order == list(range(50))


def test_synchronize_stream_from_another_thread(ctx, gates):
    stream = new_stream()
    order = order_after_held_work(stream, gates(), "synced", acl.rt.synchronize_stream)
    assert order == ["work", ("synced", 0)]


def test_synchronize_stream_with_timeout(ctx, gates, acl_log):
    stream = new_stream()
    gate = gates()
    hold(stream, gate)
    assert acl.rt.synchronize_stream_with_timeout(stream, 20) == AclCode.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    (line,) = logged(acl_log, "acl.rt.synchronize_stream_with_timeout", 507046)
    assert "not done after 20 ms" in line
    gate.set()
    assert acl.rt.synchronize_stream_with_timeout(stream, -1) == 0
    assert acl.rt.synchronize_stream_with_timeout(stream, 10) == 0


def test_synchronize_stream_with_timeout_on_a_stream_held_by_an_event(ctx, gates):
    producer, consumer = new_stream(), new_stream()
    event = new_event()
    gate = gates()
    hold(producer, gate)
    assert acl.rt.record_event(event, producer) == 0
    assert acl.rt.stream_wait_event(consumer, event) == 0
    assert acl.rt.synchronize_stream_with_timeout(consumer, 20) == 507046
    gate.set()
    assert acl.rt.synchronize_stream(consumer) == 0


@pytest.mark.parametrize("timeout", [0, -2, -(1 << 31)])
def test_synchronize_stream_with_invalid_timeout(ctx, acl_log, timeout):
    assert acl.rt.synchronize_stream_with_timeout(0, timeout) == INVALID
    (line,) = logged(acl_log, "acl.rt.synchronize_stream_with_timeout", 100000)
    assert f"timeout {timeout} ms" in line


def test_stream_query(ctx, gates):
    stream = new_stream()
    gate = gates()
    assert acl.rt.stream_query(stream) == (STREAM_COMPLETE, 0)
    hold(stream, gate)
    assert acl.rt.stream_query(stream) == (STREAM_NOT_READY, 0)
    gate.set()
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.stream_query(stream) == (STREAM_COMPLETE, 0)


def test_stream_query_bad_handle(ctx, acl_log):
    assert acl.rt.stream_query(0xBAD0) == (STREAM_NOT_READY, INVALID)
    assert logged(acl_log, "acl.rt.stream_query", 100000)


def test_stream_get_id(ctx, acl_log):
    ids = []
    for _ in range(4):
        stream_id, ret = acl.rt.stream_get_id(new_stream())
        assert ret == 0
        ids.append(stream_id)
    assert len(set(ids)) == 4
    default_id, ret = acl.rt.stream_get_id(0)
    assert ret == 0 and default_id not in ids
    assert acl.rt.stream_get_id(0xBAD0) == (0, INVALID)
    assert logged(acl_log, "acl.rt.stream_get_id", 100000)


def test_default_stream_needs_a_context(acl_log):
    assert acl.rt.synchronize_stream(0) == NO_CONTEXT
    assert acl.rt.stream_query(0)[1] == NO_CONTEXT
    assert logged(acl_log, "acl.rt.synchronize_stream", 107002)


def test_synchronize_device_waits_for_every_stream(ctx, gates):
    streams = [new_stream() for _ in range(3)]
    gate = gates()
    order = []
    for stream in streams:
        hold(stream, gate)
        enqueue(stream, lambda stream=stream: order.append(stream))

    def sync():
        assert acl.rt.set_context(ctx) == 0
        order.append(("synced", acl.rt.synchronize_device()))

    syncer = threading.Thread(target=sync)
    syncer.start()
    gate.set()
    syncer.join()
    assert sorted(order[:3]) == sorted(streams)
    assert order[3] == ("synced", 0)


def test_synchronize_device_includes_the_default_stream(ctx):
    host, _ = acl.rt.malloc_host(16)
    dev, _ = acl.rt.malloc(16, 0)
    try:
        assert acl.rt.memset_async(dev, 16, 0x33, 16, 0) == 0
        assert acl.rt.memcpy_async(host, 16, dev, 16, 2, 0) == 0
        assert acl.rt.synchronize_device() == 0
        assert ctypes.string_at(host, 16) == b"\x33" * 16
    finally:
        acl.rt.free_host(host)


def test_synchronize_device_without_a_context(acl_log):
    assert acl.rt.synchronize_device() == NO_CONTEXT
    assert logged(acl_log, "acl.rt.synchronize_device", 107002)


def test_failed_work_is_reported_by_the_next_synchronize(ctx, acl_log):
    stream = new_stream()

    def fail():
        raise ValueError("kernel fault")

    enqueue(stream, fail, "faulty")
    assert acl.rt.synchronize_stream(stream) == AclCode.ACL_ERROR_RT_INTERNAL_ERROR
    assert logged(acl_log, "acl.rt.synchronize_stream", 507000)
    assert acl.rt.synchronize_stream(stream) == 0  # reported once


def test_many_streams_share_a_few_engine_threads(ctx, gates, monkeypatch):
    monkeypatch.delenv("OPENACL_ENGINE_THREADS", raising=False)
    assert acl.rt.reset_device_force(0) == 0  # a fresh engine reads the environment
    assert acl.rt.set_device(0) == 0
    gate = gates()
    done = []
    streams = [new_stream() for _ in range(1024)]
    for stream in streams:
        hold(stream, gate)
        enqueue(stream, lambda stream=stream: done.append(stream))
    limit = max(2, os.cpu_count() or 2)
    assert 1 <= len(engine_threads()) <= limit
    assert sum(acl.rt.stream_query(s)[0] for s in streams) == 1024  # all still pending
    gate.set()
    for stream in streams:
        assert acl.rt.synchronize_stream(stream) == 0
    assert sorted(done) == sorted(streams)
    assert len(engine_threads()) <= limit


# ----- events -----


def test_create_event_without_a_context(acl_log):
    assert acl.rt.create_event() == (0, NO_CONTEXT)
    assert acl.rt.create_event_with_flag(1) == (0, NO_CONTEXT)
    assert logged(acl_log, "acl.rt.create_event", 107002)


@pytest.mark.parametrize("flag", [0, 0x1, 0x2, 0x8, 0x1 | 0x8])
def test_create_event_with_valid_flags(ctx, flag):
    event = new_event(flag)
    assert acl.rt.destroy_event(event) == 0


@pytest.mark.parametrize("flag", [0x40, 0x100, -1])
def test_create_event_with_invalid_flag(ctx, acl_log, flag):
    assert acl.rt.create_event_with_flag(flag) == (0, INVALID)
    (line,) = logged(acl_log, "acl.rt.create_event_with_flag", 100000)
    assert "is not supported" in line


def test_destroy_event_twice_and_stale_handles(ctx, acl_log):
    event = new_event()
    stream = new_stream()
    assert acl.rt.destroy_event(event) == 0
    assert acl.rt.destroy_event(event) == INVALID
    assert acl.rt.record_event(event, stream) == INVALID
    assert acl.rt.query_event(event) == (EVENT_NOT_READY, INVALID)
    assert acl.rt.query_event_status(event) == (RECORDED_NOT_READY, INVALID)
    assert acl.rt.synchronize_event(event) == INVALID
    assert acl.rt.stream_wait_event(stream, event) == INVALID
    assert logged(acl_log, "acl.rt.destroy_event", 100000)
    (line,) = logged(acl_log, "acl.rt.record_event", 100000)
    assert "event" in line and "does not exist" in line


def test_record_event_on_a_bad_stream(ctx, acl_log):
    event = new_event()
    assert acl.rt.record_event(event, 0xBAD0) == INVALID
    assert logged(acl_log, "acl.rt.record_event", 100000)
    assert acl.rt.query_event_status(event) == (RECORDED_NOT_READY, 0)


def test_event_states_before_and_after_record(ctx, gates):
    stream = new_stream()
    event = new_event()
    gate = gates()
    assert acl.rt.query_event(event) == (EVENT_COMPLETE, 0)  # nothing recorded: nothing to wait for
    assert acl.rt.query_event_status(event) == (RECORDED_NOT_READY, 0)
    hold(stream, gate)
    assert acl.rt.record_event(event, stream) == 0
    assert acl.rt.query_event(event) == (EVENT_NOT_READY, 0)
    assert acl.rt.query_event_status(event) == (RECORDED_NOT_READY, 0)
    gate.set()
    assert acl.rt.synchronize_event(event) == 0
    assert acl.rt.query_event(event) == (EVENT_COMPLETE, 0)
    assert acl.rt.query_event_status(event) == (RECORDED_COMPLETE, 0)


def test_reset_event(ctx):
    stream = new_stream()
    event = new_event()
    assert acl.rt.record_event(event, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.query_event_status(event) == (RECORDED_COMPLETE, 0)
    assert acl.rt.reset_event(event, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.query_event_status(event) == (RECORDED_NOT_READY, 0)
    assert acl.rt.record_event(event, stream) == 0
    assert acl.rt.synchronize_event(event) == 0
    assert acl.rt.query_event_status(event) == (RECORDED_COMPLETE, 0)


def test_reset_event_bad_handles(ctx, acl_log):
    event = new_event()
    assert acl.rt.reset_event(event, 0xBAD0) == INVALID
    assert acl.rt.reset_event(0xBAD0, 0) == INVALID
    assert len(logged(acl_log, "acl.rt.reset_event", 100000)) == 2


def test_synchronize_event_waits_from_another_thread(ctx, gates):
    stream = new_stream()
    event = new_event()
    gate = gates()
    order = []
    hold(stream, gate)
    enqueue(stream, lambda: order.append("before record"))
    assert acl.rt.record_event(event, stream) == 0
    waiter = threading.Thread(target=lambda: order.append(("synced", acl.rt.synchronize_event(event))))
    waiter.start()
    gate.set()
    waiter.join()
    assert order == ["before record", ("synced", 0)]


def test_synchronize_event_with_timeout(ctx, gates, acl_log):
    stream = new_stream()
    event = new_event()
    gate = gates()
    hold(stream, gate)
    assert acl.rt.record_event(event, stream) == 0
    assert acl.rt.synchronize_event_with_timeout(event, 20) == AclCode.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT
    (line,) = logged(acl_log, "acl.rt.synchronize_event_with_timeout", 507047)
    assert "event not complete after 20 ms" in line
    gate.set()
    assert acl.rt.synchronize_event_with_timeout(event, -1) == 0
    assert acl.rt.synchronize_event_with_timeout(event, 5) == 0


@pytest.mark.parametrize("timeout", [0, -5])
def test_synchronize_event_with_invalid_timeout(ctx, acl_log, timeout):
    event = new_event()
    assert acl.rt.synchronize_event_with_timeout(event, timeout) == INVALID
    assert logged(acl_log, "acl.rt.synchronize_event_with_timeout", 100000)


def test_synchronize_event_never_recorded_returns_at_once(ctx):
    assert acl.rt.synchronize_event(new_event()) == 0


def test_event_elapsed_time(ctx):
    stream = new_stream()
    start, end = new_event(), new_event()
    assert acl.rt.record_event(start, stream) == 0
    enqueue(stream, lambda: sum(range(1000)))
    assert acl.rt.record_event(end, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    ms, ret = acl.rt.event_elapsed_time(start, end)
    assert ret == 0
    assert isinstance(ms, float) and ms >= 0.0


def test_event_elapsed_time_before_completion(ctx, gates, acl_log):
    stream = new_stream()
    start, end, never = new_event(), new_event(), new_event()
    gate = gates()
    assert acl.rt.record_event(start, stream) == 0
    hold(stream, gate)
    assert acl.rt.record_event(end, stream) == 0
    assert acl.rt.event_elapsed_time(start, end) == (0.0, AclCode.ACL_ERROR_RT_EVENT_NOT_COMPLETE)
    assert acl.rt.event_elapsed_time(start, never) == (0.0, 507006)
    lines = logged(acl_log, "acl.rt.event_elapsed_time", 507006)
    assert "end event has no completed record" in lines[0]
    gate.set()
    assert acl.rt.synchronize_event(end) == 0
    ms, ret = acl.rt.event_elapsed_time(start, end)
    assert ret == 0 and ms >= 0.0


def test_event_elapsed_time_after_reset(ctx):
    stream = new_stream()
    start, end = new_event(), new_event()
    for event in (start, end):
        assert acl.rt.record_event(event, stream) == 0
    assert acl.rt.reset_event(end, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.event_elapsed_time(start, end)[1] == 507006


def test_event_elapsed_time_bad_handle(ctx, acl_log):
    event = new_event()
    assert acl.rt.event_elapsed_time(event, 0xBAD0) == (0.0, INVALID)
    assert logged(acl_log, "acl.rt.event_elapsed_time", 100000)


def test_stream_wait_event_orders_two_streams(ctx, gates):
    producer, consumer = new_stream(), new_stream()
    event = new_event()
    gate, producer_started = gates(), threading.Event()
    order = []
    hold(producer, gate, producer_started)
    enqueue(producer, lambda: order.append("producer"))
    assert acl.rt.record_event(event, producer) == 0
    assert acl.rt.stream_wait_event(consumer, event) == 0
    enqueue(consumer, lambda: order.append("consumer"))
    assert producer_started.wait(10)
    # The producer is inside its gate: the consumer is held by the event, whatever the thread timing.
    assert acl.rt.stream_query(consumer) == (STREAM_NOT_READY, 0)
    assert rt_device.resolve(consumer).statistics()["state"] == "held"
    assert order == []
    gate.set()
    assert acl.rt.synchronize_stream(consumer) == 0
    assert order == ["producer", "consumer"]


def test_stream_wait_event_waits_for_the_newest_record_only(ctx, gates):
    producer, consumer = new_stream(), new_stream()
    event = new_event()
    gate = gates()
    order = []
    assert acl.rt.record_event(event, producer) == 0  # completes at once: producer idle
    assert acl.rt.stream_wait_event(consumer, event) == 0
    enqueue(consumer, lambda: order.append("first consumer task"))
    assert acl.rt.synchronize_stream(consumer) == 0
    hold(producer, gate)
    assert acl.rt.record_event(event, producer) == 0
    assert acl.rt.stream_wait_event(consumer, event) == 0
    enqueue(consumer, lambda: order.append("second consumer task"))
    assert acl.rt.stream_query(consumer) == (STREAM_NOT_READY, 0)
    assert order == ["first consumer task"]
    gate.set()
    assert acl.rt.synchronize_stream(consumer) == 0
    assert order == ["first consumer task", "second consumer task"]


def test_stream_wait_event_never_recorded_does_not_wait(ctx):
    stream = new_stream()
    ran = []
    assert acl.rt.stream_wait_event(stream, new_event()) == 0
    enqueue(stream, lambda: ran.append(True))
    assert acl.rt.synchronize_stream(stream) == 0
    assert ran == [True]


def test_stream_wait_event_on_the_default_stream(ctx, gates):
    producer = new_stream()
    event = new_event()
    gate = gates()
    order = []
    hold(producer, gate)
    enqueue(producer, lambda: order.append("producer"))
    assert acl.rt.record_event(event, producer) == 0
    assert acl.rt.stream_wait_event(0, event) == 0
    enqueue(0, lambda: order.append("default stream"))
    gate.set()
    assert acl.rt.synchronize_stream(0) == 0
    assert order == ["producer", "default stream"]


def test_stream_wait_event_bad_handles(ctx, acl_log):
    event = new_event()
    assert acl.rt.stream_wait_event(0xBAD0, event) == INVALID
    assert acl.rt.stream_wait_event(0, 0xBAD0) == INVALID
    assert len(logged(acl_log, "acl.rt.stream_wait_event", 100000)) == 2


def test_chain_of_waits_across_three_streams(ctx, gates):
    a, b, c = new_stream(), new_stream(), new_stream()
    ea, eb = new_event(), new_event()
    gate = gates()
    order = []
    hold(a, gate)
    enqueue(a, lambda: order.append("a"))
    assert acl.rt.record_event(ea, a) == 0
    assert acl.rt.stream_wait_event(b, ea) == 0
    enqueue(b, lambda: order.append("b"))
    assert acl.rt.record_event(eb, b) == 0
    assert acl.rt.stream_wait_event(c, eb) == 0
    enqueue(c, lambda: order.append("c"))
    assert acl.rt.query_event(eb) == (EVENT_NOT_READY, 0)
    gate.set()
    assert acl.rt.synchronize_stream(c) == 0
    assert order == ["a", "b", "c"]


def test_a_record_dropped_by_destroy_stream_force_does_not_hang_synchronize_event(ctx):
    s, _ = acl.rt.create_stream()
    gate = threading.Event()
    rt_device.streams.get(s).enqueue(work_task("gate", gate.wait))
    event, _ = acl.rt.create_event()
    acl.rt.record_event(event, s)
    done = threading.Thread(target=lambda: acl.rt.destroy_stream_force(s))
    done.start()
    gate.set()
    done.join(10)
    assert acl.rt.synchronize_event(event) == 0
    acl.rt.destroy_event(event)
