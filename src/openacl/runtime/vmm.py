"""Virtual-memory management: reserved address ranges, physical memory, and mappings between them.

``reserve_mem_address`` reserves a real range of the process's address space (mapped with no access, so nothing
else lands there); ``malloc_physical`` makes physical memory (an anonymous memory file); ``map_mem`` maps a part of
it at an address of a reservation, which from then on is device memory of the runtime's address space: memcpy,
memset and ``acl.util.ptr_to_bytes`` reach it through ``runtime/memory.py``'s checks like any allocation. One
physical memory mapped at two addresses is the same bytes at both, as on the device.

Guarantees (those of ``memory.py`` kept for mapped memory):
- Nothing is unmapped while anything uses it. A mapping's region keeps the :class:`_Mapping`, which keeps its
  physical memory and its reservation; ``unmap_mem`` only forgets the address, and the pages return to "no access"
  when the last user (a numpy view, an asynchronous copy) lets go. A reservation is returned to the system only
  when its last mapping object is gone. So no access can fault, whatever the order of unmap, free and release.
- A range whose previous mapping is still held by a view cannot be mapped again (INVALID_PARAM): the late
  unmapping of the old one would otherwise take the new one's pages away.
- The finalizers that unmap take no lock (they may run in any thread, under any lock, when a view dies).
- In a forked child every mapping becomes private (copy-on-write): the child's writes never reach the parent.

Invariant: ``_lock`` guards the tables and the mapped regions' presence in ``memory.space`` (whose lock is taken
after it, never before); it is held only to change them, never across a system call that maps memory into a range
another thread could be using.
"""

from __future__ import annotations

import ctypes
import itertools
import mmap
import os
import weakref
from dataclasses import dataclass

from openacl import atfork
from openacl.errors import AclCode, AclError
from openacl.runtime import checker
from openacl.runtime import device as _device
from openacl.runtime import memory as _memory

_INVALID = AclCode.ACL_ERROR_INVALID_PARAM
PAGE = mmap.PAGESIZE
RECOMMENDED_GRANULARITY = 2 * 1024 * 1024  # CANN's huge page: sizes rounded to it also map with fewer entries
ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED = 0, 1
ACL_MEM_LOCATION_TYPE_HOST, ACL_MEM_LOCATION_TYPE_DEVICE = 0, 1

# Linux's mmap flags (the mmap module lacks MAP_FIXED).
_PROT_NONE, _PROT_RW = 0, mmap.PROT_READ | mmap.PROT_WRITE
_MAP_SHARED, _MAP_PRIVATE, _MAP_FIXED, _MAP_ANONYMOUS, _MAP_NORESERVE = 0x01, 0x02, 0x10, 0x20, 0x4000
_MAP_FAILED = ctypes.c_void_p(-1).value
# A shareable handle: the exporter's pid, the memory file's descriptor there, and the tag in the file's name (so a
# descriptor number reused for other memory is not mistaken for it): 22 + 22 + 20 bits.
_PID_BITS, _FD_BITS, _TAG_BITS = 22, 22, 20
_ADDRESS_SPACE = 1 << 47  # a user address space on Linux/x86-64 and arm64 (4-level tables)
_MEMFD_PREFIX = "openacl-physical-"

# The process's own symbols, libc's among them: ctypes.util.find_library would run ldconfig in a subprocess at
# every start.
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
_libc.munmap.restype = ctypes.c_int
_libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)


def _mmap(addr: int, size: int, prot: int, flags: int, fd: int = -1, offset: int = 0) -> int:
    result = _libc.mmap(addr or None, size, prot, flags, fd, offset)
    if result is None or result == _MAP_FAILED:
        errno = ctypes.get_errno()
        raise AclError(AclCode.ACL_ERROR_RT_MEMORY_ALLOCATION, f"mmap of {size} bytes failed: {os.strerror(errno)}")
    return result


def _no_access(addr: int, size: int) -> None:
    """Finalizer: the range goes back to reserved, no-access pages (no lock: see the module's guarantees)."""
    _libc.mmap(addr, size, _PROT_NONE, _MAP_PRIVATE | _MAP_ANONYMOUS | _MAP_NORESERVE | _MAP_FIXED, -1, 0)


def _unmap(addr: int, size: int) -> None:
    """Finalizer: the reservation goes back to the system."""
    _libc.munmap(addr, size)


def _close(fd: int) -> None:
    os.close(fd)


class _Reservation:
    def __init__(self, size: int, alignment: int, hint: int) -> None:
        span = size + (alignment - PAGE if alignment > PAGE else 0)
        base = _mmap(hint, span, _PROT_NONE, _MAP_PRIVATE | _MAP_ANONYMOUS | _MAP_NORESERVE)
        start = -(-base // alignment) * alignment if alignment > PAGE else base
        if start > base:
            _libc.munmap(base, start - base)
        if base + span > start + size:
            _libc.munmap(start + size, base + span - start - size)
        self.addr, self.size = start, size
        self.mappings: weakref.WeakSet[_Mapping] = weakref.WeakSet()  # every mapping object still alive
        weakref.finalize(self, _unmap, start, size).atexit = False


class _Physical:
    """Physical memory: an anonymous memory file, named with a random tag that its shareable handle carries."""

    def __init__(self, size: int, device_id: int, fd: int | None = None, tag: int | None = None) -> None:
        """A new memory file of ``size`` bytes, or (``fd``, ``tag``) one imported from another process."""
        self.tag = int.from_bytes(os.urandom(4), "little") >> (32 - _TAG_BITS) if tag is None else tag
        self.fd = os.memfd_create(f"{_MEMFD_PREFIX}{self.tag}", os.MFD_CLOEXEC) if fd is None else fd
        self.finalizer = weakref.finalize(self, _close, self.fd)
        self.finalizer.atexit = False
        if fd is None:
            os.ftruncate(self.fd, size)
        self.size, self.device_id = size, device_id


@dataclass(eq=False)
class _Mapping:
    """Keeps the pages of ``[addr, addr + size)`` mapped to ``physical`` while anything references it."""

    addr: int
    size: int
    offset: int
    physical: _Physical
    reservation: _Reservation

    def __post_init__(self) -> None:
        _mmap(self.addr, self.size, _PROT_RW, _MAP_SHARED | _MAP_FIXED, self.physical.fd, self.offset)
        weakref.finalize(self, _no_access, self.addr, self.size).atexit = False
        self.reservation.mappings.add(self)


_lock = atfork.lock()
_reservations: dict[int, _Reservation] = {}  # start address -> reservation not released
_physicals: dict[int, _Physical] = {}  # handle -> physical memory not freed
_mappings: dict[int, _Mapping] = {}  # start address -> mapping not unmapped
# Reservation start -> the regions its mapped memory is known as: one per run of mappings that touch, so a copy
# may cross from one mapping into the next. Kept here, not on the reservation: a region keeps its mappings, which
# keep their reservation, and a cycle would leave the pages mapped until a garbage collection.
_runs: dict[int, list[_memory.Region]] = {}
_handles = itertools.count(1)


def _page_multiple(value: int, what: str) -> None:
    if value <= 0 or value % PAGE:
        raise AclError(_INVALID, f"{what} {value} is not a positive multiple of the granularity {PAGE}")


def granularity(location_type: int, device_id: int, option: int) -> int:
    """The size and offset unit of physical memory and mappings: the page (minimum), 2 MiB (recommended)."""
    physical_device(location_type, device_id)
    if option == ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM:
        return PAGE
    if option == ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED:
        return RECOMMENDED_GRANULARITY
    raise AclError(_INVALID, f"granularity option {option} is not MINIMUM(0) or RECOMMENDED(1)")


def physical_device(location_type: int, device_id: int) -> int:
    """The device an aclrtPhysicalMemProp's location names (it must be a device)."""
    if location_type != ACL_MEM_LOCATION_TYPE_DEVICE:
        raise AclError(_INVALID, f"location type {location_type} is not ACL_MEM_LOCATION_TYPE_DEVICE(1)")
    _device.get(device_id)
    return device_id


def reserve(size: int, alignment: int, expect_ptr: int, flags: int) -> int:
    """A reserved range of ``size`` bytes aligned to ``alignment`` (0: the page), at ``expect_ptr`` if free."""
    _page_multiple(size, "size")
    if alignment and (alignment & (alignment - 1)):
        raise AclError(_INVALID, f"alignment {alignment} is not a power of two")
    if size + alignment > _ADDRESS_SPACE:
        raise AclError(_INVALID, f"{size} bytes aligned to {alignment} is more than an address space holds")
    if expect_ptr % PAGE:
        raise AclError(_INVALID, f"expected address {expect_ptr:#x} is not page-aligned")
    if flags not in (0, 1):  # 0: normal pages, 1: huge pages; both reserve the same range here
        raise AclError(_INVALID, f"flags {flags} are not 0 or 1")
    reservation = _Reservation(size, max(alignment, PAGE), expect_ptr)
    with _lock:
        _reservations[reservation.addr] = reservation
    if checker.enabled:
        checker.on_create("virtual address range", reservation.addr, size)
    return reservation.addr


def _stale(kind: str, key: int, message: str) -> AclError:
    """The error for a release of what does not exist; under ``openacl check``, a double free if it was released
    before (the handle tables report their stale handles the same way)."""
    if checker.enabled:
        checker.on_stale_handle(kind, key, destroying=True)
    return AclError(_INVALID, message)


def release(addr: int) -> None:
    with _lock:
        reservation = _reservations.get(addr)
        if reservation is not None:
            if _runs.get(addr):
                raise AclError(_INVALID, f"the range at {addr:#x} still has mappings: unmap them first")
            del _reservations[addr]
    if reservation is None:  # (the checker is told after the lock)
        raise _stale("virtual address range", addr, f"{addr:#x} is not the start of a reserved range")
    if checker.enabled:
        checker.on_destroy("virtual address range", addr)


def malloc_physical(size: int, location_type: int, device_id: int, flags: int) -> int:
    physical_device(location_type, device_id)
    _page_multiple(size, "size")
    if flags != 0:
        raise AclError(_INVALID, f"flags {flags} must be 0")
    if size > _memory.device_memory_limit():
        raise AclError(AclCode.ACL_ERROR_RT_MEMORY_ALLOCATION, f"{size} bytes is more than a device has")
    physical = _Physical(size, device_id)
    with _lock:
        handle = _memory_handle()
        _physicals[handle] = physical
    if checker.enabled:
        checker.on_create("physical memory", handle)  # a handle, not an address: no extent
    return handle


def _memory_handle() -> int:
    return 0x0AC2_0000_0000 + next(_handles) * 16


def free_physical(handle: int) -> None:
    """Forget the handle; memory still mapped stays until it is unmapped."""
    with _lock:
        physical = _physicals.pop(handle, None)
    if physical is None:
        raise _stale("physical memory", handle, f"physical memory {handle:#x} does not exist (never made or freed)")
    if checker.enabled:
        checker.on_destroy("physical memory", handle)


def map_mem(addr: int, size: int, offset: int, handle: int, flags: int) -> None:
    _page_multiple(size, "size")
    if addr % PAGE or offset % PAGE:
        raise AclError(_INVALID, f"address {addr:#x} and offset {offset} must be multiples of {PAGE}")
    if flags != 0:
        raise AclError(_INVALID, f"flags {flags} must be 0")
    with _lock:
        physical = _physicals.get(handle)
        if physical is None:
            raise AclError(_INVALID, f"physical memory {handle:#x} does not exist (never made or freed)")
        if offset + size > physical.size:
            raise AclError(_INVALID, f"offset {offset} + size {size} is past the {physical.size} physical bytes")
        reservation = next(
            (r for r in _reservations.values() if r.addr <= addr and addr + size <= r.addr + r.size), None
        )
        if reservation is None:
            raise AclError(_INVALID, f"{addr:#x} (+{size} bytes) is not inside one reserved range")
        conflict = _overlap_locked(reservation, addr, size)
        if conflict:
            raise AclError(_INVALID, f"{addr:#x} (+{size} bytes) overlaps {conflict}")
        # The range is reserved, unmapped and unused: no other thread can reach it while it is mapped here.
        _mappings[addr] = _Mapping(addr, size, offset, physical, reservation)
        _rebuild_runs_locked(reservation)
    if checker.enabled:
        checker.on_create("memory mapping", addr, size)


def _overlap_locked(reservation: _Reservation, addr: int, size: int) -> str:
    """What of ``reservation`` overlaps ``[addr, addr + size)``, or "". A helper, so that no frame of a raised error
    refers to a mapping: an error's traceback, kept for ``get_recent_err_msg``, would keep its pages mapped."""
    for live in list(reservation.mappings):
        if live.addr < addr + size and addr < live.addr + live.size:
            still = "is mapped" if _mappings.get(live.addr) is live else "is still in use by a view"
            return f"{live.addr:#x}, which {still}"
    return ""


def _rebuild_runs_locked(reservation: _Reservation) -> None:
    """Make the regions of ``reservation``'s mapped memory match its mappings. The new regions are added before
    the old ones go, so an access racing a map or unmap of another part of the range always finds its bytes."""
    end = reservation.addr + reservation.size
    mapped = sorted((m for m in _mappings.values() if reservation.addr <= m.addr < end), key=lambda m: m.addr)
    groups: list[list[_Mapping]] = []
    for mapping in mapped:
        if groups and groups[-1][-1].addr + groups[-1][-1].size == mapping.addr:
            groups[-1].append(mapping)
        else:
            groups.append([mapping])
    runs = [
        _memory.Region(
            group[0].addr,
            group[-1].addr + group[-1].size - group[0].addr,
            _memory.Kind.DEVICE,
            tuple(group),
            device_id=group[0].physical.device_id,
            mapped=True,
        )
        for group in groups
    ]
    for region in runs:
        _memory.space.add(region)
    for region in _runs.pop(reservation.addr, []):
        _memory.space.discard(region)
    if runs:
        _runs[reservation.addr] = runs


def unmap_mem(addr: int) -> None:
    with _lock:
        mapping = _mappings.pop(addr, None)
        if mapping is not None:
            _rebuild_runs_locked(mapping.reservation)
    if mapping is None:
        raise _stale("memory mapping", addr, f"{addr:#x} is not the start of a mapping")
    if checker.enabled:
        checker.on_destroy("memory mapping", addr)


# ----- sharing physical memory between processes -----

ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT = 0


def bare_tgid() -> int:
    """The process id a device sees (``device_get_bare_tgid``): this process's own, no container in between."""
    return os.getpid()


def export_shareable(handle: int, handle_type: int, flags: int) -> int:
    """A number another process (or this one) imports to map the same physical memory."""
    if handle_type != ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT or flags != 0:
        raise AclError(_INVALID, f"handle type {handle_type} and flags {flags} must be 0")
    with _lock:
        physical = _physicals.get(handle)
    if physical is None:
        raise AclError(_INVALID, f"physical memory {handle:#x} does not exist (never made or freed)")
    pid = os.getpid()
    if pid >> _PID_BITS or physical.fd >> _FD_BITS:
        raise AclError(AclCode.ACL_ERROR_RT_MEMORY_ALLOCATION, f"pid {pid} / descriptor {physical.fd} too large")
    return (physical.tag << (_PID_BITS + _FD_BITS)) | (pid << _FD_BITS) | physical.fd


def set_import_pids(shareable: int, pids: list[int]) -> None:
    """CANN's whitelist of importing processes. Kept only as a check of its arguments: any process of the same
    user can open another's memory file, and nothing here could stop it."""
    _split(shareable)
    if not pids or any(not 0 < pid < (1 << 31) for pid in pids):
        raise AclError(_INVALID, f"pids {pids} are not a non-empty list of process ids")


def _split(shareable: int) -> tuple[int, int, int]:
    fd = shareable & ((1 << _FD_BITS) - 1)
    pid = (shareable >> _FD_BITS) & ((1 << _PID_BITS) - 1)
    tag = shareable >> (_PID_BITS + _FD_BITS)
    if pid == 0 or tag >> _TAG_BITS:
        raise AclError(_INVALID, f"{shareable:#x} is not a shareable handle")
    return tag, pid, fd


def import_shareable(shareable: int, device_id: int) -> int:
    """Open the exporter's memory file (through /proc) and make it physical memory of ``device_id`` here."""
    tag, pid, fd = _split(shareable)
    _device.get(device_id)
    path = f"/proc/{pid}/fd/{fd}"
    try:
        name = os.readlink(path)
        if not name.startswith(f"/memfd:{_MEMFD_PREFIX}{tag} "):
            raise FileNotFoundError(name)
        opened = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        raise AclError(_INVALID, f"{shareable:#x}: no such exported memory (freed, or its process is gone)") from None
    physical = _Physical(os.fstat(opened).st_size, device_id, fd=opened, tag=tag)
    with _lock:
        handle = _memory_handle()
        _physicals[handle] = physical
    if checker.enabled:
        checker.on_create("physical memory", handle)  # a handle, not an address: no extent
    return handle


@atfork.at_child
def _private_in_child() -> None:
    """A forked child's mappings become copy-on-write copies, so the child never writes the parent's memory."""
    for mapping in list(_mappings.values()):
        _libc.mmap(mapping.addr, mapping.size, _PROT_RW, _MAP_PRIVATE | _MAP_FIXED, mapping.physical.fd, mapping.offset)


def reset() -> None:
    """Forget every reservation, physical memory and mapping (process reset); each is unmapped once unused."""
    with _lock:
        runs = [region for regions in _runs.values() for region in regions]
        _runs.clear()
        _mappings.clear()
        _physicals.clear()
        _reservations.clear()
    for region in runs:
        _memory.space.discard(region)
