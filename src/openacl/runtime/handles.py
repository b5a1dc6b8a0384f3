"""Handle tables: the plain ints that pyACL hands out for contexts, streams, events and buffers.

Handles look like addresses (as in pyACL), are unique over the life of the process and never reused, so a
stale handle can never reach a newer object. Each kind has its own table; a handle of one kind passed where
another is expected is simply not found.

Every table registers itself here when it is made, so ``clear_all`` (``openacl.process.reset``) empties all of
them, wherever they live (runtime, model, op, media), and no table can be forgotten by a reset.
"""

from __future__ import annotations

import itertools
from typing import Generic, TypeVar

from openacl import atfork
from openacl.errors import AclCode, AclError
from openacl.runtime import checker

T = TypeVar("T")

_HANDLE_BASE = 0x0AC1_0000_0000
_counter = itertools.count(1)
_counter_lock = atfork.lock()


def new_handle() -> int:
    with _counter_lock:
        return _HANDLE_BASE + next(_counter) * 16


class HandleTable(Generic[T]):
    """Maps handles of one kind to their objects; lookups of unknown handles raise ``AclError``."""

    def __init__(self, kind: str, code: AclCode = AclCode.ACL_ERROR_INVALID_PARAM) -> None:
        self.kind = kind
        self.code = code
        # Invariant: _objects is only ever mutated in place (never rebound), so ``find`` stays its lookup.
        self._objects: dict[int, T] = {}
        # The object of a handle, or None: ``get`` without the call and the raise, for the hot paths (a miss
        # then goes through ``get`` for the table's error).
        self.find = self._objects.get
        _TABLES.append(self)

    def add(self, obj: T, *, tracked: bool = True) -> int:
        """A new handle; ``tracked`` False for what the runtime makes for itself (not a leak of the program's)."""
        handle = new_handle()
        self._objects[handle] = obj
        if tracked and checker.enabled:
            checker.on_create(self.kind, handle)
        return handle

    def get(self, handle: int) -> T:
        try:
            return self._objects[handle]
        except KeyError:
            raise self._missing(handle, destroying=False) from None

    def remove(self, handle: int) -> T:
        try:
            obj = self._objects.pop(handle)
        except KeyError:
            raise self._missing(handle, destroying=True) from None
        if checker.enabled:
            checker.on_destroy(self.kind, handle)
        return obj

    def _missing(self, handle: int, destroying: bool) -> AclError:
        if checker.enabled and isinstance(handle, int):
            checker.on_stale_handle(self.kind, handle, destroying)
        return AclError(self.code, f"{self.kind} {handle:#x} does not exist (never created or destroyed)")

    def __contains__(self, handle: int) -> bool:
        return handle in self._objects

    def __len__(self) -> int:
        return len(self._objects)

    def values(self) -> list[T]:
        return list(self._objects.values())

    def clear(self) -> None:
        self._objects.clear()


_TABLES: list[HandleTable] = []


def clear_all() -> None:
    """Forget every handle of every kind (process reset; handles already given out stay unique)."""
    for table in _TABLES:
        table.clear()


def table_sizes() -> dict[str, int]:
    """How many live handles each kind has: a reset leaves every one at zero."""
    return {table.kind: len(table) for table in _TABLES}
