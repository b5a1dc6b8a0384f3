"""Running one operator through ``acl`` as a program would: device buffers in, ``execute_v2``, device buffers out."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import acl
from openacl.dtypes import acl_from_numpy

ND = 2
H2D, D2H = 1, 2


@dataclass
class Const:
    """An input given as a const (``set_tensor_const``), with a (0, 0) data buffer as Ascend's samples pass."""

    value: np.ndarray


def desc_for(array: np.ndarray, fmt: int = ND) -> int:
    desc = acl.create_tensor_desc(int(acl_from_numpy(array.dtype)), list(array.shape), fmt)
    assert desc != 0
    return desc


def to_device(array: np.ndarray) -> int:
    array = np.ascontiguousarray(array)
    ptr, ret = acl.rt.malloc(max(array.nbytes, 1), 0)
    assert ret == 0
    if array.nbytes:
        host = array.tobytes()
        assert acl.rt.memcpy(ptr, array.nbytes, acl.util.bytes_to_ptr(host), array.nbytes, H2D) == 0
    return ptr


def from_device(ptr: int, dtype, shape) -> np.ndarray:
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    if not nbytes:
        return np.empty(shape, dtype)
    host = bytes(nbytes)  # writable through its pointer, as in pyACL
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(host), nbytes, ptr, nbytes, D2H) == 0
    return np.frombuffer(host, dtype).reshape(shape).copy()


def make_attr(attrs: dict) -> int:
    """``{"name": ("int", 3)}`` → an attr handle set through ``acl.op.set_attr_<kind>``."""
    handle = acl.op.create_attr()
    assert handle != 0
    for name, (kind, value) in attrs.items():
        result = getattr(acl.op, f"set_attr_{kind}")(handle, name, value)
        assert (result[-1] if isinstance(result, tuple) else result) == 0
    return handle


class Runner:
    """Runs operators on one stream and gives back numpy results."""

    def __init__(self, stream: int) -> None:
        self.stream = stream

    def prepare(self, inputs: list, outputs: list[tuple]) -> tuple[list[int], list[int], list[int], list[int], list]:
        in_descs, in_bufs = [], []
        for item in inputs:
            if item is None:  # an absent optional input, CANN's way
                in_descs.append(acl.create_tensor_desc(-1, [], -1))
                in_bufs.append(acl.create_data_buffer(0, 0))
            elif isinstance(item, Const):
                desc = desc_for(item.value)
                data = item.value.tobytes()
                assert acl.set_tensor_const(desc, acl.util.bytes_to_ptr(data), len(data)) == 0
                in_descs.append(desc)
                in_bufs.append(acl.create_data_buffer(0, 0))
            else:
                in_descs.append(desc_for(item))
                in_bufs.append(acl.create_data_buffer(to_device(item), item.nbytes))
        out_descs, out_bufs, out_ptrs = [], [], []
        for dtype, shape in outputs:
            desc = acl.create_tensor_desc(int(acl_from_numpy(np.dtype(dtype))), list(shape), ND)
            size = acl.get_tensor_desc_size(desc)
            ptr, ret = acl.rt.malloc(max(size, 1), 0)
            assert ret == 0
            out_descs.append(desc)
            out_bufs.append(acl.create_data_buffer(ptr, size))
            out_ptrs.append((ptr, np.dtype(dtype), tuple(shape)))
        return in_descs, in_bufs, out_descs, out_bufs, out_ptrs

    def run(self, op_type: str, inputs: list, outputs: list[tuple], attrs: dict | None = None) -> list[np.ndarray]:
        in_descs, in_bufs, out_descs, out_bufs, out_ptrs = self.prepare(inputs, outputs)
        attr = make_attr(attrs or {})
        ret = acl.op.execute_v2(op_type, in_descs, in_bufs, out_descs, out_bufs, attr, self.stream)
        assert ret == 0, ret
        assert acl.rt.synchronize_stream(self.stream) == 0
        return [from_device(ptr, dtype, shape) for ptr, dtype, shape in out_ptrs]

    def ret(self, op_type: str, inputs: list, outputs: list[tuple], attrs: dict | None = None) -> int:
        in_descs, in_bufs, out_descs, out_bufs, _ = self.prepare(inputs, outputs)
        return acl.op.execute_v2(op_type, in_descs, in_bufs, out_descs, out_bufs, make_attr(attrs or {}), self.stream)


@pytest.fixture
def runner(stream) -> Runner:
    return Runner(stream)
