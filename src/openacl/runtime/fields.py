"""A descriptor's fields, declared once: the C type each holds and the values its setter refuses.

pyACL's descriptors (DVPP pic and stream descs, VDEC/VENC channel descs, configs) are C structs behind handles,
with one set and one get function per field. A :class:`Fields` names the handle table of one kind and its fields;
its ``set`` and ``get`` look the handle up (an unknown one is the table's code) and run the field's check, so every
rule lives here, below the facade, and the facade generates pyACL's accessors from the same declaration
(``acl/_accessors.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from openacl.errors import AclCode, AclError
from openacl.runtime.handles import HandleTable

T = TypeVar("T")

Check = Callable[[Any, int], None]  # (the desc, the value): raises the AclError a refused value gets


@dataclass(frozen=True)
class Field:
    """One field. ``kind`` is its C type as pyACL's argument format letter (``I`` uint32_t, ``i`` int32_t, ``K``
    uint64_t, ``k`` a pointer, ``B`` uint8_t); ``check`` refuses what the setter does not store (None: it stores
    whatever the kind holds); ``access`` says which of the two functions pyACL has (``r`` get, ``w`` set)."""

    kind: str
    check: Check | None = None
    access: str = "rw"


def only(allowed: Callable[[int], bool], reason: str, code: AclCode = AclCode.ACL_ERROR_INVALID_PARAM) -> Check:
    """A check that refuses every value ``allowed`` rejects: ``code``, and ``reason`` formatted with the value."""

    def check(_desc: object, value: int) -> None:
        if not allowed(value):
            raise AclError(code, reason.format(value))

    return check


class Fields(Generic[T]):
    """The settable and gettable fields of one desc kind, each the attribute of the same name on its objects."""

    def __init__(self, table: HandleTable[T], **fields: Field | str) -> None:
        """``fields``: each field's :class:`Field`, or its kind alone for a field that stores any value of it."""
        self.table = table
        self.fields = {name: Field(f) if isinstance(f, str) else f for name, f in fields.items()}

    def __iter__(self) -> Iterator[tuple[str, Field]]:
        return iter(self.fields.items())

    def get(self, handle: int, name: str) -> Any:
        return getattr(self.table.get(handle), name)

    def set(self, handle: int, name: str, value: int) -> None:
        """Store ``value`` after the field's check; a refused value leaves the desc as it was."""
        desc = self.table.get(handle)
        check = self.fields[name].check
        if check is not None:
            check(desc, value)
        setattr(desc, name, value)
