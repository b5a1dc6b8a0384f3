"""Memory with real addresses, and the checks that keep every pointer inside memory we know.

Device memory (``malloc``) and pinned host memory (``malloc_host``) are numpy buffers, 64-byte aligned;
their addresses are real, so ``ctypes.string_at`` and ``acl.util.ptr_to_bytes`` read them. Python objects
whose address a program takes (``bytes_to_ptr``, ``numpy_to_ptr``) are registered as host memory too.

Guarantees:
- Every address a copy, memset or view touches lies inside one known region, and a copy never writes into
  read-only memory: a bad pointer or size is ``ACL_ERROR_INVALID_PARAM``, never a segfault.
- Freeing only unregisters an address. The bytes stay alive while anything still uses them (a numpy view
  from ``ptr_to_numpy``, an asynchronous copy in flight), so a use after free cannot crash the process.
- A registered Python object is held until the program drops its last reference to it.
- Every read or write of memory by address goes through this module's access functions, and an access pins the
  region it touches for its whole length (see "Access" below). Nothing else in the package touches memory by
  address (``tests/runtime/test_memory_pinning.py`` greps the package for ctypes' raw access).
- A task writes only inside a live allocation, checked when it writes (``task_write_region``), not when it was
  queued: memory freed in between, or freed and allocated again smaller at the same address, fails the task.
- The overrun rule (``region_within``, for copies and memsets): a range that starts inside a live allocation
  but runs at most 2 MiB past its end is cut at the end, with one WARNING (under ``openacl check``, a finding
  instead), as a device does not fault on a small overrun; a range that starts outside every allocation, or runs
  further, is an error.
"""

from __future__ import annotations

import bisect
import contextlib
import ctypes
import enum
import math
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from openacl import atfork
from openacl.errors import AclCode, AclError
from openacl.log import get_logger
from openacl.runtime import checker

log = get_logger("rt")

ALIGNMENT = 64
# The overrun rule tolerates what a device would not fault on: an overrun that stays within the 2 MiB huge page
# (the granule a device maps memory in) its allocation ends in. A longer one is an error, as before the rule.
TOLERATED_OVERRUN = 2 * 1024 * 1024
MALLOC_POLICIES = range(0, 8)  # HUGE_FIRST .. HUGE1G_ONLY_P2P
_INVALID = AclCode.ACL_ERROR_INVALID_PARAM


class Kind(enum.Enum):
    DEVICE = "device"
    HOST = "host"  # malloc_host
    USER = "user"  # a Python object's own memory (bytes_to_ptr, numpy_to_ptr)

    @property
    def on_host(self) -> bool:
        return self is not Kind.DEVICE


@dataclass(eq=False)
class Region:
    """A range of known memory. ``keep`` holds what keeps the bytes alive."""

    addr: int
    size: int
    kind: Kind
    keep: object
    writable: bool = True
    device_id: int = -1
    owner: object = field(default=None, repr=False)  # the user's object, for USER regions
    mapped: bool = False  # virtual memory that map_mem made: only unmap_mem ends it, never a free
    lent: bool = False  # a loan (``loan``): the runtime's own array, known to user code for one call

    @property
    def end(self) -> int:
        return self.addr + self.size


class AddressSpace:
    """Known regions, sorted by start address.

    Invariant: ``generation`` moves on (under the lock) with every removal of a region (a free, an unmapping, a
    sweep that forgets a registration, a reset) and every addition of a read-only one, loans excepted (below). A
    caller that checked addresses at one generation may take them as checked while the generation is still the same
    (``op.plan``, ``model.plan``): every region it found is still known, with the range, kind and writability it
    had, and a check made now would find what it found.

    Adding a writable region (an allocation, a registration of writable memory, a mapping) does not move it: a
    new region takes nothing from the ones a caller found, and a check meeting it instead of an older one over
    the same bytes (registrations of one Python object's memory may overlap) finds the same answer. So plans
    last across a program's per-iteration registrations (``bytes_to_ptr`` of each new input). Adding a
    read-only region does move it: a check that meets it refuses a write that an older, writable registration
    of the same bytes allowed, so what a caller checked may no longer hold.

    A loan (``Region.lent``) moves it neither when it is added nor when it ends: a loan lies over an array of
    the runtime's own (a dump's tensor or packing buffer, an exception-info record), never over memory the
    program allocated or registered, so it takes nothing from what a caller found there; and no plan keeps a
    loan (one that met a loan is stale at once), so its end takes nothing from a plan either. A dump that lends
    every file's chunks thus leaves the plans of the program's own buffers standing.
    """

    def __init__(self) -> None:
        self._lock = atfork.lock()
        self._starts: list[int] = []
        self._regions: list[Region] = []
        self._user_count = 0
        self._next_sweep = 256
        self.generation = 0

    def add(self, region: Region) -> None:
        swept: list[Region] = []  # let go after the lock: a swept region may hold an object's last reference
        with self._lock:
            if not region.writable and not region.lent:
                self.generation += 1  # see the invariant: a read-only region may shadow a writable one
            i = bisect.bisect_right(self._starts, region.addr)
            self._starts.insert(i, region.addr)
            self._regions.insert(i, region)
            if region.kind is Kind.USER:
                self._user_count += 1
                if self._user_count >= self._next_sweep:
                    swept = self._sweep_locked()
        del swept

    def add_user_once(self, region: Region) -> None:
        """``add`` a USER region, unless this very object is already registered over the same range."""
        with self._lock:
            i = bisect.bisect_left(self._starts, region.addr)
            while i < len(self._starts) and self._starts[i] == region.addr:
                known = self._regions[i]
                if (
                    known.kind is Kind.USER
                    and known.owner is region.owner
                    and known.size == region.size
                    and known.writable == region.writable
                ):
                    return
                i += 1
        self.add(region)

    def _sweep_locked(self) -> list[Region]:
        """Forget USER regions whose object nobody but us references any more; returns the old table, for the caller
        to let go of after the lock (the last reference to such an object, whose finalizer is user code)."""
        keep_starts, keep_regions = [], []
        swept = self._regions
        for start, region in zip(self._starts, self._regions, strict=True):
            # References: region.owner, region.keep (often the same object), and getrefcount's argument.
            ours = 2 + (region.keep is region.owner)
            if region.kind is Kind.USER and sys.getrefcount(region.owner) <= ours:
                continue
            keep_starts.append(start)
            keep_regions.append(region)
        if len(keep_regions) < len(swept):
            self.generation += 1
        self._starts, self._regions = keep_starts, keep_regions
        self._user_count = sum(1 for r in keep_regions if r.kind is Kind.USER)
        self._next_sweep = max(256, 2 * self._user_count)
        return swept

    def remove_start(self, addr: int, kind: Kind) -> Region:
        with self._lock:
            i = bisect.bisect_left(self._starts, addr)
            while i < len(self._starts) and self._starts[i] == addr:
                region = self._regions[i]
                if region.kind is kind and not region.mapped:
                    del self._starts[i], self._regions[i]
                    self.generation += 1
                    return region
                i += 1
        raise AclError(_INVALID, f"{addr:#x} is not the start of a live {kind.value} allocation")

    def holds(self, region: Region) -> bool:
        """Whether exactly this region (by identity) is still known: not freed, not reset away."""
        with self._lock:
            i = bisect.bisect_left(self._starts, region.addr)
            while i < len(self._starts) and self._starts[i] == region.addr:
                if self._regions[i] is region:
                    return True
                i += 1
        return False

    def discard(self, region: Region) -> None:
        """Forget exactly this region (by identity), if it is still known."""
        with self._lock:
            i = bisect.bisect_left(self._starts, region.addr)
            while i < len(self._starts) and self._starts[i] == region.addr:
                if self._regions[i] is region:
                    del self._starts[i], self._regions[i]
                    if not region.lent:  # see the invariant
                        self.generation += 1
                    if region.kind is Kind.USER:
                        self._user_count -= 1
                    return
                i += 1

    def find(self, addr: int, size: int) -> Region | None:
        """The region holding ``[addr, addr + size)``, or None."""
        with self._lock:
            i = bisect.bisect_right(self._starts, addr) - 1
            # Regions may overlap (views of one array registered one by one), so the region holding addr need
            # not be the nearest start: look back until one holds it (usually the first one tried).
            for j in range(i, -1, -1):
                region = self._regions[j]
                if region.addr <= addr and addr + size <= region.end:
                    return region
        return None

    def regions(self) -> list[Region]:
        with self._lock:
            return list(self._regions)

    def clear(self) -> int:
        """Forget every region (process reset); returns how many there were."""
        with self._lock:
            self.generation += 1
            count = len(self._regions)
            dropped, self._starts, self._regions = self._regions, [], []
            self._user_count = 0
            self._next_sweep = 256
        del dropped  # after the lock: a region may hold an object's last reference (its finalizer is user code)
        return count

    def remove_device(self, device_id: int) -> int:
        """Forget every allocation of a device (reset); returns how many."""
        with self._lock:
            self.generation += 1
            keep = [
                (s, r)
                for s, r in zip(self._starts, self._regions, strict=True)
                if not (r.kind is Kind.DEVICE and r.device_id == device_id)
            ]
            removed = [r for r in self._regions if r.kind is Kind.DEVICE and r.device_id == device_id]
            self._starts = [s for s, _ in keep]
            self._regions = [r for _, r in keep]
        if checker.enabled:
            checker.on_reclaimed(removed)
        return len(removed)


space = AddressSpace()


def device_memory_limit() -> int:
    """Bytes each simulated device may hand out (``OPENACL_DEVICE_MEMORY_MB``, default 32 GiB)."""
    return int(os.environ.get("OPENACL_DEVICE_MEMORY_MB", "32768")) * 1024 * 1024


def address_of(buffer: np.ndarray) -> int:
    return buffer.__array_interface__["data"][0]


def _allocate(size: int, kind: Kind, device_id: int, alignment: int = ALIGNMENT) -> Region:
    if size <= 0:
        raise AclError(_INVALID, f"size {size} must be positive")
    if size > device_memory_limit():
        raise AclError(AclCode.ACL_ERROR_RT_MEMORY_ALLOCATION, f"{size} bytes is more than a device has")
    try:
        raw = np.empty(size + alignment, np.uint8)
    except MemoryError:
        raise AclError(AclCode.ACL_ERROR_RT_MEMORY_ALLOCATION, f"out of memory allocating {size} bytes") from None
    offset = -address_of(raw) % alignment
    buffer = raw[offset : offset + size]
    region = Region(address_of(buffer), size, kind, buffer, device_id=device_id)
    space.add(region)
    if checker.enabled:
        checker.on_alloc(region, f"{kind.value} memory", region.addr, size, device_id)
    return region


def device_memory_used(device_id: int) -> int:
    """Bytes allocated on a device and not freed."""
    return sum(r.size for r in space.regions() if r.kind is Kind.DEVICE and r.device_id == device_id)


# aclrtMemAttr: 0 DDR, 1 HBM, 2..5 their huge/normal pages, 6..9 P2P, 10/11 1G pages, 12..17 the same kinds
# without naming DDR or HBM. The simulated device has one pool of memory, not split by page size; P2P and 1G
# pages it does not have (an attribute the hardware lacks reads as free = total = 0, as in CANN).
MEM_ATTRS = range(0, 18)
_POOL_MEM_ATTRS = frozenset({0, 1, 2, 3, 4, 5, 12, 13})


def mem_info(device_id: int, attr: int) -> tuple[int, int]:
    """``aclrtGetMemInfo``: (free, total) bytes of ``attr`` memory on the device; total is the simulated size."""
    if attr not in MEM_ATTRS:
        raise AclError(_INVALID, f"memory attribute {attr} is not one of 0..17")
    if attr not in _POOL_MEM_ATTRS:
        return 0, 0
    total = device_memory_limit()
    return max(total - device_memory_used(device_id), 0), total


def malloc(size: int, policy: int, device_id: int, alignment: int = ALIGNMENT) -> int:
    """Device memory starting on an ``alignment``-byte boundary (64 unless a caller, such as DVPP, needs more)."""
    if policy not in MALLOC_POLICIES:
        raise AclError(_INVALID, f"malloc policy {policy} is not one of 0..7")
    used = device_memory_used(device_id)
    if used + size > device_memory_limit():
        raise AclError(AclCode.ACL_ERROR_RT_MEMORY_ALLOCATION, f"device {device_id} has no {size} bytes left")
    return _allocate(size, Kind.DEVICE, device_id, alignment).addr


def free(addr: int) -> None:
    _free(addr, Kind.DEVICE)


def malloc_host(size: int) -> int:
    return _allocate(size, Kind.HOST, -1).addr


def free_host(addr: int) -> None:
    _free(addr, Kind.HOST)


def _free(addr: int, kind: Kind) -> None:
    try:
        region = space.remove_start(addr, kind)
    except AclError:
        if checker.enabled:
            checker.on_bad_free(addr)
        raise
    if checker.enabled:
        checker.on_free(region)


def region_for(addr: int, size: int, what: str, *, write: bool = False) -> Region:
    """The region holding ``[addr, addr + size)``; raises INVALID_PARAM naming ``what`` otherwise."""
    if size < 0:
        raise AclError(_INVALID, f"{what}: negative size {size}")
    region = space.find(addr, size)
    if region is None:
        if checker.enabled:
            _check_bad_range(addr, size, what)
        raise AclError(_INVALID, f"{what} {addr:#x} (+{size} bytes) is not inside any allocation")
    if write and not region.writable:
        raise AclError(_INVALID, f"{what} {addr:#x} is read-only memory")
    return region


def _check_bad_range(addr: int, size: int, what: str) -> None:
    """``openacl check``, on a range refused: an overrun if it starts inside a live allocation and runs past its
    end (a task's range, or a copy's past the tolerated overrun: the call still fails as without check), else a
    use after free if it lies in memory the program freed, else an overrun if it starts before an allocation and
    runs into it."""
    start = space.find(addr, 1) if size > 0 else None
    if start is not None:
        checker.on_overrun(start, start.size, addr, size, start.end - addr, what)
    elif not checker.on_bad_access(addr, size, what):
        ahead = space.find(addr + size - 1, 1) if size > 0 else None  # a range that ends in an allocation
        if ahead is not None and ahead.addr > addr:
            checker.on_underrun(ahead, addr, size, what)


def note_read(addr: int, size: int, what: str, at: tuple | None = None) -> None:
    """``openacl check``: the program (or a task it queued at ``at``) reads this range (callers test ``enabled``)."""
    region = space.find(addr, 1)
    if region is not None and region.kind is Kind.DEVICE:
        checker.on_read(region, addr, min(size, region.end - addr), what, at)


def note_write(addr: int, size: int) -> None:
    """``openacl check``: this range of device memory now holds written bytes (callers test ``enabled``)."""
    region = space.find(addr, 1)
    if region is not None and region.kind is Kind.DEVICE:
        checker.on_write(region, addr, min(size, region.end - addr))


def region_within(addr: int, size: int, what: str, *, write: bool = False) -> tuple[Region, int]:
    """The overrun rule: the region ``[addr, addr + size)`` starts in, and how many of its bytes fit there.

    A device rarely faults on a small overrun of an allocation, and programs written against one contain them
    (Ascend's own VPC sample copies a decoded picture into a smaller buffer). So a range that starts inside a live
    allocation but runs at most ``TOLERATED_OVERRUN`` bytes past its end is cut at the end, with one WARNING naming
    it (under ``openacl check``, an overrun finding with both sites instead); a range that starts outside every
    allocation, or runs further past its end (a device would fault; a negative size, masked), stays an error.
    """
    region = space.find(addr, 1) if size > 0 and space.find(addr, size) is None else None
    if region is not None and addr + size - region.end > TOLERATED_OVERRUN:
        region = None
    if region is None:
        return region_for(addr, size, what, write=write), size  # all inside one allocation, or the error
    if write and not region.writable:
        raise AclError(_INVALID, f"{what} {addr:#x} is read-only memory")
    fit = region.end - addr
    if checker.enabled:
        checker.on_overrun(region, region.size, addr, size, fit, what)
    else:
        log.warning(
            "%s %#x (+%d bytes) runs %d bytes past the end of its %d-byte %s allocation at %#x: only the %d bytes "
            "inside it are used",
            what, addr, size, size - fit, region.size, region.kind.value, region.addr, fit,
        )  # fmt: skip
    return region, fit


def check_workspace(addr: int, size: int, need: int, what: str) -> None:
    """Memory a caller lends a model (``load_from_file_with_mem``): 0 means the runtime manages it."""
    if addr == 0 and size == 0:
        return
    if size < need:
        raise AclError(_INVALID, f"{what} memory of {size} bytes is smaller than the {need} bytes the model needs")
    region_for(addr, size, f"{what} memory", write=True)


# ----- Python objects' memory (acl.util) -----


def _register_user(addr: int, size: int, owner: object, keep: object, writable: bool) -> None:
    inside = space.find(addr, max(size, 1))
    if inside is not None and inside.kind is not Kind.USER:
        return  # a view of memory we allocated: already known
    space.add_user_once(Region(addr, size, Kind.USER, keep, writable=writable, owner=owner))


def bytes_address(data: bytes) -> int:
    """Address of a bytes object's own buffer (no copy); the object is registered as host memory.

    As in pyACL, the memory may be written through the pointer (a copy into it changes the bytes object).
    """
    addr = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0
    _register_user(addr, len(data), data, data, writable=len(data) > 1)  # 1-byte bytes are shared singletons
    return addr


def array_address(array: np.ndarray) -> int:
    """Address of an array's first element; the memory the array spans is registered as host memory.

    An array holding Python objects is registered read-only: its bytes are object pointers, and a copy into
    them would crash the interpreter the next time the array is used.
    """
    addr = address_of(array)
    if array.flags.c_contiguous or array.flags.f_contiguous:
        low, high = addr, addr + array.nbytes
    else:
        low, high = np.lib.array_utils.byte_bounds(array)
    writable = bool(array.flags.writeable) and not array.dtype.hasobject
    _register_user(low, high - low, array, array, writable=writable)
    return addr


@contextlib.contextmanager
def lent(array: np.ndarray) -> Iterator[int]:
    """The address of a C-contiguous array, readable through the checked API only inside the ``with``.

    For memory the runtime hands to user code for the length of one call (an exception-info record; the dump's
    chunks use ``loan`` directly): unlike ``array_address``, nothing keeps the array alive or known once the call
    is over.
    """
    region = loan(array)
    space.add(region)
    try:
        yield region.addr
    finally:
        space.discard(region)


def loan(array: np.ndarray) -> Region:
    """The region ``lent`` registers for a C-contiguous array, not registered yet: a caller that lends the same
    array many times (the dump's packing buffer) makes it once, then ``space.add`` and ``space.discard`` it
    around each call, as ``lent`` does. It has no owner, so no sweep forgets it: a loan ends with its discard,
    even when the region is all that references the array (the sweep forgets a registration whose object
    nobody else holds). Its coming and going does not move ``space.generation`` (see ``AddressSpace``)."""
    return Region(address_of(array), array.nbytes, Kind.USER, array, writable=False, lent=True)


def check_cache_range(addr: int, size: int) -> None:
    """``mem_flush`` / ``mem_invalidate`` (CANN's RC-mode cache maintenance): host and device memory are the same
    coherent memory here, so there is no cache line to write back or drop; the range must be known memory."""
    if size == 0:
        raise AclError(_INVALID, "size 0")
    region_for(addr, size, "address")


class _PointerBuffer:
    """Exposes a region as a buffer while keeping the region (and so its bytes) alive: arrays over it pin it."""

    def __init__(self, region: Region) -> None:
        self.region = region
        self.keep = region.keep  # the owner's count too: a USER region is not swept while a view of it lives
        self.__array_interface__ = {
            "shape": (region.size,),
            "typestr": "|u1",
            "data": (region.addr, not region.writable),
            "version": 3,
        }


def view_array(addr: int, shape: tuple[int, ...], dtype: np.dtype, *, by_host: bool = False) -> np.ndarray:
    """A numpy array viewing known memory (no copy); it keeps that memory alive. ``by_host``: as in
    ``read_bytes``."""
    if any(dim < 0 for dim in shape):
        raise AclError(_INVALID, f"negative dimension in shape {shape}")
    count = math.prod(shape)  # Python ints: np.prod would wrap a huge shape around to a small size
    nbytes = count * dtype.itemsize
    region = region_for(addr, nbytes, "pointer")
    if by_host and checker.enabled:
        checker.on_host_access("ptr_to_numpy", reads=[(addr, nbytes)])
        note_write(addr, nbytes)  # the program may write through the view: its bytes count as written
    try:
        return _view(region, addr, nbytes).view(dtype).reshape(shape)
    except ValueError as exc:  # a shape numpy cannot make: (0, 2**63), more than 64 dimensions
        raise AclError(_INVALID, f"shape {shape}: {exc}") from None


def view_pinned(pin: Region, addr: int, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """``view_array`` of memory a caller has already checked and holds (``pin``): nothing looked up again."""
    return _view(pin, addr, math.prod(shape) * dtype.itemsize).view(dtype).reshape(shape)


def _view(pin: Region, addr: int, nbytes: int) -> np.ndarray:
    """``nbytes`` of ``pin`` from ``addr`` as a uint8 array; the array holds the region's bytes (a pin for as
    long as the array lives), and is read-only where the region is."""
    offset = addr - pin.addr
    assert offset >= 0 and offset + nbytes <= pin.size
    out = np.asarray(_PointerBuffer(pin))[offset : offset + nbytes]
    if not pin.writable:
        out.flags.writeable = False
    return out


# ----- access: every read or write of memory by address goes through here -----
#
# Pinning. An access holds the Region it checked (and so ``region.keep``, what owns the bytes) from the check until
# its last byte is moved: each raw primitive below takes the pinning regions as arguments, so none can run without
# them. A free that races an access only unregisters the address and returns at once; the bytes are released
# (unmapped) when the access lets go of its region. So the release waits for the access, the free itself never
# waits and never fails because of it:
# - no access touches unmapped memory, and the address cannot be handed out again while an access is on it;
# - a free cannot deadlock with an access, whatever locks either side holds and whichever thread (a callback, a
#   finalizer) frees; nothing here holds a lock while bytes move.
# An access that starts after the free returned finds no region: ACL_ERROR_INVALID_PARAM at a call,
# ACL_ERROR_RT_DEVICE_MEM_ERROR in a task (``task_write_region``).


def _string_at(addr: int, size: int, pin: Region) -> bytes:
    """The bytes of a range inside ``pin``; ``pin`` is referenced until they are copied out."""
    assert pin.addr <= addr and addr + size <= pin.end
    return ctypes.string_at(addr, size)


def move(dst: int, src: int, count: int, dst_pin: Region, src_pin: Region) -> None:
    """memmove between two checked ranges; each pin holds its range's bytes until the move is done."""
    assert dst_pin.writable and dst_pin.addr <= dst and dst + count <= dst_pin.end
    assert src_pin.addr <= src and src + count <= src_pin.end
    if count:
        ctypes.memmove(dst, src, count)


def fill(addr: int, value: int, count: int, pin: Region) -> None:
    """memset of a checked range; ``pin`` holds its bytes until it is done."""
    assert pin.writable and pin.addr <= addr and addr + count <= pin.end
    if count:
        ctypes.memset(addr, value & 0xFF, count)


def _store(addr: int, data: bytes | np.ndarray, pin: Region) -> None:
    """Write ``data`` (bytes, or a C-contiguous array) at a checked address inside ``pin``."""
    if isinstance(data, np.ndarray):
        size, source = data.nbytes, address_of(data)
    else:
        size, source = len(data), ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0
    assert pin.writable and pin.addr <= addr and addr + size <= pin.end
    if size:
        ctypes.memmove(addr, source, size)  # ``data`` is referenced by the caller's frame until this returns


def read_bytes(addr: int, size: int, what: str = "pointer", *, by_host: bool = False) -> bytes:
    """A copy of ``size`` bytes at ``addr`` (known, live memory, pinned while they are read); ``by_host``: the
    program reads it (``ptr_to_bytes``), which ``openacl check`` orders against queued tasks."""
    region = region_for(addr, size, what)
    if by_host and checker.enabled:
        host_read(addr, size, "ptr_to_bytes")
    return _string_at(addr, size, region)


def host_read(addr: int, size: int, what: str) -> None:
    """``openacl check``: a call of the program reads this range now (callers test ``enabled``): a race if a queued
    task will still write it, else uninitialized if nothing wrote any of it."""
    if not checker.on_host_access(what, reads=[(addr, size)]):
        note_read(addr, size, what)


def write_bytes(addr: int, data: bytes, what: str) -> None:
    """Write ``data`` at ``addr`` now (a call's write, such as ``set_input_aipp``): checked, then pinned."""
    region = region_for(addr, len(data), what, write=True)
    if checker.enabled:
        note_write(addr, len(data))
    _store(addr, data, region)


def task_write_region(addr: int, size: int, what: str, pinned: Region | None = None) -> Region:
    """The live allocation a task's write of ``[addr, addr + size)`` lands in, decided when the task writes.

    The one place that decides whether a task may write a range. ``pinned`` is the region checked when the task
    was queued (kept alive since). A program's own object (USER memory) cannot be freed through the API, so a
    pinned one takes the write while it holds the range. Otherwise the range must lie inside an allocation that
    is live now: memory freed since the task was queued, or freed and allocated again smaller at the same
    address (a data buffer that outlived its memory), is ACL_ERROR_RT_DEVICE_MEM_ERROR, a device fault.
    """
    if pinned is not None and pinned.kind is Kind.USER and pinned.addr <= addr and addr + size <= pinned.end:
        return pinned
    region = space.find(addr, size)
    if region is None:
        if pinned is not None and not space.holds(pinned):
            detail = f"{pinned.kind.value} memory at {pinned.addr:#x} was freed before the stream reached it"
            if checker.enabled:
                checker.on_bad_access(addr, size, what)
        else:
            detail = f"{size} bytes at {addr:#x} do not fit in a live allocation"
        raise AclError(AclCode.ACL_ERROR_RT_DEVICE_MEM_ERROR, f"{what}: {detail}")
    if not region.writable:
        raise AclError(AclCode.ACL_ERROR_RT_DEVICE_MEM_ERROR, f"{what}: {addr:#x} is read-only memory")
    if checker.enabled and region.kind is Kind.DEVICE:
        checker.on_write(region, addr, size)
    return region


def task_write(addr: int, data: bytes | np.ndarray, what: str, pinned: Region | None = None) -> None:
    """A task writes ``data`` at ``addr``: the range is checked against live memory now, and pinned while written."""
    if isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data)
    size = data.nbytes if isinstance(data, np.ndarray) else len(data)
    region = task_write_region(addr, size, what, pinned)
    _store(addr, data, region)


def check_task_view(view: np.ndarray, what: str) -> None:
    """A task is about to fill ``view``, an array over memory taken when it was queued (``view_array``): the
    memory it spans must still be a live allocation (``task_write_region``)."""
    owner = view.base
    while isinstance(owner, np.ndarray):
        owner = owner.base
    low, high = np.lib.array_utils.byte_bounds(view)
    task_write_region(low, high - low, what, owner.region if isinstance(owner, _PointerBuffer) else None)


def task_view(addr: int, size: int, what: str, pinned: Region | None = None) -> np.ndarray:
    """A writable uint8 view a task fills (a decoded picture): checked against live memory now; it pins it."""
    return _view(task_write_region(addr, size, what, pinned), addr, size)


# ----- host memory registration (aclrtHostRegister): one address space, so the device pointer is the host's -----
#
# Invariant: ``_registered`` maps each registered start address to the region it pins; it is guarded by
# ``_registered_lock``, held only to read or change the table. A registration holds its region, so the bytes are
# never released while they are registered.

ACL_HOST_REGISTER_MAPPED = 0  # aclrtHostRegisterType of host_register
# host_register_v2's flags: MAPPED and PINNED mean what every host range already is here; IOMEMORY (a PCIe
# device's IO space) and READONLY (reserved in CANN too) have nothing to map.
ACL_HOST_REG_MAPPED, ACL_HOST_REG_IOMEMORY, ACL_HOST_REG_READONLY, ACL_HOST_REG_PINNED = 0x2, 0x4, 0x8, 0x10000000
_registered_lock = atfork.lock()
_registered: dict[int, tuple[int, Region]] = {}  # start -> (size, pinned region)


def host_register(addr: int, size: int, reg_type: int) -> int:
    """Register ``[addr, addr + size)`` of host memory for device access; returns its device address (itself)."""
    if reg_type != ACL_HOST_REGISTER_MAPPED:
        raise AclError(_INVALID, f"register type {reg_type} is not ACL_HOST_REGISTER_MAPPED(0)")
    if size == 0:
        raise AclError(_INVALID, "size 0")
    region = region_for(addr, size, "host memory")
    if not region.kind.on_host:
        raise AclError(_INVALID, f"{addr:#x} is device memory, not host memory")
    with _registered_lock:
        for start, (length, _) in _registered.items():
            if start < addr + size and addr < start + length:
                raise AclError(
                    AclCode.ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                    f"{addr:#x} (+{size} bytes) overlaps the registered {start:#x} (+{length} bytes)",
                )
        _registered[addr] = (size, region)
    return addr


def host_register_flags(addr: int, size: int, flags: int) -> None:
    """``aclrtHostRegisterV2``: register with flags instead of a type."""
    if flags & (ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY):
        raise AclError(AclCode.ACL_ERROR_FEATURE_UNSUPPORTED, f"flags {flags:#x}: no IO memory or read-only mapping")
    if flags & ~(ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED) or not flags:
        raise AclError(_INVALID, f"flags {flags:#x} are not ACL_HOST_REG_MAPPED and/or ACL_HOST_REG_PINNED")
    host_register(addr, size, ACL_HOST_REGISTER_MAPPED)


def host_unregister(addr: int) -> None:
    with _registered_lock:
        entry = _registered.pop(addr, None)
    if entry is None:
        raise AclError(AclCode.ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, f"{addr:#x} is not the start of registered memory")


def host_device_pointer(addr: int, flag: int = 0) -> int:
    """The device address of registered host memory: the same address (one address space); ``flag`` is 0."""
    if flag != 0:
        raise AclError(_INVALID, f"flag {flag} must be 0")
    with _registered_lock:
        inside = any(start <= addr < start + size for start, (size, _) in _registered.items())
    if not inside:
        raise AclError(AclCode.ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, f"{addr:#x} is not inside registered memory")
    return addr


def is_registered(addr: int, size: int) -> bool:
    """Whether ``[addr, addr + size)`` lies inside one registered host range (device memory at the same address)."""
    with _registered_lock:
        return any(start <= addr and addr + size <= start + length for start, (length, _) in _registered.items())


def forget_registrations() -> None:
    """Drop every host registration (process reset)."""
    with _registered_lock:
        _registered.clear()
