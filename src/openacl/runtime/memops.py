"""Two-dimensional copies and cache maintenance, checked like every other access to memory.

``memcpy2d`` copies ``height`` rows of ``width`` bytes; rows start every ``spitch`` bytes in the source and
every ``dpitch`` bytes in the destination. As in CANN, ``width`` may not exceed either pitch, and ``kind`` is
honoured: 1 (host to device), 2 (device to host), 3 (device to device) or 4 (decided from the addresses); other
kinds are ACL_ERROR_INVALID_PARAM. The whole span of each side must lie inside one known allocation. A zero
``width`` or ``height`` copies nothing.

``mem_flush`` / ``mem_invalidate`` write back / drop the CPU cache lines of a range in CANN's RC mode. Host and
device memory are the same coherent memory here, so they only check the range.
"""

from __future__ import annotations

from openacl.errors import AclCode, AclError
from openacl.runtime import copies as _copies
from openacl.runtime import memory as _memory
from openacl.runtime.sched.stream import Stream
from openacl.runtime.sched.task import work_task

_INVALID = AclCode.ACL_ERROR_INVALID_PARAM
MEMCPY2D_KINDS = {
    _copies.ACL_MEMCPY_HOST_TO_DEVICE: (False, True),
    _copies.ACL_MEMCPY_DEVICE_TO_HOST: (True, False),
    _copies.ACL_MEMCPY_DEVICE_TO_DEVICE: (True, True),
    _copies.ACL_MEMCPY_DEFAULT: (None, None),
}


def _span(pitch: int, width: int, height: int) -> int:
    return 0 if width == 0 or height == 0 else (height - 1) * pitch + width


def check_copy2d(
    dst: int, dpitch: int, src: int, spitch: int, width: int, height: int, kind: int
) -> tuple[_memory.Region, _memory.Region]:
    sides = MEMCPY2D_KINDS.get(kind)
    if sides is None:
        raise AclError(_INVALID, f"memcpy2d kind {kind} is not one of 1..4")
    if width > dpitch or width > spitch:
        raise AclError(_INVALID, f"width {width} is larger than a pitch (dpitch {dpitch}, spitch {spitch})")
    dst_region = _memory.region_for(dst, _span(dpitch, width, height), "destination", write=True)
    src_region = _memory.region_for(src, _span(spitch, width, height), "source")
    for name, region, want_device in (("source", src_region, sides[0]), ("destination", dst_region, sides[1])):
        if want_device is not None and (region.kind is _memory.Kind.DEVICE) != want_device:
            where = "device" if want_device else "host"
            raise AclError(_INVALID, f"memcpy2d kind {kind}: {name} must be {where} memory, not {region.kind.value}")
    return dst_region, src_region


def copy2d(dst: int, dpitch: int, src: int, spitch: int, width: int, height: int) -> None:
    if width == 0:
        return
    for row in range(height):
        _copies.copy(dst + row * dpitch, src + row * spitch, width)


def memcpy2d(dst: int, dpitch: int, src: int, spitch: int, width: int, height: int, kind: int) -> None:
    check_copy2d(dst, dpitch, src, spitch, width, height, kind)
    copy2d(dst, dpitch, src, spitch, width, height)


def _enqueue(stream: Stream, name: str, work) -> None:
    """The one place this module queues work on a stream."""
    stream.enqueue(work_task(name, work))


def enqueue_copy2d(
    stream: Stream, dst: int, dpitch: int, src: int, spitch: int, width: int, height: int, kind: int
) -> None:
    """Check now, copy when the stream gets there; the regions stay alive until then."""
    dst_region, src_region = check_copy2d(dst, dpitch, src, spitch, width, height, kind)

    def work(keep=(dst_region.keep, src_region.keep)) -> None:
        copy2d(dst, dpitch, src, spitch, width, height)

    _enqueue(stream, "memcpy2d_async", work)


def check_cache_range(addr: int, size: int) -> None:
    """``mem_flush`` / ``mem_invalidate``: the range must be known memory; there is no cache to maintain."""
    if size == 0:
        raise AclError(_INVALID, "size 0")
    _memory.region_for(addr, size, "address")
