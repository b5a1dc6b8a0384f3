"""Operator attributes (``aclopAttr``): named, typed values an operator reads.

Each value keeps the kind it was set with (``set_attr_int`` gives an ``int`` attribute), because the op table
checks kinds: an ``int`` where the operator wants a ``list_int`` is ``ACL_ERROR_OP_ATTR_NOT_MATCH``. Setting a
name again replaces its value and kind, as in CANN. Values are stored as Python scalars and tuples, so an
attribute set is hashable and part of a compiled operator's signature.

Invariant: an attribute set changes only through ``OpAttr.set`` (and ends with ``destroy``), each of which renews its
``version`` stamp (``runtime.versions``) after the change: a cached operator plan sees the change by the stamp.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from openacl.errors import AclCode, AclError
from openacl.runtime.handles import HandleTable
from openacl.runtime.versions import renew, stamp

BOOL, INT, FLOAT, STRING, DATA_TYPE = "bool", "int", "float", "string", "data_type"
LIST_BOOL, LIST_INT, LIST_FLOAT, LIST_STRING = "list_bool", "list_int", "list_float", "list_string"
LIST_LIST_INT, LIST_DATA_TYPE = "list_list_int", "list_data_type"
KINDS = (BOOL, INT, FLOAT, STRING, DATA_TYPE)
KINDS += (LIST_BOOL, LIST_INT, LIST_FLOAT, LIST_STRING, LIST_LIST_INT, LIST_DATA_TYPE)
#: The operator library's attribute kind (CANN's prototype kind) each setter's kind gives.
IR_KINDS = {
    BOOL: "Bool",
    INT: "Int",
    FLOAT: "Float",
    STRING: "String",
    DATA_TYPE: "Type",
    LIST_BOOL: "ListBool",
    LIST_INT: "ListInt",
    LIST_FLOAT: "ListFloat",
    LIST_STRING: "ListString",
    LIST_LIST_INT: "ListListInt",
    LIST_DATA_TYPE: "ListType",
}
SETTER_KINDS = {ir_kind: kind for kind, ir_kind in IR_KINDS.items()}


def fits(kind: str, ir_kind: str) -> bool:
    """Whether a value set as ``kind`` is one of ``ir_kind``: the same kind, or an int where a dtype number goes."""
    return (
        IR_KINDS.get(kind) == ir_kind
        or (kind == INT and ir_kind == "Type")
        or (kind == LIST_INT and ir_kind == "ListType")
    )


_INVALID = AclCode.ACL_ERROR_INVALID_PARAM
_INT64 = (-(1 << 63), (1 << 63) - 1)


def _float32(value: float) -> float:
    return float(struct.unpack("f", struct.pack("f", value))[0])


def _int64(value: int, name: str) -> int:
    if not _INT64[0] <= value <= _INT64[1]:
        raise AclError(_INVALID, f"attribute {name!r}: {value} does not fit an int64")
    return value


@dataclass(eq=False)
class OpAttr:
    """One ``aclopAttr``: attribute name -> (kind, value)."""

    values: dict[str, tuple[str, object]] = field(default_factory=dict)
    handle: int = 0
    version: int = field(default_factory=stamp, repr=False)

    def set(self, name: str, kind: str, value: object) -> None:
        if not name:
            raise AclError(_INVALID, "an attribute needs a name")
        self.values[name] = (kind, value)
        renew(self)

    def signature(self) -> tuple:
        return tuple(sorted(self.values.items()))


attrs: HandleTable[OpAttr] = HandleTable("op attr")
EMPTY = OpAttr()  # what attr handle 0 means: no attributes


def create() -> int:
    attr = OpAttr()
    attr.handle = attrs.add(attr)
    return attr.handle


def get(handle: int) -> OpAttr:
    """The attribute set a handle names; 0 is the empty set (CANN accepts a null ``aclopAttr``)."""
    return EMPTY if handle == 0 else attrs.get(handle)


def destroy(handle: int) -> None:
    renew(attrs.remove(handle))


def _target(handle: int) -> OpAttr:
    if handle == 0:
        raise AclError(_INVALID, "op attr 0 (null) cannot hold attributes")
    return attrs.get(handle)


def set_bool(handle: int, name: str, value: int) -> None:
    _target(handle).set(name, BOOL, bool(value))


def set_int(handle: int, name: str, value: int) -> None:
    _target(handle).set(name, INT, _int64(value, name))


def set_float(handle: int, name: str, value: float) -> None:
    _target(handle).set(name, FLOAT, _float32(value))


def set_string(handle: int, name: str, value: str) -> None:
    _target(handle).set(name, STRING, value)


def set_data_type(handle: int, name: str, dtype: int) -> None:
    _target(handle).set(name, DATA_TYPE, dtype)


def set_list(handle: int, name: str, kind: str, values: list) -> None:
    """A list attribute; ``values`` are already Python scalars of the kind (the facade converts them)."""
    target = _target(handle)
    if kind == LIST_BOOL:
        value: tuple = tuple(bool(v) for v in values)
    elif kind in (LIST_INT, LIST_DATA_TYPE):
        value = tuple(_int64(int(v), name) for v in values)
    elif kind == LIST_FLOAT:
        try:
            value = tuple(_float32(float(v)) for v in values)
        except OverflowError:
            raise AclError(_INVALID, f"attribute {name!r}: a value is too large for a float") from None
    elif kind == LIST_STRING:
        value = tuple(str(v) for v in values)
    elif kind == LIST_LIST_INT:
        value = tuple(tuple(_int64(int(v), name) for v in row) for row in values)
    else:
        raise AclError(_INVALID, f"attribute kind {kind!r} is not a list kind")
    target.set(name, kind, value)
