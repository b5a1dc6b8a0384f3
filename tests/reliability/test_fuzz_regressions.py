"""Bugs the facade fuzzer (``test_fuzz_facade.py``) found, one focused test each."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest

import acl
from openacl import ge
from openacl.errors import AclCode

INVALID = AclCode.ACL_ERROR_INVALID_PARAM


def internal_errors(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "internal error" in r.getMessage()]


# ----- numpy_to_ptr of an object array: a memcpy into it crashed the interpreter -----


def test_object_array_memory_is_read_only_through_numpy_to_ptr():
    """Its bytes are PyObject pointers: writing them made the next use of the array a segfault. Run in a child
    process, so that a regression fails this test instead of killing the test run."""
    script = textwrap.dedent(
        """
        import warnings
        warnings.simplefilter("ignore")
        import numpy as np
        import openacl
        openacl.install()
        import acl

        INVALID = 100000
        array = np.array([object(), "x", 3], dtype=object)
        ptr = acl.util.numpy_to_ptr(array)
        contiguous_ptr, contiguous = acl.util.numpy_contiguous_to_ptr(array[::-1])
        junk = bytes(range(1, 25))
        src = acl.util.bytes_to_ptr(junk)
        assert acl.rt.memcpy(ptr, 24, src, 24, 0) == INVALID
        assert acl.rt.memcpy(contiguous_ptr, 24, src, 24, 0) == INVALID
        assert acl.rt.memset(ptr, 24, 0xFF, 24) == INVALID
        assert acl.rt.set_device(0) == 0
        dev, _ = acl.rt.malloc(64, 0)
        assert acl.rt.memcpy(dev, 24, ptr, 24, 0) == 0  # synchronous: the direction comes from the addresses
        assert acl.rt.memcpy(dev, 24, ptr, 24, 1) == 0  # reading the pointers is harmless
        assert acl.rt.memcpy(ptr, 24, dev, 24, 2) == INVALID
        view = acl.util.ptr_to_numpy(ptr, (24,), np.dtype(np.uint8).num)
        assert not view.flags.writeable
        print(repr(array), repr(contiguous))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "array([<object object at" in done.stdout


def test_numpy_to_ptr_of_a_numeric_array_stays_writable():
    """The fix keeps ordinary arrays writable through their pointer."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        array = np.zeros(8, np.uint8)
        ptr = acl.util.numpy_to_ptr(array)
    assert acl.rt.memset(ptr, 8, 7, 8) == 0
    assert array.tolist() == [7] * 8


# ----- ptr_to_numpy with a shape numpy cannot make: an internal error -----


@pytest.mark.parametrize("shape", [(0, 2**63), (0, 2**62, 2**62), (1,) * 65, (0, 2**100)])
def test_ptr_to_numpy_shape_numpy_cannot_make_is_invalid_param(shape, acl_log):
    ptr, ret = acl.rt.malloc_host(64)
    assert ret == 0
    with pytest.raises(ValueError, match=r"^acl\.util\.ptr_to_numpy: .*shape") as info:
        acl.util.ptr_to_numpy(ptr, shape, np.dtype(np.uint8).num)
    assert "INTERNAL" not in str(info.value)
    assert internal_errors(acl_log) == []
    assert any(r.getMessage().startswith("acl.util.ptr_to_numpy: ACL_ERROR_INVALID_PARAM") for r in acl_log.records)
    assert acl.rt.free_host(ptr) == 0


# ----- a report thread that exited while subscribed: its id reused, a synchronize waited forever -----


class _Reporter:
    def __init__(self) -> None:
        self.stop = threading.Event()

    def __call__(self, _args) -> None:
        while not self.stop.is_set():
            acl.rt.process_report(5)


@pytest.mark.timeout(30)
def test_exited_report_thread_whose_id_is_reused_does_not_strand_a_synchronize(caplog):
    """CPython gives a new thread the id of one that exited. The reaper took the id for the subscribed thread
    still being alive, so the BLOCK callback stayed pending and ``synchronize_stream`` never returned."""
    caplog.set_level(logging.WARNING, logger="openacl")
    assert acl.rt.set_device(0) == 0
    stream, _ = acl.rt.create_stream()
    reused = 0
    for attempt in range(40):  # id reuse depends on the C library's stack cache: other threads can upset it
        if attempt >= 5 and reused:
            break
        reporter = _Reporter()
        tid, _ = acl.util.start_thread(reporter, [])
        assert acl.rt.subscribe_report(tid, stream) == 0
        reporter.stop.set()
        assert acl.util.stop_thread(tid) == 0  # exits still subscribed
        idle = threading.Event()
        squatter = threading.Thread(target=idle.wait, name="regression-squatter")
        squatter.start()
        reused += squatter.ident == tid
        try:
            assert acl.rt.launch_callback(lambda _: None, None, 1, stream) == 0
            assert acl.rt.synchronize_stream(stream) == 0
        finally:
            idle.set()
            squatter.join()
    assert reused, "the platform never reused a thread id: the scenario was not exercised"
    assert "has exited" in caplog.text  # the callbacks were dropped with the warning, not silently


@pytest.mark.timeout(30)
def test_a_new_thread_serving_a_reused_id_keeps_its_callbacks():
    """The other side of the fix: a thread that calls ``process_report`` for an id it now holds is the
    subscribed thread, and its callbacks run."""
    assert acl.rt.set_device(0) == 0
    stream, _ = acl.rt.create_stream()
    for _ in range(20):  # the next thread usually gets the id of the one just joined; retry when it does not
        first = _Reporter()
        tid, _ = acl.util.start_thread(first, [])
        assert acl.rt.subscribe_report(tid, stream) == 0
        first.stop.set()
        assert acl.util.stop_thread(tid) == 0
        second = _Reporter()
        tid2, _ = acl.util.start_thread(second, [])
        if tid2 == tid:
            break
        second.stop.set()
        assert acl.util.stop_thread(tid2) == 0
        assert acl.rt.unsubscribe_report(tid, stream) == 0
    else:
        pytest.skip("the platform did not reuse a thread id")
    seen = []
    try:
        assert acl.rt.launch_callback(seen.append, 1, 1, stream) == 0
        assert acl.rt.synchronize_stream_with_timeout(stream, 10_000) == 0
        assert seen == [1]
    finally:
        second.stop.set()
        acl.util.stop_thread(tid2)


# ----- a program that exits with GE runs queued: the process aborted -----

GE_EXIT_SCRIPT = """
import numpy as np
import openacl
openacl.install()
import acl
from openacl import ge

assert acl.rt.set_device(0) == 0
assert ge.ge_initialize() == 0
session = ge.Session()
g = ge.Graph("g")
x = g.data("x", index=0, shape=[256, 256], dtype="float32")
y = x
for _ in range(8):
    y = g.op("MatMul", [y, x])
g.set_outputs([y])
session.add_graph(1, g)
for _ in range(100):
    session.run_graph_async(1, [np.full((256, 256), 0.01, np.float32)], lambda code, outputs: None)
print("bye", flush=True)
"""


def test_exit_with_ge_runs_queued_does_not_abort(tmp_path):
    """The session worker was still inside onnxruntime while the interpreter was torn down: "terminate called
    without an active exception" and SIGABRT, every time with this script. GE is now finalized at exit."""
    done = subprocess.run(
        [sys.executable, "-c", GE_EXIT_SCRIPT], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "bye\n"
    assert "terminate called" not in done.stderr


# ----- Graph.data with an infinite dimension: OverflowError instead of ValueError -----


@pytest.mark.parametrize("dim", [float("inf"), float("-inf")])
def test_graph_data_with_an_infinite_dimension_is_value_error(dim):
    graph = ge.Graph("g")
    with pytest.raises(ValueError, match="dimension"):
        graph.data("x", index=0, shape=[2, dim], dtype="float32")
    assert graph.nodes == []
