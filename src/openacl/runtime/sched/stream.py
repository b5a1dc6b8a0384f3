"""Streams: ordered task queues on one device.

Guarantees:
- The tasks of one stream are passed in the order they were enqueued. A task that needs an engine thread
  (``WORK``: copies, model executions) runs on one; the others (callbacks, event records and waits) are passed
  by whichever thread advances the stream, which may be the thread that enqueued them.
- A stream is advanced by at most one thread at a time. Idle streams hold no thread (``engine``).
- A ``BLOCK`` callback holds its stream until the callback has returned; a ``NO_BLOCK`` callback is handed to
  its report thread and the stream moves on.
- ``synchronize`` returns once every task enqueued before it has finished, NO_BLOCK callbacks included.
  Event records and ``stream_wait_event`` follow the stream's position only: a NO_BLOCK callback still
  running does not hold them back.
- Resuming a held stream never recurses: an event that completes hands the streams it held to the lock
  holder's ``soon`` list (``lock``), which resumes them one after another, however long the chain.
- A WORK task whose function raises (any exception) is FAILED, the stream goes on, and the stream's next
  synchronize raises its code. No lock is held while a task's work or a user callback runs, nor when the last
  reference to them goes, dropped or finished (``lock.bury``: a finalizer is user code too).
"""

from __future__ import annotations

import logging
from _thread import get_ident as _get_ident
from collections import deque
from collections.abc import Callable
from typing import Protocol

from openacl import trace
from openacl.errors import AclCode, AclError
from openacl.log import get_logger
from openacl.runtime import checker
from openacl.runtime.sched import lock as _lock
from openacl.runtime.sched import tracing
from openacl.runtime.sched.lock import LOCK
from openacl.runtime.sched.task import Task, TaskKind, TaskState
from openacl.runtime.sched.waiting import StreamDone, Waiter, release_reached_locked, wait


class Engine(Protocol):
    """What a stream needs of its device's engine (``sched.engine.Engine``, which imports this module)."""

    stopped: bool

    def submit_locked(self, stream: Stream) -> None: ...


log = get_logger("rt")

ACL_STREAM_STATUS_COMPLETE, ACL_STREAM_STATUS_NOT_READY = 0, 1
ACL_CONTINUE_ON_FAILURE, ACL_STOP_ON_FAILURE = 0, 1
STREAM_FLAGS = 0xFF
MAX_PRIORITY = 7

# Called (LOCK held) with every task that failed on a stream: the exception-info records hook in here.
FAILURE_HOOKS: list[Callable[[Task, AclError], None]] = []


class StreamState:
    """What a stream is doing (plain strings, see ``TaskKind``)."""

    IDLE = "idle"  # nothing runnable: no tasks, or only tasks after a finished hold
    QUEUED = "queued"  # on its engine's run queue
    RUNNING = "running"  # an engine thread is advancing it
    HELD = "held"  # waiting for a BLOCK callback to return or an event to complete


# The states the hot paths set and test, as module constants (a global is read faster than a class attribute).
_IDLE, _RUNNING = StreamState.IDLE, StreamState.RUNNING
_TASK_RUNNING, _TASK_DONE = TaskState.RUNNING, TaskState.DONE


class Stream:
    """An ordered queue of tasks on one device."""

    # Slots: attribute reads on the callback hot paths are measurably cheaper; __weakref__ for per-stream
    # settings kept by runtime/attributes.py.
    __slots__ = (
        "__weakref__",
        "_busy",
        "_caught_up",
        "_here",
        "_in_flight",
        "_next_seq",
        "_tasks",
        "_waiters",
        "context",
        "destroyed",
        "device_id",
        "engine",
        "failure",
        "failure_mode",
        "flags",
        "handle",
        "id",
        "priority",
        "state",
        "subscription",
    )

    def __init__(self, context, stream_id: int, engine: Engine, priority: int = 0, flags: int = 0) -> None:
        self.context = context
        self.device_id: int = context.device.id
        self.id = stream_id
        self.engine = engine
        self.priority = priority
        self.flags = flags
        self.handle = 0
        self.destroyed = False
        # Set and cleared by the report hub (report.py) under LOCK; None when no thread is subscribed.
        self.subscription = None
        self.failure: AclError | None = None
        self.failure_mode = ACL_CONTINUE_ON_FAILURE
        self.state = StreamState.IDLE
        self._tasks: deque[Task] = deque()
        # Invariant: _busy is the task the stream is waiting on (a running WORK task, an outstanding BLOCK
        # callback or an unsatisfied event wait); it is set exactly when state is RUNNING-with-work or HELD.
        self._busy: Task | None = None
        self._here = Task(TaskKind.WORK, "")  # the task of work run on the caller's thread (``run_here_if_idle``)
        self._here.stream = self
        # Invariant: when ``_caught_up == _next_seq``, every task enqueued so far has finished. Set (under LOCK)
        # only where that holds: the end of work run here with nothing queued, busy or in flight. Every enqueue
        # moves ``_next_seq`` on, which only grows, so a value that was true stays equal exactly as long as it
        # stays true: ``synchronize`` may read the two fields without LOCK (see there).
        self._caught_up = 0
        # NO_BLOCK callbacks that were posted and have not finished, in posting order. The callback hot paths
        # write out what this class does, under LOCK: device.launch_callback posts to an idle stream as
        # enqueue does (_next_seq, _tasks, state, subscription); report._serve finishes the oldest one when
        # neither it nor the stream has a waiter (what callback_finished_locked does then, reading _waiters).
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

    def check_open_locked(self) -> None:
        """Refuse work for a stream that is going away, or whose engine has shut down."""
        if self.destroyed:
            raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"stream {self.handle:#x} is being destroyed")
        if self.engine.stopped:
            raise AclError(
                AclCode.ACL_ERROR_RT_DEVICE_TASK_ABORT,
                f"stream {self.id}: device {self.device_id} is shut down (process exit or reset); work refused",
            )

    def enqueue(self, task: Task) -> None:
        """Append a task; passes it at once if the stream is idle and the task needs no engine thread."""
        # The callback hot path: what check_open_locked and enqueue_locked do, inline (a call costs ~60 ns).
        if not LOCK.acquire(False):
            _lock.acquire()
        try:
            if self.destroyed or self.engine.stopped:
                self.check_open_locked()
            task.seq = self._next_seq
            self._next_seq += 1
            task.stream = self
            if self.state is StreamState.IDLE:
                if task.kind is TaskKind.CALLBACK and not self._tasks:
                    sub = self.subscription
                    if sub is None or task.blocking:
                        self._post_callback_locked(task)
                        return
                    # A NO_BLOCK callback on an idle stream: what _post_callback_locked does for it, inline.
                    task.state = TaskState.POSTED
                    if trace.recorder is not None:
                        task.reached_ns = trace.now_ns()
                    sub.queue.put(task)
                    self._in_flight.append(task)
                    return
                self._tasks.append(task)
                self.advance_locked()
            else:
                self._tasks.append(task)
        finally:
            if _lock.SOON or _lock.DEFERRED:
                _lock.release()
            else:
                LOCK.release()

    def enqueue_locked(self, task: Task) -> None:
        """``enqueue`` for a caller that holds LOCK and has called ``check_open_locked`` in the same hold."""
        task.seq = self._next_seq
        self._next_seq += 1
        task.stream = self
        if self.state is StreamState.IDLE:
            if task.kind is TaskKind.CALLBACK and not self._tasks:
                self._post_callback_locked(task)  # what advance_locked would do, without the queue
                return
            self._tasks.append(task)
            self.advance_locked()
        else:
            self._tasks.append(task)

    def run_here_if_idle(self, name: str, work: Callable[..., None], args: tuple) -> bool:
        """``run_here`` of ``work(*args)``."""
        return self.run_here(name, _apply, (work, args))

    def run_here(self, name: str, fn: Callable[[object], object], arg: object) -> bool:
        """Run ``fn(arg)`` on the calling thread, as a WORK task of the stream, if the stream has nothing queued
        or running; else do nothing and return False (the caller enqueues the work as usual).

        For work that costs less than handing it to an engine thread (a single operator on a small tensor).
        While it runs the stream is RUNNING with the task as ``_busy``, marked so under LOCK before the work
        starts, just as when an engine thread runs it: tasks enqueued meanwhile by any thread queue behind it,
        ``synchronize`` waits for it, and a failure is the stream's (logged, the failure hooks, the next
        synchronize), reported exactly as from an engine thread; a KeyboardInterrupt or SystemExit then reaches
        the caller too, as it would have on its own thread. The task never holds the work: the caller's
        references to it (and to whatever it holds) go on the caller's thread, with no lock held, so nothing is
        buried. Two LOCK holds in all, each with nothing to defer on success: the hot path of small operators,
        which pass their one argument as it is (``fn(arg)``: no argument tuple per call).

        Invariant: the task is the stream's own, made once (``_here``) and renewed under LOCK by each run here.
        It holds no payload, and nothing keeps it past its run: ``_busy`` lets go of it when the run ends, the
        failure hooks and the trace read it at once, and one stream runs one task at a time, so no two runs here
        share it at once (a second caller finds the stream RUNNING and enqueues a task of its own).
        """
        if not LOCK.acquire(False):
            _lock.acquire()
        try:  # this hold only reads and sets fields: it defers nothing, so LOCK is released as it is
            here = self.state is _IDLE and not self._tasks and not self.destroyed and not self.engine.stopped
            if here:
                task = self._here
                task.name = name
                task.thread = _get_ident()
                task.seq = self._next_seq
                self._next_seq += 1
                task.state = _TASK_RUNNING
                self.state = _RUNNING
                self._busy = task
        finally:  # (a KeyboardInterrupt between two lines must not leave LOCK held)
            LOCK.release()
        if not here:
            return False
        failure: BaseException | None = None
        start = trace.now_ns() if trace.recorder is not None else 0
        try:
            fn(arg)
        except BaseException as exc:  # as on an engine thread: the stream's failure ...
            failure = _kept(exc)
        if start and trace.recorder is not None:
            tracing.work(task, start)
        if not LOCK.acquire(False):
            _lock.acquire()
        try:
            if failure is None and not self._tasks and not self._waiters:
                # What _finished_locked and advance_locked do for a task without payload or waiters, when
                # nothing was enqueued meanwhile and nobody waits: the stream is idle again. Nothing deferred.
                self._busy = None
                task.state = _TASK_DONE
                self.state = _IDLE
                if not self._in_flight:
                    self._caught_up = self._next_seq
                return True
            self._finished_locked(task, failure)
            self.state = StreamState.IDLE
            self.advance_locked()  # what was enqueued meanwhile: passed, or handed to the engine
        finally:  # the log line, the failure's references, an engine hand-off: run after LOCK is released
            if _lock.SOON or _lock.DEFERRED:
                _lock.release()
            else:
                LOCK.release()
        if failure is not None and not isinstance(failure, Exception):
            # ... and a KeyboardInterrupt or SystemExit is the caller's too: it was meant for this thread, which
            # happened to be running the work (the stream recorded the interrupted task as failed)
            raise failure
        return True

    # ----- advancing (LOCK held) -----

    def advance_locked(self) -> Task | None:
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
                self.engine.submit_locked(self)
                return None
            tasks.popleft()
            if kind is TaskKind.CALLBACK:
                if self._post_callback_locked(task):
                    return None
            elif kind is TaskKind.RECORD:
                task.state = TaskState.DONE
                task.event.pass_record_locked(task)
            elif kind is TaskKind.RESET:
                task.state = TaskState.DONE
                task.event.pass_reset_locked(task)
            elif task.event.hold_locked(task):  # WAIT, event not there yet
                task.state = TaskState.RUNNING
                self._busy = task
                self.state = StreamState.HELD
                if trace.recorder is not None:
                    task.reached_ns = trace.now_ns()
                return None
            else:
                task.state = TaskState.DONE
                if trace.recorder is not None:
                    now = trace.now_ns()
                    tracing.event_wait(task, now, now)
        self.state = StreamState.IDLE
        self._notify_locked()
        return None

    def _post_callback_locked(self, task: Task) -> bool:
        """The stream has reached a callback: hand it to the report thread. True if it now holds the stream."""
        sub = self.subscription
        if sub is None:
            _lock.log_locked(
                log, logging.WARNING, "stream %d: callback %r dropped: no thread subscribed", self.id, task.fn
            )
            task.finish_locked(TaskState.DROPPED)
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

    def resume_locked(self, task: Task) -> None:
        """The hold on ``task`` (a BLOCK callback or an event wait) is over: carry on."""
        if self._busy is task:
            self._busy = None
            if self.state is StreamState.HELD:
                self.state = StreamState.IDLE
                self.advance_locked()
        self._notify_locked()

    # ----- engine threads -----

    def run_on_engine(self, budget: int = 64) -> None:
        """Engine threads only: advance the stream, running its WORK tasks, until idle or held.

        Whatever goes wrong (a task's work raising, even a bug in here), the task is FAILED and the stream is
        left IDLE, HELD or QUEUED, never RUNNING with no thread behind it.
        """
        while True:
            _lock.acquire()
            try:
                self.state = StreamState.RUNNING
                task = self.advance_locked()
                if task is None:
                    return
                if budget == 0:  # let other streams have the thread
                    self.state = StreamState.QUEUED
                    self.engine.submit_locked(self)
                    return
                self._tasks.popleft()
                task.state = TaskState.RUNNING
                self._busy = task
            except BaseException as exc:  # a bug in the scheduler: fail what ran, leave the stream runnable
                self._fail_task_locked(self._busy, exc)
                self.state = StreamState.IDLE
                self.advance_locked()
                return
            finally:
                _lock.release()
            budget -= 1
            failure = self._work(task)
            with _lock.locked:
                self._finished_locked(task, failure)

    def _work(self, task: Task) -> BaseException | None:
        """Run a WORK task's function (no lock held); what it raised, if anything."""
        start = trace.now_ns() if trace.recorder is not None else 0
        failure: BaseException | None = None
        try:
            task.work()
        except BaseException as exc:  # an engine thread must survive anything a task raises
            failure = _kept(exc)
        if trace.recorder is not None:
            tracing.work(task, start)
        return failure

    def _finished_locked(self, task: Task, failure: BaseException | None) -> None:
        """A WORK task's function returned (or raised ``failure``): the task is over."""
        if failure is None:
            self._busy = None
            task.finish_locked(TaskState.DONE)
            self._notify_locked()
        else:
            self._fail_task_locked(task, failure)

    def _fail_task_locked(self, task: Task | None, exc: BaseException) -> None:
        """``task`` (None: no task, a bug in the scheduler) failed with ``exc``: record it for the next
        synchronize and the failure hooks; the caller keeps the stream going."""
        if isinstance(exc, AclError):
            error = exc
            _lock.log_locked(
                log, logging.ERROR, "stream %d: %s failed: %s", self.id, task.name if task else "task", exc
            )
        else:
            what = task.name if task is not None else "the scheduler"
            error = AclError(AclCode.ACL_ERROR_RT_INTERNAL_ERROR, f"{what} raised {type(exc).__name__}: {exc}")
            _lock.log_locked(log, logging.ERROR, "stream %d: %s failed", self.id, what, exc=exc)
        if self.failure is None:
            # Invariant: ``failure`` is only ever taken out under LOCK into a local (``synchronize``), never
            # dropped under it (an exception may hold user objects).
            self.failure = error
        if task is not None:
            for hook in FAILURE_HOOKS:
                hook(task, error)
            if self._busy is task:
                self._busy = None
            task.finish_locked(TaskState.FAILED)
        self._notify_locked()

    # ----- callbacks (report threads, LOCK held) -----

    def callback_finished_locked(self, task: Task) -> None:
        """The report thread that ran ``task`` is done with it.

        Invariant: that thread (``report._serve``) holds its own references to ``fn`` and ``user_data`` until it
        has released ``LOCK``, so clearing them here lets go of nothing (the hot path: no ``bury``)."""
        task.state = TaskState.DONE
        task.fn = task.user_data = None
        if task.waiters:  # someone waits for this very callback (unsubscribe, destroy)
            task.finish_locked(TaskState.DONE)
        if task.blocking:
            self.resume_locked(task)
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
                self.resume_locked(busy)
            else:
                running.append(busy)
        self._notify_locked()
        return dropped, running

    def pending_callbacks_locked(self) -> int:
        """Callbacks queued or posted that have not started."""
        return len(self.pending_callback_tasks_locked())

    def pending_callback_tasks_locked(self) -> list[Task]:
        """The callbacks queued or posted that have not started, in stream order."""
        pending = [t for t in self._in_flight if t.state is TaskState.POSTED]
        busy = self._busy
        if busy is not None and busy.kind is TaskKind.CALLBACK and busy.state is TaskState.POSTED:
            pending.append(busy)
        pending.extend(t for t in self._tasks if t.kind is TaskKind.CALLBACK)
        return pending

    # ----- views (LOCK held): for the wait graph and the waiting targets -----

    def callbacks_running_locked(self, seq: int, *, finished: bool) -> list[Task]:
        """Running callbacks up to ``seq`` that keep the stream from getting past it: any of them for
        ``finished`` (synchronize), only a BLOCK one otherwise (the stream's position)."""
        running = []
        busy = self._busy
        if busy is not None and busy.kind is TaskKind.CALLBACK and busy.seq <= seq and busy.state is TaskState.RUNNING:
            running.append(busy)
        if finished:
            for task in self._in_flight:
                if task.seq > seq:
                    break
                if task.state is TaskState.RUNNING:
                    running.append(task)
        return running

    def event_waits_locked(self, seq: int) -> list[Task]:
        """Unsatisfied ``stream_wait_event`` tasks up to ``seq``, the held one first."""
        waits = []
        busy = self._busy
        if busy is not None and busy.kind is TaskKind.WAIT and busy.seq <= seq:
            waits.append(busy)
        for task in self._tasks:
            if task.seq > seq:
                break
            if task.kind is TaskKind.WAIT and not task.event.reached_locked(task.gen):
                waits.append(task)
        return waits

    def done_through_locked(self) -> int:
        """Every task with a sequence number up to this one has finished."""
        first = self._tasks[0].seq if self._tasks else self._next_seq
        if self._busy is not None and self._busy.seq < first:
            first = self._busy.seq
        if self._in_flight and self._in_flight[0].seq < first:
            first = self._in_flight[0].seq
        return first - 1

    def last_seq_locked(self) -> int:
        return self._next_seq - 1

    def add_waiter_locked(self, seq: int, waiter: Waiter) -> None:
        self._waiters.append((seq, waiter))

    def _notify_locked(self) -> None:
        if not self._waiters:
            return
        self._waiters = release_reached_locked(self._waiters, self.done_through_locked())

    # ----- waiting and queries (any thread) -----

    def synchronize(self, timeout: float | None = None) -> None:
        """Wait for every task enqueued so far (``timeout`` in seconds; None = forever).

        Raises 507046 on timeout, and the first failure of a WORK task since the last synchronize. Inside one
        of the stream's own callbacks (or anything that waits for one), 200001 instead of a deadlock.
        """
        if self._caught_up == self._next_seq and self.failure is None and trace.recorder is None:
            # Caught up since the last work run here, no failure to report: no lock. The two sequence fields are
            # read one after the other, each whole (the GIL); ``_caught_up`` was set equal to ``_next_seq`` when
            # everything enqueued had finished, and any enqueue since would have moved ``_next_seq`` on for good.
            # A failure a racing synchronize takes out meanwhile is reported once, by that one.
            if checker.enabled:
                checker.on_host_ordered(self)
            return
        if trace.recorder is None and LOCK.acquire(False):
            # Caught up already (the common case after a small operator ran on the calling thread): one try of
            # LOCK instead of a wait. Not lock-free: "caught up" reads several fields (queue, busy task, callbacks
            # in flight, sequence numbers) that a holder changes one after another, so only under LOCK are they
            # seen together; a failure is taken out under it as in the wait's path.
            try:  # this hold only reads and moves fields: it defers nothing, so LOCK is released as it is
                failure = None
                done = not self._tasks and self._busy is None and not self._in_flight  # done_through_locked: caught up
                if done:
                    failure, self.failure = self.failure, None
            finally:
                LOCK.release()
            if done:
                if checker.enabled:
                    checker.on_host_ordered(self)
                if failure is not None:
                    raise failure
                return
        begin = trace.now_ns() if trace.recorder is not None else 0
        done = wait(lambda: [StreamDone(self, self._next_seq - 1)], timeout)
        if trace.recorder is not None:
            tracing.synchronize("synchronize_stream", begin, stream=self.id, timed_out=not done)
        if not done:
            raise AclError(
                AclCode.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                f"stream {self.id} not done after {timeout * 1000:g} ms",
            )
        if checker.enabled:
            checker.on_host_ordered(self)
        if self.failure is None:  # set under LOCK before any waiter is released: no lock needed to see it
            return
        with _lock.locked:
            failure, self.failure = self.failure, None
        if failure is not None:
            raise failure

    def query(self) -> int:
        with _lock.locked:
            done = self.done_through_locked() >= self._next_seq - 1
        if done and checker.enabled:
            checker.on_host_ordered(self)
        return ACL_STREAM_STATUS_COMPLETE if done else ACL_STREAM_STATUS_NOT_READY

    def discard_pending_locked(self, reason: str) -> int:
        """Forced destroy, reset or shutdown: drop every queued task and every callback not started; return
        how many. A dropped record counts as passed, so nobody waits for its event forever."""
        dropped, _ = self.drop_callbacks_locked()
        for task in self._tasks:
            task.finish_locked(TaskState.DROPPED)
            if task.kind is TaskKind.RECORD:
                task.event.pass_record_locked(task)
            dropped += 1
        self._tasks.clear()
        busy = self._busy
        if busy is not None and busy.kind is TaskKind.WAIT:
            if trace.recorder is not None:
                now = trace.now_ns()
                tracing.event_wait(busy, now, now, dropped=True)
            busy.finish_locked(TaskState.DROPPED)
            busy.event.release_hold_locked(busy)
            self.resume_locked(busy)
        self._notify_locked()
        if dropped:
            _lock.log_locked(log, logging.WARNING, "%s: stream %d: %d queued task(s) dropped", reason, self.id, dropped)
        return dropped

    def abandon_running_locked(self, reason: str) -> None:
        """A forked child: the WORK task a parent's engine thread was running never finishes here, and the
        engine's run queue is new: fail the one, requeue the stream."""
        busy = self._busy
        if busy is not None and busy.kind is TaskKind.WORK:
            self._fail_task_locked(busy, AclError(AclCode.ACL_ERROR_RT_DEVICE_TASK_ABORT, reason))
        if self.state in (StreamState.RUNNING, StreamState.QUEUED):  # the child's engine has an empty queue
            self.state = StreamState.IDLE
            self.advance_locked()

    def statistics(self) -> dict:
        with _lock.locked:
            return {
                "state": self.state,
                "queued": len(self._tasks),
                "callbacks_in_flight": len(self._in_flight),
                "enqueued": self._next_seq - 1,
                "done_through": self.done_through_locked(),
            }


def _apply(call: tuple[Callable[..., None], tuple]) -> None:
    """``run_here``'s function for ``run_here_if_idle``: ``work(*args)``."""
    work, args = call
    work(*args)


def _kept(exc: BaseException) -> BaseException:
    """What a failed WORK task leaves for the next synchronize (and log records): an AclError's code and
    message, not the failed work's frames, which hold what the task holds (a GE-PY run's outputs) for as long
    as it is kept."""
    if isinstance(exc, AclError):
        exc = exc.with_traceback(None)
        exc.__context__ = exc.__cause__ = None
    return exc
