"""Simulated devices and their contexts.

Each device counts its users: ``set_device`` and every explicitly created context take a reference;
``reset_device`` and ``destroy_context`` give one back. When the count reaches zero the device is torn down:
its streams are drained (callbacks still pending with no thread able to run them are dropped with a
warning), its subscriptions removed, its memory freed and its engine threads stopped. ``reset_device_force``
tears down at once, dropping queued work.
"""

from __future__ import annotations

import os
import threading

from openacl.errors import AclCode, AclError
from openacl.log import get_logger
from openacl.runtime import context as _context
from openacl.runtime import memory, report
from openacl.runtime._sync import LOCK
from openacl.runtime.handles import HandleTable
from openacl.runtime.stream import (
    EVENT_FLAGS,
    MAX_PRIORITY,
    STREAM_FLAGS,
    Engine,
    Event,
    Stream,
    events,
    streams,
)

log = get_logger("rt")

DEFAULT_DEVICE_COUNT = 8
ACL_DEVICE, ACL_HOST = 0, 1

contexts: HandleTable[Context] = HandleTable("context")


class Context:
    """A device context: owns streams; ``default_stream`` is what stream handle 0 means."""

    def __init__(self, device: Device, primary: bool) -> None:
        self.device = device
        self.primary = primary
        self.destroyed = False
        self.streams: set[Stream] = set()
        self.handle = contexts.add(self)
        self.default_stream = device.new_stream(self)

    def __repr__(self) -> str:
        return f"<Context {self.handle:#x} device={self.device.id}>"


class Device:
    def __init__(self, device_id: int) -> None:
        self.id = device_id
        self.refs = 0
        self.primary: Context | None = None
        self.contexts: list[Context] = []
        self.engine: Engine | None = None
        self.events: set[Event] = set()
        self._next_stream_id = 0
        self.lock = threading.RLock()  # orders set/reset/teardown of this device; never held by workers

    def open(self) -> None:
        if self.engine is None:
            self.engine = Engine(self.id)

    def new_stream(self, ctx: Context, priority: int = 0, flags: int = 0) -> Stream:
        self.open()
        with LOCK:
            stream_id = self._next_stream_id
            self._next_stream_id += 1
        stream = Stream(ctx, stream_id, self.engine, priority, flags)
        stream.handle = streams.add(stream)
        ctx.streams.add(stream)
        return stream

    def primary_context(self) -> Context:
        if self.primary is None or self.primary.destroyed:
            self.open()
            self.primary = Context(self, primary=True)
            self.contexts.append(self.primary)
        return self.primary

    def teardown(self, force: bool) -> None:
        for ctx in list(self.contexts):
            destroy_context_object(ctx, force)
        self.contexts.clear()
        self.primary = None
        for event in self.events:
            if event.handle in events:
                events.remove(event.handle)
        self.events.clear()
        freed = memory.space.remove_device(self.id)
        if freed:
            log.info("device %d reset: %d allocation(s) freed", self.id, freed)
        if self.engine is not None:
            self.engine.shutdown()
            self.engine = None
        self.refs = 0


_devices: list[Device] = []
_devices_lock = threading.Lock()


def device_count() -> int:
    raw = os.environ.get("OPENACL_DEVICE_COUNT", str(DEFAULT_DEVICE_COUNT))
    try:
        count = int(raw)
    except ValueError:
        log.warning("OPENACL_DEVICE_COUNT=%r is not a number; using %d", raw, DEFAULT_DEVICE_COUNT)
        count = DEFAULT_DEVICE_COUNT
    return max(count, 0)


def get(device_id: int) -> Device:
    count = device_count()
    if not 0 <= device_id < count:
        raise AclError(AclCode.ACL_ERROR_RT_INVALID_DEVICEID, f"device {device_id} does not exist (0..{count - 1})")
    with _devices_lock:
        while len(_devices) <= device_id:
            _devices.append(Device(len(_devices)))
        return _devices[device_id]


def opened() -> list[Device]:
    with _devices_lock:
        return [d for d in _devices if d.refs > 0 or d.engine is not None]


def current_context() -> Context:
    ctx = _context.current()
    if ctx is None:
        raise AclError(
            AclCode.ACL_ERROR_RT_CONTEXT_NULL,
            "this thread has no current context (set_device or set_context first)",
        )
    return ctx


def current_device() -> Device:
    return current_context().device


# ----- API -----


def set_device(device_id: int) -> None:
    device = get(device_id)
    with device.lock:
        device.refs += 1
        _context.set_current(device.primary_context())


def reset_device(device_id: int, force: bool = False) -> None:
    device = get(device_id)
    with device.lock:
        if device.refs == 0 and device.engine is None:
            log.warning("reset_device(%d): the device is not set", device_id)
            return
        device.refs = 0 if force else max(device.refs - 1, 0)
        if device.refs == 0:
            device.teardown(force)


def get_device() -> int:
    return current_device().id


def create_context(device_id: int) -> int:
    device = get(device_id)
    with device.lock:
        device.refs += 1
        ctx = Context(device, primary=False)
        device.contexts.append(ctx)
    _context.set_current(ctx)
    return ctx.handle


def destroy_context(handle: int) -> None:
    ctx = contexts.get(handle)
    if ctx.primary:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, "the default context of a device is destroyed by reset_device")
    device = ctx.device
    with device.lock:
        destroy_context_object(ctx, force=False)
        if ctx in device.contexts:
            device.contexts.remove(ctx)
        device.refs = max(device.refs - 1, 0)
        if device.refs == 0:
            device.teardown(force=False)


def destroy_context_object(ctx: Context, force: bool) -> None:
    if ctx.destroyed:
        return
    for stream in list(ctx.streams):
        destroy_stream_object(stream, force)
    ctx.destroyed = True
    if ctx.handle in contexts:
        contexts.remove(ctx.handle)


def set_context(handle: int) -> None:
    _context.set_current(contexts.get(handle))


def get_context() -> int:
    return current_context().handle


# ----- streams -----


def create_stream(priority: int = 0, flags: int = 0) -> int:
    if not 0 <= priority <= MAX_PRIORITY:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"priority {priority} is not in 0..{MAX_PRIORITY}")
    if flags & ~STREAM_FLAGS:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"stream flag {flags:#x} is not supported")
    ctx = current_context()
    return ctx.device.new_stream(ctx, priority, flags).handle


def destroy_stream(handle: int, force: bool = False) -> None:
    stream = streams.get(handle)
    if stream is stream.context.default_stream:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, "the default stream is destroyed with its context")
    destroy_stream_object(stream, force)


def destroy_stream_object(stream: Stream, force: bool) -> None:
    """Without force: wait for the stream's work, callbacks included, then destroy it."""
    if stream.destroyed:
        return
    if force:
        report.detach_stream(stream, "destroy_stream_force")
        with LOCK:
            dropped = stream.discard_pending_locked()
        if dropped:
            log.warning("destroy_stream_force: stream %d: %d queued task(s) dropped", stream.id, dropped)
    try:
        stream.synchronize()
    except AclError as exc:
        if exc.code == AclCode.ACL_ERROR_API_NOT_SUPPORT:
            raise
        log.warning("stream %d destroyed after a failed task: %s", stream.id, exc)
    report.detach_stream(stream, "destroy_stream")
    with LOCK:
        stream.destroyed = True
    stream.context.streams.discard(stream)
    if stream.handle in streams:
        streams.remove(stream.handle)


def synchronize_device() -> None:
    device = current_device()
    for ctx in list(device.contexts):
        for stream in list(ctx.streams):
            if not stream.destroyed:
                stream.synchronize()


# ----- events -----


def create_event(flags: int = 0) -> int:
    if flags & ~EVENT_FLAGS:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"event flag {flags:#x} is not supported")
    device = current_device()
    event = Event(device.id, flags)
    event.handle = events.add(event)
    device.events.add(event)
    return event.handle


def destroy_event(handle: int) -> None:
    event = events.remove(handle)
    get(event.device_id).events.discard(event)


def teardown_all(force: bool = False) -> None:
    """Reset every open device; without ``force`` its streams are drained first (``acl.finalize``)."""
    for device in opened():
        with device.lock:
            device.teardown(force)
    report.reset()
