"""Virtual memory: reserved ranges, physical memory and mappings, used as memory by memcpy and acl.util."""

from __future__ import annotations

import gc
import mmap

import pytest

import acl
from openacl.errors import AclCode
from openacl.runtime import memory, vmm
from tests.acl.test_memory import logged
from tests.forking import in_child

INVALID = AclCode.ACL_ERROR_INVALID_PARAM
PAGE = mmap.PAGESIZE
H2D, D2H, D2D = 1, 2, 3
NPY_UINT8 = 2


def prop(device_id: int = 0, location_type: int = 1) -> dict:
    return {
        "handleType": 0,
        "allocationType": 0,
        "memAttr": 0,
        "location": {"id": device_id, "type": location_type},
        "reserve": 0,
    }


def reserve(size: int, alignment: int = 0) -> int:
    ptr, ret = acl.rt.reserve_mem_address(size, alignment, 0, 0)
    assert ret == 0 and ptr != 0
    return ptr


def physical(size: int) -> int:
    handle, ret = acl.rt.malloc_physical(size, prop(), 0)
    assert ret == 0 and handle != 0
    return handle


def test_granularity_is_the_page_and_2_mib_recommended(ctx):
    assert acl.rt.mem_get_allocation_granularity(prop(), 0) == (PAGE, 0)
    assert acl.rt.mem_get_allocation_granularity(prop(), 1) == (2 * 1024 * 1024, 0)
    assert acl.rt.mem_get_allocation_granularity(prop(), 2) == (0, INVALID)
    assert acl.rt.mem_get_allocation_granularity(prop(location_type=0), 0) == (0, INVALID)
    assert acl.rt.mem_get_allocation_granularity(prop(device_id=999), 0)[1] == AclCode.ACL_ERROR_RT_INVALID_DEVICEID
    for bad in ({}, {"location": {"id": 0}}, None, {"location": 3}):
        with pytest.raises(TypeError, match=r"acl\.rt\.mem_get_allocation_granularity args parse failed"):
            acl.rt.mem_get_allocation_granularity(bad, 0)


def test_two_physical_pieces_mapped_side_by_side_are_one_range_for_memcpy(ctx):
    base = reserve(2 * PAGE)
    first, second = physical(PAGE), physical(PAGE)
    assert acl.rt.map_mem(base, PAGE, 0, first, 0) == 0
    assert acl.rt.map_mem(base + PAGE, PAGE, 0, second, 0) == 0
    data = bytes(range(256)) * (2 * PAGE // 256)
    src = acl.util.bytes_to_ptr(data)
    assert acl.rt.memcpy(base, 2 * PAGE, src, 2 * PAGE, H2D) == 0
    assert acl.util.ptr_to_bytes(base, 2 * PAGE) == data
    assert acl.util.ptr_to_bytes(base + PAGE - 3, 6) == data[PAGE - 3 : PAGE + 3]  # across the seam
    device, _ = acl.rt.malloc(2 * PAGE, 0)
    assert acl.rt.memcpy(device, 2 * PAGE, base, 2 * PAGE, D2D) == 0
    assert acl.util.ptr_to_bytes(device, 2 * PAGE) == data
    assert acl.rt.pointer_get_attributes(base)[0]["location"] == {"id": 0, "type": 1}


def test_asynchronous_copies_and_memsets_reach_mapped_memory(stream):
    base = reserve(PAGE)
    assert acl.rt.map_mem(base, PAGE, 0, physical(PAGE), 0) == 0
    assert acl.rt.memset_async(base, PAGE, 0xAB, PAGE, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.util.ptr_to_bytes(base, PAGE) == b"\xab" * PAGE


def test_one_physical_memory_mapped_twice_is_the_same_bytes(ctx):
    handle = physical(2 * PAGE)
    a, b = reserve(2 * PAGE), reserve(PAGE)
    assert acl.rt.map_mem(a, 2 * PAGE, 0, handle, 0) == 0
    assert acl.rt.map_mem(b, PAGE, PAGE, handle, 0) == 0  # the second page of it
    assert acl.rt.memset(a + PAGE, PAGE, 0x11, PAGE) == 0
    assert acl.util.ptr_to_bytes(b, 4) == b"\x11" * 4
    assert acl.rt.memset(b, PAGE, 0x22, 16) == 0
    assert acl.util.ptr_to_bytes(a + PAGE, 16) == b"\x22" * 16


def test_physical_memory_keeps_its_bytes_from_one_mapping_to_the_next(ctx):
    handle = physical(PAGE)
    a, b = reserve(PAGE), reserve(PAGE)
    assert acl.rt.map_mem(a, PAGE, 0, handle, 0) == 0
    assert acl.rt.memset(a, PAGE, 0x5C, PAGE) == 0
    assert acl.rt.unmap_mem(a) == 0
    assert acl.rt.map_mem(b, PAGE, 0, handle, 0) == 0
    assert acl.util.ptr_to_bytes(b, PAGE) == b"\x5c" * PAGE


def test_an_unmapped_address_is_refused_not_a_crash(ctx, acl_log):
    base = reserve(PAGE)
    assert acl.rt.map_mem(base, PAGE, 0, physical(PAGE), 0) == 0
    assert acl.rt.unmap_mem(base) == 0
    assert acl.rt.memset(base, PAGE, 1, PAGE) == INVALID
    assert acl.rt.unmap_mem(base) == INVALID
    assert len(logged(acl_log, "acl.rt.unmap_mem", INVALID)) == 1
    with pytest.raises(ValueError):
        acl.util.ptr_to_bytes(base, 1)
    assert acl.rt.memset(base + PAGE // 2, 1, 1, 1) == INVALID  # reserved, never mapped


def test_regression_unmap_under_a_live_view_keeps_the_view_readable_and_the_range_busy(ctx):
    """A view made before unmap_mem still reads its bytes (the pages go only when it dies), and the range cannot
    be mapped again until then: the late unmapping would take the new mapping's pages away."""
    base = reserve(PAGE)
    assert acl.rt.map_mem(base, PAGE, 0, physical(PAGE), 0) == 0
    assert acl.rt.memset(base, PAGE, 0x77, PAGE) == 0
    view = acl.util.ptr_to_numpy(base, (PAGE,), NPY_UINT8)
    assert acl.rt.unmap_mem(base) == 0
    assert int(view[PAGE - 1]) == 0x77
    other = physical(PAGE)
    assert acl.rt.map_mem(base, PAGE, 0, other, 0) == INVALID
    del view
    gc.collect()
    assert acl.rt.map_mem(base, PAGE, 0, other, 0) == 0
    assert acl.rt.memset(base, PAGE, 1, PAGE) == 0


def test_freeing_physical_memory_that_is_mapped_keeps_the_mapping_until_unmapped(ctx):
    base = reserve(PAGE)
    handle = physical(PAGE)
    assert acl.rt.map_mem(base, PAGE, 0, handle, 0) == 0
    assert acl.rt.free_physical(handle) == 0
    assert acl.rt.free_physical(handle) == INVALID
    assert acl.rt.memset(base, PAGE, 3, PAGE) == 0
    assert acl.rt.map_mem(reserve(PAGE), PAGE, 0, handle, 0) == INVALID
    assert acl.rt.unmap_mem(base) == 0


def test_regression_free_of_mapped_virtual_memory_returned_success_and_forgot_the_mapping(ctx, acl_log):
    base = reserve(PAGE)
    piece = physical(PAGE)
    assert acl.rt.map_mem(base, PAGE, 0, piece, 0) == 0
    assert acl.rt.free(base) == INVALID  # only unmap_mem ends a mapping, as in CANN
    assert "is not the start of a live device allocation" in acl_log.text
    data = bytes(range(256)) * (PAGE // 256)
    assert acl.rt.memcpy(base, PAGE, acl.util.bytes_to_ptr(data), PAGE, H2D) == 0  # still mapped, still known
    assert acl.util.ptr_to_bytes(base, PAGE) == data
    assert acl.rt.unmap_mem(base) == 0


def test_release_needs_the_range_unmapped(ctx):
    base = reserve(2 * PAGE)
    assert acl.rt.map_mem(base + PAGE, PAGE, 0, physical(PAGE), 0) == 0
    assert acl.rt.release_mem_address(base) == INVALID
    assert acl.rt.unmap_mem(base + PAGE) == 0
    assert acl.rt.release_mem_address(base) == 0
    assert acl.rt.release_mem_address(base) == INVALID
    assert acl.rt.map_mem(base, PAGE, 0, physical(PAGE), 0) == INVALID


def test_reserve_honours_alignment_and_checks_its_arguments(ctx):
    aligned = reserve(PAGE, 2 * 1024 * 1024)
    assert aligned % (2 * 1024 * 1024) == 0
    assert acl.rt.reserve_mem_address(PAGE + 1, 0, 0, 0) == (0, INVALID)
    assert acl.rt.reserve_mem_address(0, 0, 0, 0) == (0, INVALID)
    assert acl.rt.reserve_mem_address(PAGE, 3 * PAGE, 0, 0) == (0, INVALID)
    assert acl.rt.reserve_mem_address(PAGE, 0, 123, 0) == (0, INVALID)
    assert acl.rt.reserve_mem_address(PAGE, 0, 0, 7) == (0, INVALID)
    assert acl.rt.reserve_mem_address(PAGE, 1 << 63, 0, 0) == (0, INVALID)  # no overflow into an internal error
    assert acl.rt.reserve_mem_address(1 << 62, 0, 0, 0) == (0, INVALID)
    with pytest.raises(TypeError):
        acl.rt.reserve_mem_address(PAGE, 0, 0)


def test_map_mem_checks_range_offset_handle_and_overlap(ctx):
    base = reserve(2 * PAGE)
    handle = physical(PAGE)
    assert acl.rt.map_mem(base, PAGE, 0, 0xBAD0, 0) == INVALID
    assert acl.rt.map_mem(base, PAGE, PAGE, handle, 0) == INVALID  # past the physical memory
    assert acl.rt.map_mem(base, PAGE, 1, handle, 0) == INVALID  # offset not page-aligned
    assert acl.rt.map_mem(base + 1, PAGE, 0, handle, 0) == INVALID
    assert acl.rt.map_mem(base + PAGE, 2 * PAGE, 0, physical(2 * PAGE), 0) == INVALID  # out of the reservation
    assert acl.rt.map_mem(base, PAGE, 0, handle, 1) == INVALID
    device, _ = acl.rt.malloc(PAGE, 0)
    assert acl.rt.map_mem(device, PAGE, 0, handle, 0) == INVALID  # not reserved
    assert acl.rt.map_mem(base, PAGE, 0, handle, 0) == 0
    assert acl.rt.map_mem(base, PAGE, 0, physical(PAGE), 0) == INVALID  # overlaps


def test_malloc_physical_checks_its_arguments(ctx):
    assert acl.rt.malloc_physical(PAGE + 1, prop(), 0) == (0, INVALID)
    assert acl.rt.malloc_physical(PAGE, prop(), 1) == (0, INVALID)
    assert acl.rt.malloc_physical(PAGE, prop(location_type=0), 0) == (0, INVALID)
    assert acl.rt.malloc_physical(PAGE, prop(device_id=999), 0)[1] == AclCode.ACL_ERROR_RT_INVALID_DEVICEID
    with pytest.raises(TypeError, match=r"acl\.rt\.malloc_physical args parse failed"):
        acl.rt.malloc_physical(PAGE, {"location": {"id": "0", "type": 1}}, 0)


def test_a_reset_forgets_every_mapping(ctx):
    base = reserve(PAGE)
    assert acl.rt.map_mem(base, PAGE, 0, physical(PAGE), 0) == 0
    vmm.reset()
    assert memory.space.find(base, 1) is None
    assert acl.rt.unmap_mem(base) == INVALID


@pytest.mark.subprocess
def test_a_forked_child_writes_its_own_copy_of_mapped_memory(ctx):
    base = reserve(PAGE)
    assert acl.rt.map_mem(base, PAGE, 0, physical(PAGE), 0) == 0
    assert acl.rt.memset(base, PAGE, 0x10, PAGE) == 0

    def child() -> str:
        before = acl.util.ptr_to_bytes(base, 1)
        ret = acl.rt.memset(base, PAGE, 0x20, PAGE)
        return f"{before.hex()} {ret} {acl.util.ptr_to_bytes(base, 1).hex()}"

    assert in_child(child) == "10 0 20"
    assert acl.util.ptr_to_bytes(base, PAGE) == b"\x10" * PAGE


# ----- sharing physical memory -----


def test_an_imported_shareable_handle_maps_the_same_bytes(ctx):
    handle = physical(PAGE)
    shareable, ret = acl.rt.mem_export_to_shareable_handle(handle, 0, 0)
    assert ret == 0 and shareable != 0
    assert acl.rt.mem_set_pid_to_shareable_handle(shareable, [acl.rt.device_get_bare_tgid()[0]]) == 0
    imported, ret = acl.rt.mem_import_from_shareable_handle(shareable, 1)
    assert ret == 0 and imported != handle
    a, b = reserve(PAGE), reserve(PAGE)
    assert acl.rt.map_mem(a, PAGE, 0, handle, 0) == 0
    assert acl.rt.map_mem(b, PAGE, 0, imported, 0) == 0
    assert acl.rt.memset(a, PAGE, 0x3D, PAGE) == 0
    assert acl.util.ptr_to_bytes(b, PAGE) == b"\x3d" * PAGE
    assert acl.rt.pointer_get_attributes(b)[0]["location"]["id"] == 1


def test_shareable_handles_are_checked(ctx, acl_log):
    handle = physical(PAGE)
    assert acl.rt.mem_export_to_shareable_handle(handle, 1, 0) == (0, INVALID)
    assert acl.rt.mem_export_to_shareable_handle(0xBAD0, 0, 0) == (0, INVALID)
    shareable, _ = acl.rt.mem_export_to_shareable_handle(handle, 0, 0)
    assert acl.rt.mem_import_from_shareable_handle(shareable, 999)[1] == AclCode.ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.rt.mem_import_from_shareable_handle(shareable ^ (1 << 50), 0) == (0, INVALID)  # another tag
    assert acl.rt.mem_import_from_shareable_handle(12345, 0) == (0, INVALID)
    assert acl.rt.mem_set_pid_to_shareable_handle(shareable, []) == INVALID
    with pytest.raises(TypeError):
        acl.rt.mem_set_pid_to_shareable_handle(shareable, ("1",))
    assert acl.rt.free_physical(handle) == 0
    gc.collect()
    assert acl.rt.mem_import_from_shareable_handle(shareable, 0) == (0, INVALID)  # its memory file is closed
    assert len(logged(acl_log, "acl.rt.mem_import_from_shareable_handle", INVALID)) == 3


@pytest.mark.subprocess
def test_a_forked_child_imports_and_writes_the_parents_physical_memory(ctx):
    handle = physical(PAGE)
    base = reserve(PAGE)
    assert acl.rt.map_mem(base, PAGE, 0, handle, 0) == 0
    shareable, _ = acl.rt.mem_export_to_shareable_handle(handle, 0, 0)

    def child() -> str:
        imported, ret = acl.rt.mem_import_from_shareable_handle(shareable, 0)
        at = acl.rt.reserve_mem_address(PAGE, 0, 0, 0)[0]
        mapped = acl.rt.map_mem(at, PAGE, 0, imported, 0)
        return f"{ret} {mapped} {acl.rt.memset(at, PAGE, 0x42, PAGE)}"

    assert in_child(child) == "0 0 0"
    assert acl.util.ptr_to_bytes(base, PAGE) == b"\x42" * PAGE  # shared, unlike the child's inherited mappings
