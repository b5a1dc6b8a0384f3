"""Finalizers are user code: no path that drops a task lets its last reference go under ``LOCK``.

A user object whose ``__del__`` calls the runtime (acllite frees in ``__del__``) rides on a task as a callback's
``user_data`` or in a work closure; the program drops its own reference; something drops the task. Each test
below takes one path that drops a task. ``Resource.__del__`` calls the runtime from a helper thread and waits
for it at most a few seconds, so that a finalizer run under ``LOCK`` fails the test instead of hanging it. The
``subprocess`` tests run the issue's programs as written (a deadlock there kills only the child).
"""

from __future__ import annotations

import functools
import gc
import os
import subprocess
import sys
import threading

import pytest

import acl
from openacl import process
from openacl.runtime import device as rt_device
from openacl.runtime.sched import lock
from openacl.runtime.sched.task import work_task
from tests.reliability.reporters import BlockedReporter

SUCCESS = 0
GRACE = 5  # seconds a finalizer's runtime call may take before the test calls it stuck


class Resource:
    """A user object whose ``__del__`` queries a stream, as acllite's resources free memory in theirs."""

    def __init__(self, stream: int, seen: list[tuple[str, object]], name: str = "resource") -> None:
        self.stream, self.seen, self.name = stream, seen, name

    def __del__(self) -> None:
        answer: list[object] = []
        helper = threading.Thread(target=lambda: answer.append(acl.rt.stream_query(self.stream)), daemon=True)
        helper.start()
        helper.join(GRACE)  # under LOCK the helper blocks until this finalizer has returned: no deadlock
        self.seen.append((self.name, answer[0] if answer else "stuck: the finalizer ran under a runtime lock"))


def _released(seen: list[tuple[str, object]], count: int = 1) -> None:
    """Every resource was finalized, and each finalizer's runtime call returned."""
    for _ in range(50):
        if len(seen) >= count:
            break
        gc.collect()
        threading.Event().wait(0.1)
    assert len(seen) == count, seen
    for name, answer in seen:
        assert isinstance(answer, tuple), f"{name}: {answer}"


def _fail(resource: Resource) -> None:
    del resource
    raise RuntimeError("the task fails")


def _hold_with_a_block_callback(stream: int) -> None:
    """A BLOCK callback nobody serves yet holds the stream: what is launched after it stays queued."""
    assert acl.rt.launch_callback(lambda _: None, None, 1, stream) == SUCCESS


@pytest.fixture
def reporter(ctx):
    blocked = BlockedReporter(ctx)  # subscribed, serves nothing until ``go``
    yield blocked
    blocked.go.set()
    blocked.stop()


# ----- callbacks dropped before they ran -----


def test_regression_destroy_stream_force_drops_a_queued_callback_whose_user_data_finalizer_calls_the_runtime(
    ctx, reporter
):
    stream, _ = acl.rt.create_stream()
    seen: list = []
    assert acl.rt.subscribe_report(reporter.tid, stream) == SUCCESS
    _hold_with_a_block_callback(stream)
    assert acl.rt.launch_callback(lambda _: None, Resource(stream, seen), 0, stream) == SUCCESS
    assert acl.rt.destroy_stream_force(stream) == SUCCESS
    _released(seen)


def test_regression_unsubscribe_report_drops_a_callback_whose_user_data_finalizer_calls_the_runtime(
    ctx, stream, reporter
):
    seen: list = []
    assert acl.rt.subscribe_report(reporter.tid, stream) == SUCCESS
    _hold_with_a_block_callback(stream)
    assert acl.rt.launch_callback(lambda _: None, Resource(stream, seen, "queued"), 0, stream) == SUCCESS
    assert acl.rt.unsubscribe_report(reporter.tid, stream) == SUCCESS
    _released(seen)


def test_regression_unsubscribe_report_drops_a_posted_callback_whose_user_data_finalizer_calls_the_runtime(
    ctx, stream, reporter
):
    """Posted (handed to the report thread's queue, not started): the queue dies with the subscription."""
    seen: list = []
    assert acl.rt.subscribe_report(reporter.tid, stream) == SUCCESS
    assert acl.rt.launch_callback(lambda _: None, Resource(stream, seen, "posted"), 0, stream) == SUCCESS
    assert acl.rt.unsubscribe_report(reporter.tid, stream) == SUCCESS
    _released(seen)


def test_regression_reset_device_force_drops_a_callback_whose_user_data_finalizer_calls_the_runtime(ctx, reporter):
    stream, _ = acl.rt.create_stream()
    seen: list = []
    assert acl.rt.subscribe_report(reporter.tid, stream) == SUCCESS
    _hold_with_a_block_callback(stream)
    assert acl.rt.launch_callback(lambda _: None, Resource(stream, seen), 0, stream) == SUCCESS
    assert acl.rt.reset_device_force(0) == SUCCESS
    _released(seen)


def test_regression_exited_report_thread_drops_a_callback_whose_user_data_finalizer_calls_the_runtime(ctx, stream):
    """acl.finalize drains the streams; the callbacks only an exited report thread could run are dropped then."""
    assert acl.init() == SUCCESS
    go = threading.Event()
    tid, ret = acl.util.start_thread(lambda _: go.wait(30), [])
    assert ret == SUCCESS
    seen: list = []
    assert acl.rt.subscribe_report(tid, stream) == SUCCESS
    _hold_with_a_block_callback(stream)
    assert acl.rt.launch_callback(lambda _: None, Resource(stream, seen), 0, stream) == SUCCESS
    go.set()
    assert acl.util.stop_thread(tid) == SUCCESS  # joins it: the thread has exited, never having served
    assert acl.finalize() == SUCCESS
    _released(seen)


def test_regression_process_reset_drops_queued_work_whose_closure_finalizer_calls_the_runtime(ctx, stream, gate):
    seen: list = []
    target = rt_device.resolve(stream)
    target.enqueue(work_task("gate", lambda: gate.wait(10)))
    resource = Resource(stream, seen)
    target.enqueue(work_task("queued", lambda r=resource: r))
    del resource
    reset = threading.Thread(target=process.reset, kwargs={"force": True})
    reset.start()
    gate.set()  # the gate task may be running: reset waits for it
    reset.join(30)
    assert not reset.is_alive()
    _released(seen)


# ----- tasks that finished -----


def test_regression_work_finished_on_an_engine_thread_lets_go_of_its_closure_after_lock(ctx, stream):
    """The engine thread dropped the finished task when it took the next one, under LOCK."""
    seen: list = []
    target = rt_device.resolve(stream)
    for i in range(3):
        resource = Resource(stream, seen, f"work {i}")
        target.enqueue(work_task("work", lambda r=resource: r))
    del resource
    assert acl.rt.synchronize_stream_with_timeout(stream, 30_000) == SUCCESS
    _released(seen, 3)


def test_regression_failed_work_lets_go_of_its_closure_after_lock(ctx, stream):
    seen: list = []
    target = rt_device.resolve(stream)
    resource = Resource(stream, seen, "failed")
    # Through a partial: a logged traceback (pytest's log capture keeps them) holds the frames' functions.
    fail = functools.partial(_fail, resource)
    target.enqueue(work_task("failing", fail))
    target.enqueue(work_task("after", lambda: None))
    del resource, fail
    assert acl.rt.synchronize_stream_with_timeout(stream, 30_000) != SUCCESS  # the failure is the stream's
    _released(seen)


def test_callback_that_ran_lets_go_of_its_user_data_after_lock(ctx, two_report_threads):
    """Served callbacks (BLOCK and NO_BLOCK, one after another in one process_report) release theirs too."""
    _, streams = two_report_threads
    stream = streams[0]
    seen: list = []
    for i in range(4):
        assert acl.rt.launch_callback(lambda _: None, Resource(stream, seen, f"cb {i}"), i % 2, stream) == SUCCESS
    assert acl.rt.synchronize_stream_with_timeout(stream, 30_000) == SUCCESS
    _released(seen, 4)


# ----- event and wait paths -----


def test_regression_destroy_stream_force_drops_callbacks_behind_an_event_wait(ctx, stream, reporter):
    """A stream held by stream_wait_event; destroyed by force: the wait and the callbacks behind it go."""
    seen: list = []
    other, _ = acl.rt.create_stream()
    event, _ = acl.rt.create_event()
    gate = threading.Event()
    rt_device.resolve(other).enqueue(work_task("gate", lambda: gate.wait(10)))
    assert acl.rt.record_event(event, other) == SUCCESS  # passed once the gate opens
    assert acl.rt.subscribe_report(reporter.tid, stream) == SUCCESS
    assert acl.rt.stream_wait_event(stream, event) == SUCCESS
    assert acl.rt.launch_callback(lambda _: None, Resource(stream, seen), 0, stream) == SUCCESS
    assert acl.rt.destroy_stream_force(stream) == SUCCESS
    gate.set()
    assert acl.rt.synchronize_stream(other) == SUCCESS
    _released(seen)


def test_regression_work_after_an_event_wait_lets_go_of_its_closure_after_lock(ctx):
    """A record passed on one stream resumes another (the ``soon`` chain), whose work then runs and finishes."""
    seen: list = []
    first, _ = acl.rt.create_stream()
    second, _ = acl.rt.create_stream()
    event, _ = acl.rt.create_event()
    gate = threading.Event()
    rt_device.resolve(first).enqueue(work_task("gate", lambda: gate.wait(10)))
    assert acl.rt.record_event(event, first) == SUCCESS
    assert acl.rt.stream_wait_event(second, event) == SUCCESS
    resource = Resource(second, seen)
    rt_device.resolve(second).enqueue(work_task("after the wait", lambda r=resource: r))
    del resource
    gate.set()
    assert acl.rt.synchronize_stream_with_timeout(second, 30_000) == SUCCESS
    _released(seen)


# ----- a wedged LOCK does not make a timeout wait for ever -----


@pytest.mark.parametrize("what", ["stream", "event"])
def test_regression_synchronize_stream_with_timeout_ignored_its_timeout_while_lock_was_held(ctx, stream, gate, what):
    """Whatever holds LOCK (here a stand-in for a finalizer stuck under it), the timeout is kept: 507046 for a
    stream, 507047 for an event."""
    event, _ = acl.rt.create_event()
    rt_device.resolve(stream).enqueue(work_task("gate", lambda: gate.wait(10)))
    assert acl.rt.record_event(event, stream) == SUCCESS
    held, wedged = threading.Event(), threading.Event()

    def wedge() -> None:
        with lock.LOCK:
            held.set()
            wedged.wait(20)

    holder = threading.Thread(target=wedge)
    holder.start()
    assert held.wait(10)
    codes: list[int] = []
    sync, handle, timed_out = {
        "stream": (acl.rt.synchronize_stream_with_timeout, stream, 507046),
        "event": (acl.rt.synchronize_event_with_timeout, event, 507047),
    }[what]
    waiter = threading.Thread(target=lambda: codes.append(sync(handle, 100)))
    waiter.start()
    waiter.join(10)
    stuck = waiter.is_alive()
    wedged.set()
    holder.join(10)
    waiter.join(10)
    gate.set()
    assert not stuck, f"synchronize_{what}_with_timeout(100 ms) was still waiting for LOCK after 10 s"
    assert codes == [timed_out]


def test_synchronize_with_timeout_still_times_out_on_work_then_succeeds(ctx, stream, gate):
    event, _ = acl.rt.create_event()
    rt_device.resolve(stream).enqueue(work_task("gate", lambda: gate.wait(10)))
    assert acl.rt.record_event(event, stream) == SUCCESS
    assert acl.rt.synchronize_stream_with_timeout(stream, 50) == 507046
    assert acl.rt.synchronize_event_with_timeout(event, 50) == 507047
    gate.set()
    assert acl.rt.synchronize_event_with_timeout(event, 30_000) == SUCCESS
    assert acl.rt.synchronize_stream_with_timeout(stream, 30_000) == SUCCESS


# ----- the programs, as written -----

CHILD = r"""
import threading
import openacl

openacl.install()  # what ``openacl run`` does before the program
import acl

acl.init()
acl.rt.set_device(0)
ctx, _ = acl.rt.create_context(0)
stream, _ = acl.rt.create_stream()
go = threading.Event()
tid, _ = acl.util.start_thread(lambda _: go.wait(60), [])  # subscribed, serves nothing


class Resource:
    def __del__(self):  # acllite frees its resources in __del__
        acl.rt.stream_query(stream)


acl.rt.subscribe_report(tid, stream)
acl.rt.launch_callback(lambda _: None, None, 1, stream)  # BLOCK, not served: holds the stream
acl.rt.launch_callback(lambda _: None, Resource(), 0, stream)
ret = {drop}
print("dropped", ret, flush=True)
go.set()
"""

DROPS = {
    "destroy_stream_force": "acl.rt.destroy_stream_force(stream)",
    "unsubscribe_report": "acl.rt.unsubscribe_report(tid, stream)",
    "reset_device_force": "acl.rt.reset_device_force(0)",
    "process_exit": "0  # nothing: the exit hook drops the queued work",
}


@pytest.mark.subprocess
@pytest.mark.parametrize("drop", sorted(DROPS))
def test_regression_dropped_callback_whose_user_data_del_calls_stream_query_deadlocked(drop):
    """The first program of the issue: the object died inside the locked drop and its __del__ deadlocked."""
    env = dict(os.environ, ASCEND_GLOBAL_LOG_LEVEL="3")
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD.format(drop=DROPS[drop])], capture_output=True, text=True, timeout=60, env=env
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{drop}: the program deadlocked")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "dropped 0" in done.stdout, done.stdout + done.stderr[-2000:]


# ----- the garbage collector's finalizers -----


class _Cycle:
    """Garbage only the cyclic collector frees; its ``__del__`` queries a stream."""

    def __init__(self, stream: int, answers: list[object]) -> None:
        self.me, self.stream, self.answers = self, stream, answers

    def __del__(self) -> None:
        self.answers.append(acl.rt.stream_query(self.stream))


def test_collector_finalizer_waits_for_lock_held_by_another_thread(ctx, stream):
    """A collection that begins while another thread holds LOCK: its finalizers' runtime calls just wait."""
    answers: list[object] = []
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with lock.LOCK:
            held.set()
            release.wait(0.3)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(10)
    _Cycle(stream, answers)
    gc.collect()
    holder.join(10)
    assert answers == [(0, SUCCESS)]


CYCLE_CHILD = r"""
import gc
import openacl

openacl.install()
import acl
from openacl.runtime.sched import lock

acl.init()
acl.rt.set_device(0)
stream, _ = acl.rt.create_stream()
answers = []


class Cycle:
    def __init__(self):
        self.me = self  # only the cyclic collector frees it

    def __del__(self):
        answers.append(acl.rt.stream_query(stream))


gc.disable()
Cycle()
with lock.locked:  # a collection falls due in a locked section, as at any allocation there
    gc.collect()
print("in the collection", answers, flush=True)
print("after", acl.rt.stream_query(stream), flush=True)
"""


@pytest.mark.subprocess
def test_regression_collector_finalizer_calling_the_runtime_on_the_thread_holding_lock_deadlocked():
    """It gets 200001 (ACL_ERROR_API_NOT_SUPPORT) instead of waiting for itself, and the runtime goes on."""
    env = dict(os.environ, ASCEND_GLOBAL_LOG_LEVEL="3")
    try:
        done = subprocess.run([sys.executable, "-c", CYCLE_CHILD], capture_output=True, text=True, timeout=60, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail("the program deadlocked")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["in the collection [(1, 200001)]", "after (0, 0)"], done.stdout
