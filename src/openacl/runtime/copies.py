"""memcpy, memcpy2d and memset, synchronous and stream-ordered: each checks every pointer and size, then copies.

``memcpy2d`` copies ``height`` rows of ``width`` bytes; rows start every ``spitch`` bytes in the source and
every ``dpitch`` bytes in the destination. As in CANN, ``width`` may not exceed either pitch, and ``kind`` is
honoured: 1 (host to device), 2 (device to host), 3 (device to device) or 4 (decided from the addresses); other
kinds are ACL_ERROR_INVALID_PARAM. The whole span of each side must lie inside one known allocation. A zero
``width`` or ``height`` copies nothing.

``memcpy`` / ``memcpy_async`` / ``memset`` / ``memset_async`` follow the overrun rule (``memory.region_within``):
a range that starts inside an allocation but runs past its end is cut at that end, with one WARNING, and the
copy moves only the bytes that fit on both sides. The 2D copies keep the strict check (their spans are computed
from pitches, where a mistake is not a small overrun).

A stream-ordered copy is checked when it is enqueued, and the regions it touches are kept alive until the
stream gets there (a free in between only unregisters the address, see ``memory``).
"""

from __future__ import annotations

import numpy as np

from openacl import dtypes
from openacl.dtypes import AclDataType
from openacl.errors import AclCode, AclError
from openacl.runtime import checker, memory
from openacl.runtime.memory import Kind, Region, region_for, space
from openacl.runtime.sched.stream import Stream
from openacl.runtime.sched.task import work_task

_INVALID = AclCode.ACL_ERROR_INVALID_PARAM
ACL_MEMCPY_HOST_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 0, 1, 2
ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEFAULT, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE = 3, 4, 5
ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE = 6, 7

# What each memcpy kind requires of (src, dst): True = device memory, False = host memory, None = either.
_COPY_SIDES: dict[int, tuple[bool | None, bool | None]] = {
    ACL_MEMCPY_HOST_TO_HOST: (False, False),
    ACL_MEMCPY_HOST_TO_DEVICE: (False, True),
    ACL_MEMCPY_DEVICE_TO_HOST: (True, False),
    ACL_MEMCPY_DEVICE_TO_DEVICE: (True, True),
    ACL_MEMCPY_DEFAULT: (None, None),
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: (False, True),
    ACL_MEMCPY_INNER_DEVICE_TO_DEVICE: (True, True),
    ACL_MEMCPY_INTER_DEVICE_TO_DEVICE: (True, True),
}


SYNC_COPY_KINDS = range(0, 6)  # what aclrtMemcpy's kind translation accepts (H2H .. H2BUF2D)


def _wrong_side(region: Region, addr: int, size: int, want_device: bool | None) -> bool:
    """Whether a copy's side is not the memory its kind names (None: either will do). Registered host memory
    (``host_register``) is both: host memory, and device memory at the same address."""
    if want_device is None:
        return False
    if region.kind is Kind.DEVICE:
        return not want_device
    return want_device and not memory.is_registered(addr, size)


def check_copy(
    dst: int, dst_max: int, src: int, count: int, kind: int, *, sync: bool = False
) -> tuple[Region, Region, int]:
    """Validate a memcpy; return the (dst, src) regions and how many bytes to copy (the overrun rule's cut).

    As CANN does: a synchronous copy (``sync``) only range-checks ``kind`` (0..5) and takes the direction from
    the two addresses; a stream-ordered copy honours ``kind``: each side must be the memory it names, and a
    host-to-host copy is refused with ACL_ERROR_RT_FEATURE_NOT_SUPPORT, as in EP mode (openacl's run mode is
    ACL_HOST). Either way both ranges must lie inside known memory.
    """
    if sync:
        if kind not in SYNC_COPY_KINDS:
            raise AclError(_INVALID, f"memcpy kind {kind} is not one of 0..5")
        sides: tuple[bool | None, bool | None] | None = (None, None)
    else:
        sides = _COPY_SIDES.get(kind)
        if sides is None:
            raise AclError(_INVALID, f"memcpy kind {kind} is not one of 0..7")
    if count < 0 or dst_max < 0:
        raise AclError(_INVALID, f"negative size (count {count}, dst_max {dst_max})")
    if count > dst_max:
        raise AclError(_INVALID, f"count {count} is larger than dst_max {dst_max}")
    dst_region, dst_fit = memory.region_within(dst, count, "memcpy destination", write=True)
    src_region, src_fit = memory.region_within(src, count, "memcpy source")
    for name, region, addr, want_device in (
        ("source", src_region, src, sides[0]),
        ("destination", dst_region, dst, sides[1]),
    ):
        if _wrong_side(region, addr, count, want_device):
            where = "device" if want_device else "host"
            raise AclError(_INVALID, f"memcpy kind {kind}: {name} must be {where} memory, not {region.kind.value}")
    if not sync and kind == ACL_MEMCPY_HOST_TO_HOST:
        raise AclError(
            AclCode.ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "an asynchronous host-to-host copy is not supported in EP mode"
        )
    return dst_region, src_region, min(dst_fit, src_fit)


def check_set(addr: int, max_count: int, count: int) -> tuple[Region, int]:
    if count < 0 or max_count < 0:
        raise AclError(_INVALID, f"negative size (count {count}, max_count {max_count})")
    if count > max_count:
        raise AclError(_INVALID, f"count {count} is larger than max_count {max_count}")
    return memory.region_within(addr, count, "memset address", write=True)


def memcpy(dst: int, dst_max: int, src: int, count: int, kind: int) -> None:
    dst_region, src_region, count = check_copy(dst, dst_max, src, count, kind, sync=True)
    if checker.enabled:
        if not checker.on_host_access("memcpy", [(src, count)], [(dst, count)]):
            memory.note_read(src, count, "memcpy")
        memory.note_write(dst, count)
    memory.move(dst, src, count, dst_region, src_region)  # the regions pin both ranges until the copy is done


def memset(addr: int, max_count: int, value: int, count: int) -> None:
    region, count = check_set(addr, max_count, count)
    if checker.enabled:
        checker.on_host_access("memset", writes=[(addr, count)])
        memory.note_write(addr, count)
    memory.fill(addr, value, count, region)


def _check_source_still_allocated(what: str, region: Region) -> None:
    """At run time: a source freed after the copy was checked is a failed task (CANN: a device memory error), as a
    freed destination is (``memory.task_write_region``). The bytes themselves are still alive (the task pins
    them), so the check, not the copy, is what protects the program."""
    if region.kind is not Kind.USER and not space.holds(region):
        if checker.enabled:
            checker.on_bad_access(region.addr, region.size, what)
        raise AclError(
            AclCode.ACL_ERROR_RT_DEVICE_MEM_ERROR,
            f"{what}: {region.kind.value} memory at {region.addr:#x} was freed before the stream reached it",
        )


def enqueue_copy(stream: Stream, dst: int, dst_max: int, src: int, count: int, kind: int) -> None:
    """Check now, copy when the stream gets there; the regions stay alive until then, and a region freed in
    between fails the task instead of being copied."""
    dst_region, src_region, count = check_copy(dst, dst_max, src, count, kind)
    at = checker.site() if checker.enabled else None
    if checker.enabled:
        checker.on_task(stream, "memcpy_async", [(src, count)], [(dst, count)])

    def work() -> None:
        _check_source_still_allocated("memcpy_async", src_region)
        if checker.enabled:
            memory.note_read(src, count, "memcpy_async", at)
        target = memory.task_write_region(dst, count, "memcpy_async", dst_region)
        memory.move(dst, src, count, target, src_region)

    stream.enqueue(work_task("memcpy_async", work))


def enqueue_fill(stream: Stream, addr: int, max_count: int, value: int, count: int) -> None:
    region, count = check_set(addr, max_count, count)
    if checker.enabled:
        checker.on_task(stream, "memset_async", [], [(addr, count)])

    def work() -> None:
        memory.fill(addr, value, count, memory.task_write_region(addr, count, "memset_async", region))

    stream.enqueue(work_task("memset_async", work))


# ----- two-dimensional copies -----


MEMCPY2D_KINDS = {
    ACL_MEMCPY_HOST_TO_DEVICE: (False, True),
    ACL_MEMCPY_DEVICE_TO_HOST: (True, False),
    ACL_MEMCPY_DEVICE_TO_DEVICE: (True, True),
    ACL_MEMCPY_DEFAULT: (None, None),
}


def _span(pitch: int, width: int, height: int) -> int:
    return 0 if width == 0 or height == 0 else (height - 1) * pitch + width


def check_copy2d(
    dst: int, dpitch: int, src: int, spitch: int, width: int, height: int, kind: int
) -> tuple[Region, Region]:
    sides = MEMCPY2D_KINDS.get(kind)
    if sides is None:
        raise AclError(_INVALID, f"memcpy2d kind {kind} is not one of 1..4")
    if width > dpitch or width > spitch:
        raise AclError(_INVALID, f"width {width} is larger than a pitch (dpitch {dpitch}, spitch {spitch})")
    dst_region = region_for(dst, _span(dpitch, width, height), "destination", write=True)
    src_region = region_for(src, _span(spitch, width, height), "source")
    for name, region, addr, span, want_device in (
        ("source", src_region, src, _span(spitch, width, height), sides[0]),
        ("destination", dst_region, dst, _span(dpitch, width, height), sides[1]),
    ):
        if _wrong_side(region, addr, span, want_device):
            where = "device" if want_device else "host"
            raise AclError(_INVALID, f"memcpy2d kind {kind}: {name} must be {where} memory, not {region.kind.value}")
    return dst_region, src_region


def copy2d(
    dst: int, dpitch: int, src: int, spitch: int, width: int, height: int, dst_pin: Region, src_pin: Region
) -> None:
    """Row by row, inside the two pinned regions that hold each side's whole span."""
    if width == 0:
        return
    for row in range(height):
        memory.move(dst + row * dpitch, src + row * spitch, width, dst_pin, src_pin)


def _rows(addr: int, pitch: int, width: int, height: int) -> list[tuple[int, int]]:
    """openacl check: the ranges a 2D copy touches on one side (one, when its rows are contiguous)."""
    if width == pitch or height <= 1:
        return [(addr, _span(pitch, width, height))]
    return [(addr + row * pitch, width) for row in range(height)]


def memcpy2d(dst: int, dpitch: int, src: int, spitch: int, width: int, height: int, kind: int) -> None:
    dst_region, src_region = check_copy2d(dst, dpitch, src, spitch, width, height, kind)
    if checker.enabled:
        reads, writes = _rows(src, spitch, width, height), _rows(dst, dpitch, width, height)
        if not checker.on_host_access("memcpy2d", reads, writes):
            memory.note_read(src, _span(spitch, width, height), "memcpy2d")
        memory.note_write(dst, _span(dpitch, width, height))
    copy2d(dst, dpitch, src, spitch, width, height, dst_region, src_region)


def enqueue_copy2d(
    stream: Stream, dst: int, dpitch: int, src: int, spitch: int, width: int, height: int, kind: int
) -> None:
    """Check now, copy when the stream gets there (a region freed in between fails the task, as for memcpy)."""
    dst_region, src_region = check_copy2d(dst, dpitch, src, spitch, width, height, kind)
    at = checker.site() if checker.enabled else None
    if checker.enabled:
        checker.on_task(stream, "memcpy2d_async", _rows(src, spitch, width, height), _rows(dst, dpitch, width, height))

    def work() -> None:
        _check_source_still_allocated("memcpy2d_async", src_region)
        if checker.enabled:
            memory.note_read(src, _span(spitch, width, height), "memcpy2d_async", at)
        target = memory.task_write_region(dst, _span(dpitch, width, height), "memcpy2d_async", dst_region)
        copy2d(dst, dpitch, src, spitch, width, height, target, src_region)

    stream.enqueue(work_task("memcpy2d_async", work))


# ----- reductions (aclrtReduceAsync): a copy that combines with what the destination holds -----

ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX = 10, 11
ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN, ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL = 12, 13
_REDUCERS = {
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM: np.add,
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX: np.maximum,
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN: np.minimum,
}
# The element types SDMA reduces (what HCCL hands it): int8/16/32, float16/32, bfloat16.
_REDUCE_TYPES = {
    AclDataType.ACL_INT8: np.dtype(np.int8),
    AclDataType.ACL_INT16: np.dtype(np.int16),
    AclDataType.ACL_INT32: np.dtype(np.int32),
    AclDataType.ACL_FLOAT16: np.dtype(np.float16),
    AclDataType.ACL_FLOAT: np.dtype(np.float32),
}


def enqueue_reduce(stream: Stream, dst: int, src: int, count: int, kind: int, data_type: int, reserve: int) -> None:
    """``dst[i] = op(dst[i], src[i])`` over ``count`` bytes of ``data_type`` elements, when the stream gets there.

    Integers wrap and floats follow IEEE (inf, nan), as CPU arithmetic does. EQUAL, whose result the notes do not
    describe, is ACL_ERROR_RT_FEATURE_NOT_SUPPORT rather than a guess.
    """
    if kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL:
        raise AclError(AclCode.ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "reduce kind EQUAL(13)")
    reducer = _REDUCERS.get(kind)
    if reducer is None:
        raise AclError(_INVALID, f"reduce kind {kind} is not SUM(10), MAX(11), MIN(12) or EQUAL(13)")
    # bfloat16 is looked up here, not in the table: reading it imports ml_dtypes, which only bf16 needs.
    dtype = dtypes.BFLOAT16 if data_type == AclDataType.ACL_BF16 else _REDUCE_TYPES.get(data_type)  # type: ignore
    if dtype is None:
        raise AclError(_INVALID, f"data type {data_type} is not int8, int16, int32, float16, float or bfloat16")
    if reserve != 0:
        raise AclError(_INVALID, "reserve must be 0")
    if count <= 0 or count % dtype.itemsize:
        raise AclError(_INVALID, f"count {count} is not a positive multiple of the {dtype.itemsize}-byte element")
    dst_region = region_for(dst, count, "destination", write=True)
    src_region = region_for(src, count, "source")
    if checker.enabled:
        checker.on_task(stream, "reduce_async", [(src, count), (dst, count)], [(dst, count)])

    def work() -> None:
        _check_source_still_allocated("reduce_async", src_region)
        target = memory.task_write_region(dst, count, "reduce_async", dst_region)
        a = np.frombuffer(memory.read_bytes(dst, count, "destination"), dtype)
        b = np.frombuffer(memory.read_bytes(src, count, "source"), dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            result = reducer(a, b).astype(dtype)
        memory.task_write(dst, result, "reduce_async", target)

    stream.enqueue(work_task("reduce_async", work))
