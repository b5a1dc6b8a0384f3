"""The aclDataBuffer table: (pointer, size) pairs that models and operators read from and write to.

Invariant: a buffer changes only here (``update_data_buffer``, ``destroy_data_buffer``), and each change renews its
``version`` stamp after the new values are in (``runtime.versions``): a cached operator plan keyed by the handle
sees the change by its stamp alone.
"""

from __future__ import annotations

from openacl.errors import AclCode, AclError
from openacl.runtime.handles import HandleTable
from openacl.runtime.memory import region_for
from openacl.runtime.versions import renew, stamp

_INVALID = AclCode.ACL_ERROR_INVALID_PARAM


class DataBuffer:
    """A (pointer, size) pair that models read from and write to."""

    __slots__ = ("addr", "handle", "size", "version")

    def __init__(self, addr: int, size: int) -> None:
        self.addr, self.size, self.handle = addr, size, 0
        self.version = stamp()


data_buffers: HandleTable[DataBuffer] = HandleTable("data buffer")


def _check_buffer_memory(addr: int, size: int) -> None:
    if size < 0:
        raise AclError(_INVALID, f"data buffer size {size} is negative")
    if addr == 0:
        if size:
            raise AclError(_INVALID, f"data buffer of {size} bytes at address 0")
        return
    region_for(addr, size, "data buffer address")


def create_data_buffer(addr: int, size: int) -> int:
    _check_buffer_memory(addr, size)
    buffer = DataBuffer(addr, size)
    buffer.handle = data_buffers.add(buffer)
    return buffer.handle


def update_data_buffer(handle: int, addr: int, size: int) -> None:
    buffer = data_buffers.get(handle)
    _check_buffer_memory(addr, size)
    buffer.addr, buffer.size = addr, size
    renew(buffer)


def destroy_data_buffer(handle: int) -> None:
    renew(data_buffers.remove(handle))
