"""Notifies between streams: record on one, wait-and-reset on another, ordered by the scheduler like events."""

from __future__ import annotations

import threading

import pytest

import acl
from openacl.errors import AclCode
from openacl.runtime import notify as rt_notify
from tests.acl.test_memory import logged
from tests.conftest import hold_stream

INVALID = AclCode.ACL_ERROR_INVALID_PARAM
SYNC_TIMEOUT = AclCode.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
STREAM_COMPLETE, STREAM_NOT_READY = 0, 1


def new_stream() -> int:
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    return stream


def new_notify() -> int:
    notify, ret = acl.rt.create_notify(0)
    assert ret == 0 and notify != 0
    return notify


def marked(stream: int, ptr: int, value: int) -> None:
    """Queue a memset of one byte: what the stream did, read back later."""
    assert acl.rt.memset_async(ptr, 1, value, 1, stream) == 0


def test_a_wait_holds_its_stream_until_the_other_stream_records(ctx):
    producer, consumer = new_stream(), new_stream()
    notify = new_notify()
    flag, _ = acl.rt.malloc(1, 0)
    acl.rt.memset(flag, 1, 0, 1)
    gate = threading.Event()
    try:
        hold_stream(producer, gate)
        assert acl.rt.record_notify(notify, producer) == 0
        assert acl.rt.wait_and_reset_notify(notify, consumer, 0) == 0
        marked(consumer, flag, 7)
        assert acl.rt.synchronize_stream_with_timeout(consumer, 50) == SYNC_TIMEOUT
        assert acl.util.ptr_to_bytes(flag, 1) == b"\x00"
    finally:
        gate.set()
    assert acl.rt.synchronize_stream(consumer) == 0
    assert acl.util.ptr_to_bytes(flag, 1) == b"\x07"
    assert rt_notify.notifies.get(notify).statistics()["set"] is False  # the wait reset it


def test_a_wait_enqueued_before_the_record_still_waits_for_it(ctx):
    """Unlike stream_wait_event, a notify wait is not satisfied by 'no record yet': it waits for the next one."""
    producer, consumer = new_stream(), new_stream()
    notify = new_notify()
    assert acl.rt.wait_and_reset_notify(notify, consumer, 0) == 0
    assert acl.rt.synchronize_stream_with_timeout(consumer, 30) == SYNC_TIMEOUT
    assert acl.rt.stream_query(consumer) == (STREAM_NOT_READY, 0)
    assert acl.rt.record_notify(notify, producer) == 0
    assert acl.rt.synchronize_stream(consumer) == 0


def test_each_record_lets_one_wait_through(ctx):
    producer, consumer = new_stream(), new_stream()
    notify = new_notify()
    assert acl.rt.wait_and_reset_notify(notify, consumer, 0) == 0
    assert acl.rt.wait_and_reset_notify(notify, consumer, 0) == 0
    assert acl.rt.record_notify(notify, producer) == 0
    assert acl.rt.synchronize_stream(producer) == 0
    assert acl.rt.synchronize_stream_with_timeout(consumer, 30) == SYNC_TIMEOUT  # the second wait holds
    assert acl.rt.record_notify(notify, producer) == 0
    assert acl.rt.synchronize_stream(consumer) == 0


def test_a_record_without_a_wait_stays_set_until_a_wait_or_a_batch_reset(ctx):
    producer, consumer = new_stream(), new_stream()
    first, second = new_notify(), new_notify()
    for notify in (first, second):
        assert acl.rt.record_notify(notify, producer) == 0
    assert acl.rt.synchronize_stream(producer) == 0
    assert acl.rt.wait_and_reset_notify(first, consumer, 0) == 0
    assert acl.rt.synchronize_stream(consumer) == 0  # set: went through at once, and cleared it
    assert acl.rt.notify_batch_reset([second]) == 0
    assert acl.rt.wait_and_reset_notify(second, consumer, 1000) == 0
    assert acl.rt.synchronize_stream_with_timeout(consumer, 30) == SYNC_TIMEOUT  # reset: holds
    assert acl.rt.record_notify(second, producer) == 0
    assert acl.rt.synchronize_stream(consumer) == 0


def test_notify_ids_are_distinct_and_handles_checked(ctx, acl_log):
    a, b = new_notify(), new_notify()
    (id_a, ret_a), (id_b, ret_b) = acl.rt.get_notify_id(a), acl.rt.get_notify_id(b)
    assert ret_a == ret_b == 0 and id_a != id_b
    assert acl.rt.destroy_notify(a) == 0
    assert acl.rt.destroy_notify(a) == INVALID
    assert acl.rt.get_notify_id(a) == (0, INVALID)
    assert acl.rt.record_notify(a, 0) == INVALID
    assert acl.rt.wait_and_reset_notify(a, 0, 0) == INVALID
    assert acl.rt.record_notify(b, 0xBAD0) == INVALID
    assert acl.rt.notify_batch_reset([b, a]) == INVALID
    assert acl.rt.notify_batch_reset([]) == INVALID
    assert len(logged(acl_log, "acl.rt.destroy_notify", INVALID)) == 1


def test_notify_arguments_are_checked(ctx):
    assert acl.rt.create_notify(1) == (0, INVALID)
    notify = new_notify()
    assert acl.rt.wait_and_reset_notify(notify, 0, -1) == INVALID
    assert acl.rt.wait_and_reset_notify(notify, 0, 1 << 32) == INVALID
    with pytest.raises(TypeError, match="is not list"):
        acl.rt.notify_batch_reset((notify,))
    with pytest.raises(TypeError):
        acl.rt.wait_and_reset_notify(notify, 0, 1 << 63)
    with pytest.raises(TypeError):
        acl.rt.create_notify()


def test_a_notify_is_used_on_the_streams_of_its_own_device(ctx):
    notify = new_notify()
    assert acl.rt.set_device(1) == 0
    other_device_stream = new_stream()
    assert acl.rt.record_notify(notify, other_device_stream) == INVALID
    assert acl.rt.set_context(ctx) == 0


def test_notifies_need_a_current_context():
    assert acl.rt.create_notify(0) == (0, AclCode.ACL_ERROR_RT_CONTEXT_NULL)


def test_a_device_holds_at_most_its_notify_limit(ctx, monkeypatch):
    monkeypatch.setattr(rt_notify, "MAX_PER_DEVICE", 3)
    made = [new_notify() for _ in range(3)]
    assert acl.rt.create_notify(0) == (0, AclCode.ACL_ERROR_RT_NO_NOTIFY_RESOURCE)
    assert acl.rt.destroy_notify(made[0]) == 0
    new_notify()


def test_a_forced_destroy_drops_a_wait_held_on_a_notify(ctx):
    consumer = new_stream()
    notify = new_notify()
    assert acl.rt.wait_and_reset_notify(notify, consumer, 0) == 0
    assert rt_notify.notifies.get(notify).statistics()["holding_streams"] == 1
    assert acl.rt.destroy_stream_force(consumer) == 0
    assert rt_notify.notifies.get(notify).statistics()["holding_streams"] == 0


def test_a_notify_destroyed_with_work_queued_still_lets_it_pass(ctx):
    producer, consumer = new_stream(), new_stream()
    notify = new_notify()
    assert acl.rt.wait_and_reset_notify(notify, consumer, 0) == 0
    assert acl.rt.record_notify(notify, producer) == 0
    assert acl.rt.destroy_notify(notify) == 0
    assert acl.rt.synchronize_stream(consumer) == 0


def test_notifies_chain_streams_in_order_under_concurrent_producers(ctx):
    """Two producers, one consumer waiting twice: both records are counted, none is lost to a race."""
    producers = [new_stream(), new_stream()]
    consumer = new_stream()
    notify = new_notify()
    for _ in producers:
        assert acl.rt.wait_and_reset_notify(notify, consumer, 0) == 0
    threads = [threading.Thread(target=acl.rt.record_notify, args=(notify, p)) for p in producers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert acl.rt.synchronize_stream(consumer) == 0
    assert rt_notify.notifies.get(notify).statistics() == {
        "set": False,
        "passed_records": 2,
        "pending_records": 0,
        "holding_streams": 0,
    }
