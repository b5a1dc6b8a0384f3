"""Tensor descriptions (``aclTensorDesc``): dtype, dims and format of one operator input or output.

A desc is plain host state, as in CANN: it needs no ``acl.init`` and no device, and ``acl.finalize`` leaves it
alive. Everything a desc records is kept, including what openacl never uses (storage/origin formats, value
ranges), so a program reads back what it wrote.

Decisions where CANN does not say:
- ``dims`` may hold ``-1`` (a dynamic dimension) anywhere and ``-2`` only as ``[-2]`` (unknown rank,
  ``ACL_UNKNOWN_RANK``); anything below, or more than ``MAX_DIMS`` dims, fails the creation (handle 0).
- Size and element count of a desc whose shape is not fully known are 0; the element count of ``[]`` is 1.
- ``set_tensor_const`` copies the bytes at once: the memory it was given may be gone before the op runs
  (Ascend's ArgMaxV2 sample passes a local ``bytes`` object).

Invariant: every assignment to a desc's fields (by the setters here, by a model publishing an output's shape, by
``execute_v2`` writing a dynamic output's real dims) renews its ``version`` stamp after the new value is in
(``runtime.versions``), and so does ``destroy``: a cached operator plan sees any change by the stamp alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from openacl.dtypes import acl_dtype_size
from openacl.errors import AclCode, AclError
from openacl.runtime import memory
from openacl.runtime.handles import HandleTable
from openacl.runtime.versions import renew, stamp

MAX_DIMS = 128  # ACL_MAX_DIM_CNT
DYNAMIC_DIM = -1
UNKNOWN_RANK_DIM = -2
UNKNOWN_RANK = (1 << 64) - 2  # what aclGetTensorDescNumDims returns for ``[-2]`` (ACL_UNKNOWN_RANK)
MAX_DIM_RANGE_NUM = 4096  # pyACL's limit on get_tensor_desc_dim_range's ``num``
ACL_MEMTYPE_DEVICE, ACL_MEMTYPE_HOST, ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT = 0, 1, 2
PLACEMENTS = (ACL_MEMTYPE_DEVICE, ACL_MEMTYPE_HOST, ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT)
_INVALID = AclCode.ACL_ERROR_INVALID_PARAM


def check_dims(dims: list[int]) -> tuple[int, ...]:
    """Dims as a desc holds them; raises INVALID_PARAM for what no shape can be."""
    if len(dims) > MAX_DIMS:
        raise AclError(_INVALID, f"{len(dims)} dims is more than the {MAX_DIMS} a tensor desc holds")
    if UNKNOWN_RANK_DIM in dims and len(dims) != 1:
        raise AclError(_INVALID, f"dims {dims}: -2 (unknown rank) must be the only dim")
    bad = [dim for dim in dims if dim < UNKNOWN_RANK_DIM]
    if bad:
        raise AclError(_INVALID, f"dims {dims}: dimension {bad[0]} is negative (only -1 and -2 have a meaning)")
    return tuple(dims)


@dataclass(eq=False, init=False)
class TensorDesc:
    """One ``aclTensorDesc``. ``const`` holds a copy of the data ``set_tensor_const`` was given.

    Every assignment to a field after ``__init__`` renews ``version`` (``__setattr__``); ``__init__`` fills the
    fields directly, so making a desc costs no stamp per field (programs make descs per call).
    """

    dtype: int
    dims: tuple[int, ...]
    format: int
    name: str = ""
    const: bytes | None = None
    placement: int = ACL_MEMTYPE_DEVICE
    storage_format: int | None = None
    storage_dims: tuple[int, ...] | None = None
    origin_format: int | None = None
    origin_dims: tuple[int, ...] | None = None
    dynamic_input: str = ""
    shape_range: tuple[tuple[int, int], ...] = ()
    value_range: tuple[tuple[object, object], ...] = ()
    handle: int = field(default=0, repr=False)
    version: int = field(default=0, repr=False)

    def __init__(
        self, dtype: int, dims: tuple[int, ...], format: int, name: str = "", const: bytes | None = None,
        placement: int = ACL_MEMTYPE_DEVICE,
    ) -> None:  # fmt: skip
        self.__dict__.update(
            dtype=dtype, dims=dims, format=format, name=name, const=const, placement=placement, storage_format=None,
            storage_dims=None, origin_format=None, origin_dims=None, dynamic_input="", shape_range=(), value_range=(),
            handle=0, version=stamp(),
        )  # fmt: skip

    def __setattr__(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)
        renew(self)  # after the value: see the module's invariant

    @property
    def is_static(self) -> bool:
        return all(dim >= 0 for dim in self.dims)

    @property
    def is_absent(self) -> bool:
        """An unused optional input: CANN's convention is a desc of dtype ACL_DT_UNDEFINED (-1)."""
        return self.dtype == -1

    def element_count(self) -> int:
        return math.prod(self.dims) if self.is_static else 0

    def size(self) -> int:
        return self.element_count() * acl_dtype_size(self.dtype)

    def num_dims(self) -> int:
        return UNKNOWN_RANK if self.dims == (UNKNOWN_RANK_DIM,) else len(self.dims)

    def dim(self, index: int) -> int:
        if self.dims == (UNKNOWN_RANK_DIM,) or not 0 <= index < len(self.dims):
            raise AclError(_INVALID, f"dim index {index} is outside the desc's {len(self.dims)} dims")
        return self.dims[index]

    def dim_range(self, index: int, num: int) -> list[int]:
        """``[min, max]`` of one dim: the shape range if one was set, else the dim itself (-1 if dynamic)."""
        if num > MAX_DIM_RANGE_NUM:
            raise AclError(_INVALID, f"dim range num {num} is more than {MAX_DIM_RANGE_NUM}")
        if num < 2:
            raise AclError(_INVALID, f"dim range num {num}: a range has 2 values")
        dim = self.dim(index)
        if index < len(self.shape_range):
            return list(self.shape_range[index])
        return [dim, dim]

    def signature(self) -> tuple:
        """What an operator compiled for this desc depends on (the const bytes, for a const input)."""
        return (self.dtype, self.dims, self.format, self.const)


tensor_descs: HandleTable[TensorDesc] = HandleTable("tensor desc")


def create(dtype: int, dims: list[int], fmt: int) -> int:
    desc = TensorDesc(dtype, check_dims(dims), fmt)
    desc.handle = tensor_descs.add(desc)
    return desc.handle


def get(handle: int) -> TensorDesc:
    return tensor_descs.get(handle)


def destroy(handle: int) -> None:
    renew(tensor_descs.remove(handle))


def set_shape(handle: int, dims: list[int]) -> None:
    get(handle).dims = check_dims(dims)


def set_format(handle: int, fmt: int) -> None:
    get(handle).format = fmt


def set_name(handle: int, name: str) -> None:
    get(handle).name = name


def set_const(handle: int, addr: int, size: int) -> None:
    """Copy ``size`` bytes of host (or device) memory as the desc's constant value."""
    desc = get(handle)
    if addr == 0 or size == 0:
        raise AclError(_INVALID, f"const data {addr:#x} of {size} bytes: a const needs data")
    desc.const = memory.read_bytes(addr, size)


def set_placement(handle: int, placement: int) -> None:
    if placement not in PLACEMENTS:
        raise AclError(_INVALID, f"memory type {placement} is not one of {PLACEMENTS}")
    get(handle).placement = placement


def set_storage_format(handle: int, fmt: int) -> None:
    get(handle).storage_format = fmt


def set_storage_shape(handle: int, dims: list[int]) -> None:
    get(handle).storage_dims = check_dims(dims)


def set_origin_format(handle: int, fmt: int) -> None:
    get(handle).origin_format = fmt


def set_origin_shape(handle: int, dims: list[int]) -> None:
    get(handle).origin_dims = check_dims(dims)


def set_dynamic_input(handle: int, name: str) -> None:
    get(handle).dynamic_input = name


def _pairs(ranges: list, what: str) -> tuple[tuple, ...]:
    pairs = []
    for item in ranges:
        if not isinstance(item, list | tuple) or len(item) != 2:
            raise AclError(_INVALID, f"{what} {item!r} is not a [low, high] pair")
        pairs.append((item[0], item[1]))
    return tuple(pairs)


def set_shape_range(handle: int, ranges: list) -> None:
    desc = get(handle)
    pairs = _pairs(ranges, "shape range")
    if desc.dims != (UNKNOWN_RANK_DIM,) and len(pairs) != len(desc.dims):
        raise AclError(_INVALID, f"{len(pairs)} shape ranges for a desc of {len(desc.dims)} dims")
    for low, high in pairs:
        if not (isinstance(low, int) and isinstance(high, int)) or low < 0 or (high != -1 and high < low):
            raise AclError(_INVALID, f"shape range [{low}, {high}]: need 0 <= low <= high (or high -1, unbounded)")
    desc.shape_range = pairs


def set_value_range(handle: int, ranges: list) -> None:
    get(handle).value_range = _pairs(ranges, "value range")
