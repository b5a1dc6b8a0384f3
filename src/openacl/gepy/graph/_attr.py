"""``ge.graph._attr``: ``_AttrValue``, one typed GE attribute value, and the mapping of Python values to it.

GE keeps attributes typed (``AttrValueType``); a Python value maps to one type by the rules of
:func:`attr_value_of` (reference notes §6.3). Floats are kept as GE keeps them, in 32 bits; ints in 64 bits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from openacl import dtypes
from openacl.gepy._handle import OpaqueHandle
from openacl.gepy.graph.tensor import Tensor
from openacl.gepy.graph.types import AttrValueType, DataType

__all__ = ["_AttrValue", "attr_value_of", "engine_value"]

_INT64 = (-(2**63), 2**63 - 1)
VT = AttrValueType


def _int(value: Any) -> int:
    """An int64 (a bool is an int, as in Python: True is 1)."""
    if not isinstance(value, int):
        raise TypeError(f"Value must be an integer, got {type(value).__name__}")
    if not _INT64[0] <= value <= _INT64[1]:
        raise ValueError(f"Value {value} is out of the int64 range")
    return int(value)


def _float(value: Any) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise TypeError(f"Value must be a float, got {type(value).__name__}")
    return float(np.float32(value))


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"Value must be a bool, got {type(value).__name__}")
    return value


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"Value must be a string, got {type(value).__name__}")
    return value


def _data_type(value: Any) -> DataType:
    if not isinstance(value, DataType):
        raise TypeError(f"Value must be a DataType, got {type(value).__name__}")
    return value


def _tensor(value: Any) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"Value must be a Tensor, got {type(value).__name__}")
    return value._snapshot()


#: Each scalar kind's check/convert, and the list kind made of it.
_SCALARS = {VT.VT_INT: _int, VT.VT_FLOAT: _float, VT.VT_BOOL: _bool, VT.VT_STRING: _str, VT.VT_DATA_TYPE: _data_type}
_LISTS = {
    VT.VT_LIST_INT: VT.VT_INT,
    VT.VT_LIST_FLOAT: VT.VT_FLOAT,
    VT.VT_LIST_BOOL: VT.VT_BOOL,
    VT.VT_LIST_STRING: VT.VT_STRING,
    VT.VT_LIST_DATA_TYPE: VT.VT_DATA_TYPE,
}


class _AttrValue:
    """A typed value: ``set_<kind>(value)`` checks and stores it (True), ``get_<kind>()`` reads it back; reading
    another kind than the one stored is TypeError. An empty list is ValueError (GE cannot type it)."""

    _handle = OpaqueHandle()
    _av_ptr = OpaqueHandle()  # GE-PY's name for the same thing

    def __init__(self) -> None:
        self._value_type = VT.VT_NONE
        #: The stored value, already converted (Invariant: matches ``_value_type``).
        self._cached_value: Any = None

    @property
    def value_type(self) -> AttrValueType:
        return self._value_type

    def get_value_type(self) -> AttrValueType:
        return self._value_type

    @property
    def value(self) -> Any:
        """The stored value as Python (a Tensor is a fresh copy)."""
        if self._value_type == VT.VT_TENSOR:
            return self._cached_value._snapshot()
        return list(self._cached_value) if isinstance(self._cached_value, list) else self._cached_value

    def _set(self, kind: AttrValueType, value: Any) -> bool:
        if kind in _LISTS:
            if not isinstance(value, list):
                raise TypeError(f"Value must be a list, got {type(value).__name__}")
            if not value:
                raise ValueError("Empty list is not supported")
            value = [_SCALARS[_LISTS[kind]](v) for v in value]
        elif kind == VT.VT_TENSOR:
            value = _tensor(value)
        else:
            value = _SCALARS[kind](value)
        self._value_type, self._cached_value = kind, value
        return True

    def _get(self, kind: AttrValueType) -> Any:
        if self._value_type != kind:
            raise TypeError(f"AttrValue holds {self._value_type.name}, not {kind.name}")
        return self.value

    def set_string(self, value: str) -> bool:
        return self._set(VT.VT_STRING, value)

    def get_string(self) -> str:
        return self._get(VT.VT_STRING)

    def set_int(self, value: int) -> bool:
        return self._set(VT.VT_INT, value)

    def get_int(self) -> int:
        return self._get(VT.VT_INT)

    def set_float(self, value: float) -> bool:
        return self._set(VT.VT_FLOAT, value)

    def get_float(self) -> float:
        return self._get(VT.VT_FLOAT)

    def set_bool(self, value: bool) -> bool:
        return self._set(VT.VT_BOOL, value)

    def get_bool(self) -> bool:
        return self._get(VT.VT_BOOL)

    def set_data_type(self, value: DataType) -> bool:
        return self._set(VT.VT_DATA_TYPE, value)

    def get_data_type(self) -> DataType:
        return self._get(VT.VT_DATA_TYPE)

    def set_tensor(self, value: Tensor) -> bool:
        return self._set(VT.VT_TENSOR, value)

    def get_tensor(self) -> Tensor:
        return self._get(VT.VT_TENSOR)

    def set_list_int(self, value: list[int]) -> bool:
        return self._set(VT.VT_LIST_INT, value)

    def get_list_int(self) -> list[int]:
        return self._get(VT.VT_LIST_INT)

    def set_list_float(self, value: list[float]) -> bool:
        return self._set(VT.VT_LIST_FLOAT, value)

    def get_list_float(self) -> list[float]:
        return self._get(VT.VT_LIST_FLOAT)

    def set_list_bool(self, value: list[bool]) -> bool:
        return self._set(VT.VT_LIST_BOOL, value)

    def get_list_bool(self) -> list[bool]:
        return self._get(VT.VT_LIST_BOOL)

    def set_list_string(self, value: list[str]) -> bool:
        return self._set(VT.VT_LIST_STRING, value)

    def get_list_string(self) -> list[str]:
        return self._get(VT.VT_LIST_STRING)

    def set_list_data_type(self, value: list[DataType]) -> bool:
        return self._set(VT.VT_LIST_DATA_TYPE, value)

    def get_list_data_type(self) -> list[DataType]:
        return self._get(VT.VT_LIST_DATA_TYPE)

    def __str__(self) -> str:
        return f"AttrValue(type={self._value_type.name}, value={self._cached_value!r})"

    __repr__ = __str__


def engine_value(value: Any) -> Any:
    """``value`` as GE types it, in the form the engine's graph keeps (a Tensor's data as an ndarray)."""
    typed = attr_value_of(value)
    if typed.value_type == VT.VT_TENSOR:
        return np.array(typed._cached_value._host_array())
    return typed.value


def attr_value_of(value: Any) -> _AttrValue:
    """The typed value GE-PY makes of ``value``: checked in the order str, float, bool, DataType, Tensor, int, then
    a list by the kind of its first item. Anything else, and an empty list, is ValueError."""
    attr = _AttrValue()
    if isinstance(value, str):
        attr.set_string(value)
    elif isinstance(value, float):
        attr.set_float(value)
    elif isinstance(value, bool):
        attr.set_bool(value)
    elif isinstance(value, DataType):
        attr.set_data_type(value)
    elif isinstance(value, Tensor):
        attr.set_tensor(value)
    elif isinstance(value, int):
        dtypes.check_ints([value], np.int64)  # GE's int attributes are int64
        attr.set_int(value)
    elif isinstance(value, list) and value:
        first = value[0]
        kind = (
            VT.VT_LIST_STRING
            if isinstance(first, str)
            else VT.VT_LIST_FLOAT
            if isinstance(first, float)
            else VT.VT_LIST_BOOL
            if isinstance(first, bool)
            else VT.VT_LIST_DATA_TYPE
            if isinstance(first, DataType)
            else VT.VT_LIST_INT
            if isinstance(first, int)
            else None
        )
        if kind is None:
            raise ValueError(f"Unsupported attribute type: {type(value)} for value: {value}")
        try:
            attr._set(kind, value)
        except TypeError:
            raise ValueError(f"Unsupported attribute type: {type(value)} for value: {value}") from None
    else:
        raise ValueError(f"Unsupported attribute type: {type(value)} for value: {value}")
    return attr
