"""The scheduling lock's hot-path acquire (``lock.acquire``)."""

from __future__ import annotations

import logging
import threading
import time

import pytest

import acl
from openacl.runtime.sched import lock
from openacl.runtime.sched.task import Task, TaskKind, TaskState


def test_wait_for_lock_takes_the_lock_once_its_holder_lets_go():
    """A holder that keeps LOCK across a GIL-free wait outlasts the tries; the waiter then blocks, and gets
    LOCK only after the holder released it."""
    held, release = threading.Event(), threading.Event()
    order: list[str] = []

    def holder() -> None:
        with lock.LOCK:
            held.set()
            release.wait(10)
            order.append("released")

    thread = threading.Thread(target=holder)
    thread.start()
    assert held.wait(10)
    waiter_done = threading.Event()

    def waiter() -> None:
        lock.acquire()
        order.append("acquired")
        lock.LOCK.release()
        waiter_done.set()

    other = threading.Thread(target=waiter)
    other.start()
    assert not waiter_done.wait(0.2)  # LOCK is still held: the waiter has not got it
    release.set()
    assert waiter_done.wait(10)
    thread.join()
    other.join()
    assert order == ["released", "acquired"]
    assert not lock.LOCK.locked()


def test_wait_for_lock_under_contention_keeps_every_update():
    """Two threads take LOCK the hot-path way around a read-modify-write that yields the GIL halfway (so
    without the lock updates would be lost): none is."""
    counter = [0]

    def bump() -> None:
        for _ in range(2_000):
            if not lock.LOCK.acquire(False):
                lock.acquire()
            try:
                value = counter[0]
                time.sleep(0)
                counter[0] = value + 1
            finally:
                lock.LOCK.release()

    threads = [threading.Thread(target=bump) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter[0] == 4_000


# ----- nothing out of the runtime runs under LOCK -----


class _QueryingHandler(logging.Handler):
    """A logging handler is user code: this one calls back into the runtime from every record."""

    def __init__(self, stream: int) -> None:
        super().__init__(logging.WARNING)
        self.stream = stream
        self.codes: list[tuple[int, int]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.codes.append(acl.rt.stream_query(self.stream))


def test_regression_logging_handler_that_calls_the_runtime_does_not_deadlock_unsubscribe(ctx, stream):
    """With warnings on, the dropped-callbacks warning of unsubscribe_report was logged under LOCK; a handler
    calling acl.rt.stream_query then deadlocked. Records are now emitted after LOCK is released."""
    from tests.reliability.reporters import BlockedReporter

    reporter = BlockedReporter(ctx)  # subscribed, never serves: the callbacks stay pending
    handler = _QueryingHandler(stream)
    logger = logging.getLogger("openacl")
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)  # ASCEND_GLOBAL_LOG_LEVEL=2
    try:
        assert acl.rt.subscribe_report(reporter.tid, stream) == 0
        for i in range(3):
            assert acl.rt.launch_callback(lambda _: None, i, 0, stream) == 0
        done: list[int] = []

        def unsubscribe() -> None:
            acl.rt.set_context(ctx)
            done.append(acl.rt.unsubscribe_report(reporter.tid, stream))

        worker = threading.Thread(target=unsubscribe)
        worker.start()
        worker.join(10)
        assert not worker.is_alive(), "unsubscribe_report deadlocked in a logging handler"
        assert done == [0]
        assert handler.codes and all(ret == 0 for _, ret in handler.codes)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        acl.rt.unsubscribe_report(reporter.tid, stream)  # wakes the reporter if the test failed before
        reporter.go.set()
        reporter.stop()


def test_deferred_actions_run_after_release_and_soon_steps_before(monkeypatch):
    order: list[str] = []
    with lock.locked:
        lock.defer(lambda: order.append(f"deferred, LOCK held: {lock.LOCK.locked()}"))
        lock.soon(lambda: order.append(f"soon, LOCK held: {lock.LOCK.locked()}"))
    assert order == ["soon, LOCK held: True", "deferred, LOCK held: False"]


class _Finalized:
    """Notes, when it dies, whether LOCK was held then."""

    def __init__(self, seen: list[bool]) -> None:
        self.seen = seen

    def __del__(self) -> None:
        self.seen.append(lock.LOCK.locked())


def test_buried_references_are_dropped_after_lock_is_released():
    seen: list[bool] = []
    with lock.locked:
        lock.bury(_Finalized(seen))
        assert seen == []
    assert seen == [False]


def test_regression_soon_steps_let_go_of_their_arguments_under_lock():
    seen: list[bool] = []
    with lock.locked:
        for _ in range(3):  # the next step took the place of the one before it, under LOCK
            lock.soon(lambda _: None, _Finalized(seen))
    assert seen == [False] * 3


@pytest.mark.parametrize("state", [TaskState.DONE, TaskState.FAILED, TaskState.DROPPED])
def test_a_finished_task_holds_nothing_of_the_users(state):
    """What makes the rule structural: a task dropped under LOCK once it finished runs no finalizer there."""
    seen: list[bool] = []
    finalized = _Finalized(seen)
    tasks = [
        Task(TaskKind.CALLBACK, "callback", None, lambda _, f=finalized: f, _Finalized(seen)),
        Task(TaskKind.WORK, "work", lambda f=finalized: f),
    ]
    del finalized
    with lock.locked:
        for task in tasks:
            task.finish_locked(state)
            assert (task.work, task.fn, task.user_data) == (None, None, None)
        tasks.clear()
        assert seen == []
    assert seen == [False, False]


def test_soon_steps_added_by_soon_steps_run_in_a_loop_not_recursion():
    depth = 0
    seen: list[int] = []

    def step(n: int) -> None:
        nonlocal depth
        depth += 1
        seen.append(depth)
        if n:
            lock.soon(step, n - 1)
        depth -= 1

    with lock.locked:
        lock.soon(step, 10_000)
    assert len(seen) == 10_001 and max(seen) == 1


STALLED_STDOUT_CHILD = r"""
import os, sys, time
sys.path.insert(0, {root!r})
import openacl
openacl.install()
import acl
from openacl.errors import AclError
from openacl.runtime import device
from openacl.runtime.sched.task import work_task
acl.init(); acl.rt.set_device(0)
stream = device.resolve(0)

def fail():
    raise RuntimeError("x" * 200)  # logged with its traceback by the engine thread that ran it

for i in range(5000):
    stream.enqueue(work_task("failing", fail))
try:
    stream.synchronize(30)
except AclError as exc:
    os.write(2, ("stream work done: %d\n" % exc.code).encode())
os._exit(0)
"""


@pytest.mark.subprocess
def test_a_stalled_stdout_does_not_stall_the_streams(tmp_path):
    """CANN-format lines on a stdout pipe nobody reads: the engine threads do not block on the pipe."""
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    env = dict(os.environ, ASCEND_SLOG_PRINT_TO_STDOUT="1", ASCEND_GLOBAL_LOG_LEVEL="0")
    read_end, write_end = os.pipe()  # stdout: a pipe whose reader never reads
    child = subprocess.Popen(
        [sys.executable, "-c", STALLED_STDOUT_CHILD.format(root=root)],
        stdout=write_end,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(write_end)
    try:
        _, err = child.communicate(timeout=60)
    finally:
        child.kill()
        os.close(read_end)
    assert b"stream work done: 507000\n" in err, err.decode(errors="replace")[-2000:]
