"""``ge.graph.Tensor``: host data with GE's data type, format and placement, printed as GE-PY prints it.

GE-PY keeps the data in C and reads it back as text (``std::to_string`` per element, so floats have six
decimals), then parses that text into Python numbers; ``get_data`` here gives the same numbers without the text.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from openacl import dtypes
from openacl.errors import AclError
from openacl.gepy._handle import OpaqueHandle
from openacl.gepy.graph.tensor_desc import Shape, TensorDesc
from openacl.gepy.graph.types import DataType, Format, Placement
from openacl.graph_engine import device_tensors

__all__ = ["Tensor", "unflatten_tensor_data"]

_INT_TYPES = frozenset(
    {
        DataType.DT_INT64,
        DataType.DT_UINT64,
        DataType.DT_INT32,
        DataType.DT_UINT32,
        DataType.DT_INT16,
        DataType.DT_UINT16,
        DataType.DT_INT8,
        DataType.DT_UINT8,
    }
)


#: numpy dtype -> DataType of the outputs seen so far (run_graph wraps every output; keep that cheap).
_DATA_TYPES: dict[np.dtype, DataType] = {}
_HOST = Placement.PLACEMENT_HOST  # _wrap runs per output: an enum member read from its class is slow on 3.11


class Tensor:
    """``Tensor(data=None, file_path=None, data_type=DT_FLOAT, format=FORMAT_ND, shape=None, placement=HOST)``.

    ``data`` is a flat list (GE-PY converts each element with ``int()``/``float()`` by ``data_type``; a list of
    bools makes a bool tensor); ``file_path`` a raw binary file; ``shape`` a list of ints, ``None`` a scalar.
    openacl checks what GE-PY does not: a list whose length is not ``prod(shape)`` is a ValueError.
    """

    __slots__ = ("__weakref__", "_array", "_data_type", "_device", "_format", "_placement")
    _handle = OpaqueHandle()

    def __init__(
        self,
        data: list[Any] | None = None,
        file_path: str | None = None,
        data_type: DataType = DataType.DT_FLOAT,
        format: Format = Format.FORMAT_ND,
        shape: list[int] | None = None,
        placement: Placement = Placement.PLACEMENT_HOST,
    ) -> None:
        if not isinstance(data_type, DataType):
            raise TypeError("data_type must be a DataType")
        if not isinstance(format, Format):
            raise TypeError("Format must be a Format")
        if shape is not None and (not isinstance(shape, list) or not all(isinstance(d, int) for d in shape)):
            raise TypeError("Shape must be a list of integers")
        if not isinstance(placement, Placement):
            raise TypeError("Placement must be a Placement")
        if data is not None and file_path is not None:
            raise RuntimeError("Tensor should be created either by data or by file")
        dims = tuple(shape or ())
        self._data_type = data_type
        self._format = format
        self._placement = Placement.PLACEMENT_HOST
        self._device: Any = None
        if data is not None:
            self._array: np.ndarray | None = _from_list(data, data_type, dims)
        elif file_path is not None:
            self._array = _from_file(file_path, data_type, dims)
        else:
            self._array = None
        if placement == Placement.PLACEMENT_DEVICE:
            self.to_device()

    @classmethod
    def _wrap(cls, array: np.ndarray, format: Format = Format.FORMAT_ND) -> Tensor:
        """A host tensor over an engine result (no copy)."""
        tensor = cls.__new__(cls)
        tensor._array = array
        data_type = _DATA_TYPES.get(array.dtype)
        if data_type is None:
            data_type = _DATA_TYPES[array.dtype] = DataType(dtypes.ge_from_numpy(array.dtype))
        tensor._data_type = data_type
        tensor._format = format
        tensor._placement = _HOST
        tensor._device = None
        return tensor

    def _snapshot(self) -> Tensor:
        """A host copy with the same data type and format (what an attribute keeps of a Tensor value)."""
        tensor = Tensor.__new__(Tensor)
        tensor._array = None if self._array is None and self._device is None else np.array(self._host_array())
        tensor._data_type, tensor._format = self._data_type, self._format
        tensor._placement, tensor._device = Placement.PLACEMENT_HOST, None
        return tensor

    def _host_array(self) -> np.ndarray:
        """The data as an ndarray (what the engine is given); ValueError for an empty or device tensor."""
        if self._placement == Placement.PLACEMENT_DEVICE:
            raise ValueError("the tensor is on the device; call to_host() first")
        if self._array is None:
            raise ValueError("the tensor holds no data")
        return self._array

    # ----- numpy -----

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        array = self._host_array()
        if dtype is not None:
            array = array.astype(dtype)
        return array.copy() if copy else array

    def numpy(self) -> np.ndarray:
        """A copy of the data as an ndarray (an openacl addition, like ``__array__``)."""
        return np.array(self._host_array(), copy=True)

    # ----- GE-PY -----

    def set_format(self, format: Format) -> Tensor:
        if not isinstance(format, Format):
            raise TypeError("Format must be a Format")
        self._format = format
        return self

    def get_format(self) -> Format:
        return self._format

    @property
    def format(self) -> Format:
        return self._format

    def set_data_type(self, data_type: DataType) -> Tensor:
        """The data is converted to ``data_type`` (openacl's decision: values are kept, not bytes)."""
        if not isinstance(data_type, DataType):
            raise TypeError("Data_type must be a DataType")
        if self._array is not None:
            try:
                self._array = self._array.astype(_numeric(data_type))
            except KeyError:
                raise RuntimeError(f"Failed to set datatype {data_type}") from None
        self._data_type = data_type
        return self

    def get_data_type(self) -> DataType:
        return self._data_type

    @property
    def data_type(self) -> DataType:
        return self._data_type

    def get_shape(self) -> list[int]:
        if self._placement == Placement.PLACEMENT_DEVICE:
            return list(self._device.shape)
        return [] if self._array is None else list(self._array.shape)

    @property
    def shape(self) -> list[int]:
        return self.get_shape()

    def get_placement(self) -> Placement:
        return self._placement

    @property
    def placement(self) -> Placement:
        return self._placement

    def get_tensor_desc(self) -> TensorDesc:
        return TensorDesc(Shape(self.get_shape()), self._format, self._data_type)

    def to_device(self) -> Tensor:
        """Move the data into device memory of the current context's device (``acl.rt.set_device`` first)."""
        if self._placement == Placement.PLACEMENT_DEVICE:
            raise ValueError("the tensor is already on the device")
        try:
            device = device_tensors.to_device(self._host_array())
        except AclError as exc:
            raise RuntimeError(f"Failed to copy the tensor to the device: {exc}") from None
        self._hold(device)
        return self

    def to_host(self) -> Tensor:
        """Move the data back to host memory (after the stream that wrote it is synchronized)."""
        if self._placement != Placement.PLACEMENT_DEVICE:
            raise ValueError("to_host() only supports device tensors")
        device = self._device
        try:
            self._array = device_tensors.read(device)
        except AclError as exc:
            raise RuntimeError(f"Failed to copy the tensor to the host: {exc}") from None
        self._device = None  # the block goes back once a queued run that still uses it is done
        self._placement = Placement.PLACEMENT_HOST
        return self

    def _hold(self, device: device_tensors.DeviceTensor) -> None:
        """Keep ``device`` as this tensor's data; its memory goes back when nothing refers to it any more."""
        self._device = device
        self._array = None
        self._placement = Placement.PLACEMENT_DEVICE

    @classmethod
    def _wrap_device(cls, device: device_tensors.DeviceTensor) -> Tensor:
        tensor = cls.__new__(cls)
        tensor._data_type = DataType(dtypes.ge_from_numpy(device.dtype))
        tensor._format = Format.FORMAT_ND
        tensor._hold(device)
        return tensor

    def _engine_input(self) -> Any:
        """What the engine takes: the host array, or the device tensor."""
        if self._placement == Placement.PLACEMENT_DEVICE:
            return self._device
        return self._host_array()

    def get_data(self) -> Any:
        """The data as nested lists (a bare number for a scalar), each float rounded to six decimals as GE's
        ``std::to_string`` does. As in GE-PY, a bool tensor, an empty one and a type GE cannot print raise
        ValueError (GE-PY fails parsing ``true``, ``<empty>``, ``<not_supported>``)."""
        array = self._host_array_for_text()
        kind = array.dtype.kind
        if kind == "f":
            flat = [float(f"{v:f}") for v in array.astype(np.float64).ravel().tolist()]
        elif kind in "iu":
            flat = array.ravel().tolist()
        elif kind == "b":
            raise ValueError("Invalid item: 'true'" if array.any() else "Invalid item: 'false'")
        else:
            raise ValueError("Invalid item: '<not_supported>'")
        return _unflatten(flat, list(array.shape))

    @property
    def data(self) -> Any:
        return self.get_data()

    def _host_array_for_text(self) -> np.ndarray:
        if self._array is None and self._placement == Placement.PLACEMENT_HOST:
            raise ValueError("Invalid item: '<empty>'")
        return self._host_array()

    def __str__(self) -> str:
        return (
            f"\n        Tensor format is {int(self.get_format())},"
            f"\n        data_type is {int(self.get_data_type())},"
            f"\n        shape is {self.get_shape()},"
            f"\n        data is {self.get_data()}"
            "\n        "
        )

    def __repr__(self) -> str:
        return f"Tensor(data_type={self._data_type.name}, format={self._format.name}, shape={self.get_shape()})"

    def __copy__(self) -> None:
        raise RuntimeError("Tensor does not support copy")

    def __deepcopy__(self, memo: Any) -> None:
        raise RuntimeError("Tensor does not support deepcopy")


def _from_list(data: Any, data_type: DataType, dims: tuple[int, ...]) -> np.ndarray:
    if not isinstance(data, list):
        raise TypeError("data should be List")
    count = math.prod(dims)
    if len(data) != count:
        raise ValueError(f"data has {len(data)} elements, shape {list(dims)} needs {count}")
    if all(isinstance(x, bool) for x in data) and data_type == DataType.DT_BOOL:
        return np.array(data, dtype=np.bool_).reshape(dims)
    if data_type in _INT_TYPES:
        values: list[Any] = [int(x) for x in data]
        dtypes.check_ints(values, dtypes.numpy_from_ge(data_type))
    elif data_type in (DataType.DT_FLOAT, DataType.DT_FLOAT16):
        values = dtypes.as_floats(data)
    elif data_type == DataType.DT_DOUBLE:
        raise RuntimeError("DT_DOUBLE is not supported in python Tensor constructor")
    else:
        raise RuntimeError(f"Failed to create Tensor with data type: {data_type}")
    return np.array(values, dtype=dtypes.numpy_from_ge(data_type)).reshape(dims)


def _numeric(data_type: DataType) -> np.dtype:
    """The numpy dtype of a data type whose values are numbers (bytes on disk); KeyError for DT_STRING too."""
    dtype = dtypes.numpy_from_ge(data_type)
    if dtype.kind == "O":
        raise KeyError(data_type)
    return dtype


def _from_file(path: str, data_type: DataType, dims: tuple[int, ...]) -> np.ndarray:
    if not isinstance(path, str):
        raise TypeError("file_path must be a str")
    try:
        dtype = _numeric(data_type)
    except KeyError:
        raise RuntimeError(f"Failed to create Tensor with data type: {data_type}") from None
    if any(dim < 0 for dim in dims):
        raise ValueError(f"shape {list(dims)} has a negative dim")
    need = math.prod(dims) * dtype.itemsize
    size = os.path.getsize(path) if os.path.isfile(path) else -1
    if size <= 0 or size < need:
        raise RuntimeError(f"Failed to create Tensor from file {path!r}: it needs {need} bytes, has {max(size, 0)}")
    with open(path, "rb") as f:
        raw = f.read(need)
    return np.frombuffer(raw, dtype=dtype).reshape(dims).copy()


def _unflatten(flat: list[Any], shape: list[int]) -> Any:
    if not shape:
        return flat[0] if flat else flat
    if len(shape) == 1:
        return flat
    step = math.prod(shape[1:])
    return [_unflatten(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def _parse_str_list(text: str) -> list[int | float]:
    """GE's text of a flat tensor (``[1, 2.5, -3]``) as Python numbers: an item with a ``.``/exponent is a float,
    else an int; ValueError names the item that is neither."""
    text = text.strip()
    if not (text.startswith("[") and text.endswith("]")):
        raise ValueError("Input must start with '[' and end with ']'")
    body = text[1:-1].strip()
    if not body:
        return []
    values: list[int | float] = []
    for item in (part.strip() for part in body.split(",")):
        try:
            values.append(int(item))
        except ValueError:
            try:
                values.append(float(item))
            except ValueError:
                raise ValueError(f"Invalid item: '{item}'") from None
    return values


def unflatten_tensor_data(text: str, shape: list[int]) -> Any:
    """GE's text of a tensor's data and its shape -> nested lists (a bare number for shape ``[]``)."""
    return _unflatten(_parse_str_list(text), list(shape))
