"""Streams, events and the engine that runs them.

Guarantees:
- The tasks of one stream are passed in the order they were enqueued. A task that needs an engine thread
  (``WORK``: copies, model executions) runs on one; the others (callbacks, event records and waits) are passed
  by whichever thread advances the stream, which may be the thread that enqueued them.
- A stream is advanced by at most one thread at a time. Idle streams hold no thread: a device's engine is a
  small pool of worker threads shared by all its streams, so thousands of streams with work are fine.
- A ``BLOCK`` callback holds its stream until the callback has returned; a ``NO_BLOCK`` callback is handed to
  its report thread and the stream moves on.
- ``synchronize`` returns once every task enqueued before it has finished, NO_BLOCK callbacks included.
  Event records and ``stream_wait_event`` follow the stream's position only: a NO_BLOCK callback still
  running does not hold them back.
- No lock is held while a task's work or a user callback runs (see ``_sync``).
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import deque
from collections.abc import Callable
from queue import SimpleQueue

from openacl import trace
from openacl.errors import AclCode, AclError
from openacl.log import get_logger
from openacl.runtime import _sync
from openacl.runtime import context as _context
from openacl.runtime._sync import LOCK, Waiter, callbacks_running_here, wait
from openacl.runtime._waitgraph import refuse_locked
from openacl.runtime.handles import HandleTable

log = get_logger("rt")

ACL_STREAM_STATUS_COMPLETE, ACL_STREAM_STATUS_NOT_READY = 0, 1
ACL_EVENT_STATUS_COMPLETE, ACL_EVENT_STATUS_NOT_READY = 0, 1
ACL_EVENT_RECORDED_STATUS_NOT_READY, ACL_EVENT_RECORDED_STATUS_COMPLETE = 0, 1
ACL_CONTINUE_ON_FAILURE, ACL_STOP_ON_FAILURE = 0, 1
EVENT_FLAGS = 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x20  # SYNC, CAPTURE_STREAM_PROGRESS, EXTERNAL, TIME_LINE, ...
STREAM_FLAGS = 0xFF
MAX_PRIORITY = 7

streams: HandleTable[Stream] = HandleTable("stream")
events: HandleTable[Event] = HandleTable("event")


class TaskKind:
    """What a task does.

    This class and the two state classes hold plain strings, not ``enum.Enum`` members: an Enum member lookup
    costs about 70 ns on Python 3.11, and they are read several times per callback.
    """

    WORK = "work"
    CALLBACK = "callback"
    RECORD = "record_event"
    RESET = "reset_event"
    WAIT = "wait_event"


class TaskState:
    """Where a task is in its life (plain strings, see ``TaskKind``)."""

    PENDING = "pending"  # in its stream's queue
    POSTED = "posted"  # a callback handed to its report thread, not yet started
    RUNNING = "running"
    DONE = "done"
    DROPPED = "dropped"  # a callback that will never run (unsubscribed, stream destroyed by force)


class Task:
    """One entry of a stream's queue."""

    __slots__ = (
        "blocking",
        "event",
        "fn",
        "gen",
        "kind",
        "name",
        "queued_ns",
        "reached_ns",
        "seq",
        "state",
        "stream",
        "user_data",
        "waiters",
        "work",
    )

    def __init__(
        self,
        kind: str,
        name: str,
        work: Callable[[], None] | None = None,
        fn=None,
        user_data=None,
        blocking: bool = False,
    ) -> None:
        self.kind = kind
        self.name = name
        self.state = TaskState.PENDING
        self.stream: Stream | None = None
        self.seq = 0
        self.work = work
        self.fn = fn
        self.user_data = user_data
        self.blocking = blocking
        self.event: Event | None = None
        self.gen = 0
        self.waiters: list[Waiter] | None = None
        self.queued_ns = trace.now_ns() if trace.recorder is not None else 0
        self.reached_ns = 0

    @classmethod
    def work_task(cls, name: str, work: Callable[[], None]) -> Task:
        return cls(TaskKind.WORK, name, work)

    def finish_locked(self, state: str) -> None:
        self.state = state
        if self.waiters:
            for waiter in self.waiters:
                waiter.release()
            self.waiters = None


class StreamState:
    """What a stream is doing (plain strings, see ``TaskKind``)."""

    IDLE = "idle"  # nothing runnable: no tasks, or only tasks after a finished hold
    QUEUED = "queued"  # on its engine's run queue
    RUNNING = "running"  # a thread is advancing it
    HELD = "held"  # waiting for a BLOCK callback to return or an event to complete


class Stream:
    """An ordered queue of tasks on one device."""

    def __init__(self, context, stream_id: int, engine: Engine, priority: int = 0, flags: int = 0) -> None:
        self.context = context
        self.device_id: int = context.device.id
        self.id = stream_id
        self.engine = engine
        self.priority = priority
        self.flags = flags
        self.handle = 0
        self.destroyed = False
        # Set and cleared by the report hub under LOCK; None when no thread is subscribed.
        self.subscription = None
        self.failure: AclError | None = None
        self.failure_mode = ACL_CONTINUE_ON_FAILURE
        self.state = StreamState.IDLE
        self._tasks: deque[Task] = deque()
        # Invariant: _busy is the task the stream is waiting on (a running WORK task, an outstanding BLOCK
        # callback or an unsatisfied event wait); it is set exactly when state is RUNNING-with-work or HELD.
        self._busy: Task | None = None
        # NO_BLOCK callbacks that were posted and have not finished, in posting order.
        self._in_flight: deque[Task] = deque()
        self._waiters: list[tuple[int, Waiter]] = []
        self._next_seq = 1

    def __repr__(self) -> str:
        return f"<Stream {self.id} device={self.device_id} {self.state}>"

    def set_failure_mode(self, mode: int) -> None:
        """Recorded for pyACL compatibility; a failed task is reported by the next synchronize either way."""
        if mode not in (ACL_CONTINUE_ON_FAILURE, ACL_STOP_ON_FAILURE):
            raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"failure mode {mode} is neither 0 (continue) nor 1 (stop)")
        self.failure_mode = mode

    # ----- enqueueing (any thread) -----

    def enqueue(self, task: Task) -> None:
        """Append a task; passes it at once if the stream is idle and the task needs no engine thread."""
        if not LOCK.acquire(False):  # the callback hot path: see _sync.wait_for_lock
            _sync.wait_for_lock()
        try:
            if self.destroyed:
                raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"stream {self.handle:#x} is being destroyed")
            task.seq = self._next_seq
            self._next_seq += 1
            task.stream = self
            if self.state is StreamState.IDLE:
                if task.kind is TaskKind.CALLBACK and not self._tasks:
                    self._post_callback_locked(task)  # what _advance_locked would do, without the queue
                    return
                self._tasks.append(task)
                self._advance_locked()
            else:
                self._tasks.append(task)
        finally:
            LOCK.release()

    def run_here_if_idle(self, task: Task) -> bool:
        """Run a WORK task on the calling thread if the stream has nothing queued or running, else enqueue it.

        For work that costs less than handing it to an engine thread (a single operator on a small tensor).
        While it runs the stream is RUNNING with the task as ``_busy``, just as when an engine thread runs it:
        tasks enqueued meanwhile queue behind it, ``synchronize`` waits for it, and a failure is the stream's.
        Returns True if it ran here.
        """
        with LOCK:
            if self.destroyed:
                raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"stream {self.handle:#x} is being destroyed")
            here = self.state is StreamState.IDLE and not self._tasks
            if here:
                task.seq = self._next_seq
                self._next_seq += 1
                task.stream = self
                task.state = TaskState.RUNNING
                self.state = StreamState.RUNNING
                self._busy = task
        if not here:
            self.enqueue(task)  # behind whatever is queued or running now, as any enqueue
            return False
        self._run_work(task)
        with LOCK:
            self._busy = None
            task.finish_locked(TaskState.DONE)
            self.state = StreamState.IDLE
            self._advance_locked()  # what was enqueued meanwhile: passed, or handed to the engine
        return True

    # ----- advancing (LOCK held) -----

    def _advance_locked(self) -> Task | None:
        """Pass every leading task that needs no engine thread.

        Returns the first WORK task (still queued) when called by an engine thread (state RUNNING);
        otherwise hands the stream to the engine when it meets one. Leaves the stream IDLE, HELD or QUEUED.
        """
        tasks = self._tasks
        while tasks:
            task = tasks[0]
            kind = task.kind
            if kind is TaskKind.WORK:
                if self.state is StreamState.RUNNING:
                    return task
                self.state = StreamState.QUEUED
                self.engine.submit(self)
                return None
            tasks.popleft()
            if kind is TaskKind.CALLBACK:
                if self._post_callback_locked(task):
                    return None
            elif kind is TaskKind.RECORD:
                if trace.recorder is not None:
                    self._trace_event_task(task)
                task.event._complete_locked(task.gen)
                task.state = TaskState.DONE
            elif kind is TaskKind.RESET:
                if trace.recorder is not None:
                    self._trace_event_task(task)
                task.event._reset_locked()
                task.state = TaskState.DONE
            else:  # WAIT
                if task.event.completed_gen < task.gen:
                    task.state = TaskState.RUNNING
                    self._busy = task
                    task.event._held.append(self)
                    self.state = StreamState.HELD
                    if trace.recorder is not None:
                        task.reached_ns = trace.now_ns()
                    return None
                task.state = TaskState.DONE
                if trace.recorder is not None:
                    now = trace.now_ns()
                    self.trace_wait_locked(task, now, now)
        self.state = StreamState.IDLE
        self._notify_locked()
        return None

    def _post_callback_locked(self, task: Task) -> bool:
        """The stream has reached a callback: hand it to the report thread. True if it now holds the stream."""
        sub = self.subscription
        if sub is None:
            task.finish_locked(TaskState.DROPPED)
            log.warning("stream %d: callback %r dropped: no thread subscribed", self.id, task.fn)
            return False
        task.state = TaskState.POSTED
        if trace.recorder is not None:
            task.reached_ns = trace.now_ns()
        sub.queue.put(task)
        if task.blocking:
            self._busy = task
            self.state = StreamState.HELD
            return True
        self._in_flight.append(task)
        return False

    # ----- tracing (only called while trace.recorder is set) -----

    def _trace_event_task(self, task: Task) -> None:
        """A record_event / reset_event passed now: a zero-length span on the thread passing it."""
        rec = trace.recorder
        if rec is None:
            return
        now = trace.now_ns()
        event = task.event
        rec.add(
            task.name,
            "event",
            task.queued_ns or now,
            now,
            now,
            stream=self.id,
            event=event.id,
            gen=task.gen,
            handle=f"{event.handle:#x}",
        )

    def trace_wait_locked(self, task: Task, start_ns: int, end_ns: int, **extra: object) -> None:
        """A stream_wait_event held the stream from ``start_ns`` to ``end_ns``: a span on the stream's track."""
        rec = trace.recorder
        if rec is None:
            return
        start_ns = task.reached_ns or start_ns
        rec.add_on_track(
            ("stream", self.device_id, self.id),
            f"stream {self.id} (device {self.device_id})",
            task.name,
            "wait",
            task.queued_ns or start_ns,
            start_ns,
            end_ns,
            stream=self.id,
            event=task.event.id,
            gen=task.gen,
            released_by_tid=threading.get_native_id(),
            **extra,
        )

    def _resume_locked(self, task: Task) -> None:
        """The hold on ``task`` (a BLOCK callback or an event wait) is over: carry on."""
        if self._busy is task:
            self._busy = None
            if self.state is StreamState.HELD:
                self.state = StreamState.IDLE
                self._advance_locked()
        self._notify_locked()

    def run_on_engine(self, budget: int = 64) -> None:
        """Engine threads only: advance the stream, running its WORK tasks, until idle or held."""
        while True:
            with LOCK:
                self.state = StreamState.RUNNING
                task = self._advance_locked()
                if task is None:
                    return
                if budget == 0:  # let other streams have the thread
                    self.state = StreamState.QUEUED
                    self.engine.submit(self)
                    return
                self._tasks.popleft()
                task.state = TaskState.RUNNING
                self._busy = task
            budget -= 1
            self._run_work(task)
            with LOCK:
                self._busy = None
                task.finish_locked(TaskState.DONE)
                self._notify_locked()

    def _run_work(self, task: Task) -> None:
        rec = trace.recorder
        start = trace.now_ns() if rec is not None else 0
        try:
            task.work()
        except AclError as exc:
            log.error("stream %d: %s failed: %s", self.id, task.name, exc)
            with LOCK:
                if self.failure is None:
                    self.failure = exc
        except Exception:
            log.exception("stream %d: %s failed", self.id, task.name)
            with LOCK:
                if self.failure is None:
                    self.failure = AclError(AclCode.ACL_ERROR_RT_INTERNAL_ERROR, f"{task.name} raised")
        if rec is not None:
            rec.add(
                task.name, "task", task.queued_ns or start, start, trace.now_ns(), stream=self.id, device=self.device_id
            )

    # ----- callbacks (report threads, LOCK held) -----

    def callback_finished_locked(self, task: Task) -> None:
        task.finish_locked(TaskState.DONE)
        if task.blocking:
            self._resume_locked(task)
            return
        in_flight = self._in_flight
        if in_flight and in_flight[0] is task:
            in_flight.popleft()
        elif task in in_flight:
            in_flight.remove(task)
        if self._waiters:
            self._notify_locked()

    def drop_callbacks_locked(self) -> tuple[int, list[Task]]:
        """Drop every callback that has not started; return how many, and those still running."""
        dropped = 0
        kept: deque[Task] = deque()
        for task in self._tasks:
            if task.kind is TaskKind.CALLBACK:
                task.finish_locked(TaskState.DROPPED)
                dropped += 1
            else:
                kept.append(task)
        self._tasks = kept
        running: list[Task] = []
        for task in list(self._in_flight):
            if task.state is TaskState.POSTED:
                task.finish_locked(TaskState.DROPPED)
                self._in_flight.remove(task)
                dropped += 1
            else:
                running.append(task)
        busy = self._busy
        if busy is not None and busy.kind is TaskKind.CALLBACK:
            if busy.state is TaskState.POSTED:
                busy.finish_locked(TaskState.DROPPED)
                dropped += 1
                self._resume_locked(busy)
            else:
                running.append(busy)
        self._notify_locked()
        return dropped, running

    def pending_callbacks_locked(self) -> int:
        """Callbacks queued or posted that have not started."""
        queued = sum(1 for t in self._tasks if t.kind is TaskKind.CALLBACK)
        posted = sum(1 for t in self._in_flight if t.state is TaskState.POSTED)
        busy = self._busy
        if busy is not None and busy.kind is TaskKind.CALLBACK and busy.state is TaskState.POSTED:
            posted += 1
        return queued + posted

    # ----- waiting -----

    def _done_through_locked(self) -> int:
        """Every task with a sequence number up to this one has finished."""
        first = self._tasks[0].seq if self._tasks else self._next_seq
        if self._busy is not None and self._busy.seq < first:
            first = self._busy.seq
        if self._in_flight and self._in_flight[0].seq < first:
            first = self._in_flight[0].seq
        return first - 1

    def _notify_locked(self) -> None:
        if not self._waiters:
            return
        done = self._done_through_locked()
        still = []
        for target, waiter in self._waiters:
            if target <= done:
                waiter.release()
            elif not waiter.done:
                still.append((target, waiter))
        self._waiters = still

    def synchronize(self, timeout: float | None = None) -> None:
        """Wait for every task enqueued so far (``timeout`` in seconds; None = forever).

        Raises 507046 on timeout, and the first failure of a WORK task since the last synchronize.
        """
        with LOCK:
            target = self._next_seq - 1
        rec = trace.recorder
        begin = trace.now_ns() if rec is not None else 0
        for task in callbacks_running_here():
            if task.stream is self and task.seq <= target:
                raise AclError(
                    AclCode.ACL_ERROR_API_NOT_SUPPORT,
                    f"stream {self.id}: waiting for the stream inside one of its own callbacks would deadlock",
                )

        def attach(waiter: Waiter) -> bool:
            if self._done_through_locked() >= target:
                return True
            refuse_locked(f"stream {self.id}", stream=self, seq=target)
            self._waiters.append((target, waiter))
            return False

        done = wait(attach, timeout, (self, target, None, 0))
        if rec is not None:
            rec.add("synchronize_stream", "sync", begin, begin, trace.now_ns(), stream=self.id, timed_out=not done)
        if not done:
            raise AclError(
                AclCode.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                f"stream {self.id} not done after {timeout * 1000:g} ms",
            )
        with LOCK:
            failure, self.failure = self.failure, None
        if failure is not None:
            raise failure

    def query(self) -> int:
        with LOCK:
            done = self._done_through_locked() >= self._next_seq - 1
        return ACL_STREAM_STATUS_COMPLETE if done else ACL_STREAM_STATUS_NOT_READY

    def discard_pending_locked(self) -> int:
        """Forced destroy: drop every queued task and every callback not started; return how many."""
        dropped, _ = self.drop_callbacks_locked()
        for task in self._tasks:
            task.finish_locked(TaskState.DROPPED)
            if task.kind is TaskKind.RECORD:  # count the record as passed, so nobody waits on it forever
                task.event._complete_locked(task.gen)
            dropped += 1
        self._tasks.clear()
        busy = self._busy
        if busy is not None and busy.kind is TaskKind.WAIT:
            if trace.recorder is not None:
                now = trace.now_ns()
                self.trace_wait_locked(busy, now, now, dropped=True)
            busy.finish_locked(TaskState.DROPPED)
            if self in busy.event._held:
                busy.event._held.remove(self)
            self._resume_locked(busy)
        self._notify_locked()
        return dropped

    def statistics(self) -> dict:
        with LOCK:
            return {
                "state": self.state,
                "queued": len(self._tasks),
                "callbacks_in_flight": len(self._in_flight),
                "enqueued": self._next_seq - 1,
                "done_through": self._done_through_locked(),
            }


_event_ids = itertools.count(1)


class Event:
    """A marker recorded on a stream; completes when the stream passes it.

    Generations: ``record_event`` numbers each record; ``completed_gen`` is the newest record passed.
    """

    def __init__(self, device_id: int, flags: int) -> None:
        self.id = next(_event_ids)  # small and unique, for logs and traces
        self.device_id = device_id
        self.flags = flags
        self.handle = 0
        self.recorded_gen = 0
        self.completed_gen = 0
        self.timestamp_ns: int | None = None
        self.is_reset = False
        self._held: list[Stream] = []  # streams waiting on this event (their _busy is the WAIT task)
        self._waiters: list[tuple[int, Waiter]] = []

    def record(self, stream: Stream) -> None:
        task = Task(TaskKind.RECORD, "record_event")
        task.event = self
        with LOCK:
            self.recorded_gen += 1
            task.gen = self.recorded_gen
        stream.enqueue(task)

    def reset(self, stream: Stream) -> None:
        task = Task(TaskKind.RESET, "reset_event")
        task.event = self
        stream.enqueue(task)

    def wait_on(self, stream: Stream) -> None:
        """``stream`` waits for the newest record made so far (no wait if never recorded)."""
        task = Task(TaskKind.WAIT, "stream_wait_event")
        task.event = self
        with LOCK:
            task.gen = self.recorded_gen
        stream.enqueue(task)

    def _complete_locked(self, gen: int) -> None:
        if gen > self.completed_gen:
            self.completed_gen = gen
        self.timestamp_ns = trace.now_ns()
        self.is_reset = False
        for stream in list(self._held):
            task = stream._busy
            if task is not None and task.kind is TaskKind.WAIT and task.gen <= self.completed_gen:
                self._held.remove(stream)
                task.state = TaskState.DONE
                if trace.recorder is not None:
                    stream.trace_wait_locked(task, self.timestamp_ns, self.timestamp_ns)
                stream._resume_locked(task)
        still = []
        for target, waiter in self._waiters:
            if target <= self.completed_gen:
                waiter.release()
            elif not waiter.done:
                still.append((target, waiter))
        self._waiters = still

    def _reset_locked(self) -> None:
        self.is_reset = True
        self.timestamp_ns = None

    def synchronize(self, timeout: float | None = None) -> None:
        with LOCK:
            target = self.recorded_gen
        rec = trace.recorder
        begin = trace.now_ns() if rec is not None else 0

        def attach(waiter: Waiter) -> bool:
            if self.completed_gen >= target:
                return True
            refuse_locked(f"event {self.id}", event=self, gen=target)
            self._waiters.append((target, waiter))
            return False

        done = wait(attach, timeout, (None, 0, self, target))
        if rec is not None:
            rec.add(
                "synchronize_event", "sync", begin, begin, trace.now_ns(), event=self.id, gen=target, timed_out=not done
            )
        if not done:
            raise AclError(AclCode.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, f"event not complete after {timeout * 1000:g} ms")

    def query(self) -> int:
        with LOCK:
            done = self.completed_gen >= self.recorded_gen
        return ACL_EVENT_STATUS_COMPLETE if done else ACL_EVENT_STATUS_NOT_READY

    def query_status(self) -> int:
        with LOCK:
            done = self.recorded_gen > 0 and self.completed_gen >= self.recorded_gen and not self.is_reset
        return ACL_EVENT_RECORDED_STATUS_COMPLETE if done else ACL_EVENT_RECORDED_STATUS_NOT_READY


def elapsed_ms(start: Event, end: Event) -> float:
    with LOCK:
        for name, event in (("start", start), ("end", end)):
            if event.timestamp_ns is None or event.completed_gen < event.recorded_gen:
                raise AclError(AclCode.ACL_ERROR_RT_EVENT_NOT_COMPLETE, f"{name} event has no completed record")
        return (end.timestamp_ns - start.timestamp_ns) / 1e6


class Engine:
    """A device's worker threads; streams with WORK tasks wait on its run queue."""

    def __init__(self, device_id: int, max_workers: int | None = None) -> None:
        self.device_id = device_id
        self.max_workers = (
            max_workers or int(os.environ.get("OPENACL_ENGINE_THREADS", "0")) or max(2, os.cpu_count() or 2)
        )
        self._queue: SimpleQueue[Stream | None] = SimpleQueue()
        self._workers: list[threading.Thread] = []
        self._idle = 0
        self._stopped = False

    def submit(self, stream: Stream) -> None:
        """Queue a stream to be advanced by a worker (LOCK held)."""
        self._queue.put(stream)
        if self._idle == 0 and len(self._workers) < self.max_workers and not self._stopped:
            worker = threading.Thread(
                target=self._work,
                name=f"openacl-engine-d{self.device_id}-{len(self._workers)}",
                daemon=True,
            )
            self._workers.append(worker)
            self._idle += 1  # counted idle until it takes its first stream
            worker.start()

    def _work(self) -> None:
        queue = self._queue
        while True:
            stream = queue.get()
            with LOCK:
                self._idle -= 1
            if stream is None:
                return
            try:
                stream.run_on_engine()
            except Exception:  # a bug in the runtime itself: keep the worker alive
                log.exception("engine of device %d: stream %r failed", self.device_id, stream)
            with LOCK:
                self._idle += 1

    def shutdown(self) -> None:
        """Stop the workers once the queue is drained; joins them unless called from one of them."""
        with LOCK:
            self._stopped = True
            workers = list(self._workers)
            self._workers.clear()
        for _ in workers:
            self._queue.put(None)
        me = threading.current_thread()
        for worker in workers:
            if worker is not me:
                worker.join()


def resolve(handle: int) -> Stream:
    """The stream a pyACL handle names; 0 is the current context's default stream."""
    if handle == 0:
        ctx = _context.current()
        if ctx is None:
            raise AclError(AclCode.ACL_ERROR_RT_CONTEXT_NULL, "stream 0 needs a current context (set_device first)")
        return ctx.default_stream
    return streams.get(handle)


def resolve_in_context(handle: int) -> Stream:
    """As ``resolve``, for the callback calls, which CANN checks against the current context."""
    ctx = _context.current()
    if ctx is None:
        raise AclError(AclCode.ACL_ERROR_RT_CONTEXT_NULL, "this thread has no current context")
    if handle == 0:
        return ctx.default_stream
    stream = streams.get(handle)
    if stream.context is not ctx:
        raise AclError(AclCode.ACL_ERROR_RT_STREAM_CONTEXT, f"stream {stream.id} belongs to another context")
    return stream
