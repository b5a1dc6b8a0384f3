"""dvpp_malloc / dvpp_free: DVPP's alignment and rounding, over the runtime's checked device memory."""

from __future__ import annotations

import numpy as np
import pytest

import acl
from openacl.errors import AclCode
from openacl.media import memory as dvpp_memory
from openacl.runtime import memory

INVALID = AclCode.ACL_ERROR_INVALID_PARAM


@pytest.mark.parametrize("size", [1, 31, 32, 33, 1000, 4096])
def test_dvpp_malloc_aligns_the_start_to_128_and_rounds_the_size(ctx, size):
    ptr, ret = acl.media.dvpp_malloc(size)
    assert ret == 0 and ptr % 128 == 0
    region = memory.region_for(ptr, 1, "test")
    assert region.size == (size + 31) // 32 * 32 + 32
    assert acl.media.dvpp_free(ptr) == 0


def test_dvpp_memory_is_device_memory_for_copies_and_mem_info(ctx):
    free_before, _total, _ = acl.rt.get_mem_info(0)
    ptr, ret = acl.media.dvpp_malloc(1 << 20)
    assert ret == 0
    free_after, _total, _ = acl.rt.get_mem_info(0)
    assert free_before - free_after == dvpp_memory.rounded_size(1 << 20)
    data = np.arange(256, dtype=np.uint8).tobytes()
    assert acl.rt.memcpy(ptr, 256, acl.util.bytes_to_ptr(data), 256, 1) == 0
    assert acl.util.ptr_to_bytes(ptr, 256) == data
    assert acl.media.dvpp_free(ptr) == 0


def test_dvpp_free_refuses_rt_malloc_memory_twice_freed_and_null(ctx, acl_log):
    rt_ptr, _ = acl.rt.malloc(64, 0)
    assert acl.media.dvpp_free(rt_ptr) == INVALID
    ptr, _ = acl.media.dvpp_malloc(64)
    assert acl.media.dvpp_free(ptr) == 0
    assert acl.media.dvpp_free(ptr) == INVALID
    assert acl.media.dvpp_free(0) == INVALID
    assert sum("acl.media.dvpp_free" in r.getMessage() for r in acl_log.records) == 3


def test_dvpp_malloc_zero_and_no_context():
    assert acl.media.dvpp_malloc(64) == (0, AclCode.ACL_ERROR_RT_CONTEXT_NULL)


def test_dvpp_malloc_zero_bytes_and_too_much(ctx, monkeypatch):
    assert acl.media.dvpp_malloc(0) == (0, INVALID)
    monkeypatch.setenv("OPENACL_DEVICE_MEMORY_MB", "1")
    assert acl.media.dvpp_malloc(2 << 20) == (0, AclCode.ACL_ERROR_BAD_ALLOC)


def test_parse_errors_raise_type_error():
    with pytest.raises(TypeError, match=r"acl\.media\.dvpp_malloc args parse failed"):
        acl.media.dvpp_malloc("64")
