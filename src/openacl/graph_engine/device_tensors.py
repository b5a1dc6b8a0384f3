"""Device-placed tensors for GE (GE-PY's ``Placement.PLACEMENT_DEVICE``, ``to_device``/``to_host``), and the
memory a stream-ordered run's outputs live in.

A device tensor is a block of openacl's device memory (``acl.rt.malloc`` memory) holding the array's bytes, so
``acl`` and ``ge`` code share it. Blocks come from the stream's registered allocator when there is one (any object
with ``malloc(size) -> block`` and ``free(block)``, the block having ``addr`` and ``size``: GE-PY's ``Allocator``
and ``MemBlock``), else from the current device, as GE's default allocator takes them (``aclrtMalloc``).
``release`` gives a block back once; a failure to give it back is logged, never raised (it runs from finalizers).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from openacl.errors import AclError
from openacl.log import get_logger
from openacl.runtime import device as rt_device
from openacl.runtime import memory

__all__ = ["DeviceTensor", "allocate", "read", "to_device", "write"]

log = get_logger("ge")

#: ``aclrtMallocPolicy`` GE's default allocator uses (ACL_MEM_MALLOC_HUGE_FIRST).
_POLICY = 0


class DeviceTensor:
    """``nbytes`` of device memory at ``addr`` holding a ``dtype`` array of ``shape``.

    Invariant: the block is given back exactly once, by :meth:`release` or when the last reference goes (a
    queued stream run holds its inputs and outputs, so they outlive the program's own references until it ran).
    """

    def __init__(
        self, addr: int, dtype: np.dtype, shape: tuple[int, ...], nbytes: int, free: Callable[[], None]
    ) -> None:
        self.addr, self.dtype, self.shape, self.nbytes = addr, np.dtype(dtype), tuple(shape), nbytes
        self._finalizer = weakref.finalize(self, _give_back, addr, nbytes, free)

    def release(self) -> None:
        """Give the block back (to its allocator or the device) now; later calls do nothing."""
        self._finalizer()

    def __repr__(self) -> str:
        return f"DeviceTensor({self.addr:#x}, {self.dtype}, {list(self.shape)})"


def _give_back(addr: int, nbytes: int, free: Callable[[], None]) -> None:
    try:
        free()
    except Exception as exc:  # a reset device, or a user allocator that raised
        log.warning("device tensor at %#x (%d bytes) not given back: %s", addr, nbytes, exc)


def allocate(dtype: np.dtype, shape: tuple[int, ...], allocator: Any = None) -> DeviceTensor:
    """Device memory for an array, from ``allocator`` or the current device (AclError without a context)."""
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    size = max(nbytes, 1)
    if allocator is None:
        device_id = rt_device.current_device().id
        addr = memory.malloc(size, _POLICY, device_id)
        return DeviceTensor(addr, np.dtype(dtype), tuple(shape), nbytes, lambda: memory.free(addr))
    block = allocator.malloc(size)
    addr, got = getattr(block, "addr", None), getattr(block, "size", None)
    if not isinstance(addr, int) or not isinstance(got, int) or got < size:
        raise ValueError(f"the allocator gave {block!r} for a request of {size} bytes")
    memory.region_for(addr, size, "allocator block", write=True)
    return DeviceTensor(addr, np.dtype(dtype), tuple(shape), nbytes, lambda: allocator.free(block))


def write(tensor: DeviceTensor, array: np.ndarray) -> None:
    memory.view_array(tensor.addr, tensor.shape, tensor.dtype)[...] = array


def read(tensor: DeviceTensor) -> np.ndarray:
    """A host copy of the tensor's data."""
    return np.array(memory.view_array(tensor.addr, tensor.shape, tensor.dtype), copy=True)


def to_device(array: np.ndarray) -> DeviceTensor:
    """A copy of ``array`` in device memory of the current context's device."""
    tensor = allocate(array.dtype, array.shape)
    try:
        write(tensor, array)
    except AclError:
        tensor.release()
        raise
    return tensor
