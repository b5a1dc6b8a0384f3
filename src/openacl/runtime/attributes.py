"""Attributes of runtime objects that programs read and set: streams, events, pointers, contexts, devices.

Each function takes the runtime's own objects (or plain ids) and raises ``AclError`` with CANN's code; the facade
only resolves handles and shapes the results. Decisions where CANN's behaviour depends on hardware:

- Stream attributes: the failure mode is the stream's own (``Stream.set_failure_mode``); the overflow-check
  switch and the user custom tag are kept per stream and read back. Nothing overflows on a CPU (execution
  follows IEEE inf/nan), so the switch changes no result.
- An event's timestamp is the time its newest record was passed, in microseconds of a monotonic clock.
- Pointer attributes: device memory is ``ACL_MEM_LOCATION_TYPE_DEVICE`` with its device id, ``malloc_host``
  memory ``ACL_MEM_LOCATION_TYPE_HOST``, anything else (a Python object's memory, an unknown address)
  ``ACL_MEM_LOCATION_TYPE_UNREGISTERED``; the page size is the host's, which is what backs every buffer here.
"""

from __future__ import annotations

import mmap
import weakref

from openacl.errors import AclCode, AclError
from openacl.runtime import device as _device
from openacl.runtime import memory as _memory
from openacl.runtime.sched.event import Event
from openacl.runtime.sched.stream import Stream

ACL_STREAM_ATTR_FAILURE_MODE = 1
ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK = 2
ACL_STREAM_ATTR_USER_CUSTOM_TAG = 3
STREAM_ATTR_KEYS = {
    ACL_STREAM_ATTR_FAILURE_MODE: "failureMode",
    ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK: "overflowSwitch",
    ACL_STREAM_ATTR_USER_CUSTOM_TAG: "userCustomTag",
}
ACL_MEM_LOCATION_TYPE_HOST, ACL_MEM_LOCATION_TYPE_DEVICE, ACL_MEM_LOCATION_TYPE_UNREGISTERED = 0, 1, 2
ACL_RT_DEVICE_STATUS_NORMAL = 0
_INVALID = AclCode.ACL_ERROR_INVALID_PARAM


class _StreamSettings:
    __slots__ = ("overflow_switch", "user_custom_tag")

    def __init__(self) -> None:
        self.overflow_switch = 0
        self.user_custom_tag = 0


# Settings die with their stream; a destroyed stream's handle no longer resolves, so none is ever read stale.
_stream_settings: weakref.WeakKeyDictionary[Stream, _StreamSettings] = weakref.WeakKeyDictionary()


def _settings(stream: Stream) -> _StreamSettings:
    settings = _stream_settings.get(stream)
    if settings is None:
        settings = _stream_settings[stream] = _StreamSettings()
    return settings


# ----- streams -----


def set_overflow_switch(stream: Stream, flag: int) -> None:
    if flag not in (0, 1):
        raise AclError(_INVALID, f"overflow switch {flag} is neither 0 (off) nor 1 (on)")
    _settings(stream).overflow_switch = flag


def overflow_switch(stream: Stream) -> int:
    return _settings(stream).overflow_switch


def set_stream_attribute(stream: Stream, attr: int, value: int) -> None:
    if attr == ACL_STREAM_ATTR_FAILURE_MODE:
        stream.set_failure_mode(value)
    elif attr == ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK:
        set_overflow_switch(stream, value)
    elif attr == ACL_STREAM_ATTR_USER_CUSTOM_TAG:
        _settings(stream).user_custom_tag = value & 0xFFFFFFFF
    else:
        raise AclError(_INVALID, f"stream attribute {attr} is not one of 1..3")


def stream_attribute(stream: Stream, attr: int) -> int:
    if attr == ACL_STREAM_ATTR_FAILURE_MODE:
        return stream.failure_mode
    if attr == ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK:
        return _settings(stream).overflow_switch
    if attr == ACL_STREAM_ATTR_USER_CUSTOM_TAG:
        return _settings(stream).user_custom_tag
    raise AclError(_INVALID, f"stream attribute {attr} is not one of 1..3")


# ----- events -----


def event_timestamp_us(event: Event) -> int:
    """When the event's newest record was passed, in microseconds (monotonic clock)."""
    stamp = event.timestamp_ns
    if stamp is None or event.completed_gen < event.recorded_gen:
        raise AclError(AclCode.ACL_ERROR_RT_EVENT_NOT_COMPLETE, f"event {event.id} has no completed record")
    return stamp // 1000


# ----- memory -----


def pointer_attributes(addr: int) -> dict:
    """``aclrtPtrAttributes`` of an address, as pyACL's dict."""
    region = _memory.space.find(addr, 1)
    if region is None or region.kind is _memory.Kind.USER:
        location, page_size = {"id": 0, "type": ACL_MEM_LOCATION_TYPE_UNREGISTERED}, 0
    elif region.kind is _memory.Kind.DEVICE:
        location, page_size = {"id": region.device_id, "type": ACL_MEM_LOCATION_TYPE_DEVICE}, mmap.PAGESIZE
    else:
        location, page_size = {"id": 0, "type": ACL_MEM_LOCATION_TYPE_HOST}, mmap.PAGESIZE
    return {"location": location, "page_size": page_size, "rsv": [0, 0, 0, 0]}


# ----- contexts and devices -----


def primary_context_active(device_id: int) -> int:
    """1 while the device's default context exists (``set_device`` made it), else 0."""
    device = _device.get(device_id)
    with device.lock:
        return int(device.primary is not None and not device.primary.destroyed)


def device_status(device_id: int) -> int:
    """Every simulated device that exists is healthy."""
    _device.get(device_id)
    return ACL_RT_DEVICE_STATUS_NORMAL


def current_default_stream() -> int:
    """The handle of the current context's default stream (a real handle, usable wherever a stream is)."""
    return _device.current_context().default_stream.handle


def mapped_device_id(device_id: int) -> int:
    """User, logical and physical device ids are one and the same here (no container remapping)."""
    _device.get(device_id)
    return device_id
