"""``acl.rt``: devices, contexts, streams, events, memory and stream callbacks, as pyACL exposes them."""

from __future__ import annotations

from openacl.acl._args import VALUE, api, require_callable
from openacl.runtime import copies as _copies
from openacl.runtime import device as _device
from openacl.runtime import memory as _memory
from openacl.runtime import report as _report
from openacl.runtime.sched import event as _event
from openacl.runtime.sched import stream as _stream
from openacl.runtime.sched.waiting import timeout_from_ms

__all__ = [
    "create_context",
    "create_event",
    "create_event_with_flag",
    "create_stream",
    "create_stream_with_config",
    "destroy_context",
    "destroy_event",
    "destroy_stream",
    "destroy_stream_force",
    "event_elapsed_time",
    "free",
    "free_host",
    "get_context",
    "get_device",
    "get_device_count",
    "get_run_mode",
    "launch_callback",
    "malloc",
    "malloc_host",
    "memcpy",
    "memcpy_async",
    "memset",
    "memset_async",
    "process_report",
    "query_event",
    "query_event_status",
    "record_event",
    "reset_device",
    "reset_device_force",
    "reset_event",
    "set_context",
    "set_device",
    "set_stream_failure_mode",
    "stream_get_id",
    "stream_query",
    "stream_wait_event",
    "subscribe_report",
    "synchronize_device",
    "synchronize_event",
    "synchronize_event_with_timeout",
    "synchronize_stream",
    "synchronize_stream_with_timeout",
    "unsubscribe_report",
]


# ----- devices and contexts -----


@api("i")
def set_device(device_id):
    _device.set_device(device_id)


@api("i")
def reset_device(device_id):
    _device.reset_device(device_id)


@api("i")
def reset_device_force(device_id):
    _device.reset_device(device_id, force=True)


@api("", VALUE)
def get_device():
    return _device.get_device()


@api("", VALUE)
def get_device_count():
    return _device.device_count()


@api("", VALUE)
def get_run_mode():
    return _device.ACL_HOST


@api("i", VALUE)
def create_context(device_id):
    return _device.create_context(device_id)


@api("k")
def destroy_context(context):
    _device.destroy_context(context)


@api("k")
def set_context(context):
    _device.set_context(context)


@api("*", VALUE)
def get_context():
    return _device.get_context()


# ----- streams -----


@api("", VALUE)
def create_stream():
    return _device.create_stream()


@api("II", VALUE)
def create_stream_with_config(priority, flag):
    return _device.create_stream(priority, flag)


@api("k")
def destroy_stream(stream):
    _device.destroy_stream(stream)


@api("k")
def destroy_stream_force(stream):
    _device.destroy_stream(stream, force=True)


@api("k")
def synchronize_stream(stream):
    _device.resolve(stream).synchronize()


@api("ki")
def synchronize_stream_with_timeout(stream, timeout):
    _device.resolve(stream).synchronize(timeout_from_ms(timeout))


@api("k", VALUE, failure=_stream.ACL_STREAM_STATUS_NOT_READY)
def stream_query(stream):
    return _device.resolve(stream).query()


@api("k", VALUE)
def stream_get_id(stream):
    return _device.resolve(stream).id


@api("kK")
def set_stream_failure_mode(stream, mode):
    _device.resolve(stream).set_failure_mode(mode)


@api("")
def synchronize_device():
    _device.synchronize_device()


# ----- events -----


@api("", VALUE)
def create_event():
    return _device.create_event()


@api("I", VALUE)
def create_event_with_flag(flag):
    return _device.create_event(flag)


@api("k")
def destroy_event(event):
    _device.destroy_event(event)


@api("kk")
def record_event(event, stream):
    _device.events.get(event).record(_device.resolve(stream))


@api("kk")
def reset_event(event, stream):
    _device.events.get(event).reset(_device.resolve(stream))


@api("k", VALUE, failure=_event.ACL_EVENT_STATUS_NOT_READY)
def query_event(event):
    return _device.events.get(event).query()


@api("k", VALUE, failure=_event.ACL_EVENT_RECORDED_STATUS_NOT_READY)
def query_event_status(event):
    return _device.events.get(event).query_status()


@api("k")
def synchronize_event(event):
    _device.events.get(event).synchronize()


@api("ki")
def synchronize_event_with_timeout(event, timeout):
    _device.events.get(event).synchronize(timeout_from_ms(timeout))


@api("kk", VALUE, failure=0.0)
def event_elapsed_time(start, end):
    return _event.elapsed_ms(_device.events.get(start), _device.events.get(end))


@api("kk")
def stream_wait_event(stream, event):
    _device.events.get(event).wait_on(_device.resolve(stream))


# ----- memory -----


@api("Ki", VALUE)
def malloc(size, policy):
    return _memory.malloc(size, policy, _device.current_device().id)


@api("k")
def free(dev_ptr):
    _memory.free(dev_ptr)


@api("K", VALUE)
def malloc_host(size):
    return _memory.malloc_host(size)


@api("k")
def free_host(host_ptr):
    _memory.free_host(host_ptr)


@api("kKkKi")
def memcpy(dst, dst_max, src, count, kind):
    _copies.memcpy(dst, dst_max, src, count, kind)


@api("kKkKik")
def memcpy_async(dst, dst_max, src, count, kind, stream):
    _copies.enqueue_copy(_device.resolve(stream), dst, dst_max, src, count, kind)


@api("kKiK")
def memset(dev_ptr, max_count, value, count):
    _copies.memset(dev_ptr, max_count, value, count)


@api("kKiKk")
def memset_async(dev_ptr, max_count, value, count, stream):
    _copies.enqueue_fill(_device.resolve(stream), dev_ptr, max_count, value, count)


# ----- stream callbacks -----


@api("Kk")
def subscribe_report(thread_id, stream):
    _report.subscribe(thread_id, _device.resolve_in_context(stream))


@api("Kk")
def unsubscribe_report(thread_id, stream):
    _report.unsubscribe(thread_id, _device.resolve_in_context(stream))


@api("OOik")
def launch_callback(fn, user_data, block_type, stream):
    require_callable(fn)
    _report.launch(fn, user_data, block_type, _device.resolve_in_context(stream))


@api("i")
def process_report(timeout):
    _report.process_report(timeout)
