"""``acldvppMalloc`` / ``acldvppFree``: device memory with DVPP's alignment and size rounding (spec §5.1).

DVPP memory is ordinary device memory of the runtime's address space (``acl.rt.memcpy``, ``memset`` and
``get_mem_info`` accept it, and every DVPP operation checks its pointers there), allocated with DVPP's rules:
the start is 128-byte aligned, and the usable size is the request rounded up to 32 bytes plus 32.

Decisions: the region is marked as DVPP's (``Region.owner``), so ``dvpp_free`` refuses memory that did not come
from ``dvpp_malloc`` (``ACL_ERROR_INVALID_PARAM``); DVPP operations accept any known device or host memory
(the 310's "must come from dvpp_malloc" is not enforced, as on the A2 generation). A failed allocation is
``ACL_ERROR_BAD_ALLOC`` (200000), DVPP's code, not the runtime's 207001. The memory is not initialised.
"""

from __future__ import annotations

from openacl.errors import AclCode, AclError
from openacl.media.formats import align_up
from openacl.runtime import checker
from openacl.runtime import device as _device
from openacl.runtime import memory as _memory

START_ALIGNMENT = 128
SIZE_ALIGNMENT = 32
SIZE_PADDING = 32


class _DvppOwner:
    """Marks a device region as DVPP memory."""

    def __repr__(self) -> str:
        return "dvpp"


DVPP = _DvppOwner()


def rounded_size(size: int) -> int:
    return align_up(size, SIZE_ALIGNMENT) + SIZE_PADDING


def dvpp_malloc(size: int, policy: int = 0, device_id: int | None = None) -> int:
    """DVPP memory of the current device (or ``device_id``, from ``dvpp_malloc_with_cfg``'s config)."""
    if size == 0:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, "dvpp_malloc of 0 bytes")
    if device_id is None:
        device_id = _device.current_device().id
    try:
        addr = _memory.malloc(rounded_size(size), policy, device_id, alignment=START_ALIGNMENT)
    except AclError as exc:
        if exc.code != AclCode.ACL_ERROR_RT_MEMORY_ALLOCATION:
            raise
        raise AclError(AclCode.ACL_ERROR_BAD_ALLOC, exc.detail) from None
    region = _memory.region_for(addr, 1, "dvpp memory")
    region.owner = DVPP
    if checker.enabled:
        checker.relabel(region, "dvpp memory")
    return addr


def is_dvpp(addr: int) -> bool:
    region = _memory.space.find(addr, 1)
    return region is not None and region.addr == addr and region.owner is DVPP


def dvpp_free(addr: int) -> None:
    if not is_dvpp(addr):
        if checker.enabled:
            checker.on_bad_free(addr)
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"{addr:#x} is not the start of live dvpp_malloc memory")
    _memory.free(addr)
