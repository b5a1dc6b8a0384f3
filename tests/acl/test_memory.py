"""``acl.rt`` memory calls and ``acl`` data buffers, as a pyACL program makes them."""

from __future__ import annotations

import ctypes
import gc
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import acl
from openacl.errors import AclCode
from openacl.runtime import device as rt_device
from tests.conftest import hold_stream

INVALID = AclCode.ACL_ERROR_INVALID_PARAM
H2H, H2D, D2H, D2D = 0, 1, 2, 3
U64 = (1 << 64) - 1


def logged(caplog, qualname: str, code: int) -> list[str]:
    head = f"{qualname}: {AclCode(code).name}({code}): "
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(head)]


def malloc(size: int) -> int:
    ptr, ret = acl.rt.malloc(size, 0)
    assert ret == 0
    return ptr


@pytest.fixture
def host():
    ptrs: list[int] = []

    def alloc(size: int) -> int:
        ptr, ret = acl.rt.malloc_host(size)
        assert ret == 0
        ptrs.append(ptr)
        return ptr

    yield alloc
    for ptr in ptrs:
        acl.rt.free_host(ptr)


# ----- malloc / free -----


def test_malloc_free(ctx):
    ptr, ret = acl.rt.malloc(256, 0)
    assert ret == 0 and ptr != 0 and ptr % 64 == 0
    assert acl.rt.memset(ptr, 256, 0x3C, 256) == 0
    assert ctypes.string_at(ptr, 256) == b"\x3c" * 256
    assert acl.rt.free(ptr) == 0


def test_malloc_without_a_context(acl_log):
    assert acl.rt.malloc(16, 0) == (0, AclCode.ACL_ERROR_RT_CONTEXT_NULL)
    (line,) = logged(acl_log, "acl.rt.malloc", 107002)
    assert "no current context" in line


def test_malloc_in_a_thread_without_a_context(ctx, acl_log):
    results = []
    worker = threading.Thread(target=lambda: results.append(acl.rt.malloc(16, 0)))
    worker.start()
    worker.join()
    assert results == [(0, AclCode.ACL_ERROR_RT_CONTEXT_NULL)]
    assert logged(acl_log, "acl.rt.malloc", 107002)


@pytest.mark.parametrize("size", [1 << 40, U64, -1])
def test_malloc_huge_size(ctx, acl_log, size):
    assert acl.rt.malloc(size, 0) == (0, AclCode.ACL_ERROR_RT_MEMORY_ALLOCATION)
    (line,) = logged(acl_log, "acl.rt.malloc", 207001)
    assert str(size & U64) in line


def test_malloc_size_zero(ctx, acl_log):
    assert acl.rt.malloc(0, 0) == (0, INVALID)
    assert acl.rt.malloc_host(0) == (0, INVALID)
    assert logged(acl_log, "acl.rt.malloc", 100000) == [
        "acl.rt.malloc: ACL_ERROR_INVALID_PARAM(100000): invalid parameter: size 0 must be positive"
    ]
    assert logged(acl_log, "acl.rt.malloc_host", 100000)


@pytest.mark.parametrize("policy", [-1, 8, 100])
def test_malloc_policy_out_of_range(ctx, acl_log, policy):
    assert acl.rt.malloc(16, policy) == (0, INVALID)
    (line,) = logged(acl_log, "acl.rt.malloc", 100000)
    assert f"malloc policy {policy} is not one of 0..7" in line


def test_free_errors(ctx, host, acl_log):
    ptr = malloc(32)
    assert acl.rt.free(ptr + 1) == INVALID
    assert acl.rt.free(0x1000) == INVALID
    assert acl.rt.free(host(8)) == INVALID
    assert acl.rt.free(ptr) == 0
    assert acl.rt.free(ptr) == INVALID  # double free
    lines = logged(acl_log, "acl.rt.free", 100000)
    assert len(lines) == 4
    assert all("is not the start of a live device allocation" in line for line in lines)


def test_malloc_host_free_host(ctx, acl_log):
    ptr, ret = acl.rt.malloc_host(64)
    assert ret == 0 and ptr % 64 == 0
    assert acl.rt.memset(ptr, 64, 9, 64) == 0
    assert ctypes.string_at(ptr, 64) == b"\x09" * 64
    dev = malloc(8)
    assert acl.rt.free_host(dev) == INVALID
    assert acl.rt.free_host(ptr) == 0
    assert acl.rt.free_host(ptr) == INVALID
    assert len(logged(acl_log, "acl.rt.free_host", 100000)) == 2


def test_malloc_host_needs_no_context():
    ptr, ret = acl.rt.malloc_host(8)
    assert ret == 0
    assert acl.rt.free_host(ptr) == 0


def test_reset_device_frees_device_memory(acl_log):
    assert acl.rt.set_device(0) == 0
    ptr = malloc(16)
    assert acl.rt.reset_device(0) == 0
    assert acl.rt.free(ptr) == INVALID
    assert logged(acl_log, "acl.rt.free", 100000)


def test_numpy_view_survives_free(ctx):
    ptr = malloc(1024)
    assert acl.rt.memset(ptr, 1024, 0x7E, 1024) == 0
    view = acl.util.ptr_to_numpy(ptr, (1024,), 2)  # NPY_UBYTE
    assert acl.rt.free(ptr) == 0
    gc.collect()
    for _ in range(32):  # new allocations must not land on the bytes the view holds
        other = malloc(1024)
        assert acl.rt.memset(other, 1024, 0, 1024) == 0
    assert int(view.min()) == int(view.max()) == 0x7E
    view[:] = 3
    assert int(view.sum()) == 3 * 1024


# ----- memcpy -----


def test_memcpy_round_trip_through_every_direction(ctx, host):
    payload = bytes(range(256)) * 2
    src_host, dst_host = host(512), host(512)
    dev_a, dev_b = malloc(512), malloc(512)
    ctypes.memmove(src_host, payload, 512)
    assert acl.rt.memcpy(dev_a, 512, src_host, 512, H2D) == 0
    assert acl.rt.memcpy(dev_b, 512, dev_a, 512, D2D) == 0
    assert acl.rt.memcpy(dst_host, 512, dev_b, 512, D2H) == 0
    assert ctypes.string_at(dst_host, 512) == payload
    assert acl.rt.memcpy(dst_host, 512, src_host + 256, 256, H2H) == 0
    assert ctypes.string_at(dst_host, 512) == payload[256:] + payload[256:]


def test_memcpy_from_python_bytes(ctx):
    data = b"bytes_to_ptr payload"
    dev = malloc(64)
    assert acl.rt.memcpy(dev, 64, acl.util.bytes_to_ptr(data), len(data), H2D) == 0
    assert acl.util.ptr_to_bytes(dev, len(data)) == data


def test_memcpy_default_kind_accepts_any_direction(ctx, host):
    h, d = host(8), malloc(8)
    for dst, src in ((h, h), (h, d), (d, h), (d, d)):
        assert acl.rt.memcpy(dst, 8, src, 8, 4) == 0


# For each kind 0..3: the (src, dst) placements it refuses.
WRONG = {
    H2H: [("dev", "host"), ("host", "dev"), ("dev", "dev")],
    H2D: [("dev", "dev"), ("host", "host"), ("dev", "host")],
    D2H: [("host", "host"), ("dev", "dev"), ("host", "dev")],
    D2D: [("host", "dev"), ("dev", "host"), ("host", "host")],
}


@pytest.mark.parametrize(("kind", "src_kind", "dst_kind"), [(k, s, d) for k, pairs in WRONG.items() for s, d in pairs])
def test_memcpy_takes_the_direction_from_the_addresses(ctx, host, acl_log, kind, src_kind, dst_kind):
    """Synchronous memcpy: as in CANN, the kind is only range-checked; the addresses decide the direction."""
    place = {"host": host, "dev": malloc}
    src, dst = place[src_kind](16), place[dst_kind](16)
    ctypes.memset(src, 0x21, 16)
    ctypes.memset(dst, 0x44, 16)
    assert acl.rt.memcpy(dst, 16, src, 16, kind) == 0
    assert ctypes.string_at(dst, 16) == b"\x21" * 16
    assert not [r for r in acl_log.records if r.getMessage().startswith("acl.rt.memcpy:")]


@pytest.mark.parametrize(("kind", "src_kind", "dst_kind"), [(k, s, d) for k, pairs in WRONG.items() for s, d in pairs])
def test_memcpy_async_honours_the_kind(ctx, stream, host, acl_log, kind, src_kind, dst_kind):
    place = {"host": host, "dev": malloc}
    src, dst = place[src_kind](16), place[dst_kind](16)
    ctypes.memset(dst, 0x44, 16)
    assert acl.rt.memcpy_async(dst, 16, src, 16, kind, stream) == INVALID
    assert acl.rt.synchronize_stream(stream) == 0
    (line,) = logged(acl_log, "acl.rt.memcpy_async", 100000)
    assert f"memcpy kind {kind}: " in line and "must be" in line
    assert ctypes.string_at(dst, 16) == b"\x44" * 16  # nothing copied


def test_memcpy_async_host_to_host_is_not_supported_in_ep_mode(ctx, stream, host, acl_log):
    a, b = host(16), host(16)
    ctypes.memset(a, 0x44, 16)
    assert acl.rt.memcpy_async(a, 16, b, 16, H2H, stream) == AclCode.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert logged(acl_log, "acl.rt.memcpy_async", 207000)
    assert acl.rt.memcpy(a, 16, b, 16, H2H) == 0  # the synchronous copy is fine


@pytest.mark.parametrize("kind", [-1, 6, 7, 8, 99])
def test_memcpy_unknown_kind(ctx, host, acl_log, kind):
    a, b = host(8), host(8)
    ctypes.memset(a, 0x44, 8)
    assert acl.rt.memcpy(a, 8, b, 8, kind) == INVALID
    (line,) = logged(acl_log, "acl.rt.memcpy", 100000)
    assert f"memcpy kind {kind} is not one of 0..5" in line
    assert ctypes.string_at(a, 8) == b"\x44" * 8


def test_memcpy_by_address_still_refuses_unknown_memory(ctx, host, acl_log):
    a = host(8)
    assert acl.rt.memcpy(a, 8, 0x10, 8, 4) == INVALID
    assert acl.rt.memcpy(0x10, 8, a, 8, 1) == INVALID
    assert len(logged(acl_log, "acl.rt.memcpy", 100000)) == 2


def test_memcpy_count_larger_than_dst_max(ctx, host, acl_log):
    a, b = host(16), host(16)
    assert acl.rt.memcpy(a, 8, b, 9, H2H) == INVALID
    (line,) = logged(acl_log, "acl.rt.memcpy", 100000)
    assert "count 9 is larger than dst_max 8" in line


def test_memcpy_beyond_the_allocation(ctx, host, acl_log):
    a, b = host(16), host(16)
    assert acl.rt.memcpy(a + 16, 32, b, 1, H2H) == INVALID  # starts one past the end: outside any allocation
    assert acl.rt.memcpy(a, 16, b + 16, 1, H2H) == INVALID
    lines = logged(acl_log, "acl.rt.memcpy", 100000)
    assert len(lines) == 2 and all("is not inside any allocation" in line for line in lines)


def test_regression_copy_running_past_its_allocation_failed_instead_of_being_cut(ctx, host, stream, acl_log):
    """A copy or memset that starts inside an allocation and runs past its end completes within it, drops the rest
    and logs one WARNING naming it (a device does not fault on it; Ascend's VPC sample depends on that)."""
    src, small = host(64), malloc(48)
    ctypes.memmove(src, bytes(range(64)), 64)
    ctypes.memset(small, 0, 48)
    assert acl.rt.memcpy(small, 64, src, 64, H2D) == 0
    assert ctypes.string_at(small, 48) == bytes(range(48))
    ctypes.memset(small, 0, 48)
    assert acl.rt.memcpy_async(small + 8, 64, src, 64, H2D, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert ctypes.string_at(small, 48) == bytes(8) + bytes(range(40))
    assert acl.rt.memset(small + 40, 16, 0xEE, 16) == 0
    assert ctypes.string_at(small + 40, 8) == b"\xee" * 8
    dst = host(64)
    assert acl.rt.memcpy(dst, 64, small, 64, D2H) == 0  # the source side is cut the same way
    assert ctypes.string_at(dst, 48) == ctypes.string_at(small, 48)
    warnings = [r.getMessage() for r in acl_log.records if r.levelname == "WARNING"]
    assert len(warnings) == 4, warnings
    assert "runs 16 bytes past the end of its 48-byte device allocation" in warnings[0]
    assert all("only the" in line for line in warnings)


def test_memcpy_negative_sizes_are_masked_and_refused(ctx, host, acl_log):
    a, b = host(16), host(16)
    assert acl.rt.memcpy(a, -1, b, -1, H2H) == INVALID
    assert acl.rt.memcpy(a, 16, b, -1, H2H) == INVALID
    lines = logged(acl_log, "acl.rt.memcpy", 100000)
    assert f"+{U64} bytes" in lines[0]
    assert f"count {U64} is larger than dst_max 16" in lines[1]


def test_memcpy_bad_and_freed_pointers(ctx, host, acl_log):
    h = host(16)
    d = malloc(16)
    assert acl.rt.free(d) == 0
    assert acl.rt.memcpy(d, 16, h, 16, H2D) == INVALID
    assert acl.rt.memcpy(h, 16, d, 16, D2H) == INVALID
    assert acl.rt.memcpy(h, 16, 0, 16, H2H) == INVALID
    assert acl.rt.memcpy(0, 16, h, 16, H2H) == INVALID
    assert len(logged(acl_log, "acl.rt.memcpy", 100000)) == 4


def test_memcpy_size_zero_copies_nothing(ctx, host):
    a, b = host(8), host(8)
    ctypes.memset(a, 1, 8)
    ctypes.memset(b, 2, 8)
    assert acl.rt.memcpy(a, 8, b, 0, H2H) == 0
    assert ctypes.string_at(a, 8) == b"\x01" * 8


def test_memcpy_into_read_only_memory(ctx, host, acl_log):
    readonly = np.zeros(8, np.uint8)
    readonly.flags.writeable = False
    with pytest.warns(Warning):
        ptr = acl.util.numpy_to_ptr(readonly)
    assert acl.rt.memcpy(ptr, 8, host(8), 8, H2H) == INVALID
    (line,) = logged(acl_log, "acl.rt.memcpy", 100000)
    assert "read-only" in line
    assert not readonly.any()


# ----- memset -----


def test_memset(ctx, acl_log):
    d = malloc(32)
    assert acl.rt.memset(d, 32, 0, 32) == 0
    assert acl.rt.memset(d + 8, 24, 0x1AB, 8) == 0  # the value is a byte
    assert ctypes.string_at(d, 32) == b"\x00" * 8 + b"\xab" * 8 + b"\x00" * 16
    assert acl.rt.memset(d, 16, 1, 17) == INVALID
    assert acl.rt.memset(d + 32, 64, 1, 1) == INVALID
    assert acl.rt.memset(d, -1, 1, -1) == INVALID
    assert acl.rt.memset(0x10, 1, 1, 1) == INVALID
    assert acl.rt.free(d) == 0
    assert acl.rt.memset(d, 32, 1, 32) == INVALID
    lines = logged(acl_log, "acl.rt.memset", 100000)
    assert len(lines) == 5
    assert "count 17 is larger than max_count 16" in lines[0]


# ----- stream-ordered copies -----


def test_memcpy_async_is_ordered_on_its_stream(ctx, stream, host, gate):
    h_src, h_dst = host(64), host(64)
    d = malloc(64)
    ctypes.memset(h_src, 0x10, 64)
    ctypes.memset(h_dst, 0, 64)
    hold_stream(stream, gate)
    assert acl.rt.memcpy_async(d, 64, h_src, 64, H2D, stream) == 0
    assert acl.rt.memset_async(d, 64, 0x20, 32, stream) == 0
    assert acl.rt.memcpy_async(h_dst, 64, d, 64, D2H, stream) == 0
    ctypes.memset(h_src, 0x99, 64)  # before the queued host-to-device copy runs: it copies these bytes
    assert ctypes.string_at(h_dst, 64) == b"\x00" * 64
    assert acl.rt.stream_query(stream) == (1, 0)
    gate.set()
    assert acl.rt.synchronize_stream(stream) == 0
    assert ctypes.string_at(h_dst, 64) == b"\x20" * 32 + b"\x99" * 32
    assert acl.rt.stream_query(stream) == (0, 0)


def test_memcpy_async_on_the_default_stream(ctx, host):
    h = host(16)
    d = malloc(16)
    ctypes.memset(h, 5, 16)
    assert acl.rt.memcpy_async(d, 16, h, 16, H2D, 0) == 0
    assert acl.rt.memset_async(h, 16, 0, 16, 0) == 0
    assert acl.rt.memcpy_async(h, 16, d, 16, D2H, 0) == 0
    assert acl.rt.synchronize_stream(0) == 0
    assert ctypes.string_at(h, 16) == b"\x05" * 16


def test_memcpy_async_source_freed_before_the_copy_runs(ctx, stream, host, gate):
    h = host(16)
    d = malloc(16)
    assert acl.rt.memset(d, 16, 0x6D, 16) == 0
    assert acl.rt.memset(h, 16, 0, 16) == 0
    hold_stream(stream, gate)
    assert acl.rt.memcpy_async(h, 16, d, 16, D2H, stream) == 0
    assert acl.rt.free(d) == 0
    gate.set()
    assert acl.rt.synchronize_stream(stream) == 507053  # ACL_ERROR_RT_DEVICE_MEM_ERROR, as a device fault
    assert ctypes.string_at(h, 16) == b"\x00" * 16  # not copied; the freed bytes were never read


def test_memcpy_async_errors_are_returned_at_once(ctx, stream, host, acl_log):
    h, d = host(16), malloc(16)
    assert acl.rt.memcpy_async(d, 16, h, 16, D2D, stream) == INVALID
    assert acl.rt.memcpy_async(d, 8, h, 16, H2D, stream) == INVALID
    assert acl.rt.memcpy_async(d, 16, h, 16, H2D, 0xDEAD0) == INVALID
    assert acl.rt.memset_async(d, 16, 0, 17, stream) == INVALID
    assert acl.rt.memset_async(d, 16, 0, 16, 0xDEAD0) == INVALID
    assert len(logged(acl_log, "acl.rt.memcpy_async", 100000)) == 3
    assert len(logged(acl_log, "acl.rt.memset_async", 100000)) == 2
    assert rt_device.resolve(stream).statistics()["enqueued"] == 0
    assert acl.rt.synchronize_stream(stream) == 0


def test_memcpy_async_default_stream_without_context(acl_log):
    h, ret = acl.rt.malloc_host(8)
    assert ret == 0
    try:
        assert acl.rt.memcpy_async(h, 8, h, 8, H2H, 0) == AclCode.ACL_ERROR_RT_CONTEXT_NULL
        assert logged(acl_log, "acl.rt.memcpy_async", 107002)
    finally:
        acl.rt.free_host(h)


# ----- data buffers -----


def test_data_buffer_calls(ctx, acl_log):
    d = malloc(128)
    buf = acl.create_data_buffer(d, 128)
    assert buf != 0
    assert acl.get_data_buffer_addr(buf) == d
    assert acl.get_data_buffer_size(buf) == 128
    assert acl.get_data_buffer_size_v2(buf) == 128
    assert acl.update_data_buffer(buf, d + 64, 64) == 0
    assert (acl.get_data_buffer_addr(buf), acl.get_data_buffer_size_v2(buf)) == (d + 64, 64)
    assert acl.update_data_buffer(buf, d + 64, 65) == INVALID
    assert acl.get_data_buffer_size_v2(buf) == 64
    assert acl.destroy_data_buffer(buf) == 0
    assert acl.destroy_data_buffer(buf) == INVALID
    assert acl.get_data_buffer_addr(buf) == 0
    assert acl.get_data_buffer_size(buf) == 0
    assert acl.update_data_buffer(buf, d, 8) == INVALID
    assert logged(acl_log, "acl.update_data_buffer", 100000)
    (line,) = logged(acl_log, "acl.destroy_data_buffer", 100000)
    assert "data buffer" in line and "does not exist" in line
    assert logged(acl_log, "acl.get_data_buffer_addr", 100000)


def test_empty_data_buffer(ctx):
    buf = acl.create_data_buffer(0, 0)
    assert buf != 0
    assert (acl.get_data_buffer_addr(buf), acl.get_data_buffer_size_v2(buf)) == (0, 0)
    assert acl.destroy_data_buffer(buf) == 0


def test_create_data_buffer_failures_return_zero(ctx, acl_log):
    d = malloc(16)
    assert acl.create_data_buffer(d, 17) == 0
    assert acl.create_data_buffer(0xABC0, 1) == 0
    assert acl.create_data_buffer(d, -1) == 0
    assert acl.rt.free(d) == 0
    assert acl.create_data_buffer(d, 16) == 0
    assert len(logged(acl_log, "acl.create_data_buffer", 100000)) == 4


# ----- property: random copies either copy exactly or are refused -----

# kind: (source on device, destination on device); None = either
SIDES = {0: (False, False), 1: (False, True), 2: (True, False), 3: (True, True), 4: (None, None)}
SIDES.update({5: (False, True), 6: (True, True), 7: (True, True)})
SIZE = 64


def test_random_copies_succeed_exactly_or_are_refused(ctx, host):
    # Two device and two host allocations; offsets stay inside (or just at the end of) the buffer, so an
    # out-of-range range can only overrun its own allocation, and the expected answer is exact.
    buffers = [(malloc(SIZE), True), (malloc(SIZE), True), (host(SIZE), False), (host(SIZE), False)]
    for i, (ptr, _) in enumerate(buffers):
        ctypes.memmove(ptr, bytes((i * 64 + j) % 256 for j in range(SIZE)), SIZE)
    stream, ret = acl.rt.create_stream()
    assert ret == 0

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        dst_index=st.integers(0, 3),
        src_index=st.integers(0, 3),
        dst_offset=st.integers(0, SIZE),
        src_offset=st.integers(0, SIZE),
        count=st.one_of(st.integers(0, SIZE + 8), st.just(-1)),
        slack=st.sampled_from([0, 1, -1, 1000, -1000]),
        kind=st.one_of(st.integers(0, 7), st.sampled_from([8, 99, -1])),
        use_async=st.booleans(),
    )
    def check(dst_index, src_index, dst_offset, src_offset, count, slack, kind, use_async):
        (dst_base, dst_dev), (src_base, src_dev) = buffers[dst_index], buffers[src_index]
        dst, src = dst_base + dst_offset, src_base + src_offset
        dst_max = count + slack if slack != -1000 else -1
        n, n_max = count & U64, dst_max & U64
        # The synchronous copy only range-checks the kind (0..5); the stream-ordered one honours it.
        sides = SIDES.get(kind) if use_async else ((None, None) if 0 <= kind <= 5 else None)
        expect_ok = (
            sides is not None
            and sides[0] in (None, src_dev)
            and sides[1] in (None, dst_dev)
            and n <= n_max
            # zero bytes one past the end is valid, as in C (tests/runtime); a range that starts inside its
            # allocation and runs past the end is cut there (the overrun rule); a masked negative is refused
            and (n == 0 or (dst_offset < SIZE and src_offset < SIZE and n < U64))
        )
        n = min(n, SIZE - dst_offset, SIZE - src_offset)
        refused_h2h = expect_ok and use_async and kind == H2H
        before_dst = ctypes.string_at(dst_base, SIZE)
        before_src = ctypes.string_at(src_base, SIZE)
        if use_async:
            ret = acl.rt.memcpy_async(dst, dst_max, src, count, kind, stream)
            assert acl.rt.synchronize_stream(stream) == 0
        else:
            ret = acl.rt.memcpy(dst, dst_max, src, count, kind)
        after = ctypes.string_at(dst_base, SIZE)
        if refused_h2h:
            assert ret == AclCode.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
            assert after == before_dst
        elif expect_ok:
            assert ret == 0
            want = before_dst[:dst_offset] + before_src[src_offset : src_offset + n] + before_dst[dst_offset + n :]
            assert after == want
        else:
            assert ret == INVALID
            assert after == before_dst

    check()


def test_regression_a_copy_far_past_its_allocation_wrote_the_whole_allocation(ctx, host, acl_log):
    """The overrun rule tolerates only what a device would not fault on (2 MiB past the end): a hostile count on a
    large allocation used to be cut and fill all of it (gigabytes of lazily mapped memory made real)."""
    big, small = malloc(1 << 20), host(64)
    ctypes.memset(big, 0x11, 64)
    far = (1 << 20) + (2 << 20) + 1  # runs 2 MiB + 1 byte past the end
    assert acl.rt.memset(big, far, 0, far) == INVALID
    assert acl.rt.memcpy(big, far, small, far, H2D) == INVALID
    assert ctypes.string_at(big, 64) == b"\x11" * 64
    assert acl.rt.memset(big, far - 1, 0x22, far - 1) == 0  # 2 MiB past the end: cut
    assert ctypes.string_at(big, 64) == b"\x22" * 64
