"""Faults: hostile callbacks, failing disks, teardown with work pending, processes killed mid-write.

Each test states the documented outcome it holds openacl to (docs/: "Stream callbacks", "Models and dumps",
"GE sessions"). Bounded: the slowest pieces (sleeping callbacks, SIGKILLed children) take a second or two each.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import acl
from openacl.dump import reader as dump_reader
from openacl.dump import sink
from openacl.errors import AclCode
from openacl.runtime import device as rt_device
from openacl.runtime import report
from openacl.runtime.sched.task import work_task
from tests.acl.test_callbacks import Held, ReportThread
from tests.model_io import ModelIO, demo_input, reference
from tests.reliability.reporters import BlockedReporter

NO_BLOCK, BLOCK = 0, 1
SUCCESS = 0
H2D, D2H = 1, 2
STREAM_NOT_READY = 1
EVENT_NOT_READY = 1
API_NOT_SUPPORT = AclCode.ACL_ERROR_API_NOT_SUPPORT  # 200001
RT_STREAM_NO_CB_REG = AclCode.ACL_ERROR_RT_STREAM_NO_CB_REG  # 107015
RT_THREAD_SUBSCRIBE = AclCode.ACL_ERROR_RT_THREAD_SUBSCRIBE  # 107012
STREAM_SYNC_TIMEOUT = AclCode.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT  # 507046
EVENT_SYNC_TIMEOUT = AclCode.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT  # 507047
WRITE_FILE = AclCode.ACL_ERROR_WRITE_FILE  # 100004
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def reporter(ctx):
    thread = ReportThread(ctx)
    yield thread
    thread.close()


@pytest.fixture
def two_served_streams(two_report_threads):
    """Two streams, each subscribed by a report thread of its own."""
    return two_report_threads[1]


def messages(acl_log, text: str) -> list[str]:
    return [r.getMessage() for r in acl_log.records if text in r.getMessage()]


def dropped_count(acl_log) -> int:
    """Callbacks openacl reported as dropped: the per-stream counts plus the one-by-one drops."""
    total = 0
    for message in messages(acl_log, "not run yet were dropped"):
        total += int(re.search(r"(\d+) callback\(s\) not run yet", message)[1])
    total += len(messages(acl_log, "dropped: no thread subscribed"))
    return total


def device_buffer(data: bytes) -> int:
    ptr, ret = acl.rt.malloc(len(data), 0)
    assert ret == SUCCESS
    assert acl.rt.memcpy(ptr, len(data), acl.util.bytes_to_ptr(data), len(data), H2D) == SUCCESS
    return ptr


def read_device(ptr: int, size: int) -> bytes:
    host, ret = acl.rt.malloc_host(size)
    assert ret == SUCCESS
    assert acl.rt.memcpy(host, size, ptr, size, D2H) == SUCCESS
    data = acl.util.ptr_to_bytes(host, size)
    acl.rt.free_host(host)
    return data


# ----- stream callbacks that raise, sleep, or call back into the runtime -----


class Boom(Exception):
    pass


class BadStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("even the message is broken")


def test_every_callback_raising_leaves_the_stream_and_report_thread_usable(stream, reporter, acl_log):
    """1,000 callbacks that all raise (various exceptions, one whose message raises) among copies: every one
    ran exactly once, the copies are right, the report thread is still alive and serving, all are logged."""
    acl.rt.subscribe_report(reporter.tid, stream)
    ran: list[int] = []
    errors = [Boom, ValueError, ZeroDivisionError, BadStr, RecursionError]

    def raising(i):
        ran.append(i)
        raise errors[i % len(errors)](i)  # a new exception each time, as real code raises them

    dev = device_buffer(bytes(4096))
    host, _ = acl.rt.malloc_host(4096)
    payloads = []
    for i in range(1000):
        assert acl.rt.launch_callback(raising, i, i % 2, stream) == SUCCESS
        if i % 100 == 0:
            data = bytes([i % 256]) * 4096
            payloads.append(data)  # kept alive until the copy has run
            assert acl.rt.memcpy_async(dev, 4096, acl.util.bytes_to_ptr(data), 4096, H2D, stream) == SUCCESS
    assert acl.rt.memcpy_async(host, 4096, dev, 4096, D2H, stream) == SUCCESS
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    assert sorted(ran) == list(range(1000))
    assert acl.util.ptr_to_bytes(host, 4096) == payloads[-1]
    raised = [r for r in acl_log.records if "raised; the stream goes on" in r.getMessage()]
    assert len(raised) == 1000 and all(r.exc_info for r in raised)
    ok = []
    assert acl.rt.launch_callback(ok.append, "still served", BLOCK, stream) == SUCCESS
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    assert ok == ["still served"]
    acl.rt.unsubscribe_report(reporter.tid, stream)
    acl.rt.free_host(host)


@pytest.mark.parametrize("exc", [SystemExit(3), KeyboardInterrupt()], ids=["SystemExit", "KeyboardInterrupt"])
def test_callback_raising_a_base_exception_ends_its_report_thread_but_nothing_hangs(stream, acl_log, exc):
    """Not ``Exception``: it is not swallowed (Ctrl-C and exit must work) but reaches the report thread's own
    code. The callback counts as finished, so the stream is not held; callbacks queued for the thread that
    is now gone are dropped with a warning; stop_thread reports the exception as pyACL does."""
    codes = []

    def loop(_):
        while True:
            codes.append(acl.rt.process_report(-1))

    tid, _ = acl.util.start_thread(loop, [])
    assert acl.rt.subscribe_report(tid, stream) == SUCCESS

    def hostile(_):
        raise exc

    later = []
    assert acl.rt.launch_callback(hostile, None, BLOCK, stream) == SUCCESS
    assert acl.rt.launch_callback(later.append, 1, BLOCK, stream) == SUCCESS
    start = time.monotonic()
    assert acl.rt.synchronize_stream_with_timeout(stream, 10_000) == SUCCESS
    assert time.monotonic() - start < 5
    assert later == []
    assert messages(acl_log, f"report thread {tid} has exited")
    with pytest.raises(RuntimeError, match=type(exc).__name__):
        acl.util.stop_thread(tid)


def test_sleeping_block_callback_holds_its_stream_and_timeouts_answer_on_time(ctx, reporter):
    """A BLOCK callback sleeping 1.2 s: timed waits return their timeout codes on time, the stream and an event
    recorded behind it are not ready, another stream is not held up, and a plain synchronize waits it out."""
    s, _ = acl.rt.create_stream()
    other, _ = acl.rt.create_stream()
    acl.rt.subscribe_report(reporter.tid, s)
    event, _ = acl.rt.create_event()
    slow = threading.Event()

    def sleeper(_):
        time.sleep(1.2)
        slow.set()

    dev = device_buffer(b"x" * 64)
    src = b"y" * 64
    assert acl.rt.launch_callback(sleeper, None, BLOCK, s) == SUCCESS
    assert acl.rt.memcpy_async(dev, 64, acl.util.bytes_to_ptr(src), 64, H2D, s) == SUCCESS
    assert acl.rt.record_event(event, s) == SUCCESS

    start = time.monotonic()
    assert acl.rt.synchronize_stream_with_timeout(s, 200) == STREAM_SYNC_TIMEOUT
    assert acl.rt.synchronize_event_with_timeout(event, 100) == EVENT_SYNC_TIMEOUT
    assert 0.25 <= time.monotonic() - start < 1.0
    assert acl.rt.stream_query(s) == (STREAM_NOT_READY, SUCCESS)
    assert acl.rt.query_event(event) == (EVENT_NOT_READY, SUCCESS)
    assert read_device(dev, 64) == b"x" * 64  # the copy behind the BLOCK callback has not run

    dev2 = device_buffer(bytes(64))
    assert acl.rt.memcpy_async(dev2, 64, acl.util.bytes_to_ptr(src), 64, H2D, other) == SUCCESS
    assert acl.rt.synchronize_stream_with_timeout(other, 500) == SUCCESS  # not held by the sleeping callback
    assert not slow.is_set()

    assert acl.rt.synchronize_stream(s) == SUCCESS
    assert slow.is_set() and time.monotonic() - start >= 1.1
    assert read_device(dev, 64) == src and acl.rt.query_event(event) == (0, SUCCESS)
    acl.rt.unsubscribe_report(reporter.tid, s)


def test_sleeping_no_block_callback_lets_the_stream_go_on_but_synchronize_waits(stream, reporter):
    """NO_BLOCK: an event behind it completes at once; synchronize (timed) still waits for the callback."""
    acl.rt.subscribe_report(reporter.tid, stream)
    event, _ = acl.rt.create_event()
    done = threading.Event()

    def sleeper(_):
        time.sleep(1.0)
        done.set()

    assert acl.rt.launch_callback(sleeper, None, NO_BLOCK, stream) == SUCCESS
    assert acl.rt.record_event(event, stream) == SUCCESS
    start = time.monotonic()
    assert acl.rt.synchronize_event_with_timeout(event, 500) == SUCCESS
    assert time.monotonic() - start < 0.5 and not done.is_set()
    assert acl.rt.synchronize_stream_with_timeout(stream, 100) == STREAM_SYNC_TIMEOUT
    assert acl.rt.synchronize_stream_with_timeout(stream, 5000) == SUCCESS
    assert done.is_set()
    acl.rt.unsubscribe_report(reporter.tid, stream)


def test_callback_calling_back_into_the_runtime(ctx, reporter, acl_log):
    """Inside a BLOCK callback: launches, copies and model runs work; waits that could only end after the
    callback returns get 200001 instead of a deadlock; waits that do not depend on it succeed."""
    s, _ = acl.rt.create_stream()
    other, _ = acl.rt.create_stream()
    for handle in (s, other):
        acl.rt.subscribe_report(reporter.tid, handle)
    before, _ = acl.rt.create_event()
    dev = device_buffer(b"a" * 32)
    later_src = b"b" * 32
    seen: list[object] = []
    codes: dict[str, object] = {}

    def inside(_):
        codes["launch_block"] = acl.rt.launch_callback(seen.append, "nested block", BLOCK, s)
        codes["launch_no_block"] = acl.rt.launch_callback(seen.append, "nested no_block", NO_BLOCK, s)
        codes["read"] = read_device(dev, 32)  # malloc_host + memcpy + ptr_to_bytes + free_host
        codes["memcpy_async_own"] = acl.rt.memcpy_async(dev, 32, acl.util.bytes_to_ptr(later_src), 32, H2D, s)
        codes["sync_own"] = acl.rt.synchronize_stream(s)
        codes["sync_own_timeout"] = acl.rt.synchronize_stream_with_timeout(s, 100)
        codes["sync_device"] = acl.rt.synchronize_device()
        codes["destroy_own"] = acl.rt.destroy_stream(s)
        codes["event_before"] = acl.rt.synchronize_event(before)
        # another stream whose callbacks this same thread serves: served while it waits
        codes["launch_other"] = acl.rt.launch_callback(seen.append, "other", BLOCK, other)
        codes["sync_other"] = acl.rt.synchronize_stream(other)
        codes["unsubscribe_other"] = acl.rt.unsubscribe_report(reporter.tid, other)

    assert acl.rt.record_event(before, s) == SUCCESS
    assert acl.rt.launch_callback(inside, None, BLOCK, s) == SUCCESS
    assert acl.rt.synchronize_stream_with_timeout(s, 10_000) == SUCCESS
    assert acl.rt.synchronize_stream(s) == SUCCESS  # the nested launches came after the first synchronize began
    assert codes == {
        "launch_block": SUCCESS,
        "launch_no_block": SUCCESS,
        "read": b"a" * 32,
        "memcpy_async_own": SUCCESS,
        "sync_own": API_NOT_SUPPORT,
        "sync_own_timeout": API_NOT_SUPPORT,
        "sync_device": API_NOT_SUPPORT,
        "destroy_own": API_NOT_SUPPORT,
        "event_before": SUCCESS,
        "launch_other": SUCCESS,
        "sync_other": SUCCESS,
        "unsubscribe_other": SUCCESS,
    }
    assert seen == ["other", "nested block", "nested no_block"]
    assert read_device(dev, 32) == later_src
    assert messages(acl_log, "inside one of its own callbacks would deadlock")
    acl.rt.unsubscribe_report(reporter.tid, s)


def test_callback_may_run_a_model_and_dump_it(ctx, reporter, tmp_path):
    """acl.mdl.execute (with a disk dump) inside a stream callback: the callback's thread waits for the dump
    thread, not for its own stream, so nothing deadlocks and the files are complete when execute returns."""
    assert acl.init() == 0
    s, _ = acl.rt.create_stream()
    acl.rt.subscribe_report(reporter.tid, s)
    out = tmp_path / "dump"
    out.mkdir()
    cfg = tmp_path / "d.json"
    cfg.write_text(json.dumps({"dump": {"dump_path": str(out), "dump_list": [{"model_name": "tinynet"}]}}))
    assert acl.mdl.init_dump() == 0 and acl.mdl.set_dump(str(cfg)) == 0
    io = ModelIO()
    x = demo_input()
    io.load_input(x)
    result = {}

    def run_model(_):
        result["ret"] = acl.mdl.execute(io.model_id, io.inputs[0], io.outputs[0])
        result["files"] = [p for p in out.rglob("*") if p.is_file()]

    assert acl.rt.launch_callback(run_model, None, BLOCK, s) == SUCCESS
    assert acl.rt.synchronize_stream_with_timeout(s, 30_000) == SUCCESS
    assert result["ret"] == SUCCESS and result["files"]
    for path in result["files"]:
        dump_reader.read_dump(path)
    np.testing.assert_allclose(io.read_outputs()[0], reference(x=x)[0], rtol=1e-5, atol=1e-6)
    assert acl.mdl.finalize_dump() == 0
    acl.rt.unsubscribe_report(reporter.tid, s)
    assert acl.finalize() == 0


def test_regression_callback_waiting_for_an_event_recorded_behind_it_gets_200001_not_a_hang(ctx, reporter):
    """Found by this suite: a BLOCK callback that synchronized an event recorded on its own stream after it,
    or a stream that waits for such an event, waited forever (the event needs the callback to return first).
    It is waiting for its own stream, which the README promises answers 200001."""
    s, _ = acl.rt.create_stream()
    waiter_stream, _ = acl.rt.create_stream()
    third, _ = acl.rt.create_stream()
    acl.rt.subscribe_report(reporter.tid, s)
    behind, _ = acl.rt.create_event()
    chained, _ = acl.rt.create_event()
    codes = {}

    def inside(_):
        codes["event_behind"] = acl.rt.synchronize_event(behind)
        codes["event_behind_timeout"] = acl.rt.synchronize_event_with_timeout(behind, 5000)
        codes["stream_waiting_on_it"] = acl.rt.synchronize_stream(waiter_stream)
        codes["chained_two_hops"] = acl.rt.synchronize_event(chained)
        codes["device"] = acl.rt.synchronize_device()

    assert acl.rt.launch_callback(inside, None, BLOCK, s) == SUCCESS
    assert acl.rt.record_event(behind, s) == SUCCESS
    assert acl.rt.stream_wait_event(waiter_stream, behind) == SUCCESS
    assert acl.rt.record_event(chained, waiter_stream) == SUCCESS
    assert acl.rt.stream_wait_event(third, chained) == SUCCESS
    assert acl.rt.synchronize_stream_with_timeout(s, 10_000) == SUCCESS
    assert codes == dict.fromkeys(codes, API_NOT_SUPPORT) and len(codes) == 5
    for handle in (waiter_stream, third):
        assert acl.rt.synchronize_stream_with_timeout(handle, 5000) == SUCCESS
    acl.rt.unsubscribe_report(reporter.tid, s)


def test_regression_waits_that_do_not_depend_on_the_callback_still_succeed(ctx, reporter):
    """The other side of the fix: no false alarm. A NO_BLOCK callback does not hold its stream's position, and
    an event also recorded later on a stream this callback does not hold is waited for, not refused."""
    s, _ = acl.rt.create_stream()
    free, _ = acl.rt.create_stream()
    gate_stream, _ = acl.rt.create_stream()
    other_reporter = ReportThread(ctx)
    acl.rt.subscribe_report(reporter.tid, s)
    acl.rt.subscribe_report(other_reporter.tid, gate_stream)
    behind, _ = acl.rt.create_event()
    rerecorded, _ = acl.rt.create_event()
    gate, _ = acl.rt.create_event()
    codes = {}
    ready = threading.Event()

    def no_block(_):
        ready.wait(5)
        codes["no_block_event_behind"] = acl.rt.synchronize_event_with_timeout(behind, 5000)

    assert acl.rt.launch_callback(no_block, None, NO_BLOCK, s) == SUCCESS
    assert acl.rt.record_event(behind, s) == SUCCESS
    ready.set()
    assert acl.rt.synchronize_stream_with_timeout(s, 10_000) == SUCCESS

    ready.clear()

    def block(_):
        ready.wait(5)
        start = time.monotonic()
        codes["block_rerecorded_elsewhere"] = acl.rt.synchronize_event_with_timeout(rerecorded, 5000)
        codes["waited"] = time.monotonic() - start > 0.1

    assert acl.rt.launch_callback(block, None, BLOCK, s) == SUCCESS
    assert acl.rt.record_event(rerecorded, s) == SUCCESS  # gen 1: behind the callback
    # gen 2: on another stream, held for 0.3 s by another thread's callback (through an event wait)
    assert acl.rt.launch_callback(lambda _: time.sleep(0.3), None, BLOCK, gate_stream) == SUCCESS
    assert acl.rt.record_event(gate, gate_stream) == SUCCESS
    assert acl.rt.stream_wait_event(free, gate) == SUCCESS
    assert acl.rt.record_event(rerecorded, free) == SUCCESS
    ready.set()
    assert acl.rt.synchronize_stream_with_timeout(s, 10_000) == SUCCESS
    assert codes == {"no_block_event_behind": SUCCESS, "block_rerecorded_elsewhere": SUCCESS, "waited": True}
    acl.rt.unsubscribe_report(reporter.tid, s)
    acl.rt.unsubscribe_report(other_reporter.tid, gate_stream)
    other_reporter.close()


@pytest.mark.parametrize("threads", [2, 3])
def test_report_threads_whose_callbacks_wait_in_a_circle_get_200001_not_a_deadlock(ctx, acl_log, threads):
    """Callback i, on report thread i, synchronizes the stream of callback i+1 (the last one the first's):
    without the cross-thread wait graph every one of them waits forever. The wait that would close the
    circle is refused; the others then complete, in turn."""
    reporters = [ReportThread(ctx) for _ in range(threads)]
    streams = [acl.rt.create_stream()[0] for _ in range(threads)]
    for thread, s in zip(reporters, streams, strict=True):
        assert acl.rt.subscribe_report(thread.tid, s) == SUCCESS
    all_running = threading.Barrier(threads, timeout=5)
    codes: dict[int, int] = {}

    def waits_for(index: int):
        def callback(_):
            all_running.wait()
            codes[index] = acl.rt.synchronize_stream_with_timeout(streams[(index + 1) % threads], 10_000)

        return callback

    for index, s in enumerate(streams):
        assert acl.rt.launch_callback(waits_for(index), None, BLOCK, s) == SUCCESS
    for s in streams:
        assert acl.rt.synchronize_stream_with_timeout(s, 20_000) == SUCCESS
    assert sorted(codes.values()) == [SUCCESS] * (threads - 1) + [API_NOT_SUPPORT]
    assert messages(acl_log, "waiting inside that callback would deadlock")
    for thread, s in zip(reporters, streams, strict=True):
        acl.rt.unsubscribe_report(thread.tid, s)
        thread.close()


def test_callback_waiting_for_an_event_behind_a_callback_that_waits_for_it_gets_200001(two_served_streams):
    """The circle through an event: callback A waits for an event recorded behind BLOCK callback B on another
    thread's stream, and B synchronizes A's stream. Whichever wait comes second is refused."""
    s1, s2 = two_served_streams
    behind_b, _ = acl.rt.create_event()
    both_running = threading.Barrier(2, timeout=5)
    codes = {}

    def a(_):
        both_running.wait()
        codes["a"] = acl.rt.synchronize_event_with_timeout(behind_b, 10_000)

    def b(_):
        both_running.wait()
        codes["b"] = acl.rt.synchronize_stream_with_timeout(s1, 10_000)

    assert acl.rt.launch_callback(a, None, BLOCK, s1) == SUCCESS
    assert acl.rt.launch_callback(b, None, BLOCK, s2) == SUCCESS
    assert acl.rt.record_event(behind_b, s2) == SUCCESS
    for s in (s1, s2):
        assert acl.rt.synchronize_stream_with_timeout(s, 20_000) == SUCCESS
    assert sorted(codes.values()) == [SUCCESS, API_NOT_SUPPORT]


def test_callback_waiting_on_a_thread_that_waits_elsewhere_is_not_refused(two_served_streams):
    """No false alarm: A synchronizes B's stream while B waits for a third stream that does not need A."""
    s1, s2 = two_served_streams
    slow, _ = acl.rt.create_stream()
    b_waiting = threading.Event()
    codes = {}

    def a(_):
        b_waiting.wait(5)
        codes["a"] = acl.rt.synchronize_stream_with_timeout(s2, 10_000)

    def b(_):
        b_waiting.set()
        codes["b"] = acl.rt.synchronize_stream_with_timeout(slow, 10_000)

    rt_device.resolve(slow).enqueue(work_task("slow", lambda: time.sleep(0.3)))
    assert acl.rt.launch_callback(b, None, BLOCK, s2) == SUCCESS
    assert acl.rt.launch_callback(a, None, BLOCK, s1) == SUCCESS
    for s in (s1, s2, slow):
        assert acl.rt.synchronize_stream_with_timeout(s, 20_000) == SUCCESS
    assert codes == {"a": SUCCESS, "b": SUCCESS}


# ----- dump callbacks and disks that fail -----


def dump_config(path: Path, out: Path, **extra) -> str:
    path.write_text(json.dumps({"dump": {"dump_path": str(out), "dump_list": [{"model_name": "tinynet"}], **extra}}))
    return str(path)


def visible_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))


def hidden_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and (p.name.startswith(".") or p.name.endswith(".tmp")))


@pytest.fixture
def inited(ctx):
    assert acl.init() == 0
    yield
    acl.finalize()


def test_dump_callback_raising_on_every_chunk(inited, tmp_path, monkeypatch, acl_log):
    """Every chunk's callback raises: execute still returns 0 with the right outputs, every failure is logged
    and counted, and then a working callback, and a dump to disk, get every file whole."""
    from tests.dump.test_model_dump import OPS, Collector

    monkeypatch.setenv("OPENACL_DUMP_CHUNK_BYTES", "4096")
    calls = []

    def always_raises(chunk):
        calls.append(chunk["buf_len"])
        raise OSError(errno.EPIPE, "consumer went away")

    failed_before = sink.writer.statistics()["chunks_failed"]
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.dump_reg_callback(always_raises, 0) == 0
    io = ModelIO()
    for seed in range(3):
        x = demo_input(seed)
        np.testing.assert_allclose(io.run(x)[0], reference(x=x)[0], rtol=1e-5, atol=1e-6)
    assert acl.mdl.dump_unreg_callback() is None  # returns once every queued chunk was offered
    assert len(calls) > 3 * len(OPS)  # files were cut into many chunks, and every one was offered
    logged = messages(acl_log, "dump callback raised on a chunk of")
    assert len(logged) == len(calls)
    assert sink.writer.statistics()["chunks_failed"] - failed_before == len(calls)

    collector = Collector()
    assert acl.mdl.dump_reg_callback(collector, 0) == 0
    io.run(demo_input(7))
    assert acl.mdl.dump_unreg_callback() is None
    assert len(collector.files) == len(OPS)
    for data in collector.files.values():
        dump_reader.read_dump(bytes(data))
    assert acl.mdl.finalize_dump() == 0

    out = tmp_path / "dump"
    out.mkdir()
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.set_dump(dump_config(tmp_path / "d.json", out)) == 0
    ModelIO().run(demo_input(8))
    assert acl.mdl.finalize_dump() == 0
    assert len(visible_files(out)) == len(OPS)
    for path in visible_files(out):
        dump_reader.read_dump(path)


@pytest.fixture
def small_fs(tmp_path):
    """A 2 MiB tmpfs (needs root and mount rights; skipped otherwise)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a size-capped tmpfs here: {done.stderr.strip() or done.returncode}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_disk_filling_up_during_a_dump_on_a_real_small_filesystem(inited, tmp_path, small_fs, acl_log):
    """A 2 MiB filesystem fills up under repeated dumps: the execution that hits it returns
    ACL_ERROR_WRITE_FILE, no temporary or partial file is left, and once there is room the next dump works."""
    from tests.dump.test_model_dump import OPS

    assert acl.mdl.init_dump() == 0
    assert acl.mdl.set_dump(dump_config(tmp_path / "d.json", small_fs)) == 0
    io = ModelIO()
    codes = []
    for run in range(12):
        io.load_input(demo_input(run))
        codes.append(acl.mdl.execute(io.model_id, io.inputs[0], io.outputs[0]))
        if codes[-1] != SUCCESS:
            break
    assert codes[-1] == WRITE_FILE and set(codes[:-1]) == {SUCCESS}, codes
    assert messages(acl_log, "No space left on device")
    assert hidden_files(small_fs) == []
    files = visible_files(small_fs)
    assert len(files) < len(codes) * len(OPS)  # some files of the last execution are missing ...
    for path in files:
        dump_reader.read_dump(path)  # ... and every file there is whole
    steps = {p.parent.name for p in files}

    remount = subprocess.run(["mount", "-o", "remount,size=64m", str(small_fs)], capture_output=True)
    if remount.returncode != 0:  # room the other way: remove the dumps so far
        for path in files:
            path.unlink()
    io.load_input(demo_input(99))
    assert acl.mdl.execute(io.model_id, io.inputs[0], io.outputs[0]) == SUCCESS
    new = [p for p in visible_files(small_fs) if p.parent.name not in steps]
    assert len(new) == len(OPS)
    for path in new:
        dump_reader.read_dump(path)
    assert hidden_files(small_fs) == []
    assert acl.mdl.finalize_dump() == 0


def test_disk_filling_up_mid_file_injected_under_the_writer(inited, stream, tmp_path, monkeypatch, acl_log):
    """The same without a mount: from the 5th file on, each write puts half its bytes down and then fails with
    ENOSPC. Sync and async executions report ACL_ERROR_WRITE_FILE (async: at synchronize, once), nothing
    partial or temporary is left, and once writes succeed again both kinds of execution dump whole files."""
    from tests.dump.test_model_dump import OPS

    real_write_parts = sink.write_parts
    written = {"files": 0}

    def disk_full_after_four(out, parts):
        written["files"] += 1
        if written["files"] <= 4:
            return real_write_parts(out, parts)
        data = b"".join(bytes(memoryview(p).cast("B")) for p in parts)
        real_write_parts(out, [data[: len(data) // 2]])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    out = tmp_path / "dump"
    out.mkdir()
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.set_dump(dump_config(tmp_path / "d.json", out)) == 0
    io = ModelIO()
    io.load_input(demo_input())
    monkeypatch.setattr(sink, "write_parts", disk_full_after_four)
    assert acl.mdl.execute(io.model_id, io.inputs[0], io.outputs[0]) == WRITE_FILE
    assert acl.mdl.execute_async(io.model_id, io.inputs[0], io.outputs[0], stream) == SUCCESS
    assert acl.rt.synchronize_stream(stream) == WRITE_FILE
    assert acl.rt.synchronize_stream(stream) == SUCCESS  # reported once
    assert len(messages(acl_log, "No space left on device")) >= 2 * len(OPS) - 4
    assert hidden_files(out) == []
    assert len(visible_files(out)) == 4
    for path in visible_files(out):
        dump_reader.read_dump(path)

    monkeypatch.setattr(sink, "write_parts", real_write_parts)
    assert acl.mdl.execute(io.model_id, io.inputs[0], io.outputs[0]) == SUCCESS
    assert acl.mdl.execute_async(io.model_id, io.inputs[0], io.outputs[0], stream) == SUCCESS
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    assert len(visible_files(out)) == 4 + 2 * len(OPS)
    for path in visible_files(out):
        dump_reader.read_dump(path)
    assert hidden_files(out) == []
    assert acl.mdl.finalize_dump() == 0


# ----- finalize, reset_device, destroy_stream, unsubscribe_report with work and callbacks pending -----


def in_thread(fn, *args) -> tuple[threading.Thread, list]:
    result: list = []
    thread = threading.Thread(target=lambda: result.append(fn(*args)))
    thread.start()
    return thread, result


def exited_thread_id() -> int:
    tid = {}
    thread = threading.Thread(target=lambda: tid.setdefault("id", threading.get_ident()))
    thread.start()
    thread.join()
    return tid["id"]


@pytest.mark.timeout(60)
def test_finalize_with_work_callbacks_and_dumps_pending(ctx, tmp_path, acl_log):
    """acl.finalize while a slow BLOCK callback runs, 200 callbacks, copies and a dumping async execution are
    queued, and one stream's report thread has exited: finalize waits for the work (every callback runs
    once, every dump file is on disk), drops what only the exited thread could run (with a warning), wakes
    the report thread blocked in process_report(-1) with 107012, and the runtime starts again afterwards."""
    from tests.dump.test_model_dump import OPS

    assert acl.init() == 0
    acl_log.set_level(logging.DEBUG, logger="openacl")  # acl.init applied ASCEND_GLOBAL_LOG_LEVEL
    out = tmp_path / "dump"
    out.mkdir()
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.set_dump(dump_config(tmp_path / "d.json", out)) == 0
    served, orphan, work = (acl.rt.create_stream()[0] for _ in range(3))
    reporter = BlockedReporter()
    assert acl.rt.subscribe_report(reporter.tid, served) == SUCCESS
    assert acl.rt.subscribe_report(exited_thread_id(), orphan) == SUCCESS
    reporter.go.set()
    ran: list[int] = []
    assert acl.rt.launch_callback(lambda _: time.sleep(0.3), None, BLOCK, served) == SUCCESS
    for i in range(200):
        assert acl.rt.launch_callback(ran.append, i, i % 2, served) == SUCCESS
    orphaned = []
    for i in range(3):
        assert acl.rt.launch_callback(orphaned.append, i, BLOCK, orphan) == SUCCESS
    io = ModelIO()
    io.load_input(demo_input(), work)
    assert acl.mdl.execute_async(io.model_id, io.inputs[0], io.outputs[0], work) == SUCCESS
    dev = device_buffer(bytes(1 << 20))
    src = os.urandom(1 << 20)
    assert acl.rt.memcpy_async(dev, 1 << 20, acl.util.bytes_to_ptr(src), 1 << 20, H2D, work) == SUCCESS

    # From this thread: a new thread could be handed the exited thread's id, and would then serve its callbacks
    # while it waits (whoever holds an id is its report thread).
    start = time.monotonic()
    assert acl.finalize() == SUCCESS
    assert time.monotonic() - start < 30
    assert ran == list(range(200)) and orphaned == []
    assert messages(acl_log, "has exited")
    assert len(visible_files(out)) == len(OPS) and hidden_files(out) == []
    reporter.stop()
    assert reporter.codes[-1] == RT_THREAD_SUBSCRIBE
    assert report.subscribed_thread_count() == 0

    assert acl.init() == 0  # and the runtime starts again
    assert acl.rt.set_device(0) == SUCCESS
    s, _ = acl.rt.create_stream()
    me = threading.get_ident()
    assert acl.rt.subscribe_report(me, s) == SUCCESS
    again = []
    assert acl.rt.launch_callback(again.append, "again", BLOCK, s) == SUCCESS
    assert acl.rt.synchronize_stream(s) == SUCCESS and again == ["again"]
    assert acl.rt.unsubscribe_report(me, s) == SUCCESS
    assert acl.finalize() == SUCCESS


def test_reset_device_with_work_and_callbacks_pending():
    """reset_device (last reference) while a BLOCK callback runs, more callbacks, copies and a cross-stream
    event wait are queued: it waits for all of it, the blocked report thread wakes with 107012, and the
    device can be set again."""
    assert acl.rt.set_device(0) == SUCCESS
    s, _ = acl.rt.create_stream()
    t, _ = acl.rt.create_stream()
    event, _ = acl.rt.create_event()
    reporter = BlockedReporter()
    assert acl.rt.subscribe_report(reporter.tid, s) == SUCCESS
    assert acl.rt.subscribe_report(reporter.tid, t) == SUCCESS
    reporter.go.set()
    slow = Held()
    ran: list[str] = []
    assert acl.rt.launch_callback(slow, None, BLOCK, s) == SUCCESS
    for i in range(50):
        assert acl.rt.launch_callback(ran.append, f"s{i}", i % 2, s) == SUCCESS
    assert acl.rt.record_event(event, s) == SUCCESS
    assert acl.rt.stream_wait_event(t, event) == SUCCESS
    assert acl.rt.launch_callback(ran.append, "t after the event", BLOCK, t) == SUCCESS
    assert slow.entered.wait(5)

    thread, result = in_thread(acl.rt.reset_device, 0)
    thread.join(0.3)
    assert thread.is_alive()  # waiting for the running callback and what is queued behind it
    slow.release.set()
    thread.join(30)
    assert not thread.is_alive() and result == [SUCCESS]
    assert ran == [f"s{i}" for i in range(50)] + ["t after the event"]
    reporter.stop()
    assert reporter.codes[-1] == RT_THREAD_SUBSCRIBE
    assert report.subscribed_thread_count() == 0
    assert acl.rt.set_device(0) == SUCCESS
    assert acl.rt.create_stream()[1] == SUCCESS
    assert acl.rt.reset_device(0) == SUCCESS


def test_reset_device_force_waits_for_the_running_callback_and_drops_the_rest(acl_log):
    assert acl.rt.set_device(0) == SUCCESS
    s, _ = acl.rt.create_stream()
    reporter = BlockedReporter()
    assert acl.rt.subscribe_report(reporter.tid, s) == SUCCESS
    reporter.go.set()
    slow = Held()
    ran: list[int] = []
    assert acl.rt.launch_callback(slow, None, BLOCK, s) == SUCCESS
    for i in range(20):
        assert acl.rt.launch_callback(ran.append, i, i % 2, s) == SUCCESS
    assert slow.entered.wait(5)
    thread, result = in_thread(acl.rt.reset_device_force, 0)
    thread.join(0.3)
    assert thread.is_alive()  # a callback already running is waited for
    slow.release.set()
    thread.join(30)
    assert not thread.is_alive() and result == [SUCCESS]
    assert slow.finished == [True] and ran == []
    assert dropped_count(acl_log) == 20
    reporter.stop()
    assert reporter.codes[-1] == RT_THREAD_SUBSCRIBE


@pytest.mark.parametrize("force", [False, True], ids=["destroy_stream", "destroy_stream_force"])
def test_destroy_stream_with_a_running_callback_and_a_stream_waiting_on_it(ctx, reporter, acl_log, force):
    """Without force every queued callback runs first; with force they are dropped (with a warning) and the
    event recorded behind them counts as passed, so the stream waiting for it does not hang either way."""
    s, _ = acl.rt.create_stream()
    t, _ = acl.rt.create_stream()
    event, _ = acl.rt.create_event()
    assert acl.rt.subscribe_report(reporter.tid, s) == SUCCESS
    slow = Held()
    ran: list[int] = []
    assert acl.rt.launch_callback(slow, None, BLOCK, s) == SUCCESS
    for i in range(5):
        assert acl.rt.launch_callback(ran.append, i, BLOCK, s) == SUCCESS
    assert acl.rt.record_event(event, s) == SUCCESS
    assert acl.rt.stream_wait_event(t, event) == SUCCESS
    dev = device_buffer(bytes(16))
    src = b"0123456789abcdef"
    assert acl.rt.memcpy_async(dev, 16, acl.util.bytes_to_ptr(src), 16, H2D, t) == SUCCESS
    assert slow.entered.wait(5)

    thread, result = in_thread(acl.rt.destroy_stream_force if force else acl.rt.destroy_stream, s)
    thread.join(0.3)
    assert thread.is_alive()
    slow.release.set()
    thread.join(30)
    assert not thread.is_alive() and result == [SUCCESS]
    assert ran == ([] if force else list(range(5)))
    if force:
        assert dropped_count(acl_log) == 5
    assert acl.rt.synchronize_stream_with_timeout(t, 5000) == SUCCESS
    assert read_device(dev, 16) == src
    assert acl.rt.launch_callback(print, None, BLOCK, s) == AclCode.ACL_ERROR_INVALID_PARAM  # s is gone


def test_regression_callbacks_of_an_exited_report_thread_whose_id_was_reused_do_not_hang(stream, acl_log):
    """Found by this suite: openacl decided that a subscribed thread had exited by looking its id up among the
    live threads, but thread ids are reused (glibc hands a new thread the id of one that has exited), so once
    any later thread, openacl's own engine and dump threads included, took the id, the callbacks only the
    dead thread could run were never dropped and synchronize_stream, destroy_stream and finalize hung."""
    stop = threading.Event()
    ran: list[int] = []
    heir = None
    try:
        for _ in range(50):
            dead = exited_thread_id()
            assert acl.rt.subscribe_report(dead, stream) == SUCCESS
            assert acl.rt.launch_callback(ran.append, 1, BLOCK, stream) == SUCCESS
            time.sleep(0.05)  # let the dead thread's stack go back to glibc's cache
            heir = threading.Thread(target=stop.wait, name="heir")  # any later thread
            heir.start()
            if heir.ident == dead:
                break
            assert acl.rt.unsubscribe_report(dead, stream) == SUCCESS
            stop.set()
            heir.join()
            stop.clear()
        else:
            pytest.skip("no thread id was reused here")
        assert acl.rt.synchronize_stream_with_timeout(stream, 5000) == SUCCESS
        assert ran == [] and messages(acl_log, f"report thread {dead} has exited")
    finally:
        stop.set()
        if heir is not None:
            heir.join()


@pytest.mark.parametrize("call", ["finalize", "reset_device", "unsubscribe_report"])
def test_teardown_called_inside_a_callback_of_the_stream_it_would_wait_for(call, acl_log):
    """finalize and reset_device (last reference) wait for every stream, this callback's own included: inside
    the callback they answer 200001 instead of waiting for themselves, and a later call from outside tears
    everything down. unsubscribe_report of its own stream is fine (it never waits for the caller's callback)."""
    assert acl.init() == SUCCESS
    acl_log.set_level(logging.DEBUG, logger="openacl")
    assert acl.rt.set_device(0) == SUCCESS
    s, _ = acl.rt.create_stream()
    reporter = BlockedReporter(acl.rt.get_context()[0])
    assert acl.rt.subscribe_report(reporter.tid, s) == SUCCESS
    reporter.go.set()
    got = []
    after = []
    actions = {
        "finalize": acl.finalize,
        "reset_device": lambda: acl.rt.reset_device(0),
        "unsubscribe_report": lambda: acl.rt.unsubscribe_report(reporter.tid, s),
    }
    assert acl.rt.launch_callback(lambda _: got.append(actions[call]()), None, BLOCK, s) == SUCCESS
    assert acl.rt.launch_callback(after.append, "after", BLOCK, s) == SUCCESS
    assert acl.rt.synchronize_stream_with_timeout(s, 10_000) == SUCCESS
    if call == "unsubscribe_report":
        assert got == [SUCCESS] and after == []
        assert dropped_count(acl_log) == 1
    else:
        assert got == [API_NOT_SUPPORT] and after == ["after"]
    thread, result = in_thread(acl.finalize)
    thread.join(30)
    assert not thread.is_alive() and result == [SUCCESS]
    reporter.stop()
    assert reporter.codes[-1] == RT_THREAD_SUBSCRIBE
    assert acl.init() == SUCCESS and acl.rt.set_device(0) == SUCCESS and acl.finalize() == SUCCESS


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_unsubscribe_racing_launches_every_callback_runs_once_or_is_reported_dropped(stream, reporter, acl_log, seed):
    """A thread launches 5,000 callbacks while the main thread unsubscribes at a random moment: every launch
    answers 0 or 107015 (and 107015 from then on), each accepted callback either ran exactly once, in order,
    or was counted in a 'dropped' warning, and nothing hangs."""
    assert acl.rt.subscribe_report(reporter.tid, stream) == SUCCESS
    ctx = acl.rt.get_context()[0]
    ran: list[int] = []
    codes: list[int] = []
    started = threading.Event()

    def launcher():
        acl.rt.set_context(ctx)
        for i in range(5000):
            codes.append(acl.rt.launch_callback(ran.append, i, i % 2, stream))
            if i == 100:
                started.set()

    thread = threading.Thread(target=launcher)
    thread.start()
    assert started.wait(10)
    time.sleep(random.Random(seed).uniform(0, 0.02))
    assert acl.rt.unsubscribe_report(reporter.tid, stream) == SUCCESS
    thread.join(30)
    assert not thread.is_alive()
    assert acl.rt.synchronize_stream_with_timeout(stream, 10_000) == SUCCESS
    accepted = [i for i, code in enumerate(codes) if code == SUCCESS]
    assert set(codes) <= {SUCCESS, RT_STREAM_NO_CB_REG}
    assert accepted == list(range(len(accepted)))  # 107015 from the unsubscribe on
    assert ran == sorted(set(ran)) and set(ran) <= set(accepted)
    assert len(ran) + dropped_count(acl_log) == len(accepted)


# ----- a process killed (SIGKILL) in the middle of a dump or a checkpoint -----

DUMP_CHILD = """
import json, os, sys
sys.path.insert(0, {root!r})
import openacl
openacl.install()
import acl
from tests.model_io import ModelIO, demo_input

model, out, progress = sys.argv[1:4]
config = os.path.join(os.path.dirname(progress), "dump.json")
with open(config, "w") as f:
    json.dump({{"dump": {{"dump_path": out, "dump_list": [{{"model_name": "big"}}], "dump_mode": "all"}}}}, f)
acl.init(); acl.rt.set_device(0); acl.rt.create_context(0)
acl.mdl.init_dump(); acl.mdl.set_dump(config)
io = ModelIO(model)
x = demo_input()
step = 0
while True:
    assert io.run(x)
    step += 1
    with open(progress, "a") as f:
        f.write(f"{{step}}\\n")
"""

CHECKPOINT_CHILD = """
import sys
import numpy as np
from openacl.ge import SafetensorsCheckpointWriter

directory, progress = sys.argv[1:3]
writer = SafetensorsCheckpointWriter(directory, keep=3)
existing = writer.checkpoints(1)
step = int(existing[-1].name.split("-")[1].split(".")[0]) + 1 if existing else 0
while True:
    tensors = {{"w": np.full(1 << 20, step, np.float32), "b": np.arange(1000, dtype=np.int64) + step}}
    writer(1, tensors)
    writer.flush()
    with open(progress, "a") as f:
        f.write(f"{{step}}\\n")
    step += 1
"""


def lines(progress: Path) -> int:
    return len(progress.read_text().split()) if progress.exists() else 0


def run_and_kill(script: str, args: list[str], progress: Path, rng: random.Random, min_lines: int) -> int:
    """Start a child, let it make ``min_lines`` progress lines, SIGKILL it at a random moment after that;
    return the last step it reported done."""
    env = {**os.environ, "OPENACL_ORT_THREADS": "1", "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", script, *args], env=env, cwd=ROOT, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while lines(progress) < min_lines:
            assert child.poll() is None, child.stderr.read().decode()
            assert time.monotonic() < deadline, "the child made no progress"
            time.sleep(0.02)
        time.sleep(rng.uniform(0, 0.4))
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL
    return int(progress.read_text().split()[-1])


def test_sigkill_in_the_middle_of_a_dump_leaves_only_whole_files(tmp_path):
    """Three children dump a model with ~1 MiB tensors to disk in a loop and are SIGKILLed at random moments:
    every dump file left under its final name parses completely (only hidden temporary files may be cut)."""
    import onnx

    sys.path.insert(0, str(ROOT / "scripts"))
    from make_demo_model import build_model

    model = tmp_path / "big.onnx"
    onnx.save(build_model(size=128, channels=(16, 16)), str(model))
    out = tmp_path / "dump"
    out.mkdir()
    rng = random.Random(int.from_bytes(os.urandom(4), "little"))
    script = textwrap.dedent(DUMP_CHILD).format(root=str(ROOT))
    for run in range(3):
        progress = tmp_path / f"progress{run}"
        run_and_kill(script, [str(model), str(out), str(progress)], progress, rng, min_lines=1)
    files = visible_files(out)
    assert len(files) > 11  # at least one whole execution
    for path in files:
        dump = dump_reader.read_dump(path)  # raises on a cut or padded file
        assert dump.outputs or dump.inputs
    for path in hidden_files(out):  # what a kill may leave: temporary files, never under a final name
        assert path.name.startswith(".") and path.name.endswith(".tmp")


def test_sigkill_in_the_middle_of_checkpointing_keeps_every_checkpoint_whole(tmp_path):
    """Two children in turn write 4 MiB safetensors checkpoints in a loop (keep=3) and are SIGKILLed at random
    moments: every *.safetensors file loads, with the values and metadata of its step; the newest checkpoint
    a child reported committed (or a newer one) survives; a new writer carries on from the newest step."""
    from safetensors import safe_open
    from safetensors.numpy import load_file

    from openacl.ge import SafetensorsCheckpointWriter

    directory = tmp_path / "ckpt"
    rng = random.Random(int.from_bytes(os.urandom(4), "little"))
    script = textwrap.dedent(CHECKPOINT_CHILD).format()
    newest_seen = -1
    for run in range(2):
        progress = tmp_path / f"progress{run}"
        committed = run_and_kill(script, [str(directory), str(progress)], progress, rng, min_lines=2)
        steps = []
        for path in sorted(directory.glob("*.safetensors")):
            tensors = load_file(path)
            step = int(path.stem.split("-")[1])
            with safe_open(str(path), "np") as f:
                assert f.metadata()["step"] == str(step) and f.metadata()["graph_id"] == "1"
            assert (tensors["w"] == step).all() and tensors["w"].shape == (1 << 20,)
            np.testing.assert_array_equal(tensors["b"], np.arange(1000) + step)
            steps.append(step)
        assert max(steps) >= committed > newest_seen  # the previous checkpoint survived; the child went on
        newest_seen = committed
    writer = SafetensorsCheckpointWriter(directory, keep=3)
    assert writer(1, {"w": np.zeros(4, np.float32)}) == 0
    writer.close()
    assert writer.checkpoints(1)[-1].name == f"1-{max(steps) + 1}.safetensors"
    load_file(writer.checkpoints(1)[-1])
