"""``acl.util``: pointers to and from Python objects, and ``start_thread`` / ``stop_thread``."""

from __future__ import annotations

import ctypes
import errno
import os
import threading
import warnings

import numpy as np
import pytest

import acl
from openacl.errors import AclCode
from openacl.runtime import memory
from tests.forking import in_child

NPY_BOOL, NPY_INT8, NPY_UINT8, NPY_INT32, NPY_FLOAT32, NPY_FLOAT64, NPY_FLOAT16 = 0, 1, 2, 5, 11, 12, 23


def logged(caplog, qualname: str, code: int) -> list[str]:
    head = f"{qualname}: {AclCode(code).name}({code}): "
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(head)]


# ----- bytes -----


def test_bytes_to_ptr_points_at_the_bytes_object():
    data = b"\x00\x01binary\xff payload"
    ptr = acl.util.bytes_to_ptr(data)
    assert isinstance(ptr, int) and ptr != 0
    assert ctypes.string_at(ptr, len(data)) == data
    assert acl.util.bytes_to_ptr(data) == ptr  # no copy: the same buffer each time


@pytest.mark.parametrize("value", ["text", bytearray(b"ba"), memoryview(b"mv"), np.zeros(2, np.uint8), 5, None])
def test_bytes_to_ptr_needs_bytes(value):
    with pytest.raises(ValueError, match=r"^needs an byte as argument$"):
        acl.util.bytes_to_ptr(value)


def test_bytes_to_ptr_argument_count():
    with pytest.raises(TypeError, match=r"^acl\.util\.bytes_to_ptr args parse failed$"):
        acl.util.bytes_to_ptr()
    with pytest.raises(TypeError, match=r"^acl\.util\.bytes_to_ptr args parse failed$"):
        acl.util.bytes_to_ptr(b"a", b"b")


def test_ptr_to_bytes_copies(ctx):
    data = b"0123456789"
    ptr = acl.util.bytes_to_ptr(data)
    out = acl.util.ptr_to_bytes(ptr + 2, 5)
    assert out == b"23456" and type(out) is bytes
    assert acl.util.ptr_to_bytes(ptr, 0) == b""
    dev, _ = acl.rt.malloc(16, 0)
    assert acl.rt.memset(dev, 16, 0x41, 16) == 0
    copy = acl.util.ptr_to_bytes(dev, 16)
    assert acl.rt.memset(dev, 16, 0x42, 16) == 0
    assert copy == b"A" * 16  # a copy, not a view


def test_ptr_to_bytes_of_numpy_memory():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    with pytest.warns(Warning):
        ptr = acl.util.numpy_to_ptr(arr)
    assert acl.util.ptr_to_bytes(ptr, arr.nbytes) == arr.tobytes()
    assert acl.util.ptr_to_bytes(ptr + 12, 12) == arr[1].tobytes()


@pytest.mark.parametrize("case", ["unknown", "past-end", "freed"])
def test_ptr_to_bytes_bad_pointer(ctx, acl_log, case):
    dev, _ = acl.rt.malloc(16, 0)
    ptr, size = {"unknown": (0x10, 4), "past-end": (dev + 8, 9), "freed": (dev, 16)}[case]
    if case == "freed":
        assert acl.rt.free(dev) == 0
    with pytest.raises(ValueError) as info:
        acl.util.ptr_to_bytes(ptr, size)
    assert str(info.value) == f"acl.util.ptr_to_bytes: pointer {ptr:#x} (+{size} bytes) is not inside any allocation"
    assert logged(acl_log, "acl.util.ptr_to_bytes", 100000)


def test_ptr_to_bytes_negative_size_is_masked_and_refused():
    ptr = acl.util.bytes_to_ptr(b"abc")
    with pytest.raises(ValueError, match="is not inside any allocation"):
        acl.util.ptr_to_bytes(ptr, -1)


# ----- numpy -----


def test_numpy_to_ptr_warns_and_returns_the_data_pointer():
    arr = np.arange(8, dtype=np.int32)
    with pytest.warns(Warning, match="numpy_to_ptr is deprecated, use acl.util.bytes_to_ptr"):
        ptr = acl.util.numpy_to_ptr(arr)
    assert ptr == arr.ctypes.data
    ctypes.memmove(ptr, np.full(8, 7, np.int32).tobytes(), 32)  # no copy: writes reach the array
    assert (arr == 7).all()


def test_numpy_to_ptr_warns_for_non_contiguous_arrays():
    arr = np.arange(16, dtype=np.int32)[::2]
    with pytest.warns(Warning) as record:
        ptr = acl.util.numpy_to_ptr(arr)
    messages = [str(w.message) for w in record]
    assert any("not contiguous" in m for m in messages)
    assert ptr == arr.ctypes.data


@pytest.mark.parametrize(
    "call",
    [
        lambda: acl.util.numpy_to_ptr(np.arange(16, dtype=np.int32)[::2]),
        lambda: acl.util.numpy_contiguous_to_ptr(np.arange(4)),
        lambda: acl.op.set_attr_list_int(acl.op.create_attr(), "perm", np.array([2, 0, 1])),
    ],
    ids=["numpy_to_ptr", "numpy_contiguous_to_ptr", "op_list_attr"],
)
def test_regression_pyacl_warnings_pointed_at_the_facade_wrapper(call):
    """pyACL's own warnings (``numpy_to_ptr is deprecated``) named openacl's ``@api`` wrapper (``_args.py``) as
    their location; they name the program's line, as pyACL's C wrappers (which have no frames) do."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    assert caught, "no warning"
    program_line = (__file__, call.__code__.co_firstlineno)  # the line inside the lambda that calls pyACL
    for warning in caught:
        assert (warning.filename, warning.lineno) == program_line, f"{warning.message} at {warning.filename}"


@pytest.mark.parametrize("value", [[1, 2], b"bytes", 3])
def test_numpy_to_ptr_needs_an_ndarray(value):
    with pytest.raises(ValueError, match="needs an ndarray"):
        acl.util.numpy_to_ptr(value)
    with pytest.raises(ValueError, match="needs an ndarray"):
        acl.util.numpy_contiguous_to_ptr(value)


def test_numpy_contiguous_to_ptr_returns_a_pointer_and_the_array_to_keep():
    strided = np.arange(12, dtype=np.float64)[::3]
    with pytest.warns(Warning, match="deprecated"):
        ptr, kept = acl.util.numpy_contiguous_to_ptr(strided)
    assert kept.flags.c_contiguous
    assert ptr == kept.ctypes.data
    assert acl.util.ptr_to_bytes(ptr, kept.nbytes) == strided.tobytes()

    already = np.arange(4, dtype=np.int32)
    with pytest.warns(Warning):
        ptr, kept = acl.util.numpy_contiguous_to_ptr(already)
    assert kept is already and ptr == already.ctypes.data


@pytest.mark.parametrize(
    ("type_num", "dtype"),
    [
        (NPY_BOOL, np.bool_),
        (NPY_INT8, np.int8),
        (NPY_UINT8, np.uint8),
        (NPY_INT32, np.int32),
        (NPY_FLOAT32, np.float32),
        (NPY_FLOAT64, np.float64),
        (NPY_FLOAT16, np.float16),
    ],
)
def test_ptr_to_numpy_dtype_by_type_number(ctx, type_num, dtype):
    assert np.dtype(dtype).num == type_num
    dev, _ = acl.rt.malloc(64, 0)
    arr = acl.util.ptr_to_numpy(dev, (2, 2), type_num)
    assert arr.dtype == np.dtype(dtype) and arr.shape == (2, 2)


def test_ptr_to_numpy_is_a_writeable_view(ctx):
    dev, _ = acl.rt.malloc(24, 0)
    src = np.arange(6, dtype=np.float32)
    assert acl.rt.memcpy(dev, 24, acl.util.bytes_to_ptr(src.tobytes()), 24, 1) == 0
    arr = acl.util.ptr_to_numpy(dev, (2, 3), NPY_FLOAT32)
    np.testing.assert_array_equal(arr, src.reshape(2, 3))
    assert arr.flags.writeable
    arr[1, 2] = -1.5
    assert np.frombuffer(acl.util.ptr_to_bytes(dev + 20, 4), np.float32)[0] == -1.5
    assert acl.rt.memset(dev, 24, 0, 4) == 0
    assert arr[0, 0] == 0.0  # a view: changes to the memory show


def test_ptr_to_numpy_scalar_and_empty_shapes(ctx):
    dev, _ = acl.rt.malloc(8, 0)
    assert acl.util.ptr_to_numpy(dev, (), NPY_FLOAT32).shape == ()
    assert acl.util.ptr_to_numpy(dev, (0, 3), NPY_FLOAT32).size == 0


@pytest.mark.parametrize("shape", [[2, 2], 4, (2.0, 2), ("2",), None])
def test_ptr_to_numpy_shape_must_be_a_tuple_of_ints(ctx, shape):
    dev, _ = acl.rt.malloc(64, 0)
    with pytest.raises(TypeError, match=r"^acl\.util\.ptr_to_numpy args parse failed$"):
        acl.util.ptr_to_numpy(dev, shape, NPY_FLOAT32)


@pytest.mark.parametrize("type_num", [17, 999, -1])  # 17 is NPY_OBJECT
def test_ptr_to_numpy_unknown_type_number(ctx, type_num):
    dev, _ = acl.rt.malloc(64, 0)
    with pytest.raises(ValueError, match=f"numpy type number {type_num} is not a numeric type"):
        acl.util.ptr_to_numpy(dev, (4,), type_num)


@pytest.mark.parametrize(
    "shape", [(17,), (5, 4), (2, -2), (1 << 40, 1 << 40), (1 << 62, 1 << 62)], ids=lambda s: "x".join(map(str, s))
)
def test_ptr_to_numpy_shape_larger_than_the_memory(ctx, acl_log, shape):
    dev, _ = acl.rt.malloc(64, 0)
    with pytest.raises(ValueError) as info:
        acl.util.ptr_to_numpy(dev, shape, NPY_FLOAT32)
    assert str(info.value).startswith("acl.util.ptr_to_numpy: ")
    assert logged(acl_log, "acl.util.ptr_to_numpy", 100000)
    assert not any("internal error" in r.getMessage() for r in acl_log.records)


def test_ptr_to_numpy_bad_pointer(ctx, acl_log):
    with pytest.raises(ValueError) as info:
        acl.util.ptr_to_numpy(0x20, (4,), NPY_FLOAT32)
    assert str(info.value) == "acl.util.ptr_to_numpy: pointer 0x20 (+16 bytes) is not inside any allocation"
    assert logged(acl_log, "acl.util.ptr_to_numpy", 100000)


def test_ptr_to_numpy_of_bytes_and_read_only_arrays():
    data = b"\x01\x02\x03\x04"
    arr = acl.util.ptr_to_numpy(acl.util.bytes_to_ptr(data), (4,), NPY_UINT8)
    assert arr.tolist() == [1, 2, 3, 4]
    frozen = np.arange(4, dtype=np.uint8)
    frozen.flags.writeable = False
    with pytest.warns(Warning):
        ptr = acl.util.numpy_to_ptr(frozen)
    view = acl.util.ptr_to_numpy(ptr, (4,), NPY_UINT8)
    assert not view.flags.writeable


def test_ptr_to_numpy_shape_of_bools_means_ints(ctx):
    dev, _ = acl.rt.malloc(8, 0)
    assert acl.util.ptr_to_numpy(dev, (True, 2), NPY_FLOAT32).shape == (1, 2)


def test_internal_error_in_a_util_helper_raises_instead_of_returning_a_code(monkeypatch, acl_log):
    """Regression: the helpers that return an object returned the int 500000 when the runtime failed."""

    def broken(ptr, size):
        raise RuntimeError("boom")

    monkeypatch.setattr(memory, "read_bytes", broken)
    with pytest.raises(ValueError, match=r"^acl\.util\.ptr_to_bytes: ACL_ERROR_INTERNAL_ERROR\(500000\)$"):
        acl.util.ptr_to_bytes(0x10, 1)
    assert any(r.getMessage() == "acl.util.ptr_to_bytes: internal error" for r in acl_log.records)


# ----- threads -----


def test_start_thread_id_is_the_new_threads_ident():
    seen = []
    thread_id, ret = acl.util.start_thread(lambda args: seen.append((threading.get_ident(), args)), "payload")
    assert ret == 0
    assert acl.util.stop_thread(thread_id) == 0
    assert seen == [(thread_id, "payload")]
    assert thread_id != threading.get_ident()


def test_start_thread_with_none_calls_fn_without_arguments():
    calls = []
    thread_id, ret = acl.util.start_thread(lambda: calls.append("called"), None)
    assert ret == 0
    assert acl.util.stop_thread(thread_id) == 0
    assert calls == ["called"]


@pytest.mark.parametrize("args", [(), [1, 2], {"k": 1}, 0])
def test_start_thread_passes_args_as_one_object(args):
    got = []
    thread_id, _ = acl.util.start_thread(got.append, args)
    assert acl.util.stop_thread(thread_id) == 0
    assert got == [args] and got[0] is args


def test_stop_thread_waits_for_the_thread():
    release = threading.Event()
    order = []

    def run(_):
        assert release.wait(10)
        order.append("thread done")

    thread_id, _ = acl.util.start_thread(run, 0)
    joiner = threading.Thread(target=lambda: order.append(("stopped", acl.util.stop_thread(thread_id))))
    joiner.start()
    release.set()
    joiner.join()
    assert order == ["thread done", ("stopped", 0)]


def test_stop_thread_reraises_the_threads_exception(capsys):
    thread_id, ret = acl.util.start_thread(lambda _: 1 / 0, 0)
    assert ret == 0
    with pytest.raises(RuntimeError) as info:
        acl.util.stop_thread(thread_id)
    assert str(info.value).startswith("exception=ZeroDivisionError")
    assert "division by zero" in str(info.value)
    assert "ZeroDivisionError" in capsys.readouterr().err  # printed, as pyACL does
    assert acl.util.stop_thread(thread_id) == errno.ESRCH  # joined once, gone


def test_stop_thread_unknown_id():
    assert acl.util.stop_thread(12345) == errno.ESRCH
    assert acl.util.stop_thread(threading.get_ident()) == errno.ESRCH  # not started by start_thread
    assert acl.util.stop_thread(-1) == errno.ESRCH  # masked to 2**64 - 1


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_has_none_of_the_parents_util_threads_but_its_own():
    """Only the thread that forked exists in a child: stop_thread of another of the parent's threads is ESRCH there,
    as pthread_join of an unknown thread; the child's own threads start and stop."""
    release = threading.Event()
    tid, ret = acl.util.start_thread(lambda args: release.wait(), [])
    assert ret == 0

    def child() -> str:
        parents = acl.util.stop_thread(tid)  # first: the child's own thread may get the same id (as pthreads do)
        own, ret = acl.util.start_thread(lambda args: None, [])
        return f"parent's={parents} own={ret},{acl.util.stop_thread(own)}"

    try:
        assert in_child(child) == f"parent's={errno.ESRCH} own=0,0"
    finally:
        release.set()
        assert acl.util.stop_thread(tid) == 0


def test_stop_thread_twice():
    thread_id, _ = acl.util.start_thread(lambda: None, None)
    assert acl.util.stop_thread(thread_id) == 0
    assert acl.util.stop_thread(thread_id) == errno.ESRCH


def test_stop_thread_from_the_thread_itself():
    started = threading.Event()
    result = []

    def run():
        assert started.wait(10)
        result.append(acl.util.stop_thread(threading.get_ident()))

    thread_id, _ = acl.util.start_thread(run, None)
    started.set()
    assert acl.util.stop_thread(thread_id) == 0
    assert result == [errno.EDEADLK]


@pytest.mark.parametrize("fn", [None, 3, "name"])
def test_start_thread_needs_a_callable(fn):
    with pytest.raises(TypeError, match="callable"):
        acl.util.start_thread(fn, None)


def test_start_thread_argument_count():
    with pytest.raises(TypeError, match=r"^acl\.util\.start_thread args parse failed$"):
        acl.util.start_thread(print)


def test_many_threads_get_distinct_ids():
    release = threading.Event()
    ids = []
    for _ in range(8):
        thread_id, ret = acl.util.start_thread(lambda _: release.wait(10), 0)
        assert ret == 0
        ids.append(thread_id)
    release.set()
    assert len(set(ids)) == 8
    assert [acl.util.stop_thread(i) for i in ids] == [0] * 8


def test_a_reused_thread_id_still_stops_each_thread_once():
    """CPython may reuse the id of a thread that exited before stop_thread; each stop joins one thread, oldest first."""

    def fail():
        raise ZeroDivisionError("first thread")

    for _ in range(5):
        first, _ = acl.util.start_thread(fail, None)
        for thread in threading.enumerate():
            if thread.ident == first:
                thread.join()  # finished, not yet stopped
        second, _ = acl.util.start_thread(lambda: None, None)
        with pytest.raises(RuntimeError, match=r"^exception=ZeroDivisionError"):
            acl.util.stop_thread(first)
        assert acl.util.stop_thread(second) == 0
        assert acl.util.stop_thread(second) == errno.ESRCH


def test_empty_bytes_make_an_empty_data_buffer():
    empty = b""
    buf = acl.create_data_buffer(acl.util.bytes_to_ptr(empty), 0)
    assert buf != 0
    assert acl.get_data_buffer_size_v2(buf) == 0
    assert acl.destroy_data_buffer(buf) == 0
