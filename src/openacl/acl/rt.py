"""``acl.rt``: devices, contexts, streams, events, memory and stream callbacks, as pyACL exposes them."""

from __future__ import annotations

from openacl import lazy as _lazy
from openacl.acl._args import (
    BARE,
    CODE,
    VALUE,
    VALUES,
    ArgumentTypeError,
    api,
    handle_list,
    malloc_config,
    require_callable,
)
from openacl.runtime import attributes as _attributes
from openacl.runtime import device as _device
from openacl.runtime import exceptions as _exceptions
from openacl.runtime import memory as _memory
from openacl.runtime import options as _options
from openacl.runtime import platform as _platform
from openacl.runtime import report as _report
from openacl.runtime import timeouts as _timeouts
from openacl.runtime.sched import event as _event
from openacl.runtime.sched import stream as _stream
from openacl.runtime.sched.waiting import timeout_from_ms

# Loaded by their first call: a program that only sets a device copies, maps and notifies nothing.
_alloc_config = _lazy.module("openacl.runtime.alloc_config")
_copies = _lazy.module("openacl.runtime.copies")
_notify = _lazy.module("openacl.runtime.notify")
_vmm = _lazy.module("openacl.runtime.vmm")

__all__ = [
    "create_context",
    "create_event",
    "create_event_ex_with_flag",
    "create_event_with_flag",
    "create_notify",
    "create_stream",
    "create_stream_with_config",
    "ctx_get_current_default_stream",
    "ctx_get_sys_param_opt",
    "ctx_set_sys_param_opt",
    "destroy_context",
    "destroy_event",
    "destroy_notify",
    "destroy_stream",
    "destroy_stream_force",
    "device_can_access_peer",
    "device_disable_peer_access",
    "device_enable_peer_access",
    "device_get_bare_tgid",
    "device_get_stream_priority_range",
    "device_peer_access_status",
    "device_task_abort",
    "event_elapsed_time",
    "event_get_timestamp",
    "free",
    "free_host",
    "free_physical",
    "get_context",
    "get_device",
    "get_device_count",
    "get_device_id_from_exception_info",
    "get_device_sat_mode",
    "get_error_code_from_exception_info",
    "get_event_id",
    "get_last_error",
    "get_logic_dev_id_by_phy_dev_id",
    "get_logic_dev_id_by_user_dev_id",
    "get_mem_info",
    "get_notify_id",
    "get_op_execute_timeout",
    "get_phy_dev_id_by_logic_dev_id",
    "get_primary_ctx_state",
    "get_run_mode",
    "get_stream_attribute",
    "get_stream_id_from_exception_info",
    "get_stream_overflow_switch",
    "get_sys_param_opt",
    "get_task_id_from_exception_info",
    "get_thread_id_from_exception_info",
    "get_user_dev_id_by_logic_dev_id",
    "host_get_device_pointer",
    "host_register",
    "host_register_v2",
    "host_unregister",
    "launch_callback",
    "malloc",
    "malloc_align32",
    "malloc_cached",
    "malloc_for_task_scheduler",
    "malloc_host",
    "malloc_host_with_cfg",
    "malloc_physical",
    "malloc_with_cfg",
    "map_mem",
    "mem_export_to_shareable_handle",
    "mem_flush",
    "mem_get_allocation_granularity",
    "mem_import_from_shareable_handle",
    "mem_invalidate",
    "mem_set_pid_to_shareable_handle",
    "memcpy",
    "memcpy2d",
    "memcpy2d_async",
    "memcpy_async",
    "memset",
    "memset_async",
    "notify_batch_reset",
    "peek_at_last_error",
    "pointer_get_attributes",
    "process_report",
    "query_device_status",
    "query_event",
    "query_event_status",
    "query_event_wait_status",
    "record_event",
    "record_notify",
    "reduce_async",
    "release_mem_address",
    "reserve_mem_address",
    "reset_device",
    "reset_device_force",
    "reset_event",
    "set_context",
    "set_device",
    "set_device_sat_mode",
    "set_exception_info_callback",
    "set_op_execute_time_out",
    "set_op_wait_timeout",
    "set_stream_attribute",
    "set_stream_failure_mode",
    "set_stream_overflow_switch",
    "set_sys_param_opt",
    "stream_abort",
    "stream_get_id",
    "stream_query",
    "stream_wait_event",
    "subscribe_report",
    "synchronize_device",
    "synchronize_device_with_timeout",
    "synchronize_event",
    "synchronize_event_with_timeout",
    "synchronize_stream",
    "synchronize_stream_with_timeout",
    "unmap_mem",
    "unsubscribe_report",
    "wait_and_reset_notify",
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


@api("", VALUE)
def get_context():
    return _device.get_context()


@api("", VALUE)
def ctx_get_current_default_stream():
    return _attributes.current_default_stream()


@api("i", VALUES, failure=(0, 0))
def get_primary_ctx_state(device_id):
    return _attributes.primary_context_active(device_id), 0  # flags: pyACL passes NULL, so always 0


@api("i", VALUE, failure=_attributes.ACL_RT_DEVICE_STATUS_NORMAL)
def query_device_status(device_id):
    return _attributes.device_status(device_id)


@api("i", VALUE)
def get_logic_dev_id_by_user_dev_id(user_device_id):
    return _attributes.mapped_device_id(user_device_id)


@api("i", VALUE)
def get_user_dev_id_by_logic_dev_id(logic_device_id):
    return _attributes.mapped_device_id(logic_device_id)


@api("i", VALUE)
def get_logic_dev_id_by_phy_dev_id(phy_device_id):
    return _attributes.mapped_device_id(phy_device_id)


@api("i", VALUE)
def get_phy_dev_id_by_logic_dev_id(logic_device_id):
    return _attributes.mapped_device_id(logic_device_id)


@api("il")
def set_sys_param_opt(opt, value):
    _options.set_sys_param_opt(opt, value)


@api("i", VALUE)
def get_sys_param_opt(opt):
    return _options.sys_param_opt(opt)


@api("il")
def ctx_set_sys_param_opt(opt, value):
    _options.ctx_set_sys_param_opt(opt, value)


@api("i", VALUE)
def ctx_get_sys_param_opt(opt):
    return _options.ctx_sys_param_opt(opt)


@api("i")
def set_device_sat_mode(mode):
    _options.set_sat_mode(mode)


@api("", VALUE)
def get_device_sat_mode():
    return _options.sat_mode()


@api("iI")
def device_task_abort(device_id, timeout):
    _device.abort_device(device_id)


@api("ii", VALUE)
def device_can_access_peer(device_id, peer_device_id):
    return _options.can_access_peer(device_id, peer_device_id)


@api("iI")
def device_enable_peer_access(peer_device_id, flags):
    _options.enable_peer_access(peer_device_id, flags)


@api("i")
def device_disable_peer_access(peer_device_id):
    _options.disable_peer_access(peer_device_id)


@api("ii", VALUE)
def device_peer_access_status(device_id, peer_device_id):
    return _options.peer_access_status(device_id, peer_device_id)


@api("", VALUES, failure=(0, 0))
def device_get_stream_priority_range():
    return _platform.stream_priority_range()


# ----- streams -----


@api("", VALUE)
def create_stream():
    return _device.create_stream()


@api("ii", VALUE)
def create_stream_with_config(priority, flag):
    return _device.create_stream(priority, flag)


@api("k")
def destroy_stream(stream):
    _device.destroy_stream(stream)


@api("k")
def destroy_stream_force(stream):
    _device.destroy_stream(stream, force=True)


@api("k", entry=_device.synchronize_entry)  # a hot call
def synchronize_stream(stream):
    _device.resolve(stream).synchronize()


@api("ki")
def synchronize_stream_with_timeout(stream, timeout):
    _device.resolve(stream).synchronize(timeout_from_ms(timeout))


@api("k")
def stream_abort(stream):
    _device.abort_stream(_device.resolve(stream))


@api("k", VALUE, failure=_stream.ACL_STREAM_STATUS_NOT_READY)
def stream_query(stream):
    return _device.resolve(stream).query()


@api("k", VALUE)
def stream_get_id(stream):
    return _device.resolve(stream).id


@api("kI")
def set_stream_failure_mode(stream, mode):
    _device.resolve(stream).set_failure_mode(mode)


@api("kI")
def set_stream_overflow_switch(stream, flag):
    _attributes.set_overflow_switch(_device.resolve(stream), flag)


@api("k", VALUE)
def get_stream_overflow_switch(stream):
    return _attributes.overflow_switch(_device.resolve(stream))


def _stream_attribute_value(attr, value):
    """pyACL's aclrtStreamAttrValue dict -> the one field ``attr`` uses."""
    key = _attributes.STREAM_ATTR_KEYS.get(attr, "reserved")
    if not isinstance(value, dict) or not isinstance(value.get(key), int):
        raise ArgumentTypeError("acl.rt.set_stream_attribute args parse failed")
    return value[key]


@api("kiO")
def set_stream_attribute(stream, attr, value):
    _attributes.set_stream_attribute(_device.resolve(stream), attr, _stream_attribute_value(attr, value))


@api("ki", VALUE, failure={})
def get_stream_attribute(stream, attr):
    return {
        _attributes.STREAM_ATTR_KEYS.get(attr, "reserved"): _attributes.stream_attribute(_device.resolve(stream), attr)
    }


@api("")
def synchronize_device():
    _device.synchronize_device()


@api("i")
def synchronize_device_with_timeout(timeout):
    _timeouts.synchronize_device(timeout)


@api("I")
def set_op_wait_timeout(timeout):
    _timeouts.set_op_wait_timeout(timeout)


@api("I")
def set_op_execute_time_out(timeout):
    _timeouts.set_op_execute_timeout(timeout)


@api("", VALUE)
def get_op_execute_timeout():
    return _timeouts.op_execute_timeout_ms()


# ----- events -----


@api("", VALUE)
def create_event():
    return _device.create_event()


@api("I", VALUE)
def create_event_with_flag(flag):
    return _device.create_event(flag)


@api("I", VALUE)
def create_event_ex_with_flag(flag):
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


@api("k", VALUE, failure=_event.ACL_EVENT_STATUS_NOT_READY)
def query_event_wait_status(event):
    return _device.events.get(event).query()  # ACL_EVENT_WAIT_STATUS_* share the numbers of ACL_EVENT_STATUS_*


@api("k", VALUE)
def event_get_timestamp(event):
    return _attributes.event_timestamp_us(_device.events.get(event))


@api("k", VALUE)
def get_event_id(event):
    return _device.events.get(event).id


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


# ----- notifies -----


@api("K", VALUE)
def create_notify(flag):
    return _notify.create(flag)


@api("k")
def destroy_notify(notify):
    _notify.destroy(notify)


@api("kk")
def record_notify(notify, stream):
    _notify.record(notify, stream)


@api("kkL")
def wait_and_reset_notify(notify, stream, timeout):
    _notify.wait_and_reset(notify, stream, timeout)


@api("k", VALUE)
def get_notify_id(notify):
    return _notify.notify_id(notify)


@api("O")
def notify_batch_reset(notifies):
    _notify.batch_reset(handle_list(notifies, "acl.rt.notify_batch_reset", "notifies"))


# ----- memory -----


@api("Ki", VALUE)
def malloc(size, policy):
    return _memory.malloc(size, policy, _device.current_device().id)


@api("Ki", VALUE)
def malloc_align32(size, policy):
    return _memory.malloc(size, policy, _device.current_device().id)  # every allocation is 64-byte aligned


@api("Ki", VALUE)
def malloc_cached(size, policy):
    return _memory.malloc(size, policy, _device.current_device().id)  # coherent memory: cached is plain


@api("kiO", VALUE)
def malloc_with_cfg(size, policy, cfg):
    config = _alloc_config.parse(malloc_config(cfg, "acl.rt.malloc_with_cfg"))
    return _memory.malloc(size, policy, _alloc_config.device_for(config))


@api("kiO", VALUE)
def malloc_for_task_scheduler(size, policy, cfg):
    """Memory the task scheduler reads: device memory like any other here."""
    config = _alloc_config.parse(malloc_config(cfg, "acl.rt.malloc_for_task_scheduler"))
    return _memory.malloc(size, policy, _alloc_config.device_for(config))


@api("kO", VALUE)
def malloc_host_with_cfg(size, cfg):
    _alloc_config.parse(malloc_config(cfg, "acl.rt.malloc_host_with_cfg"))
    return _memory.malloc_host(size)


@api("k")
def free(dev_ptr):
    _memory.free(dev_ptr)


@api("i", VALUES, failure=(0, 0))
def get_mem_info(attr):
    return _memory.mem_info(_device.current_device().id, attr)


@api("kk")
def mem_flush(ptr, size):
    _memory.check_cache_range(ptr, size)


@api("kk")
def mem_invalidate(ptr, size):
    _memory.check_cache_range(ptr, size)


@api("k", VALUE, failure={})
def pointer_get_attributes(ptr):
    return _attributes.pointer_attributes(ptr)


@api("K", VALUE)
def malloc_host(size):
    return _memory.malloc_host(size)


@api("k")
def free_host(host_ptr):
    _memory.free_host(host_ptr)


@api("kki", VALUE)
def host_register(ptr, size, reg_type):
    return _memory.host_register(ptr, size, reg_type)


@api("KKI")
def host_register_v2(ptr, size, flags):
    _memory.host_register_flags(ptr, size, flags)


@api("k")
def host_unregister(ptr):
    _memory.host_unregister(ptr)


@api("KI", VALUE)
def host_get_device_pointer(host_ptr, flag):
    return _memory.host_device_pointer(host_ptr, flag)


@api("kKkKi")
def memcpy(dst, dst_max, src, count, kind):
    _copies.memcpy(dst, dst_max, src, count, kind)


@api("kKkKik")
def memcpy_async(dst, dst_max, src, count, kind, stream):
    _copies.enqueue_copy(_device.resolve(stream), dst, dst_max, src, count, kind)


@api("kkkiikk")
def reduce_async(dst, src, count, kind, data_type, stream, reserve):
    _copies.enqueue_reduce(_device.resolve(stream), dst, src, count, kind, data_type, reserve)


@api("kkkkkki")
def memcpy2d(dst, dpitch, src, spitch, width, height, kind):
    _copies.memcpy2d(dst, dpitch, src, spitch, width, height, kind)


@api("kkkkkkik")
def memcpy2d_async(dst, dpitch, src, spitch, width, height, kind, stream):
    _copies.enqueue_copy2d(_device.resolve(stream), dst, dpitch, src, spitch, width, height, kind)


@api("kKiK")
def memset(dev_ptr, max_count, value, count):
    _copies.memset(dev_ptr, max_count, value, count)


@api("kKiKk")
def memset_async(dev_ptr, max_count, value, count, stream):
    _copies.enqueue_fill(_device.resolve(stream), dev_ptr, max_count, value, count)


# ----- virtual memory -----


def _physical_location(prop, qualname):
    """aclrtPhysicalMemProp as pyACL takes it (``{"handleType", "allocationType", "memAttr", "location": {"id",
    "type"}, "reserve"}``) -> (location type, device id); anything else is its parse TypeError."""
    location = prop.get("location") if isinstance(prop, dict) else None
    if not isinstance(location, dict) or not all(isinstance(location.get(k), int) for k in ("id", "type")):
        raise ArgumentTypeError(f"{qualname} args parse failed")
    return location["type"], location["id"]


@api("kkkK", VALUE)
def reserve_mem_address(size, alignment, expect_ptr, flags):
    return _vmm.reserve(size, alignment, expect_ptr, flags)


@api("k")
def release_mem_address(vir_ptr):
    _vmm.release(vir_ptr)


@api("kOK", VALUE)
def malloc_physical(size, prop, flags):
    return _vmm.malloc_physical(size, *_physical_location(prop, "acl.rt.malloc_physical"), flags)


@api("k")
def free_physical(handle):
    _vmm.free_physical(handle)


@api("kkkkK")
def map_mem(vir_ptr, size, offset, handle, flags):
    _vmm.map_mem(vir_ptr, size, offset, handle, flags)


@api("k")
def unmap_mem(vir_ptr):
    _vmm.unmap_mem(vir_ptr)


@api("kiK", VALUE)
def mem_export_to_shareable_handle(handle, handle_type, flags):
    return _vmm.export_shareable(handle, handle_type, flags)


@api("KO")
def mem_set_pid_to_shareable_handle(shareable_handle, pids):
    qualname = "acl.rt.mem_set_pid_to_shareable_handle"
    if not isinstance(pids, list) or not all(isinstance(pid, int) for pid in pids):
        raise ArgumentTypeError(f"{qualname} args parse failed")
    _vmm.set_import_pids(shareable_handle, pids)


@api("Ki", VALUE)
def mem_import_from_shareable_handle(shareable_handle, device_id):
    return _vmm.import_shareable(shareable_handle, device_id)


@api("", VALUE)
def device_get_bare_tgid():
    return _vmm.bare_tgid()


@api("Oi", VALUE)
def mem_get_allocation_granularity(prop, option):
    return _vmm.granularity(*_physical_location(prop, "acl.rt.mem_get_allocation_granularity"), option)


# ----- stream callbacks -----


@api("Kk")
def subscribe_report(thread_id, stream):
    _report.subscribe(thread_id, _device.resolve_in_context(stream))


@api("Kk")
def unsubscribe_report(thread_id, stream):
    _report.unsubscribe(thread_id, _device.resolve_in_context(stream))


@api("OOik", entry=_device.launch_entry)  # the callback hot path
def launch_callback(fn, user_data, block_type, stream):
    require_callable(fn)
    _device.launch_callback(fn, user_data, block_type, stream)


@api("i")
def process_report(timeout):
    _report.process_report(timeout)


# ----- errors -----


@api("i", CODE)
def get_last_error(level):
    return _exceptions.get_last_error(level)


@api("i", CODE)
def peek_at_last_error(level):
    return _exceptions.peek_last_error(level)


# ----- the exception-info callback -----


@api("|O")
def set_exception_info_callback(fn=None):
    if fn is not None and not callable(fn):
        raise ArgumentTypeError("acl.rt.set_exception_info_callback args parse failed")
    _exceptions.set_callback(fn)


@api("k", BARE, failure=_exceptions.NO_INFO)
def get_error_code_from_exception_info(info):
    return _exceptions.field(info, "error_code")


@api("k", BARE, failure=_exceptions.NO_INFO)
def get_task_id_from_exception_info(info):
    return _exceptions.field(info, "task_id")


@api("k", BARE, failure=_exceptions.NO_INFO)
def get_stream_id_from_exception_info(info):
    return _exceptions.field(info, "stream_id")


@api("k", BARE, failure=_exceptions.NO_INFO)
def get_thread_id_from_exception_info(info):
    return _exceptions.field(info, "thread_id")


@api("k", BARE, failure=_exceptions.NO_INFO)
def get_device_id_from_exception_info(info):
    return _exceptions.field(info, "device_id")
