"""Stream callbacks through the pyACL facade: every documented code, ordering, blocking and teardown."""

from __future__ import annotations

import threading

import pytest

import acl
from openacl.runtime import device as rt_device
from openacl.runtime import report

NO_BLOCK, BLOCK = 0, 1
SUCCESS = 0
INVALID_PARAM = 100000
API_NOT_SUPPORT = 200001
RT_CONTEXT_NULL = 107002
RT_STREAM_CONTEXT = 107003
RT_STREAM_SUBSCRIBE = 107011
RT_THREAD_SUBSCRIBE = 107012
RT_STREAM_NO_CB_REG = 107015
RT_INTERNAL_ERROR = 507000
RT_REPORT_TIMEOUT = 507012


class ReportThread:
    """The pyACL sample's report thread: start_thread + set_context + a process_report loop."""

    def __init__(self, context: int, timeout_ms: int = 20) -> None:
        self.stop = threading.Event()
        self.codes: list[int] = []

        def loop(args):
            acl.rt.set_context(args[0])
            while not self.stop.is_set():
                code = acl.rt.process_report(args[1])
                self.codes.append(code)
                if code == RT_THREAD_SUBSCRIBE:  # not subscribed (yet, or any more): answered at once, so
                    self.stop.wait(0.005)  # wait a little instead of spinning (and logging) millions of times

        self.tid, ret = acl.util.start_thread(loop, [context, timeout_ms])
        assert ret == SUCCESS

    def close(self) -> None:
        self.stop.set()
        assert acl.util.stop_thread(self.tid) == SUCCESS


class Held:
    """A callback that signals when it starts and returns only once released."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.finished: list[bool] = []

    def __call__(self, _user_data: object) -> None:
        self.entered.set()
        self.release.wait()
        self.finished.append(True)


@pytest.fixture
def reporter(ctx):
    thread = ReportThread(ctx)
    yield thread
    thread.close()


def logged(acl_log, text: str) -> bool:
    return any(text in record.getMessage() for record in acl_log.records)


# ----- subscribe_report -----


def test_subscribe_twice_same_or_other_thread_is_107011(stream, reporter, acl_log):
    assert acl.rt.subscribe_report(reporter.tid, stream) == SUCCESS
    assert acl.rt.subscribe_report(reporter.tid, stream) == RT_STREAM_SUBSCRIBE
    assert acl.rt.subscribe_report(threading.get_ident(), stream) == RT_STREAM_SUBSCRIBE
    assert logged(acl_log, "acl.rt.subscribe_report: ACL_ERROR_RT_STREAM_SUBSCRIBE(107011)")
    assert acl.rt.unsubscribe_report(reporter.tid, stream) == SUCCESS


def test_one_thread_serves_several_streams_of_one_device(ctx, reporter):
    streams = [acl.rt.create_stream()[0] for _ in range(3)]
    seen = []
    for s in streams:
        assert acl.rt.subscribe_report(reporter.tid, s) == SUCCESS
    for i, s in enumerate(streams):
        assert acl.rt.launch_callback(seen.append, i, BLOCK, s) == SUCCESS
    for s in streams:
        assert acl.rt.synchronize_stream(s) == SUCCESS
        assert acl.rt.unsubscribe_report(reporter.tid, s) == SUCCESS
    assert sorted(seen) == [0, 1, 2]


def test_thread_bound_on_one_device_cannot_serve_another(ctx, reporter, acl_log):
    s0, _ = acl.rt.create_stream()
    assert acl.rt.subscribe_report(reporter.tid, s0) == SUCCESS
    _ctx1, ret = acl.rt.create_context(1)
    assert ret == SUCCESS
    s1, _ = acl.rt.create_stream()
    assert acl.rt.subscribe_report(reporter.tid, s1) == RT_THREAD_SUBSCRIBE
    assert logged(acl_log, "already serves device 0")
    acl.rt.set_context(ctx)
    assert acl.rt.unsubscribe_report(reporter.tid, s0) == SUCCESS


def test_stream_zero_is_the_default_stream(ctx, reporter):
    seen = []
    assert acl.rt.subscribe_report(reporter.tid, 0) == SUCCESS
    assert acl.rt.launch_callback(seen.append, "default", BLOCK, 0) == SUCCESS
    assert acl.rt.synchronize_stream(0) == SUCCESS
    assert seen == ["default"]
    assert acl.rt.unsubscribe_report(reporter.tid, 0) == SUCCESS


def test_no_current_context_is_107002(ctx):
    codes = {}

    def body():
        codes["subscribe"] = acl.rt.subscribe_report(threading.get_ident(), 0)
        codes["launch"] = acl.rt.launch_callback(print, None, BLOCK, 0)

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert codes == {"subscribe": RT_CONTEXT_NULL, "launch": RT_CONTEXT_NULL}


def test_stream_of_another_context_is_107003(ctx):
    stream_a, _ = acl.rt.create_stream()
    ctx_b, _ = acl.rt.create_context(0)  # now current
    assert acl.rt.subscribe_report(threading.get_ident(), stream_a) == RT_STREAM_CONTEXT
    acl.rt.set_context(ctx)
    acl.rt.destroy_context(ctx_b)


def test_more_than_1024_threads_is_507000_and_above_32_warns(ctx, acl_log):
    streams = [acl.rt.create_stream()[0] for _ in range(report.MAX_THREADS + 1)]
    fake_ids = range(10_000, 10_000 + len(streams))
    codes = [acl.rt.subscribe_report(tid, s) for tid, s in zip(fake_ids, streams, strict=True)]
    assert codes[: report.MAX_THREADS] == [SUCCESS] * report.MAX_THREADS
    assert codes[-1] == RT_INTERNAL_ERROR
    assert logged(acl_log, "more than 1024 subscribed threads")
    assert logged(acl_log, "33 threads subscribed for callbacks; CANN recommends at most 32")
    for tid, s in zip(fake_ids, streams[:-1], strict=False):
        assert acl.rt.unsubscribe_report(tid, s) == SUCCESS


def test_threading_get_ident_works_as_thread_id(stream):
    stop = threading.Event()
    ready = threading.Event()
    ran_on = []
    ident = {}

    def loop():
        ident["tid"] = threading.get_ident()
        ready.set()
        while not stop.is_set():
            acl.rt.process_report(20)

    thread = threading.Thread(target=loop)
    thread.start()
    ready.wait()
    assert acl.rt.subscribe_report(ident["tid"], stream) == SUCCESS
    acl.rt.launch_callback(lambda _: ran_on.append(threading.get_ident()), None, BLOCK, stream)
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    assert acl.rt.unsubscribe_report(ident["tid"], stream) == SUCCESS
    stop.set()
    thread.join()
    assert ran_on == [ident["tid"]]


# ----- launch_callback -----


def test_launch_callback_checks(stream, reporter, acl_log):
    assert acl.rt.launch_callback(print, None, BLOCK, stream) == RT_STREAM_NO_CB_REG
    assert logged(acl_log, "not bound to any thread; call subscribe_report first")
    assert acl.rt.subscribe_report(reporter.tid, stream) == SUCCESS
    assert acl.rt.launch_callback(print, None, 2, stream) == INVALID_PARAM
    assert acl.rt.launch_callback(print, None, -1, stream) == INVALID_PARAM
    with pytest.raises(TypeError, match="parameter must be callable"):
        acl.rt.launch_callback(42, None, BLOCK, stream)
    with pytest.raises(TypeError, match=r"^acl\.rt\.launch_callback args parse failed$"):
        acl.rt.launch_callback(print, None, "1", stream)
    with pytest.raises(TypeError, match="args parse failed"):
        acl.rt.launch_callback(print, None, BLOCK)
    assert acl.rt.unsubscribe_report(reporter.tid, stream) == SUCCESS


def test_user_data_is_passed_as_the_single_argument(stream, reporter):
    received = []
    payload = [object(), {"k": 1}]
    acl.rt.subscribe_report(reporter.tid, stream)
    acl.rt.launch_callback(lambda *args: received.append(args), payload, BLOCK, stream)
    acl.rt.synchronize_stream(stream)
    acl.rt.unsubscribe_report(reporter.tid, stream)
    assert len(received) == 1 and received[0][0] is payload


def test_callback_exception_is_logged_and_the_stream_goes_on(stream, reporter, acl_log):
    seen = []

    def boom(_):
        raise ZeroDivisionError("in callback")

    acl.rt.subscribe_report(reporter.tid, stream)
    acl.rt.launch_callback(boom, None, BLOCK, stream)
    acl.rt.launch_callback(seen.append, "after", BLOCK, stream)
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    acl.rt.unsubscribe_report(reporter.tid, stream)
    assert seen == ["after"]
    records = [r for r in acl_log.records if "raised; the stream goes on" in r.getMessage()]
    assert len(records) == 1 and records[0].exc_info[0] is ZeroDivisionError


def test_block_callback_holds_later_tasks(stream, reporter):
    hold = Held()
    release, entered = hold.release, hold.entered
    event, _ = acl.rt.create_event()

    acl.rt.subscribe_report(reporter.tid, stream)
    acl.rt.launch_callback(hold, None, BLOCK, stream)
    acl.rt.record_event(event, stream)
    assert entered.wait(5)
    assert acl.rt.query_event(event) == (1, SUCCESS)  # NOT_READY: the record is behind the BLOCK callback
    release.set()
    assert acl.rt.synchronize_event(event) == SUCCESS
    assert acl.rt.query_event(event) == (0, SUCCESS)
    acl.rt.synchronize_stream(stream)
    acl.rt.unsubscribe_report(reporter.tid, stream)
    acl.rt.destroy_event(event)


def test_no_block_callback_does_not_hold_the_stream_but_synchronize_waits_for_it(stream, reporter):
    hold = Held()
    release, entered, finished = hold.release, hold.entered, hold.finished
    event, _ = acl.rt.create_event()

    acl.rt.subscribe_report(reporter.tid, stream)
    acl.rt.launch_callback(hold, None, NO_BLOCK, stream)
    acl.rt.record_event(event, stream)
    assert entered.wait(5)
    assert acl.rt.synchronize_event(event) == SUCCESS  # passed while the callback still runs
    assert acl.rt.stream_query(stream) == (1, SUCCESS)
    assert acl.rt.synchronize_stream_with_timeout(stream, 50) == 507046
    release.set()
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    assert finished == [True]
    assert acl.rt.stream_query(stream) == (0, SUCCESS)
    acl.rt.unsubscribe_report(reporter.tid, stream)
    acl.rt.destroy_event(event)


def test_callback_may_call_the_runtime(stream, reporter):
    dev, _ = acl.rt.malloc(8, 2)
    src = b"12345678"
    acl.rt.memcpy(dev, 8, acl.util.bytes_to_ptr(src), 8, 1)
    out = []

    def cb(_):
        host, ret = acl.rt.malloc_host(8)
        assert ret == SUCCESS
        assert acl.rt.memcpy(host, 8, dev, 8, 2) == SUCCESS
        out.append(acl.util.ptr_to_bytes(host, 8))
        acl.rt.free_host(host)
        acl.rt.launch_callback(out.append, "nested", NO_BLOCK, stream)

    acl.rt.subscribe_report(reporter.tid, stream)
    acl.rt.launch_callback(cb, None, BLOCK, stream)
    acl.rt.synchronize_stream(stream)
    acl.rt.synchronize_stream(stream)  # the nested launch came after the first synchronize began
    acl.rt.unsubscribe_report(reporter.tid, stream)
    assert out == [b"12345678", "nested"]


def test_callback_that_synchronizes_its_own_stream_gets_an_error_not_a_deadlock(stream, reporter, acl_log):
    codes = []
    acl.rt.subscribe_report(reporter.tid, stream)
    acl.rt.launch_callback(lambda _: codes.append(acl.rt.synchronize_stream(stream)), None, BLOCK, stream)
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    acl.rt.unsubscribe_report(reporter.tid, stream)
    assert codes == [API_NOT_SUPPORT]
    assert logged(acl_log, "inside one of its own callbacks would deadlock")


def test_report_thread_synchronizing_its_own_stream_serves_its_callbacks(stream):
    """The main thread subscribes itself: synchronize_stream must run the callbacks rather than wait forever."""
    seen = []
    me = threading.get_ident()
    assert acl.rt.subscribe_report(me, stream) == SUCCESS
    for i in range(5):
        acl.rt.launch_callback(seen.append, i, i % 2, stream)
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    assert seen == [0, 1, 2, 3, 4]
    assert acl.rt.unsubscribe_report(me, stream) == SUCCESS


# ----- process_report -----


def test_process_report_codes(stream, acl_log):
    assert acl.rt.process_report(0) == INVALID_PARAM
    assert acl.rt.process_report(-2) == INVALID_PARAM
    assert acl.rt.process_report(-1) == RT_THREAD_SUBSCRIBE  # immediately: this thread has no subscription
    me = threading.get_ident()
    acl.rt.subscribe_report(me, stream)
    assert acl.rt.process_report(10) == RT_REPORT_TIMEOUT
    timeouts = [r for r in acl_log.records if "ACL_ERROR_RT_REPORT_TIMEOUT" in r.getMessage()]
    assert timeouts and all(r.levelname == "INFO" for r in timeouts)
    acl.rt.unsubscribe_report(me, stream)


def test_process_report_runs_every_pending_callback_in_order(stream):
    me = threading.get_ident()
    seen = []
    acl.rt.subscribe_report(me, stream)
    for i in range(20):
        acl.rt.launch_callback(seen.append, i, NO_BLOCK, stream)
    assert acl.rt.process_report(1000) == SUCCESS
    assert seen == list(range(20))
    assert acl.rt.process_report(10) == RT_REPORT_TIMEOUT
    acl.rt.unsubscribe_report(me, stream)


def test_blocked_process_report_wakes_on_unsubscribe(stream):
    codes = []
    subscribed = threading.Event()
    tid = {}

    def loop():
        tid["id"] = threading.get_ident()
        subscribed.wait()
        codes.append(acl.rt.process_report(-1))

    thread = threading.Thread(target=loop)
    thread.start()
    while "id" not in tid:
        threading.Event().wait(0.001)
    acl.rt.subscribe_report(tid["id"], stream)
    subscribed.set()
    assert acl.rt.unsubscribe_report(tid["id"], stream) == SUCCESS
    thread.join(10)
    assert not thread.is_alive()
    assert codes == [RT_THREAD_SUBSCRIBE]


# ----- unsubscribe_report and teardown with callbacks pending -----


def test_unsubscribe_codes(stream, reporter, acl_log):
    assert acl.rt.unsubscribe_report(reporter.tid, stream) == RT_STREAM_SUBSCRIBE
    acl.rt.subscribe_report(reporter.tid, stream)
    assert acl.rt.unsubscribe_report(reporter.tid + 1, stream) == RT_THREAD_SUBSCRIBE
    assert logged(acl_log, f"is subscribed by thread {reporter.tid}")
    assert acl.rt.unsubscribe_report(reporter.tid, stream) == SUCCESS


def test_unsubscribe_drops_pending_callbacks_with_a_warning(stream, acl_log):
    me = threading.get_ident()
    seen = []
    acl.rt.subscribe_report(me, stream)  # nobody serves them: they stay pending
    for i in range(3):
        acl.rt.launch_callback(seen.append, i, NO_BLOCK, stream)
    assert acl.rt.unsubscribe_report(me, stream) == SUCCESS
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    assert seen == []
    assert logged(acl_log, "3 callback(s) not run yet were dropped")
    assert acl.rt.launch_callback(seen.append, 9, BLOCK, stream) == RT_STREAM_NO_CB_REG


def test_unsubscribe_waits_for_a_running_callback(stream, reporter):
    slow = Held()
    entered, release, finished = slow.entered, slow.release, slow.finished

    acl.rt.subscribe_report(reporter.tid, stream)
    acl.rt.launch_callback(slow, None, BLOCK, stream)
    assert entered.wait(5)
    results = []
    ctx = acl.rt.get_context()[0]

    def run_unsubscribe():
        acl.rt.set_context(ctx)
        results.append(acl.rt.unsubscribe_report(reporter.tid, stream))

    unsub = threading.Thread(target=run_unsubscribe)
    unsub.start()
    unsub.join(0.2)
    assert unsub.is_alive() and not results  # still waiting for the running callback
    release.set()
    unsub.join(5)
    assert results == [SUCCESS] and finished == [True]


def test_destroy_stream_runs_pending_callbacks_first(ctx, reporter):
    s, _ = acl.rt.create_stream()
    seen = []
    acl.rt.subscribe_report(reporter.tid, s)
    for i in range(10):
        acl.rt.launch_callback(seen.append, i, BLOCK, s)
    assert acl.rt.destroy_stream(s) == SUCCESS
    assert seen == list(range(10))
    assert acl.rt.unsubscribe_report(reporter.tid, s) == INVALID_PARAM  # the stream is gone


def test_destroy_stream_force_drops_pending_callbacks(ctx, acl_log):
    s, _ = acl.rt.create_stream()
    me = threading.get_ident()
    seen = []
    acl.rt.subscribe_report(me, s)
    for i in range(4):
        acl.rt.launch_callback(seen.append, i, BLOCK, s)
    assert acl.rt.destroy_stream_force(s) == SUCCESS
    assert seen == []
    assert logged(acl_log, "destroy_stream_force: stream")
    assert logged(acl_log, "4 callback(s) not run yet were dropped")


def test_callbacks_of_an_exited_thread_do_not_hang_synchronize(stream, acl_log):
    tid = {}
    thread = threading.Thread(target=lambda: tid.setdefault("id", threading.get_ident()))
    thread.start()
    thread.join()
    assert acl.rt.subscribe_report(tid["id"], stream) == SUCCESS
    acl.rt.launch_callback(print, "never", BLOCK, stream)
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    assert logged(acl_log, f"report thread {tid['id']} has exited")


def test_reset_device_waits_for_pending_callbacks(ctx, reporter):
    s, _ = acl.rt.create_stream()
    seen = []
    acl.rt.subscribe_report(reporter.tid, s)
    for i in range(5):
        acl.rt.launch_callback(seen.append, i, BLOCK, s)
    assert acl.rt.destroy_context(ctx) == SUCCESS
    assert acl.rt.reset_device(0) == SUCCESS
    assert seen == list(range(5))
    assert report.subscribed_thread_count() == 0


def test_runtime_stream_statistics_snapshot(stream, reporter):
    acl.rt.subscribe_report(reporter.tid, stream)
    for i in range(3):
        acl.rt.launch_callback(lambda _: None, i, NO_BLOCK, stream)
    acl.rt.synchronize_stream(stream)
    stats = rt_device.streams.get(stream).statistics()
    assert stats["enqueued"] == 3 and stats["done_through"] == 3 and stats["callbacks_in_flight"] == 0
    acl.rt.unsubscribe_report(reporter.tid, stream)


# ----- the NO_BLOCK launch path (runtime/device.launch_callback) -----


def test_no_block_callbacks_keep_launch_order_across_a_held_stream(stream, reporter):
    """Launched while a BLOCK callback holds the stream (queued, the general path), then on the idle stream
    (posted at once, the fused path): one order, the launch order."""
    hold, seen = Held(), []
    assert acl.rt.subscribe_report(reporter.tid, stream) == SUCCESS
    assert acl.rt.launch_callback(seen.append, "first", NO_BLOCK, stream) == SUCCESS
    assert acl.rt.launch_callback(hold, None, BLOCK, stream) == SUCCESS
    assert hold.entered.wait(5)
    for i in range(5):
        assert acl.rt.launch_callback(seen.append, i, NO_BLOCK, stream) == SUCCESS
    hold.release.set()
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    for i in range(5, 10):
        assert acl.rt.launch_callback(seen.append, i, NO_BLOCK, stream) == SUCCESS
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    assert seen == ["first", *range(10)]
    assert acl.rt.unsubscribe_report(reporter.tid, stream) == SUCCESS


def test_no_block_launch_codes_on_the_fused_path(ctx, stream, reporter, acl_log):
    """What the fused path does not take, the general path refuses with its code: an unsubscribed stream, a
    stream of another context, a destroyed stream, a bad block type; nothing is run."""
    seen: list = []
    assert acl.rt.launch_callback(seen.append, 1, NO_BLOCK, stream) == RT_STREAM_NO_CB_REG
    assert acl.rt.subscribe_report(reporter.tid, stream) == SUCCESS
    assert acl.rt.launch_callback(seen.append, 2, 2, stream) == INVALID_PARAM
    other, _ = acl.rt.create_context(0)
    assert acl.rt.launch_callback(seen.append, 3, NO_BLOCK, stream) == RT_STREAM_CONTEXT
    acl.rt.set_context(ctx)
    assert acl.rt.unsubscribe_report(reporter.tid, stream) == SUCCESS
    assert acl.rt.destroy_stream(stream) == SUCCESS
    assert acl.rt.launch_callback(seen.append, 4, NO_BLOCK, stream) == INVALID_PARAM
    assert acl.rt.destroy_context(other) == SUCCESS
    acl.rt.set_context(ctx)
    assert seen == []
