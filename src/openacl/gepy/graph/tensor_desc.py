"""``Shape`` and ``TensorDesc`` of ``ge.graph``: a tensor's description without its data."""

from __future__ import annotations

import math
from typing import Any

from openacl.gepy._handle import OpaqueHandle
from openacl.gepy.graph.types import DataType, Format

__all__ = ["UNKNOWN_DIM", "UNKNOWN_DIM_NUM", "UNKNOWN_DIM_SIZE", "Shape", "TensorDesc"]

UNKNOWN_DIM = -1
UNKNOWN_DIM_NUM = -2
UNKNOWN_DIM_SIZE = -1


class Shape(list):
    """A list of dims; ``Shape()`` is a scalar. ``get_shape_size()`` is 0 for a scalar, -1 when a dim is unknown."""

    def __init__(self, dims: list[int] | None = None) -> None:
        if dims is None:
            dims = []
        if not isinstance(dims, list) or not all(isinstance(d, int) for d in dims):
            raise TypeError("dims must be a list of integers")
        super().__init__(dims)

    def get_shape_size(self) -> int:
        if not self:
            return 0
        if any(d in (UNKNOWN_DIM, UNKNOWN_DIM_NUM) for d in self):
            return UNKNOWN_DIM_SIZE
        return math.prod(self)

    def is_unknown_shape(self) -> bool:
        return any(d in (UNKNOWN_DIM, UNKNOWN_DIM_NUM) for d in self)

    def get_dim_num(self) -> int:
        return len(self)


class TensorDesc:
    """``TensorDesc(shape=None, format=FORMAT_ND, data_type=DT_FLOAT)``; setters return self."""

    _handle = OpaqueHandle()

    def __init__(
        self,
        shape: Shape | list[int] | None = None,
        format: Format = Format.FORMAT_ND,
        data_type: DataType = DataType.DT_FLOAT,
    ) -> None:
        self._shape = _shape(shape) if shape is not None else Shape()
        self._origin_shape = Shape(list(self._shape))
        self._format = _check(format, Format, "Format must be a Format")
        self._origin_format = self._format
        self._data_type = _check(data_type, DataType, "Data type must be a DataType")

    def get_shape(self) -> Shape:
        return Shape(list(self._shape))

    def set_shape(self, shape: Shape | list[int]) -> TensorDesc:
        self._shape = _shape(shape)
        return self

    def get_origin_shape(self) -> Shape:
        return Shape(list(self._origin_shape))

    def set_origin_shape(self, shape: Shape | list[int]) -> TensorDesc:
        self._origin_shape = _shape(shape)
        return self

    def get_format(self) -> Format:
        return self._format

    def set_format(self, format: Format) -> TensorDesc:
        self._format = _check(format, Format, "Format must be a Format")
        return self

    def get_origin_format(self) -> Format:
        return self._origin_format

    def set_origin_format(self, format: Format) -> TensorDesc:
        self._origin_format = _check(format, Format, "Format must be a Format")
        return self

    def get_data_type(self) -> DataType:
        return self._data_type

    def set_data_type(self, data_type: DataType) -> TensorDesc:
        self._data_type = _check(data_type, DataType, "Data type must be a DataType")
        return self

    shape = property(get_shape)
    origin_shape = property(get_origin_shape)
    format = property(get_format)
    origin_format = property(get_origin_format)
    data_type = property(get_data_type)

    def __repr__(self) -> str:
        """The enums by number, as GE-PY prints them."""
        return f"TensorDesc(shape={list(self._shape)}, format={int(self._format)}, data_type={int(self._data_type)})"

    def __copy__(self) -> None:
        raise RuntimeError("TensorDesc does not support copy")

    def __deepcopy__(self, memo: Any) -> None:
        raise RuntimeError("TensorDesc does not support deepcopy")


def _check(value: Any, kind: type, message: str) -> Any:
    if not isinstance(value, kind):
        raise TypeError(message)
    return value


def _shape(shape: Any) -> Shape:
    if not isinstance(shape, list) or not all(isinstance(d, int) for d in shape):
        raise TypeError("shape must be a list of integers")
    return Shape(list(shape))
