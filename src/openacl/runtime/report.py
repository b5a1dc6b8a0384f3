"""Stream callbacks: subscriptions, ``launch_callback`` and ``process_report`` (the stream-callback hub).

Guarantees:
- A stream has at most one subscribed thread; a thread serves streams of one device only; at most
  ``MAX_THREADS`` threads are subscribed at once (CANN's documented limit), with a warning above 32.
- A callback runs exactly once, on the thread subscribed to its stream, inside that thread's
  ``process_report`` call (or inside a wait by that thread), in the order the stream reached it.
- A callback's return value is ignored; its exception is logged with the traceback and goes no further.
- No lock is held while a callback runs, so a callback may call the runtime (``malloc_host``, ``memcpy``,
  ``launch_callback`` ...); nor when a callback and its ``user_data`` are let go of, run or dropped, so their
  finalizers may call it too. A callback that waits for its own stream gets an error instead of a deadlock.
- Callbacks that can no longer run are never lost silently: ``unsubscribe_report``, a forced stream destroy
  and a report thread that has exited drop them with one warning that says how many.

Every state change of a callback is in this module: posted by the stream (``Stream._post_callback_locked``),
claimed (POSTED -> RUNNING, pushed on the thread's running stack) and finished (-> DONE, popped) by
``run_callback``, dropped by ``_detach_locked``. Waits for a running callback to return (``unsubscribe``,
``destroy_stream``) name it (``TaskDone``), so the wait graph sees them.
"""

from __future__ import annotations

import logging
import threading
from queue import Empty, SimpleQueue

from openacl import atfork, trace
from openacl.errors import AclCode, AclError
from openacl.log import get_logger
from openacl.runtime import checker
from openacl.runtime.sched import lock as _lock
from openacl.runtime.sched import tracing, waitgraph, waiting
from openacl.runtime.sched.lock import LOCK
from openacl.runtime.sched.stream import Stream
from openacl.runtime.sched.task import Task, TaskKind, TaskState
from openacl.runtime.sched.waiting import TaskDone, Wake

log = get_logger("rt")

MAX_THREADS = 1024
RECOMMENDED_THREADS = 32
ACL_CALLBACK_NO_BLOCK, ACL_CALLBACK_BLOCK = 0, 1
_INFO = 20  # logging.INFO: CANN logs an expected timeout or a missing subscription at info level


class ReportThread:
    """A thread id that is subscribed to one or more streams of one device."""

    def __init__(self, thread_id: int, device_id: int) -> None:
        self.thread_id = thread_id
        self.device_id = device_id
        self.streams: set[Stream] = set()
        self.queue: SimpleQueue = SimpleQueue()
        # The Python thread that has this id now, if any: ids are reused once a thread has exited, so the
        # reaper checks this object, not the id, to tell whether the subscribed thread is still there.
        self.thread = next((t for t in threading.enumerate() if t.ident == thread_id), None)

    def serve(self, item: object) -> None:
        """Run one queued report (a callback task); Wake items are ignored."""
        if isinstance(item, Task):
            run_callback(item)


_threads: dict[int, ReportThread] = {}


def run_callback(task: Task) -> bool:
    """Run one posted callback on the calling thread; False if it was dropped before it started."""
    return _serve(task, None, 0)


def _claim_locked(task: Task, me: int, stack: list[Task]) -> bool:
    """POSTED -> RUNNING on this thread, unless it was dropped before it could start."""
    if task.state is not TaskState.POSTED:
        return False
    task.state = TaskState.RUNNING
    task.thread = me
    stack.append(task)
    return True


def _next_task(queue: SimpleQueue, budget: int) -> tuple[Task | None, int]:
    """The next callback among the ``budget`` items already queued (Wake items are skipped)."""
    while budget > 0:
        budget -= 1
        try:
            item = queue.get_nowait()
        except Empty:
            return None, 0
        if isinstance(item, Task):
            return item, budget
    return None, 0


def _serve(task: Task, queue: SimpleQueue | None, budget: int) -> bool:
    """Run ``task``, then the callbacks among the next ``budget`` items of ``queue``, in order; True if any ran.

    The hot path of every callback, so what ``_claim_locked``, ``_next_task`` and ``lock.release`` do is
    written out inline here. The finish of one callback and the claim of the next share one LOCK hold: each
    hold is a point where the GIL can pass to a thread that then stalls on LOCK.
    """
    me = threading.get_ident()
    ran = False
    with _lock.locked:
        stack = waitgraph.running_stack()
        claimed = _claim_locked(task, me, stack)
    get_nowait = queue.get_nowait if queue is not None else None
    # The loop's constants as locals (a class attribute read costs more than the rest of a comparison).
    posted, running, done = TaskState.POSTED, TaskState.RUNNING, TaskState.DONE
    try_lock, unlock, soon, deferred = LOCK.acquire, LOCK.release, _lock.SOON, _lock.DEFERRED
    while True:
        if claimed:
            ran = True
            # Invariant: these locals keep the callback and its user_data until LOCK is released below (the
            # finish clears the task's own references; the last one may run a finalizer, user code).
            fn, data = task.fn, task.user_data
            start = trace.now_ns() if trace.recorder is not None else 0  # 0: not traced
            try:
                fn(data)
            except Exception:
                log.exception("stream %d: callback %r raised; the stream goes on", task.stream.id, fn)
            except BaseException:  # SystemExit, KeyboardInterrupt: not swallowed, but the callback is over
                with _lock.locked:
                    stack.pop()
                    task.stream.callback_finished_locked(task)
                raise
        following = None
        while budget:  # the next callback among what was queued when process_report woke
            budget -= 1
            try:
                item = get_nowait()
            except Empty:
                budget = 0
                break
            if type(item) is Task:
                following = item
                break
        following_claimed = False
        if not try_lock(False):
            _lock.acquire()
        try:
            if claimed:
                stack.pop()
                stream = task.stream
                in_flight = stream._in_flight
                if in_flight and in_flight[0] is task and not task.waiters and not stream._waiters:
                    # A NO_BLOCK callback that nobody waits for, the oldest in flight: what
                    # callback_finished_locked does for it, inline.
                    in_flight.popleft()
                    task.state = done
                    task.fn = task.user_data = None
                else:
                    stream.callback_finished_locked(task)
            if following is not None and following.state is posted:
                following.state = running
                following.thread = me
                stack.append(following)
                following_claimed = True
        finally:
            if soon or deferred:
                _lock.release()
            else:
                unlock()
        if claimed:
            if start:
                tracing.callback(task, fn, start)
            fn = data = None  # LOCK is released: their last references may go now
        if following is None:
            return ran
        task, claimed = following, following_claimed


def subscribe(thread_id: int, stream: Stream, *, tracked: bool = True) -> None:
    """Bind ``stream`` to ``thread_id``. ``tracked`` False for a subscription the runtime makes for itself (a VDEC
    or VENC channel's): under check, only the program's own are its to end (``unsubscribe_report``)."""
    with _lock.locked:
        if stream.subscription is not None:
            raise AclError(
                AclCode.ACL_ERROR_RT_STREAM_SUBSCRIBE,
                f"stream {stream.id} is already subscribed by thread {stream.subscription.thread_id}",
            )
        reporter = _threads.get(thread_id)
        if reporter is not None and reporter.device_id != stream.device_id:
            raise AclError(
                AclCode.ACL_ERROR_RT_THREAD_SUBSCRIBE,
                f"thread {thread_id} already serves device {reporter.device_id}, not device {stream.device_id}",
            )
        if reporter is None:
            if len(_threads) >= MAX_THREADS:
                raise AclError(AclCode.ACL_ERROR_RT_INTERNAL_ERROR, f"more than {MAX_THREADS} subscribed threads")
            reporter = _threads[thread_id] = ReportThread(thread_id, stream.device_id)
            waiting.REPORT_THREADS[thread_id] = reporter
            if len(_threads) > RECOMMENDED_THREADS:
                _lock.log_locked(
                    log,
                    logging.WARNING,
                    "%d threads subscribed for callbacks; CANN recommends at most %d",
                    len(_threads),
                    RECOMMENDED_THREADS,
                )
        reporter.streams.add(stream)
        stream.subscription = reporter
    if tracked and checker.enabled:
        checker.on_create("report subscription", id(stream))  # keyed by the stream: one subscription each


def unsubscribe(thread_id: int, stream: Stream, *, reason: str = "unsubscribe_report") -> None:
    """Unbind ``stream`` from ``thread_id``; callbacks not started yet are dropped, running ones waited for.

    Inside a callback, a wait for a running callback that (through other threads' waits) needs this thread's
    own callback is refused with 200001 before anything changes."""

    def prepare() -> list[TaskDone]:
        reporter = stream.subscription
        if reporter is None:
            raise AclError(AclCode.ACL_ERROR_RT_STREAM_SUBSCRIBE, f"stream {stream.id} is not subscribed")
        if reporter.thread_id != thread_id:
            raise AclError(
                AclCode.ACL_ERROR_RT_THREAD_SUBSCRIBE,
                f"stream {stream.id} is subscribed by thread {reporter.thread_id}, not {thread_id}",
            )
        return _detach_checked_locked(reporter, stream, reason, _UNSUBSCRIBED if reason == "unsubscribe_report" else "")

    waiting.wait(prepare, None)
    if checker.enabled:
        checker.on_destroy("report subscription", id(stream))


_UNSUBSCRIBED = "unsubscribe_report came before they ran, so no thread will (synchronize the stream first)"
_EXITED = "the thread subscribed to the stream exited without running them"


def _detach_checked_locked(reporter: ReportThread, stream: Stream, reason: str, misuse: str = "") -> list[TaskDone]:
    """Refuse (200001) first if waiting for the stream's running callbacks would close a circle; then detach.
    Returns what to wait for: the running callbacks, except the ones this thread is running."""
    mine = set(map(id, waitgraph.callbacks_running_here()))
    targets = [
        TaskDone(task)
        for task in stream.callbacks_running_locked(stream.last_seq_locked(), finished=True)
        if id(task) not in mine
    ]
    for target in targets:
        waitgraph.refuse_locked(target)
    _detach_locked(reporter, stream, reason, misuse)
    return targets


def _detach_locked(reporter: ReportThread, stream: Stream, reason: str, misuse: str = "") -> None:
    """``misuse``: why dropping the stream's pending callbacks is the program's bug (check reports it), or ""."""
    stream.subscription = None
    reporter.streams.discard(stream)
    if misuse and checker.enabled:
        sites = [task.site for task in stream.pending_callback_tasks_locked() if task.site is not None]
        if sites:  # reported after LOCK, on this thread: its stack still holds the program's call
            _lock.defer(checker.on_callbacks_dropped, stream.id, sites, misuse)
    dropped, _running = stream.drop_callbacks_locked()
    if dropped:
        _lock.log_locked(
            log,
            logging.WARNING,
            "%s: stream %d: %d callback(s) not run yet were dropped (synchronize the stream first to run them)",
            reason,
            stream.id,
            dropped,
        )
    if not reporter.streams:
        del _threads[reporter.thread_id]
        waiting.REPORT_THREADS.pop(reporter.thread_id, None)
        reporter.queue.put(Wake("unsubscribed"))


def detach_stream(stream: Stream, reason: str) -> None:
    """Remove any subscription of a stream that is going away, waiting for its running callbacks."""

    def prepare() -> list[TaskDone]:
        reporter = stream.subscription
        return _detach_checked_locked(reporter, stream, reason) if reporter is not None else []

    waiting.wait(prepare, None)
    if checker.enabled:  # the program's to end first (unsubscribe_report): one ended with its stream leaked
        with checker.reclaiming(reason):
            checker.on_destroy("report subscription", id(stream))


def launch(fn, user_data, block_type: int, stream: Stream, own_frames: int = 1) -> None:
    """Queue a callback on ``stream``. ``own_frames``: how many frames above this call are openacl's for certain
    (its caller at least), which ``openacl check`` skips on its way to the program's launch site."""
    blocking = block_type == ACL_CALLBACK_BLOCK
    if not blocking and block_type != ACL_CALLBACK_NO_BLOCK:
        raise AclError(
            AclCode.ACL_ERROR_INVALID_PARAM, f"block_type {block_type} is neither 0 (NO_BLOCK) nor 1 (BLOCK)"
        )
    if fn is None:
        raise AclError(AclCode.ACL_ERROR_RT_PARAM_INVALID, "callback function is NULL")
    if stream.subscription is None:
        raise AclError(
            AclCode.ACL_ERROR_RT_STREAM_NO_CB_REG,
            f"stream {stream.id} is not bound to any thread; call subscribe_report first",
        )
    task = Task(TaskKind.CALLBACK, "callback", None, fn, user_data, blocking)  # positional: the hot path
    if checker.enabled:  # ordered after what came before it; its launch site kept
        task.fn, task.site = checker.ordered_callback(stream, fn, blocking, own_frames + 1)
    stream.enqueue(task)


def process_report(timeout_ms: int) -> None:
    """Run every pending callback of the calling thread's streams; wait up to ``timeout_ms`` (-1: forever)."""
    timeout = waiting.timeout_from_ms(timeout_ms)
    me = threading.get_ident()
    reporter = _threads.get(me)
    if reporter is None:
        raise AclError(AclCode.ACL_ERROR_RT_THREAD_SUBSCRIBE, f"thread {me} is not subscribed", level=_INFO)
    queue = reporter.queue
    reporter.thread = threading.current_thread()  # whoever serves the id now is the subscribed thread
    deadline = None if timeout is None else trace.now_ns() + timeout_ms * 1_000_000
    while True:
        try:
            item = queue.get(timeout=timeout)
        except Empty:
            raise AclError(
                AclCode.ACL_ERROR_RT_REPORT_TIMEOUT, f"no callback to run within {timeout_ms} ms", level=_INFO
            ) from None
        # Run what was already pending when we woke, but no more: a callback that keeps launching
        # callbacks must not keep process_report from returning.
        budget = queue.qsize()
        if not isinstance(item, Task):
            item, budget = _next_task(queue, budget)
        ran = item is not None and _serve(item, queue, budget)
        if ran:
            return
        if _threads.get(me) is not reporter:
            raise AclError(AclCode.ACL_ERROR_RT_THREAD_SUBSCRIBE, f"thread {me} was unsubscribed", level=_INFO)
        if deadline is not None:
            timeout = (deadline - trace.now_ns()) / 1e9
            if timeout <= 0:
                raise AclError(
                    AclCode.ACL_ERROR_RT_REPORT_TIMEOUT,
                    f"no callback to run within {timeout_ms} ms",
                    level=_INFO,
                )


def reap_exited_threads() -> None:
    """Unsubscribe report threads that have exited, dropping (with a warning) callbacks only they could run."""
    with _lock.locked:
        if not _threads:
            return
        candidates = [r for r in _threads.values() if any(s.pending_callbacks_locked() for s in r.streams)]
    if not candidates:
        return
    alive = {t.ident: t for t in threading.enumerate()}
    for reporter in candidates:
        thread = alive.get(reporter.thread_id)
        if thread is not None and reporter.thread is thread:
            continue  # still running (a new thread that only reuses the id does not count, nor does one that
            # took the id of a thread that had already exited when it was subscribed, until it serves the id)
        with _lock.locked:
            if _threads.get(reporter.thread_id) is not reporter:
                continue
            streams = list(reporter.streams)
            for stream in streams:
                _detach_locked(reporter, stream, f"report thread {reporter.thread_id} has exited", _EXITED)
        if checker.enabled:  # ended here, for the program (the misuse is the callbacks it left)
            for stream in streams:
                checker.on_destroy("report subscription", id(stream))


waiting.IDLE_HOOKS.append(reap_exited_threads)
# A forked child has only the thread that forked: the callbacks only the others could run are dropped at once.
atfork.at_child(reap_exited_threads, late=True)


def subscribed_thread_count() -> int:
    return len(_threads)


def reset() -> None:
    """Forget every subscription (process teardown); threads blocked in ``process_report`` wake with 107012."""
    with _lock.locked:
        for reporter in list(_threads.values()):
            for stream in list(reporter.streams):
                _detach_locked(reporter, stream, "finalize")
