"""The timeline tracer: what it records, the Chrome trace JSON it writes, and when it writes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from collections import defaultdict

import pytest

import acl
from openacl import process, trace
from openacl.runtime import device as rt_device
from openacl.runtime.sched.task import work_task

SUCCESS = 0
NO_BLOCK, BLOCK = 0, 1
H2D = 1
CATEGORIES = {"task", "callback", "event", "wait", "sync"}


@pytest.fixture(autouse=True)
def tracer_off():
    """Every test starts and ends with tracing off (process.reset, run by conftest, also turns it off)."""
    trace.disable()
    yield
    trace.disable()


# ----- checking a trace -----


def load(path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    assert set(data) == {"traceEvents", "displayTimeUnit"}
    assert data["displayTimeUnit"] == "ms"
    return data["traceEvents"]


def spans(events: list[dict]) -> list[dict]:
    return [e for e in events if e["ph"] == "X"]


def ns(value: float) -> int:
    return round(value * 1000)


def nesting_violations(events: list[dict]) -> list[tuple[dict, dict]]:
    """Pairs of spans on one thread that partially overlap (neither disjoint nor one inside the other)."""
    by_track: dict[tuple, list[tuple[int, int, dict]]] = defaultdict(list)
    for e in spans(events):
        start = ns(e["ts"])
        by_track[(e["pid"], e["tid"])].append((start, start + ns(e["dur"]), e))
    bad = []
    for items in by_track.values():
        items.sort(key=lambda item: (item[0], -item[1]))
        stack: list[tuple[int, int, dict]] = []
        for start, end, event in items:
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                bad.append((stack[-1][2], event))
            stack.append((start, end, event))
    return bad


def check_trace(events: list[dict]) -> None:
    """Sane times, a thread name for every track, spans that nest on every track."""
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert spans(events)
    for e in spans(events):
        assert {"name", "cat", "ph", "pid", "tid", "ts", "dur", "args"} <= set(e)
        assert e["pid"] == os.getpid() or isinstance(e["pid"], int)
        assert e["dur"] >= 0, e
        assert e["args"]["queued_us"] <= e["ts"], e
        assert e["tid"] in names, e
        assert 0 < e["tid"] < 2**32
    assert not nesting_violations(events)


def test_checker_finds_partial_overlaps():
    def x(tid, ts, dur):
        return {"ph": "X", "pid": 1, "tid": tid, "ts": ts, "dur": dur}

    nested = [x(1, 0, 10), x(1, 2, 3), x(1, 5, 0), x(1, 10, 0), x(1, 10, 5), x(2, 3, 20)]
    assert nesting_violations(nested) == []
    assert len(nesting_violations([x(1, 0, 10), x(1, 5, 10)])) == 1
    assert len(nesting_violations([x(1, 0, 10), x(1, 1, 2), x(1, 2.5, 8)])) == 1


# ----- a program-like run -----


class ReportThread:
    """The pyACL sample's report thread: start_thread + set_context + a process_report loop."""

    def __init__(self, context: int) -> None:
        self.stop = threading.Event()

        def loop(args):
            acl.rt.set_context(args[0])
            while not self.stop.is_set():
                acl.rt.process_report(args[1])

        self.tid, ret = acl.util.start_thread(loop, [context, 20])
        assert ret == SUCCESS

    def close(self) -> None:
        self.stop.set()
        assert acl.util.stop_thread(self.tid) == SUCCESS


def enqueue_work(stream: int, name: str, fn) -> None:
    rt_device.resolve(stream).enqueue(work_task(name, fn))


def run_program(ctx: int) -> dict:
    """Two streams, copies, callbacks on a report thread, an event between the streams, synchronizes."""
    gate = threading.Event()
    s1, ret = acl.rt.create_stream()
    assert ret == SUCCESS
    s2, ret = acl.rt.create_stream()
    assert ret == SUCCESS
    event, ret = acl.rt.create_event()
    assert ret == SUCCESS
    dev, ret = acl.rt.malloc(64, 0)
    assert ret == SUCCESS
    host, ret = acl.rt.malloc_host(64)
    assert ret == SUCCESS
    reporter = ReportThread(ctx)
    seen: dict[str, int] = {}
    try:
        for s in (s1, s2):
            assert acl.rt.subscribe_report(reporter.tid, s) == SUCCESS

        def block_cb(_):
            seen["block"] = threading.get_ident()
            # A report thread waiting for another stream it serves: s2's callback runs inside this wait.
            assert acl.rt.synchronize_stream(s2) == SUCCESS

        def no_block_cb(_):
            seen["no_block"] = threading.get_ident()

        def s2_cb(_):
            seen["s2"] = threading.get_ident()

        assert acl.rt.memcpy_async(dev, 64, host, 64, H2D, s1) == SUCCESS
        enqueue_work(s1, "gate", lambda: gate.wait(10))
        assert acl.rt.record_event(event, s1) == SUCCESS
        assert acl.rt.launch_callback(block_cb, None, BLOCK, s1) == SUCCESS
        assert acl.rt.launch_callback(no_block_cb, None, NO_BLOCK, s1) == SUCCESS
        assert acl.rt.stream_wait_event(s2, event) == SUCCESS  # held until s1 passes the record
        assert acl.rt.memset_async(dev, 64, 0, 64, s2) == SUCCESS
        assert acl.rt.launch_callback(s2_cb, None, NO_BLOCK, s2) == SUCCESS
        opener = threading.Timer(0.01, gate.set)  # the main thread's synchronize waits for it
        opener.start()
        assert acl.rt.synchronize_stream(s1) == SUCCESS
        opener.join()
        assert acl.rt.synchronize_stream(s2) == SUCCESS
        assert acl.rt.synchronize_event(event) == SUCCESS
        assert acl.rt.reset_event(event, s1) == SUCCESS
        assert acl.rt.synchronize_stream(s1) == SUCCESS
        for s in (s1, s2):
            assert acl.rt.unsubscribe_report(reporter.tid, s) == SUCCESS
    finally:
        gate.set()
        reporter.close()
    ids = {"s1": rt_device.resolve(s1).id, "s2": rt_device.resolve(s2).id, "event": rt_device.events.get(event).id}
    for s in (s1, s2):
        assert acl.rt.destroy_stream(s) == SUCCESS
    assert acl.rt.destroy_event(event) == SUCCESS
    assert acl.rt.free(dev) == SUCCESS
    assert acl.rt.free_host(host) == SUCCESS
    assert set(seen.values()) == {reporter.tid}
    return {"report_thread": reporter.tid, **ids}


def test_program_timeline(ctx, tmp_path):
    path = tmp_path / "timeline.json"
    trace.enable(path)
    assert acl.init() == SUCCESS
    info = run_program(ctx)
    assert acl.finalize() == SUCCESS  # writes the file
    events = load(path)
    check_trace(events)
    xs = spans(events)
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {e["cat"] for e in xs} >= CATEGORIES
    by_name = defaultdict(list)
    for e in xs:
        by_name[e["name"]].append(e)

    # WORK tasks: on engine threads, with their stream.
    for name, stream in (("memcpy_async", info["s1"]), ("gate", info["s1"]), ("memset_async", info["s2"])):
        (task,) = by_name[name]
        assert task["cat"] == "task"
        assert task["args"]["stream"] == stream
        assert names[task["tid"]].startswith("openacl-engine-")

    # Callbacks: on the report thread, with stream, flag and the pyACL thread id.
    callbacks = {e["name"].rsplit(".", 1)[-1]: e for e in xs if e["cat"] == "callback"}
    assert set(callbacks) == {"block_cb", "no_block_cb", "s2_cb"}
    assert callbacks["block_cb"]["args"]["flag"] == "BLOCK"
    assert callbacks["no_block_cb"]["args"]["flag"] == "NO_BLOCK"
    assert callbacks["s2_cb"]["args"]["stream"] == info["s2"]
    report_tids = {e["tid"] for e in callbacks.values()}
    assert len(report_tids) == 1
    assert names[report_tids.pop()] == "acl-util-thread"
    for e in callbacks.values():
        assert e["args"]["report_thread"] == info["report_thread"]
        assert e["args"]["queued_us"] <= e["args"]["posted_us"] <= e["ts"]

    # The report thread's synchronize of s2 holds s2's callback: callback inside sync inside callback.
    block, s2_cb = callbacks["block_cb"], callbacks["s2_cb"]
    (inner_sync,) = [e for e in by_name["synchronize_stream"] if e["tid"] == block["tid"]]
    assert inner_sync["args"]["stream"] == info["s2"]
    assert block["ts"] <= inner_sync["ts"] <= s2_cb["ts"]
    assert ns(s2_cb["ts"] + s2_cb["dur"]) <= ns(inner_sync["ts"] + inner_sync["dur"])
    assert ns(inner_sync["ts"] + inner_sync["dur"]) <= ns(block["ts"] + block["dur"])

    # Event record / reset: zero-length, with event id and generation.
    (record,) = by_name["record_event"]
    assert record["cat"] == "event" and record["dur"] == 0
    assert record["args"]["event"] == info["event"] and record["args"]["gen"] == 1
    assert record["args"]["stream"] == info["s1"]
    (reset,) = by_name["reset_event"]
    assert reset["dur"] == 0 and reset["args"]["event"] == info["event"]

    # stream_wait_event: a span on s2's track from the wait to the record that released it.
    (wait,) = by_name["stream_wait_event"]
    assert wait["cat"] == "wait"
    assert names[wait["tid"]] == f"stream {info['s2']} (device 0)"
    assert wait["args"]["event"] == info["event"] and wait["args"]["gen"] == 1
    assert wait["dur"] >= 5000  # held for the 10 ms the gate stayed shut
    assert ns(record["ts"]) <= ns(wait["ts"] + wait["dur"])
    assert wait["args"]["released_by_tid"] == record["tid"]

    # Synchronizes on the main thread.
    main_tid = threading.get_native_id()
    assert names[main_tid] == threading.current_thread().name
    main_syncs = [e for e in xs if e["tid"] == main_tid and e["cat"] == "sync"]
    assert {e["name"] for e in main_syncs} == {"synchronize_stream", "synchronize_event"}
    assert all(e["args"]["timed_out"] is False for e in main_syncs)
    assert any(e["name"] == "synchronize_stream" and e["dur"] >= 5000 for e in main_syncs)


def test_off_by_default_records_nothing(stream):
    assert trace.recorder is None and trace.output_path() is None
    host, _ = acl.rt.malloc_host(8)
    dev, _ = acl.rt.malloc(8, 0)
    assert acl.rt.memcpy_async(dev, 8, host, 8, H2D, stream) == SUCCESS
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    assert trace.recorder is None
    assert trace.flush() is None


def test_in_memory_recording_and_stop(stream):
    rec = trace.start()
    enqueue_work(stream, "job", lambda: None)
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    assert trace.stop() is rec and trace.recorder is None
    assert [s.category for s in rec.spans] == ["task", "sync"]
    job = rec.spans[0]
    assert job.name == "job" and job.queued_ns <= job.start_ns <= job.end_ns
    check_trace(rec.chrome_events())


def test_work_run_on_the_calling_thread_is_a_task_span(stream):
    """Work a small operator runs here (``run_here_if_idle``) is traced as a task of its stream, and the
    synchronize after it as a sync span (its lock-free return is taken only when not tracing)."""
    from openacl.runtime import device as rt_device

    rec = trace.start()
    assert rt_device.resolve(stream).run_here_if_idle("here", lambda: None, ()) is True
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    assert trace.stop() is rec
    assert [(s.name, s.category) for s in rec.spans] == [("here", "task"), ("synchronize_stream", "sync")]
    check_trace(rec.chrome_events())


def test_sync_timeout_and_dropped_wait(stream, tmp_path):
    rec = trace.start()
    gate = threading.Event()
    other, _ = acl.rt.create_stream()
    event, _ = acl.rt.create_event()
    try:
        enqueue_work(stream, "gate", lambda: gate.wait(10))
        assert acl.rt.record_event(event, stream) == SUCCESS
        assert acl.rt.stream_wait_event(other, event) == SUCCESS
        assert acl.rt.synchronize_stream_with_timeout(stream, 5) != SUCCESS
        assert acl.rt.destroy_stream_force(other) == SUCCESS
    finally:
        gate.set()
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    events = rec.chrome_events()
    check_trace(events)
    xs = spans(events)
    assert any(e["name"] == "synchronize_stream" and e["args"]["timed_out"] for e in xs)
    (wait,) = [e for e in xs if e["name"] == "stream_wait_event"]
    assert wait["args"]["dropped"] is True


def test_write_is_atomic_and_rewritten_only_when_new(stream, tmp_path):
    path = tmp_path / "t.json"
    rec = trace.enable(path)
    assert trace.recorder is rec and trace.output_path() == str(path)
    assert trace.enable(path) is rec  # already recording: kept
    enqueue_work(stream, "one", lambda: None)
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    assert trace.flush() == str(path)
    assert trace.flush() is None  # nothing new
    first = path.read_text()
    enqueue_work(stream, "two", lambda: None)
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    trace.stop()  # the file still gets what was recorded
    assert trace.flush() == str(path)
    assert {e["name"] for e in spans(load(path))} >= {"one", "two"}
    assert path.read_text() != first
    assert sorted(os.listdir(tmp_path)) == ["t.json"]  # no temporary file left
    assert trace.write_now() == str(path)
    summary = trace.summarize(path)
    assert summary["categories"]["task"]["count"] == 2 and summary["threads"] >= 2


def test_configure_from_env(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENACL_TRACE", raising=False)
    assert trace.configure_from_env() is None and trace.recorder is None
    path = str(tmp_path / "env.json")
    monkeypatch.setenv("OPENACL_TRACE", path)
    assert trace.configure_from_env() == path
    rec = trace.recorder
    assert rec is not None and trace.output_path() == path
    assert acl.init() == SUCCESS  # init reads the variable too, keeping the recording going on
    assert trace.recorder is rec
    assert acl.finalize() == SUCCESS
    assert os.path.isfile(path)


def test_reset_turns_tracing_off(tmp_path):
    trace.enable(tmp_path / "r.json")
    process.reset(force=True)
    assert trace.recorder is None and trace.output_path() is None


PROGRAM = textwrap.dedent(
    """
    import openacl
    openacl.install()
    import acl

    def copy_and_sync():
        assert acl.rt.set_device(0) == 0
        stream, _ = acl.rt.create_stream()
        dev, _ = acl.rt.malloc(16, 0)
        host, _ = acl.rt.malloc_host(16)
        assert acl.rt.memcpy_async(dev, 16, host, 16, 1, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        return stream

    {body}
    """
)


@pytest.mark.parametrize(
    ("body", "names"),
    [
        # No acl.init, no finalize: written at exit.
        ("copy_and_sync()", {"memcpy_async", "synchronize_stream"}),
        # Written at finalize, then rewritten at exit with what came after.
        (
            "acl.init(); copy_and_sync(); acl.finalize(); acl.rt.synchronize_stream(copy_and_sync())",
            {"memcpy_async", "synchronize_stream"},
        ),
    ],
    ids=["exit-only", "finalize-then-exit"],
)
@pytest.mark.subprocess
def test_env_var_writes_at_exit(tmp_path, body, names):
    path = tmp_path / "exit.json"
    env = {**os.environ, "OPENACL_TRACE": str(path)}
    result = subprocess.run(
        [sys.executable, "-c", PROGRAM.format(body=body)], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    events = load(path)
    check_trace(events)
    xs = spans(events)
    assert {e["name"] for e in xs} >= names
    expected_copies = 2 if "finalize" in body else 1
    assert sum(e["name"] == "memcpy_async" for e in xs) == expected_copies
