"""``Stream.run_here`` and its adapter ``run_here_if_idle``: work run on the calling thread keeps every stream
guarantee."""

from __future__ import annotations

import threading

import pytest

import acl
from openacl.errors import AclCode, AclError
from openacl.runtime import device as stream_mod
from openacl.runtime.sched.stream import ACL_STREAM_STATUS_COMPLETE, Stream, StreamState
from openacl.runtime.sched.task import work_task


def _one_argument(s: Stream, name: str, work, args: tuple) -> bool:
    """``run_here`` (the operators' hot path: one argument, as it is) of ``work(*args)``."""
    return s.run_here(name, lambda packed: work(*packed), args)


@pytest.fixture(params=["adapter", "one_argument"])
def run_here(request):
    """Either way of calling it, as ``run_here_if_idle(stream, name, work, args)``."""
    return Stream.run_here_if_idle if request.param == "adapter" else _one_argument


def test_idle_stream_runs_the_work_here(stream, run_here):
    s = stream_mod.resolve(stream)
    ran = []
    assert run_here(s, "here", lambda *args: ran.append((threading.current_thread(), args)), (1, 2)) is True
    assert ran == [(threading.current_thread(), (1, 2))]
    assert s.query() == ACL_STREAM_STATUS_COMPLETE
    assert s.statistics()["enqueued"] == s.statistics()["done_through"] == 1  # a task of the stream's order


def test_busy_stream_leaves_the_work_to_the_caller(stream, run_here):
    s = stream_mod.resolve(stream)
    gate, order = threading.Event(), []
    s.enqueue(work_task("gate", lambda: (gate.wait(10), order.append("gate"))))
    assert run_here(s, "second", order.append, ("second",)) is False
    gate.set()
    s.synchronize()
    assert order == ["gate"]  # not run, not queued: the caller enqueues it


def test_a_destroyed_stream_runs_nothing_here(stream, run_here):
    s = stream_mod.resolve(stream)
    ran = []
    s.destroyed = True
    try:
        assert run_here(s, "here", ran.append, (1,)) is False
        with pytest.raises(AclError):  # the caller's enqueue then refuses it with the stream's code
            s.enqueue(work_task("after", lambda: None))
    finally:
        s.destroyed = False
    assert ran == []


def test_work_enqueued_while_it_runs_here_waits_behind_it(stream):
    """Another thread's enqueue during the inline run is ordered after it: the stream is marked busy first."""
    s = stream_mod.resolve(stream)
    started, release, order = threading.Event(), threading.Event(), []

    def slow() -> None:
        started.set()
        release.wait(10)
        order.append("here")

    runner = threading.Thread(target=lambda: s.run_here_if_idle("here", slow, ()))
    runner.start()
    assert started.wait(10)
    assert s.state is StreamState.RUNNING
    assert s.run_here_if_idle("not here", order.append, ("not here",)) is False  # busy: a second caller queues
    s.enqueue(work_task("after", lambda: order.append("after")))
    done = threading.Event()
    waiter = threading.Thread(target=lambda: (s.synchronize(), done.set()))
    waiter.start()
    assert not done.wait(0.05)  # synchronize waits for the task running on the other thread
    release.set()
    runner.join(10)
    waiter.join(10)
    assert done.is_set() and order == ["here", "after"]


def test_a_failure_here_is_the_streams(stream, run_here):
    s = stream_mod.resolve(stream)

    def fail() -> None:
        raise RuntimeError("boom")

    assert run_here(s, "fails", fail, ()) is True
    with pytest.raises(AclError) as raised:
        s.synchronize()
    assert raised.value.code == AclCode.ACL_ERROR_RT_INTERNAL_ERROR
    assert acl.rt.synchronize_stream(stream) == 0  # reported once


def test_regression_idle_synchronize_reports_a_failure_once(stream, run_here):
    """The idle stream's synchronize (one try of LOCK, no wait) takes the failure out as the waiting path does."""
    s = stream_mod.resolve(stream)

    def fail() -> None:
        raise AclError(AclCode.ACL_ERROR_FAILURE, "boom")

    assert run_here(s, "fails", fail, ()) is True
    assert s.query() == ACL_STREAM_STATUS_COMPLETE
    with pytest.raises(AclError) as raised:
        s.synchronize()  # idle already: the fast path raises it
    assert raised.value.code == AclCode.ACL_ERROR_FAILURE and raised.value.__traceback__ is not None
    s.synchronize()  # idle, no failure: returns
    s.enqueue(work_task("fails", fail))  # on an engine thread: the waiting path's failure, the same code
    with pytest.raises(AclError) as raised:
        s.synchronize()
    assert raised.value.code == AclCode.ACL_ERROR_FAILURE
    s.synchronize()


def test_synchronize_after_work_here_still_waits_for_work_enqueued_since(stream, run_here):
    """A stream caught up after work run here is synchronized without LOCK only while nothing was enqueued since."""
    s = stream_mod.resolve(stream)
    assert run_here(s, "here", lambda: None, ()) is True
    s.synchronize()  # caught up: returns at once
    gate, done = threading.Event(), threading.Event()
    other = threading.Thread(target=lambda: s.enqueue(work_task("gate", lambda: gate.wait(10))))
    other.start()
    other.join(10)
    waiter = threading.Thread(target=lambda: (s.synchronize(), done.set()))
    waiter.start()
    assert not done.wait(0.05)  # the other thread's task holds it
    gate.set()
    waiter.join(10)
    assert done.is_set()


def test_regression_a_failure_left_before_work_here_is_still_reported(stream, run_here):
    """Work run here that succeeds does not hide a failure an earlier task left for the next synchronize."""
    s = stream_mod.resolve(stream)

    def fail() -> None:
        raise AclError(AclCode.ACL_ERROR_FAILURE, "boom")

    gate = threading.Event()
    s.enqueue(work_task("gate", lambda: gate.wait(10)))
    s.enqueue(work_task("fails", fail))
    gate.set()
    while s.query() != ACL_STREAM_STATUS_COMPLETE or s.state is not StreamState.IDLE:
        threading.Event().wait(0.001)
    assert run_here(s, "here", lambda: None, ()) is True
    with pytest.raises(AclError) as raised:
        s.synchronize()
    assert raised.value.code == AclCode.ACL_ERROR_FAILURE
    s.synchronize()


def _caught_up(handle: int) -> bool:
    """Whether ``synchronize_stream``'s entry answers at once (True) or hands the call on (False)."""
    handed_on = []
    answer = stream_mod.synchronize_entry(lambda *args: handed_on.append(args) or 0)(handle)
    assert answer == 0 and handed_on in ([], [(handle,)])
    return not handed_on


def test_synchronize_streams_first_test_is_the_lock_free_one(stream, run_here):
    """``synchronize_stream``'s entry (``device.synchronize_entry``) says done only where ``Stream.synchronize``'s
    first test does: a caught-up stream with no failure to report; anything else is the whole call's."""
    s = stream_mod.resolve(stream)
    assert run_here(s, "here", lambda: None, ()) is True
    assert _caught_up(stream) is True
    assert _caught_up(0) is False  # the default stream: resolved by the whole call
    assert _caught_up(stream + 1) is False  # no such stream: the whole call's error

    def fail() -> None:
        raise AclError(AclCode.ACL_ERROR_FAILURE, "boom")

    assert run_here(s, "fails", fail, ()) is True
    assert _caught_up(stream) is False  # a failure to report
    assert acl.rt.synchronize_stream(stream) == AclCode.ACL_ERROR_FAILURE
    assert _caught_up(stream) is False  # a failed run leaves the lock-free test unset: LOCK's decides
    assert acl.rt.synchronize_stream(stream) == 0
    gate = threading.Event()
    s.enqueue(work_task("gate", lambda: gate.wait(10)))
    assert _caught_up(stream) is False  # work to wait for
    gate.set()
    assert acl.rt.synchronize_stream(stream) == 0


def test_synchronize_streams_first_test_leaves_checking_to_the_whole_call(stream, checking, run_here):
    s = stream_mod.resolve(stream)
    assert run_here(s, "here", lambda: None, ()) is True
    assert _caught_up(stream) is False
    assert acl.rt.synchronize_stream(stream) == 0


def test_regression_a_keyboard_interrupt_in_work_run_here_reaches_the_caller(stream, run_here):
    """Ctrl-C while a small operator runs on the calling thread interrupts the program, as it would have had the
    operator run elsewhere: it is not kept as the stream's failure alone. The stream is left idle and usable, and
    reports the interrupted task at the next synchronize."""
    s = stream_mod.resolve(stream)

    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_here(s, "interrupted", interrupted, ())
    assert s.state is StreamState.IDLE and s.query() == ACL_STREAM_STATUS_COMPLETE
    assert acl.rt.synchronize_stream(stream) == AclCode.ACL_ERROR_RT_INTERNAL_ERROR
    assert acl.rt.synchronize_stream(stream) == 0
    ran = []
    assert run_here(s, "after", ran.append, (1,)) is True and ran == [1]


def test_work_run_here_is_ordered_with_another_threads_work(stream, run_here):
    """Runs here on one thread and tasks enqueued by another interleave in one order, and none is lost: an
    enqueue while work runs here queues behind it, and the run's end passes it on."""
    s = stream_mod.resolve(stream)
    order: list[tuple[str, int]] = []
    rounds = 300

    def enqueue_tasks() -> None:
        for i in range(rounds):
            s.enqueue(work_task("queued", lambda i=i: order.append(("queued", i))))

    other = threading.Thread(target=enqueue_tasks)
    other.start()
    here = 0
    for i in range(rounds):
        if run_here(s, "here", order.append, (("here", i),)):
            here += 1
    other.join(10)
    s.synchronize()
    assert [i for kind, i in order if kind == "queued"] == list(range(rounds))
    assert len([1 for kind, _ in order if kind == "here"]) == here
    stats = s.statistics()
    assert stats["enqueued"] == stats["done_through"] == rounds + here and stats["queued"] == 0
