"""``ge.allocator``: the ``Allocator`` a program registers for a stream's output memory, and its ``MemBlock``."""

from __future__ import annotations

import abc

__all__ = ["Allocator", "MemBlock"]


class MemBlock:
    """A block an allocator handed out: a device address and its size (read-only)."""

    __slots__ = ("_addr", "_size")

    def __init__(self, addr: int, size: int) -> None:
        if not isinstance(addr, int) or not isinstance(size, int):
            raise TypeError("addr and size must be int")
        self._addr, self._size = addr, size

    @property
    def addr(self) -> int:
        return self._addr

    @property
    def size(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return f"MemBlock(addr=0x{self._addr:x}, size={self._size})"


class Allocator(abc.ABC):
    """Subclass and implement ``malloc(size) -> MemBlock`` and ``free(block)``."""

    @abc.abstractmethod
    def malloc(self, size: int) -> MemBlock: ...

    @abc.abstractmethod
    def free(self, block: MemBlock) -> None: ...
