"""Simulated devices, their contexts, and the lifetimes of streams and events.

Each device counts its users: ``set_device`` and every explicitly created context take a reference;
``reset_device`` and ``destroy_context`` give one back. When the count reaches zero the device is torn down:
its streams are drained (callbacks still pending with no thread able to run them are dropped with a
warning), its subscriptions removed, its memory freed and its engine threads stopped. ``reset_device_force``
tears down at once, dropping queued work.

Teardown runs in two steps, so that no lock is held while it waits: drain (every stream synchronized, or its
queued work dropped with force) with no lock held, then finish under ``Device.lock``. A ``set_device`` that
comes while a reset drains (a pending callback may call it) keeps the device open: the finish sees the new
reference and leaves the device as it is.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from openacl import atfork, trace
from openacl.errors import AclCode, AclError
from openacl.log import get_logger
from openacl.runtime import checker, memory, report
from openacl.runtime import context as _context
from openacl.runtime.entry import NOT_GIVEN, hand_on
from openacl.runtime.handles import HandleTable
from openacl.runtime.sched import lock as _lock
from openacl.runtime.sched.engine import Engine
from openacl.runtime.sched.event import EVENT_FLAGS, Event
from openacl.runtime.sched.lock import DEFERRED, LOCK, SOON
from openacl.runtime.sched.stream import MAX_PRIORITY, STREAM_FLAGS, Stream, StreamState
from openacl.runtime.sched.task import Task, TaskKind, TaskState

log = get_logger("rt")

DEFAULT_DEVICE_COUNT = 8
ACL_DEVICE, ACL_HOST = 0, 1

contexts: HandleTable[Context] = HandleTable("context")
streams: HandleTable[Stream] = HandleTable("stream")
events: HandleTable[Event] = HandleTable("event")


class Context:
    """A device context: owns streams; ``default_stream`` is what stream handle 0 means."""

    def __init__(self, device: Device, primary: bool) -> None:
        self.device = device
        self.primary = primary
        self.destroyed = False
        self.streams: set[Stream] = set()
        self.handle = contexts.add(self, tracked=not primary)  # a primary context is the device's own
        self.default_stream = device.new_stream(self, tracked=False)

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
        # Invariant: guards refs, contexts, primary, events and engine; held only for quick changes of them,
        # never across a wait, a thread join or user code (teardown drains and joins with it released).
        self.lock = atfork.lock()

    def open_locked(self) -> Engine:
        if self.engine is None:
            self.engine = Engine(self.id)
        return self.engine

    def new_stream(self, ctx: Context, priority: int = 0, flags: int = 0, *, tracked: bool = True) -> Stream:
        engine = self.open_locked()
        with _lock.locked:
            stream_id = self._next_stream_id
            self._next_stream_id += 1
        stream = Stream(ctx, stream_id, engine, priority, flags)
        stream.handle = streams.add(stream, tracked=tracked)
        ctx.streams.add(stream)
        return stream

    def primary_context_locked(self) -> Context:
        if self.primary is None or self.primary.destroyed:
            self.open_locked()
            self.primary = Context(self, primary=True)
            self.contexts.append(self.primary)
        return self.primary


_devices: list[Device] = []
_devices_lock = atfork.lock()


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


# ----- devices and contexts -----


def set_device(device_id: int) -> None:
    device = get(device_id)
    with device.lock:
        device.refs += 1
        ctx = device.primary_context_locked()
    _context.set_current(ctx)


def reset_device(device_id: int, force: bool = False) -> None:
    device = get(device_id)
    with device.lock:
        unset = device.refs == 0 and device.engine is None
        if not unset:
            device.refs = 0 if force else max(device.refs - 1, 0)
            if device.refs:
                return
    if unset:  # logged without the lock: a logging handler is user code
        log.warning("reset_device(%d): the device is not set", device_id)
        return
    with checker.reclaiming(f"reset_device({device_id})"):  # what the reset frees for the program leaked
        teardown(device, force)


def teardown(device: Device, force: bool) -> None:
    """Drain every stream of the device (no lock held), then, unless a new reference came meanwhile, destroy
    its contexts, events and memory and stop its engine. Once the process is exiting (``quiesce``) there is
    nothing left to drain and nothing to free: a late ``reset_device`` keeps everything known, so the frees
    and destroys that follow it in a late finalizer succeed too."""
    if _exiting:
        return
    with device.lock:
        draining = [s for ctx in device.contexts for s in ctx.streams]
    _drain(draining, force)
    with device.lock:
        if device.refs > 0:
            return  # set_device during the drain: the device stays open
        closing = list(device.contexts)
        device.contexts.clear()
        device.primary = None
        for ctx in closing:
            ctx.destroyed = True
        for event in device.events:
            if event.handle in events:
                events.remove(event.handle)
        device.events.clear()
        engine, device.engine = device.engine, None
    for ctx in closing:
        _close_context(ctx)
    freed = memory.space.remove_device(device.id)
    if freed:
        log.info("device %d reset: %d allocation(s) freed", device.id, freed)
    if engine is not None:
        engine.shutdown()


def get_device() -> int:
    return current_device().id


def create_context(device_id: int) -> int:
    device = get(device_id)
    with device.lock:
        device.refs += 1
        device.open_locked()
        ctx = Context(device, primary=False)
        device.contexts.append(ctx)
    _context.set_current(ctx)
    return ctx.handle


def destroy_context(handle: int) -> None:
    ctx = contexts.get(handle)
    if ctx.primary:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, "the default context of a device is destroyed by reset_device")
    if ctx.destroyed:
        return
    device = ctx.device
    _drain(list(ctx.streams), force=False)
    with device.lock:
        if ctx.destroyed:
            return
        ctx.destroyed = True
        if ctx in device.contexts:
            device.contexts.remove(ctx)
        device.refs = max(device.refs - 1, 0)
        last = device.refs == 0
    _close_context(ctx)
    if last:
        teardown(device, force=False)


def _drain(draining: list[Stream], force: bool) -> None:
    for stream in draining:
        if force:
            report.detach_stream(stream, "reset_device_force")
            with _lock.locked:
                stream.discard_pending_locked("reset_device_force")
        _synchronize_for_destroy(stream)


def _close_context(ctx: Context) -> None:
    for stream in list(ctx.streams):
        destroy_stream_object(stream, force=True, reason="context destroyed")
    if ctx.handle in contexts:
        contexts.remove(ctx.handle)


def set_context(handle: int) -> None:
    _context.set_current(contexts.get(handle))


def get_context() -> int:
    return current_context().handle


# ----- streams -----


def resolve(handle: int) -> Stream:
    """The stream a pyACL handle names; 0 is the current context's default stream."""
    if handle == 0:
        ctx = _context.current()
        if ctx is None:
            raise AclError(AclCode.ACL_ERROR_RT_CONTEXT_NULL, "stream 0 needs a current context (set_device first)")
        return ctx.default_stream
    stream = streams.find(handle)
    if stream is None:
        stream = streams.get(handle)  # raises, with the table's error
    if checker.enabled:
        ctx = _context.current()
        if ctx is not None and ctx.device.id != stream.device_id:
            checker.on_foreign_stream(handle, stream.id, stream.device_id, ctx.device.id)
    return stream


def synchronize_entry(whole: Callable[..., int]) -> Callable[..., int]:
    """``acl.rt.synchronize_stream`` as programs call it (see ``runtime.entry``): 0 at once if the stream the
    handle names has finished everything enqueued on it and has no failure to report; any other call (the
    default stream, an unknown handle, a stream with work, a failure, tracing or checking) goes to ``whole``.
    What ``Stream.synchronize``'s first test reads, without LOCK, and why that is sound: see there."""
    find = streams.find

    def synchronize_stream(handle=NOT_GIVEN, /, *args, **kwargs) -> int:
        if type(handle) is int and not (args or kwargs):
            stream = find(handle)
            if (
                stream is not None
                and stream._caught_up == stream._next_seq
                and stream.failure is None
                and trace.recorder is None
                and not checker.enabled
            ):
                return 0
            return whole(handle)
        return hand_on(whole, (handle,), args, kwargs)

    return synchronize_stream


def resolve_in_context(handle: int) -> Stream:
    """As ``resolve``, for the callback calls, which CANN checks against the current context."""
    ctx = _context.local.context  # the hot path: what _context.current() does, inline
    if ctx is None or ctx.destroyed:
        ctx = _context.current()
        if ctx is None:
            raise AclError(AclCode.ACL_ERROR_RT_CONTEXT_NULL, "this thread has no current context")
    if handle == 0:
        return ctx.default_stream
    stream = streams.find(handle)
    if stream is None:
        stream = streams.get(handle)  # raises the table's error
    if stream.context is not ctx:
        raise AclError(AclCode.ACL_ERROR_RT_STREAM_CONTEXT, f"stream {stream.id} belongs to another context")
    return stream


def launch_callback(fn, user_data, block_type: int, handle: int) -> None:
    """``launch_callback`` on a stream handle: ``report.launch(..., resolve_in_context(handle))``, every check made.
    Called by ``acl.rt.launch_callback``'s body only: it, its wrapper and ``launch_entry``'s function are the
    openacl frames above this one."""
    report.launch(fn, user_data, block_type, resolve_in_context(handle), own_frames=4)


def launch_entry(whole: Callable[..., int]) -> Callable[..., int]:
    """``acl.rt.launch_callback`` as programs call it: the common call posted in this one frame, any other call
    handed to ``whole`` (the facade's wrapper: its parse, checks, codes and log lines).

    The common call: a callable NO_BLOCK callback (``block_type`` a plain int 0) on a live, subscribed, idle stream
    of the current context (``handle`` a plain int), check off, nothing else given. It is resolved, built and
    posted here in one LOCK hold, as ``Stream.enqueue`` posts it. A frame costs about a tenth of the call: the
    wrapper's frame and a hot-path function's, each saved, were 5-7 % of the NO_BLOCK throughput.

    Invariant: the task is built slot by slot, as ``Task(TaskKind.CALLBACK, "callback", None, fn, user_data,
    False)`` builds it, without calling ``__init__`` through the type (which costs about as much as the stores).
    ``test_task`` compares the two. Nothing the program can see changes before the post: a call handed on has
    had nothing done.
    """
    find, local, new_task = streams.find, _context.local, Task.__new__
    callback, pending, posted_state, idle = TaskKind.CALLBACK, TaskState.PENDING, TaskState.POSTED, StreamState.IDLE
    no_block, try_lock, unlock = report.ACL_CALLBACK_NO_BLOCK, LOCK.acquire, LOCK.release

    def launch_callback(
        fn=NOT_GIVEN, user_data=NOT_GIVEN, block_type=NOT_GIVEN, handle=NOT_GIVEN, /, *args, **kwargs
    ) -> int:
        if (
            not checker.enabled
            and type(block_type) is int
            and block_type == no_block
            and type(handle) is int
            and not (args or kwargs)
        ):
            ctx = local.context
            stream = find(handle) if handle else getattr(ctx, "default_stream", None)
            if stream is not None and stream.context is ctx and not ctx.destroyed and callable(fn):
                try:
                    task = new_task(Task)  # see the invariant
                    task.kind = task.name = callback
                    task.state = pending
                    task.stream = task.work = task.event = task.waiters = task.site = None
                    task.seq = task.gen = task.thread = task.reached_ns = 0
                    task.fn = fn
                    task.user_data = user_data
                    task.blocking = False
                    task.queued_ns = trace.now_ns() if trace.recorder is not None else 0
                except MemoryError:  # nothing posted: the wrapper's answer (ACL_ERROR_BAD_ALLOC, one line)
                    return whole(fn, user_data, block_type, handle)
                if not try_lock(False):
                    _lock.acquire()
                try:
                    sub = stream.subscription
                    posted = (
                        sub is not None
                        and stream.state is idle
                        and not stream._tasks
                        and not (stream.destroyed or stream.engine.stopped)
                    )
                    if posted:  # what Stream.enqueue does for a NO_BLOCK callback on an idle stream, inline
                        task.seq = stream._next_seq
                        stream._next_seq += 1
                        task.stream = stream
                        task.state = posted_state
                        if trace.recorder is not None:
                            task.reached_ns = trace.now_ns()
                        sub.queue.put(task)
                        stream._in_flight.append(task)
                finally:
                    if SOON or DEFERRED:
                        _lock.release()
                    else:
                        unlock()
                if posted:
                    return 0
        if handle is not NOT_GIVEN and not (args or kwargs):
            return whole(fn, user_data, block_type, handle)  # the common call under check, or a BLOCK callback
        return hand_on(whole, (fn, user_data, block_type, handle), args, kwargs)

    return launch_callback


def create_stream(priority: int = 0, flags: int = 0) -> int:
    if not 0 <= priority <= MAX_PRIORITY:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"priority {priority} is not in 0..{MAX_PRIORITY}")
    if flags & ~STREAM_FLAGS:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"stream flag {flags:#x} is not supported")
    ctx = current_context()
    with ctx.device.lock:
        if ctx.destroyed:
            raise AclError(AclCode.ACL_ERROR_RT_CONTEXT_NULL, "the current context was destroyed")
        return ctx.device.new_stream(ctx, priority, flags).handle


def destroy_stream(handle: int, force: bool = False) -> None:
    stream = streams.get(handle)
    if stream is stream.context.default_stream:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, "the default stream is destroyed with its context")
    if checker.enabled and not force:
        checker.on_stream_destroy(stream)
    destroy_stream_object(stream, force)


def _synchronize_for_destroy(stream: Stream) -> None:
    try:
        stream.synchronize()
    except AclError as exc:
        if exc.code == AclCode.ACL_ERROR_API_NOT_SUPPORT:
            raise
        log.warning("stream %d destroyed after a failed task: %s", stream.id, exc)


def destroy_stream_object(stream: Stream, force: bool, reason: str = "destroy_stream") -> None:
    """Without force: wait for the stream's work, callbacks included, then destroy it. Work enqueued after
    that wait (by another thread, racing the destroy) is dropped with a warning."""
    if stream.destroyed:
        return
    if force:
        report.detach_stream(stream, "destroy_stream_force")
        with _lock.locked:
            stream.discard_pending_locked("destroy_stream_force")
    _synchronize_for_destroy(stream)
    report.detach_stream(stream, reason)
    with _lock.locked:
        stream.destroyed = True
        stream.discard_pending_locked(reason)
    stream.context.streams.discard(stream)
    if stream.handle in streams:
        streams.remove(stream.handle)


def abort_stream(stream: Stream) -> None:
    """``stream_abort``: drop every task queued on the stream and every callback not started; the stream stays
    usable. A task already running (an onnxruntime run, a callback) cannot be cut short on a CPU: it finishes."""
    with _lock.locked:
        stream.check_open_locked()
        stream.discard_pending_locked("stream_abort")


def abort_device(device_id: int) -> None:
    """``device_task_abort``: ``abort_stream`` for every stream of the device. Dropping queued work takes no
    time, so the call's timeout never runs out; tasks already running finish as they would."""
    device = get(device_id)
    with device.lock:
        aborting = [s for ctx in device.contexts for s in ctx.streams]
    with _lock.locked:
        for stream in aborting:
            if not stream.destroyed:
                stream.discard_pending_locked("device_task_abort")


def synchronize_device() -> None:
    device = current_device()
    with device.lock:
        draining = [s for ctx in device.contexts for s in ctx.streams]
    for stream in draining:
        if not stream.destroyed:
            stream.synchronize()


# ----- events -----


def create_event(flags: int = 0) -> int:
    if flags & ~EVENT_FLAGS:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"event flag {flags:#x} is not supported")
    device = current_device()
    event = Event(device.id, flags)
    event.handle = events.add(event)
    with device.lock:
        device.events.add(event)
    return event.handle


def destroy_event(handle: int) -> None:
    event = events.remove(handle)
    device = get(event.device_id)
    with device.lock:
        device.events.discard(event)


# ----- the whole process (openacl.process) -----


def teardown_all(force: bool = False) -> None:
    """Reset every open device; without ``force`` its streams are drained first (``acl.finalize``)."""
    for device in opened():
        with device.lock:
            device.refs = 0
        teardown(device, force)
    report.reset()


_exiting = False


def exiting() -> bool:
    """Whether the process exit hook has run (``quiesce``)."""
    return _exiting


def quiesce() -> None:
    """Process exit: drop all queued work and stop every engine. A WORK task already running is waited for (the
    runtime's own work always ends, and onnxruntime aborts the process if it is torn down mid-run); a user
    callback still running is not. Streams, contexts and memory stay known, so a late finalizer that frees or
    destroys them still succeeds (quietly). New stream work gets 107022."""
    global _exiting
    _exiting = True
    for device in opened():
        with device.lock:
            draining = [s for ctx in device.contexts for s in ctx.streams]
            engine = device.engine
        with _lock.locked:
            for stream in draining:
                stream.discard_pending_locked("process exit")
        if engine is not None:
            engine.shutdown()  # a WORK task running now ends by itself (copies, model runs): wait for it
    report.reset()


def forget_all() -> None:
    """Process reset, after ``teardown_all``: no device is known any more."""
    with _devices_lock:
        _devices.clear()


def reinit_after_fork() -> None:
    """A forked child (LOCK held by the at-fork hook): the engines have forgotten the parent's workers
    (``atfork``), so a task one of them was running fails and streams that were queued run on the child's."""
    for stream in streams.values():
        stream.abandon_running_locked("the process forked while this task ran; it does not run in the child")
