"""Stream and device aborts, SDMA-style reductions, the float saturation mode and task-scheduler memory."""

from __future__ import annotations

import threading

import ml_dtypes
import numpy as np
import pytest

import acl
from openacl.errors import AclCode
from tests.acl.test_memory import logged
from tests.conftest import hold_stream

INVALID = AclCode.ACL_ERROR_INVALID_PARAM
SUM, MAX, MIN, EQUAL = 10, 11, 12, 13
ACL_FLOAT, ACL_FLOAT16, ACL_INT8, ACL_INT32, ACL_INT16, ACL_BF16 = 0, 1, 2, 3, 6, 27


def device_array(array: np.ndarray) -> int:
    ptr, ret = acl.rt.malloc(array.nbytes, 0)
    assert ret == 0
    data = array.tobytes()
    assert acl.rt.memcpy(ptr, len(data), acl.util.bytes_to_ptr(data), len(data), 1) == 0
    return ptr


def read(ptr: int, dtype, count: int) -> np.ndarray:
    return np.frombuffer(acl.util.ptr_to_bytes(ptr, count * np.dtype(dtype).itemsize), dtype)


# ----- aborts -----


def test_stream_abort_drops_queued_work_and_leaves_the_stream_usable(stream):
    flag = device_array(np.zeros(1, np.uint8))
    gate = threading.Event()
    try:
        hold_stream(stream, gate)
        assert acl.rt.memset_async(flag, 1, 9, 1, stream) == 0
        assert acl.rt.stream_abort(stream) == 0
    finally:
        gate.set()
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.util.ptr_to_bytes(flag, 1) == b"\x00"  # the memset was dropped
    assert acl.rt.memset_async(flag, 1, 5, 1, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.util.ptr_to_bytes(flag, 1) == b"\x05"


def test_device_task_abort_drops_the_queued_work_of_every_stream(ctx):
    streams = [acl.rt.create_stream()[0] for _ in range(2)]
    flags = [device_array(np.zeros(1, np.uint8)) for _ in streams]
    gate = threading.Event()
    try:
        for s, flag in zip(streams, flags, strict=True):
            hold_stream(s, gate)
            assert acl.rt.memset_async(flag, 1, 1, 1, s) == 0
        assert acl.rt.device_task_abort(0, 1000) == 0
    finally:
        gate.set()
    for s, flag in zip(streams, flags, strict=True):
        assert acl.rt.synchronize_stream(s) == 0
        assert acl.util.ptr_to_bytes(flag, 1) == b"\x00"


def test_aborts_check_their_handles(ctx, acl_log):
    assert acl.rt.stream_abort(0xBAD0) == INVALID
    assert acl.rt.device_task_abort(999, 0) == AclCode.ACL_ERROR_RT_INVALID_DEVICEID
    assert len(logged(acl_log, "acl.rt.stream_abort", INVALID)) == 1
    with pytest.raises(TypeError):
        acl.rt.device_task_abort(0)


# ----- reductions -----


@pytest.mark.parametrize(
    ("kind", "data_type", "dtype", "op"),
    [
        (SUM, ACL_FLOAT, np.float32, np.add),
        (MAX, ACL_INT32, np.int32, np.maximum),
        (MIN, ACL_FLOAT16, np.float16, np.minimum),
        (SUM, ACL_INT8, np.int8, np.add),
        (MAX, ACL_INT16, np.int16, np.maximum),
        (SUM, ACL_BF16, ml_dtypes.bfloat16, np.add),
    ],
)
def test_reduce_async_combines_the_source_into_the_destination(stream, kind, data_type, dtype, op):
    rng = np.random.default_rng(kind + data_type)
    a = (rng.standard_normal(64) * 50).astype(dtype)
    b = (rng.standard_normal(64) * 50).astype(dtype)
    dst, src = device_array(a), device_array(b)
    assert acl.rt.reduce_async(dst, src, a.nbytes, kind, data_type, stream, 0) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    with np.errstate(over="ignore"):
        expected = op(a, b).astype(dtype)
    assert np.array_equal(read(dst, dtype, 64), expected)
    assert np.array_equal(read(src, dtype, 64), b)


def test_reduce_async_integers_wrap(stream):
    dst, src = device_array(np.array([127, -128], np.int8)), device_array(np.array([1, -1], np.int8))
    assert acl.rt.reduce_async(dst, src, 2, SUM, ACL_INT8, stream, 0) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert list(read(dst, np.int8, 2)) == [-128, 127]


def test_reduce_async_checks_its_arguments(stream, acl_log):
    dst, src = device_array(np.zeros(4, np.float32)), device_array(np.ones(4, np.float32))
    assert acl.rt.reduce_async(dst, src, 16, EQUAL, ACL_FLOAT, stream, 0) == AclCode.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.rt.reduce_async(dst, src, 16, 3, ACL_FLOAT, stream, 0) == INVALID
    assert acl.rt.reduce_async(dst, src, 16, SUM, 9, stream, 0) == INVALID  # int64
    assert acl.rt.reduce_async(dst, src, 15, SUM, ACL_FLOAT, stream, 0) == INVALID
    assert acl.rt.reduce_async(dst, src, 32, SUM, ACL_FLOAT, stream, 0) == INVALID  # past the allocations
    assert acl.rt.reduce_async(dst, src, 16, SUM, ACL_FLOAT, stream, 1) == INVALID
    assert acl.rt.reduce_async(dst, src, 16, SUM, ACL_FLOAT, 0xBAD0, 0) == INVALID
    assert acl.rt.synchronize_stream(stream) == 0
    assert list(read(dst, np.float32, 4)) == [0.0] * 4
    assert len(logged(acl_log, "acl.rt.reduce_async", INVALID)) == 6


def test_reduce_into_memory_freed_before_the_stream_gets_there_fails_the_task(stream):
    dst, src = device_array(np.zeros(4, np.float32)), device_array(np.ones(4, np.float32))
    gate = threading.Event()
    try:
        hold_stream(stream, gate)
        assert acl.rt.reduce_async(dst, src, 16, SUM, ACL_FLOAT, stream, 0) == 0
        assert acl.rt.free(dst) == 0
    finally:
        gate.set()
    assert acl.rt.synchronize_stream(stream) == AclCode.ACL_ERROR_RT_DEVICE_MEM_ERROR


# ----- saturation mode -----


def test_the_saturation_mode_is_ieee_inf_nan(ctx):
    assert acl.rt.get_device_sat_mode() == (1, 0)
    assert acl.rt.set_device_sat_mode(1) == 0
    assert acl.rt.set_device_sat_mode(0) == AclCode.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.rt.set_device_sat_mode(2) == INVALID
    assert acl.rt.get_device_sat_mode() == (1, 0)


def test_the_saturation_mode_needs_a_device():
    assert acl.rt.get_device_sat_mode() == (0, AclCode.ACL_ERROR_RT_CONTEXT_NULL)


# ----- task-scheduler memory -----


def test_malloc_for_task_scheduler_is_device_memory(ctx):
    ptr, ret = acl.rt.malloc_for_task_scheduler(256, 0, {})
    assert ret == 0
    assert acl.rt.memset(ptr, 256, 1, 256) == 0
    assert acl.rt.pointer_get_attributes(ptr)[0]["location"]["type"] == 1
    assert acl.rt.free(ptr) == 0
    assert acl.rt.malloc_for_task_scheduler(0, 0, {}) == (0, INVALID)
    with pytest.raises(TypeError):
        acl.rt.malloc_for_task_scheduler(256, 0, None)
