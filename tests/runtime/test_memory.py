"""``openacl.runtime.memory`` called directly: every rule is enforced by the runtime, not only by the facade."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import threading

import numpy as np
import pytest

import acl
from openacl.errors import AclCode, AclError
from openacl.runtime import buffers, copies, memory
from openacl.runtime import device as rt_device
from openacl.runtime.memory import Kind
from openacl.runtime.sched.stream import ACL_STREAM_STATUS_NOT_READY, Stream
from openacl.runtime.sched.task import work_task

INVALID = AclCode.ACL_ERROR_INVALID_PARAM


def raises_code(code: int, fn, *args, **kwargs):
    with pytest.raises(AclError) as info:
        fn(*args, **kwargs)
    assert info.value.code == code
    return info.value


@pytest.fixture
def dev(ctx):
    """Device 0, opened so that the autouse reset frees what a test allocates on it."""
    return 0


@pytest.fixture
def host():
    """Host allocations freed at the end of the test (device resets do not free host memory)."""
    addrs: list[int] = []

    def alloc(size: int) -> int:
        addr = memory.malloc_host(size)
        addrs.append(addr)
        return addr

    yield alloc
    for addr in addrs:
        with contextlib.suppress(AclError):
            memory.free_host(addr)


# ----- malloc / free -----


def test_malloc_returns_aligned_registered_device_memory(dev):
    addr = memory.malloc(100, 0, dev)
    assert addr % memory.ALIGNMENT == 0
    region = memory.space.find(addr, 100)
    assert region is not None
    assert (region.addr, region.size, region.kind, region.device_id) == (addr, 100, Kind.DEVICE, dev)
    assert memory.space.find(addr + 100, 1) is not region


@pytest.mark.parametrize("policy", list(range(8)))
def test_every_malloc_policy_is_accepted(dev, policy):
    memory.free(memory.malloc(16, policy, dev))


@pytest.mark.parametrize("policy", [-1, 8, 1 << 31])
def test_malloc_policy_out_of_range(dev, policy):
    err = raises_code(INVALID, memory.malloc, 16, policy, dev)
    assert f"policy {policy}" in err.detail


@pytest.mark.parametrize("size", [0, -1])
def test_malloc_size_must_be_positive(dev, size):
    raises_code(INVALID, memory.malloc, size, 0, dev)
    raises_code(INVALID, memory.malloc_host, size)


def test_malloc_larger_than_a_device(dev):
    raises_code(AclCode.ACL_ERROR_RT_MEMORY_ALLOCATION, memory.malloc, memory.device_memory_limit() + 1, 0, dev)
    raises_code(AclCode.ACL_ERROR_RT_MEMORY_ALLOCATION, memory.malloc, (1 << 64) - 1, 0, dev)
    raises_code(AclCode.ACL_ERROR_RT_MEMORY_ALLOCATION, memory.malloc_host, (1 << 64) - 1)


def test_device_memory_limit_counts_live_allocations(dev, monkeypatch):
    monkeypatch.setenv("OPENACL_DEVICE_MEMORY_MB", "1")
    assert memory.device_memory_limit() == 1 << 20
    first = memory.malloc(600 * 1024, 0, dev)
    err = raises_code(AclCode.ACL_ERROR_RT_MEMORY_ALLOCATION, memory.malloc, 600 * 1024, 0, dev)
    assert f"device {dev}" in err.detail
    memory.free(first)
    memory.free(memory.malloc(600 * 1024, 0, dev))


def test_free_twice(dev):
    addr = memory.malloc(32, 0, dev)
    memory.free(addr)
    err = raises_code(INVALID, memory.free, addr)
    assert "not the start of a live device allocation" in err.detail


def test_free_needs_the_start_of_the_allocation(dev):
    addr = memory.malloc(32, 0, dev)
    raises_code(INVALID, memory.free, addr + 8)
    raises_code(INVALID, memory.free, 0)
    memory.free(addr)


def test_free_and_free_host_do_not_mix(dev, host):
    dev_addr = memory.malloc(32, 0, dev)
    host_addr = host(32)
    raises_code(INVALID, memory.free, host_addr)
    raises_code(INVALID, memory.free_host, dev_addr)
    memory.free(dev_addr)
    memory.free_host(host_addr)
    raises_code(INVALID, memory.free_host, host_addr)


def test_freed_memory_is_unknown_but_views_keep_it_alive(dev):
    addr = memory.malloc(64, 0, dev)
    copies.memset(addr, 64, 0x5A, 64)
    view = memory.view_array(addr, (64,), np.dtype(np.uint8))
    memory.free(addr)
    raises_code(INVALID, memory.region_for, addr, 1, "pointer")
    raises_code(INVALID, memory.read_bytes, addr, 1)
    gc.collect()
    # New allocations cannot take the bytes the view still holds.
    others = [memory.malloc(64, 0, dev) for _ in range(64)]
    for other in others:
        copies.memset(other, 64, 0xA5, 64)
    assert view.tobytes() == b"\x5a" * 64
    view[:] = 1  # still writable, still no crash
    assert view.sum() == 64


def test_remove_device_forgets_only_that_device(dev):
    other_device = memory.malloc(16, 0, 1)  # device 1 is never opened: its memory is removed by hand
    try:
        mine = memory.malloc(16, 0, dev)
        assert memory.space.remove_device(dev) >= 1
        assert memory.space.find(mine, 16) is None
        assert memory.space.find(other_device, 16) is not None
    finally:
        assert memory.space.remove_device(1) == 1


def test_reset_device_frees_its_memory(dev):
    addr = memory.malloc(16, 0, dev)
    assert acl.rt.reset_device(0) == 0  # the context made by the fixture still holds the device
    assert memory.space.find(addr, 16) is not None
    assert acl.rt.reset_device_force(0) == 0
    assert memory.space.find(addr, 16) is None


# ----- region checks -----


def test_region_for_bounds(dev):
    addr = memory.malloc(64, 0, dev)
    assert memory.region_for(addr, 64, "x").addr == addr
    assert memory.region_for(addr + 63, 1, "x").addr == addr
    assert memory.region_for(addr + 10, 0, "x").addr == addr
    raises_code(INVALID, memory.region_for, addr, 65, "x")
    assert memory.region_for(addr + 64, 0, "x").addr == addr  # one past the end, zero bytes: as in C
    raises_code(INVALID, memory.region_for, addr + 65, 0, "x")
    raises_code(INVALID, memory.region_for, addr - 1, 2, "x")
    err = raises_code(INVALID, memory.region_for, addr, -1, "source")
    assert err.detail == "source: negative size -1"


def test_region_holding_an_address_is_found_past_many_nested_regions():
    """Regression: lookups looked back over 8 starts only, missing a region with more nested regions inside."""
    base = np.arange(1000, dtype=np.uint16).view(np.uint8)
    start = memory.array_address(base)
    slices = [base[i * 20 : i * 20 + 4] for i in range(12)]
    for piece in slices:
        memory.array_address(piece)
    assert memory.read_bytes(start + 1000, 4) == base[1000:1004].tobytes()


# ----- copies -----

# kind: (source on device, destination on device); None = either
SIDES = {
    0: (False, False),
    1: (False, True),
    2: (True, False),
    3: (True, True),
    4: (None, None),
    5: (False, True),
    6: (True, True),
    7: (True, True),
}


@pytest.mark.parametrize("kind", sorted(SIDES))
@pytest.mark.parametrize("src_on_device", [False, True])
@pytest.mark.parametrize("dst_on_device", [False, True])
def test_check_copy_enforces_each_kind(dev, host, kind, src_on_device, dst_on_device):
    src = memory.malloc(16, 0, dev) if src_on_device else host(16)
    dst = memory.malloc(16, 0, dev) if dst_on_device else host(16)
    want_src, want_dst = SIDES[kind]
    ok = want_src in (None, src_on_device) and want_dst in (None, dst_on_device)
    if ok and kind == copies.ACL_MEMCPY_HOST_TO_HOST:  # stream-ordered host-to-host: not in EP mode
        raises_code(AclCode.ACL_ERROR_RT_FEATURE_NOT_SUPPORT, copies.check_copy, dst, 16, src, 16, kind)
    elif ok:
        dst_region, src_region, count = copies.check_copy(dst, 16, src, 16, kind)
        assert count == 16
        assert (dst_region.addr, src_region.addr) == (dst, src)
    else:
        err = raises_code(INVALID, copies.check_copy, dst, 16, src, 16, kind)
        assert f"memcpy kind {kind}:" in err.detail


@pytest.mark.parametrize("kind", range(6))
@pytest.mark.parametrize("src_on_device", [False, True])
@pytest.mark.parametrize("dst_on_device", [False, True])
def test_sync_check_copy_takes_any_direction_for_kinds_0_to_5(dev, host, kind, src_on_device, dst_on_device):
    src = memory.malloc(16, 0, dev) if src_on_device else host(16)
    dst = memory.malloc(16, 0, dev) if dst_on_device else host(16)
    dst_region, src_region, _ = copies.check_copy(dst, 16, src, 16, kind, sync=True)
    assert (dst_region.addr, src_region.addr) == (dst, src)


@pytest.mark.parametrize("kind", [-1, 6, 7, 8])
def test_sync_check_copy_range_checks_the_kind(host, kind):
    err = raises_code(INVALID, copies.check_copy, host(8), 8, host(8), 8, kind, sync=True)
    assert f"memcpy kind {kind} is not one of 0..5" in err.detail


def test_sync_check_copy_keeps_the_memory_checks(host):
    err = raises_code(INVALID, copies.check_copy, host(8), 8, 0x10, 8, 4, sync=True)
    assert "not inside any allocation" in err.detail


@pytest.mark.parametrize("kind", [-1, 8, 99])
def test_check_copy_unknown_kind(host, kind):
    a, b = host(8), host(8)
    err = raises_code(INVALID, copies.check_copy, a, 8, b, 8, kind)
    assert f"memcpy kind {kind} is not one of 0..7" in err.detail


def test_check_copy_sizes(host):
    a, b = host(16), host(16)
    raises_code(INVALID, copies.check_copy, a, 8, b, 9, 0, sync=True)
    raises_code(INVALID, copies.check_copy, a, -1, b, 1, 0, sync=True)
    raises_code(INVALID, copies.check_copy, a, 16, b, -1, 0, sync=True)
    assert copies.check_copy(a, 17, b, 17, 0, sync=True)[2] == 16  # the overrun rule: cut at the end
    copies.check_copy(a, 16, b, 0, 0, sync=True)


def test_copy_refuses_read_only_destinations(host):
    readonly = np.zeros(8, np.uint8)
    readonly.flags.writeable = False
    ro_addr = memory.array_address(readonly)
    one_byte = memory.bytes_address(b"z")  # interned singleton: never writable
    src = host(8)
    for dst in (ro_addr, one_byte):
        err = raises_code(INVALID, copies.check_copy, dst, 1, src, 1, 0, sync=True)
        assert "read-only" in err.detail
    # Reading them is fine.
    copies.check_copy(src, 8, ro_addr, 8, 0, sync=True)


def test_copy_and_fill_move_the_exact_bytes(dev, host):
    src = host(32)
    dst = memory.malloc(32, 0, dev)
    ctypes.memmove(src, bytes(range(32)), 32)
    copies.check_copy(dst, 32, src, 32, 1)
    copies.memcpy(dst, 32, src, 32, 1)
    assert ctypes.string_at(dst, 32) == bytes(range(32))
    region, count = copies.check_set(dst, 32, 8)
    assert region.addr == dst and count == 8
    copies.memset(dst, 8, 0x1FF, 8)  # value is truncated to a byte
    assert ctypes.string_at(dst, 32) == b"\xff" * 8 + bytes(range(8, 32))
    copies.memcpy(dst, 0, src, 0, 1)
    copies.memset(dst, 0, 0, 0)
    assert ctypes.string_at(dst, 1) == b"\xff"


def test_check_set_sizes(dev):
    addr = memory.malloc(16, 0, dev)
    raises_code(INVALID, copies.check_set, addr, 8, 9)
    raises_code(INVALID, copies.check_set, addr, -1, 1)
    assert copies.check_set(addr, 32, 17)[1] == 16  # the overrun rule: cut at the end
    raises_code(INVALID, copies.check_set, addr + 16, 1, 1)  # starts outside: still an error


# ----- Python objects' memory -----


def test_bytes_address_is_the_objects_own_buffer():
    data = b"hello, device"
    addr = memory.bytes_address(data)
    assert ctypes.string_at(addr, len(data)) == data
    region = memory.space.find(addr, len(data))
    assert region.kind is Kind.USER and region.owner is data and region.writable
    assert memory.read_bytes(addr + 7, 6) == b"device"


def test_array_address_of_a_strided_array_registers_its_whole_span():
    base = np.arange(20, dtype=np.int32)
    strided = base[::2]
    addr = memory.array_address(strided)
    assert addr == base.__array_interface__["data"][0]
    span = 19 * 4  # first element to the end of the last one
    assert memory.read_bytes(addr, span) == base.tobytes()[:span]
    raises_code(INVALID, memory.read_bytes, addr, span + 1)
    assert memory.space.find(addr, span).writable


def test_array_inside_known_memory_is_not_registered_twice(dev):
    addr = memory.malloc(64, 0, dev)
    view = memory.view_array(addr, (16,), np.dtype(np.float32))
    before = len(memory.space.regions())
    assert memory.array_address(view) == addr
    assert len(memory.space.regions()) == before
    assert memory.space.find(addr, 64).kind is Kind.DEVICE


def test_user_regions_of_dropped_objects_are_swept_and_live_ones_kept():
    alive = b"still here " * 4
    alive_addr = memory.bytes_address(alive)
    for i in range(1500):
        memory.bytes_address(b"temporary object %06d" % i)
    users = [r for r in memory.space.regions() if r.kind is Kind.USER]
    assert len(users) < 1500
    assert memory.read_bytes(alive_addr, len(alive)) == alive


def test_the_generation_moves_on_with_every_removal_and_read_only_addition(dev):
    """What a plan checked holds while the generation stands: a writable region added takes nothing from it (so
    a loop registering each new input keeps its plans); a free, a read-only registration (it may shadow a
    writable one over the same bytes) and a sweep that forgets something each move it. A loan (the runtime's
    own array, lent for one call) moves it neither way: no plan keeps one."""
    before = memory.space.generation
    ptr, _ = acl.rt.malloc(64, 0)
    data = b"registered" * 4
    memory.bytes_address(data)
    assert memory.space.generation == before
    frozen = np.zeros(8, np.uint8)
    frozen.flags.writeable = False
    memory.array_address(frozen)
    assert memory.space.generation > before
    before = memory.space.generation
    with memory.lent(np.zeros(16, np.uint8)):
        assert memory.space.generation == before
    after_loan = memory.space.generation
    assert after_loan == before
    assert acl.rt.free(ptr) == 0
    assert memory.space.generation > after_loan
    kept = memory.space.generation
    live = [b"live %06d" % i for i in range(memory.space._next_sweep + 1)]
    for obj in live:  # past the sweep's threshold, every object alive: the sweep forgets nothing, no move
        memory.bytes_address(obj)
    assert memory.space.generation == kept
    for i in range(memory.space._next_sweep + 1):
        memory.bytes_address(b"temporary %06d" % i)  # dropped at once: the next sweep forgets them
    assert memory.space.generation > kept


def test_read_bytes_of_every_region_kind(dev, host):
    floats = np.arange(4, dtype=np.float32)
    for addr, expected in (
        (memory.bytes_address(b"abcdefgh"), b"abcdefgh"),
        (memory.array_address(floats), floats.tobytes()),
        (memory.array_address(np.arange(8, dtype=np.uint8).reshape(2, 4)), bytes(range(8))),
    ):
        assert memory.read_bytes(addr, len(expected)) == expected
    for addr in (memory.malloc(8, 0, dev), host(8)):
        copies.memset(addr, 8, 7, 8)
        assert memory.read_bytes(addr, 8) == b"\x07" * 8
    raises_code(INVALID, memory.read_bytes, 0x10, 1)


def test_view_array_shapes_and_dtypes(dev):
    addr = memory.malloc(64, 0, dev)
    ctypes.memmove(addr, np.arange(16, dtype=np.float32).tobytes(), 64)
    arr = memory.view_array(addr, (4, 4), np.dtype(np.float32))
    assert arr.shape == (4, 4) and arr.dtype == np.float32
    assert arr[3, 3] == 15.0
    arr[0, 0] = 42.0
    assert np.frombuffer(ctypes.string_at(addr, 4), np.float32)[0] == 42.0
    assert memory.view_array(addr + 8, (), np.dtype(np.float32)).item() == 2.0
    assert memory.view_array(addr, (0,), np.dtype(np.float32)).size == 0
    raises_code(INVALID, memory.view_array, addr, (17,), np.dtype(np.float32))
    raises_code(INVALID, memory.view_array, addr, (2, -1), np.dtype(np.float32))
    # A shape whose product overflows int64 is too large, not a small wrapped-around size.
    raises_code(INVALID, memory.view_array, addr, (1 << 40, 1 << 40), np.dtype(np.float32))


def test_view_of_read_only_memory_is_read_only():
    data = b"read only? no: bytes are writable through pointers, as in pyACL"
    readonly = np.arange(8, dtype=np.uint8)
    readonly.flags.writeable = False
    view = memory.view_array(memory.array_address(readonly), (8,), np.dtype(np.uint8))
    assert not view.flags.writeable
    assert memory.view_array(memory.bytes_address(data), (4,), np.dtype(np.uint8)).flags.writeable


# ----- data buffers -----


def test_data_buffer_lifecycle(dev):
    addr = memory.malloc(64, 0, dev)
    handle = buffers.create_data_buffer(addr, 64)
    buffer = buffers.data_buffers.get(handle)
    assert (buffer.addr, buffer.size, buffer.handle) == (addr, 64, handle)
    buffers.update_data_buffer(handle, addr + 32, 32)
    assert (buffer.addr, buffer.size) == (addr + 32, 32)
    raises_code(INVALID, buffers.update_data_buffer, handle, addr + 32, 33)
    assert (buffer.addr, buffer.size) == (addr + 32, 32)  # a failed update changes nothing
    buffers.destroy_data_buffer(handle)
    raises_code(INVALID, buffers.destroy_data_buffer, handle)
    raises_code(INVALID, buffers.update_data_buffer, handle, addr, 64)


def test_data_buffer_checks_its_memory(dev):
    addr = memory.malloc(64, 0, dev)
    buffers.destroy_data_buffer(buffers.create_data_buffer(0, 0))  # an empty buffer has no memory
    raises_code(INVALID, buffers.create_data_buffer, 0, 4)
    raises_code(INVALID, buffers.create_data_buffer, addr, 65)
    raises_code(INVALID, buffers.create_data_buffer, addr, -1)
    raises_code(INVALID, buffers.create_data_buffer, 0x10, 1)


# ----- stream-ordered copies -----


@pytest.fixture
def gate():
    """An Event that WORK tasks wait on; set at teardown so no engine thread stays blocked."""
    event = threading.Event()
    yield event
    event.set()


def hold(stream: Stream, gate: threading.Event, started: threading.Event | None = None) -> None:
    def work():
        if started is not None:
            started.set()
        assert gate.wait(10)

    stream.enqueue(work_task("gate", work))


def _held_fill_then_copy(dev: int, stream: int, host, gate: threading.Event) -> tuple[Stream, int, int]:
    """A held stream with a fill of device memory (0x11 -> 0x22) and its copy to host memory (0) queued."""
    s = rt_device.resolve(stream)
    src = memory.malloc(16, 0, dev)
    dst = host(16)
    copies.memset(src, 16, 0x11, 16)
    copies.memset(dst, 16, 0, 16)
    hold(s, gate)
    copies.enqueue_fill(s, src, 16, 0x22, 16)
    copies.enqueue_copy(s, dst, 16, src, 16, copies.ACL_MEMCPY_DEVICE_TO_HOST)
    return s, src, dst


def test_enqueue_copy_runs_in_stream_order(dev, stream, host, gate):
    s, _src, dst = _held_fill_then_copy(dev, stream, host, gate)
    assert ctypes.string_at(dst, 16) == b"\x00" * 16
    assert s.query() == ACL_STREAM_STATUS_NOT_READY
    gate.set()
    s.synchronize()
    assert ctypes.string_at(dst, 16) == b"\x22" * 16


def test_queued_copy_and_fill_of_memory_freed_meanwhile_fail_without_touching_it(dev, stream, host, gate):
    """free only unregisters: the bytes stay alive, so nothing can crash; the tasks fail with 507053."""
    s, src, dst = _held_fill_then_copy(dev, stream, host, gate)
    memory.free(src)
    gate.set()
    err = raises_code(AclCode.ACL_ERROR_RT_DEVICE_MEM_ERROR, s.synchronize)
    assert "freed before the stream reached it" in err.detail
    assert ctypes.string_at(dst, 16) == b"\x00" * 16


def test_enqueue_copy_checks_before_queueing(dev, stream, host):
    s = rt_device.resolve(stream)
    before = s.statistics()["enqueued"]
    a, b = host(8), memory.malloc(8, 0, dev)
    raises_code(INVALID, copies.enqueue_copy, s, b, 8, a, 8, copies.ACL_MEMCPY_DEVICE_TO_HOST)
    raises_code(INVALID, copies.enqueue_copy, s, b, 4, a, 8, copies.ACL_MEMCPY_HOST_TO_DEVICE)
    raises_code(INVALID, copies.enqueue_fill, s, b, 8, 0, 9)
    raises_code(INVALID, copies.enqueue_fill, s, 0x10, 8, 0, 8)
    assert s.statistics()["enqueued"] == before


class _CallsBackWhenFreed:
    """A user object whose finalizer looks an address up in ``space``: user code, run wherever its last reference
    goes."""

    def __init__(self, space: memory.AddressSpace, ran: list) -> None:
        self.space, self.ran = space, ran

    def __del__(self) -> None:
        self.space.find(0, 1)
        self.ran.append(True)


def _finishes(action) -> bool:
    """Whether ``action`` returns within 10 s (a deadlock would hang a daemon thread, not the suite)."""
    thread = threading.Thread(target=action, daemon=True)
    thread.start()
    thread.join(10)
    return not thread.is_alive()


def test_regression_a_region_swept_or_cleared_lets_go_of_its_object_after_the_lock():
    """The sweep of unreferenced user regions and a reset drop the last reference to the user's object: its
    finalizer may call back into the memory table, so the table's lock is released first."""
    for drop in ("sweep", "clear"):
        space, ran = memory.AddressSpace(), []

        def fill(space=space, ran=ran, count=8 if drop == "clear" else 256) -> None:
            for i in range(count):
                owner = _CallsBackWhenFreed(space, ran)
                space.add(memory.Region(0x1000 * (i + 1), 16, memory.Kind.USER, owner, owner=owner))
                del owner

        assert _finishes(fill)
        if drop == "clear":
            assert _finishes(space.clear) and len(ran) == 8
        else:
            assert len(ran) == 255  # the 256th add swept the 255 held by the table alone (the adder held the last)
