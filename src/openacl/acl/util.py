"""``acl.util``: pointers to and from Python objects, and threads for ``process_report`` loops.

Where pyACL would read through a bad pointer (and crash), these raise ``ValueError`` naming the problem:
they return no error code in pyACL either.
"""

from __future__ import annotations

import numpy as np

from openacl.acl._args import BARE, RAISE, VALUE, ArgumentTypeError, ArgumentValueError, api, require_callable, warn
from openacl.runtime import memory as _memory
from openacl.runtime import threads as _threads

__all__ = [
    "bytes_to_ptr",
    "numpy_contiguous_to_ptr",
    "numpy_to_ptr",
    "ptr_to_bytes",
    "ptr_to_numpy",
    "start_thread",
    "stop_thread",
]

_DTYPES_BY_NUM = {np.dtype(code).num: np.dtype(code) for code in np.typecodes["All"] if code not in "Mm"}


@api("O", RAISE)
def bytes_to_ptr(data):
    if not isinstance(data, bytes):
        raise ArgumentValueError("needs an byte as argument")
    return _memory.bytes_address(data)


@api("kK", RAISE)
def ptr_to_bytes(ptr, size):
    return _memory.read_bytes(ptr, size, by_host=True)


@api("O", RAISE)
def numpy_to_ptr(array):
    if not isinstance(array, np.ndarray):
        raise ArgumentValueError("needs an ndarray as argument")
    warn("numpy_to_ptr is deprecated, use acl.util.bytes_to_ptr")
    if not (array.flags.c_contiguous or array.flags.f_contiguous):
        warn("the ndarray is not contiguous")
    return _memory.array_address(array)


@api("O", RAISE)
def numpy_contiguous_to_ptr(array):
    if not isinstance(array, np.ndarray):
        raise ArgumentValueError("needs an ndarray as argument")
    warn("numpy_contiguous_to_ptr is deprecated, use acl.util.bytes_to_ptr")
    contiguous = np.ascontiguousarray(array)
    return _memory.array_address(contiguous), contiguous


@api("kOi", RAISE)
def ptr_to_numpy(ptr, shape, npy_type):
    if not isinstance(shape, tuple) or not all(isinstance(d, int) for d in shape):
        raise ArgumentTypeError("acl.util.ptr_to_numpy args parse failed")
    shape = tuple(int(d) for d in shape)  # bools are ints to the parser, not to numpy's reshape
    dtype = _DTYPES_BY_NUM.get(npy_type)
    if dtype is None or dtype.hasobject:
        raise ArgumentValueError(f"numpy type number {npy_type} is not a numeric type")
    return _memory.view_array(ptr, shape, dtype, by_host=True)


@api("OO", VALUE)
def start_thread(thr_func, args_list):
    require_callable(thr_func)
    return _threads.start_thread(thr_func, args_list)


@api("K", BARE)
def stop_thread(thr_id):
    return _threads.stop_thread(thr_id)
