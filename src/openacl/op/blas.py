"""``aclblas*``: GEMM and GEMV as the operator library's ``GEMM``, queued on a stream like any ``acl.op`` call.

Every call becomes one ``GEMM`` operator (inputs ``a, b, c, alpha, beta``, output ``y`` over ``c``) run by
``execute``: the same compile cache, memory checks and stream ordering as ``acl.op.execute_v2``. A GEMV is a GEMM
whose ``b`` is the vector ``x`` as an ``[len, 1]`` matrix and whose ``c`` is ``y`` as ``[len, 1]``.

CANN's rules kept here: matrices are row-major; ``A`` is stored ``[m, k]`` (``[k, m]`` when transposed), ``B``
``[k, n]`` (``[n, k]``), ``C`` ``[m, n]``; for GEMV ``A`` is stored ``[m, n]`` and ``op(A) x`` has ``x`` of
``op(A)``'s column count; alpha and beta are one element of C's (y's) dtype, read from memory when the operator
runs; only the dtype triples of CANN's table are accepted (ACL_ERROR_UNSUPPORTED_DATA_TYPE otherwise); ``transC``
must be ACL_TRANS_N.

Decisions where CANN is silent or reserves a parameter: the leading dimensions (``lda``, ``ldb``, ``ldc``) and
strides (``incx``, ``incy``) are "reserved, -1" in CANN's docs; -1 or the dense value (a stored row's length, a
stride of 1) is accepted, anything else is ACL_ERROR_INVALID_PARAM (no strided layout is read). The fractal
trans types (ACL_TRANS_NZ, ACL_TRANS_NZ_T), a non-positive m, n or k, and an unknown compute type are
ACL_ERROR_INVALID_PARAM. Both compute types compute alike (in C's dtype). Every pointer, alpha and beta
included, is device memory (or registered host memory), as for any operator input.

A handle from ``create_handle_for_*`` is an ``acl.op`` handle of that GEMM: ``acl.op.execute_with_handle(handle,
[a, b, c, alpha, beta], [c], stream)`` with data buffers runs it; ``acl.op.destroy_handle`` frees it.
"""

from __future__ import annotations

from dataclasses import dataclass

from openacl.dtypes import AclDataType, AclFormat
from openacl.errors import AclCode, AclError
from openacl.op import attr as _attr
from openacl.op import execute as _execute
from openacl.op.tensor_desc import TensorDesc
from openacl.runtime import buffers

ACL_TRANS_N, ACL_TRANS_T, ACL_TRANS_NZ, ACL_TRANS_NZ_T = 0, 1, 2, 3
ACL_COMPUTE_HIGH_PRECISION, ACL_COMPUTE_LOW_PRECISION = 0, 1

_F16, _F32 = int(AclDataType.ACL_FLOAT16), int(AclDataType.ACL_FLOAT)
_I8, _I32 = int(AclDataType.ACL_INT8), int(AclDataType.ACL_INT32)

#: (A, B or x, C or y) dtypes CANN accepts; alpha and beta take C's.
DTYPES = frozenset({(_F16, _F16, _F16), (_F16, _F16, _F32), (_I8, _I8, _F32), (_I8, _I8, _I32)})
HALF = (_F16, _F16, _F16)  # hgemm, hgemv
INT8 = (_I8, _I8, _I32)  # s8gemm, s8gemv

_INVALID = AclCode.ACL_ERROR_INVALID_PARAM


@dataclass(frozen=True)
class Gemm:
    """One checked ``C = alpha * op(A) @ op(B) + beta * C``: shapes, dtypes, and the GEMM operator's descs."""

    trans_a: bool
    trans_b: bool
    m: int
    n: int
    k: int
    dtypes: tuple[int, int, int]

    @property
    def shapes(self) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
        """A, B and C as stored (row-major)."""
        a = (self.k, self.m) if self.trans_a else (self.m, self.k)
        b = (self.n, self.k) if self.trans_b else (self.k, self.n)
        return a, b, (self.m, self.n)

    def descs(self) -> tuple[list[TensorDesc], list[TensorDesc]]:
        (a, b, c), (ta, tb, tc) = self.shapes, self.dtypes
        nd = int(AclFormat.ACL_FORMAT_ND)
        inputs = [TensorDesc(ta, a, nd), TensorDesc(tb, b, nd), TensorDesc(tc, c, nd)]
        inputs += [TensorDesc(tc, (1,), nd), TensorDesc(tc, (1,), nd)]
        return inputs, [TensorDesc(tc, c, nd)]

    def attr(self) -> _attr.OpAttr:
        attr = _attr.OpAttr()
        attr.set("transpose_a", _attr.BOOL, self.trans_a)
        attr.set("transpose_b", _attr.BOOL, self.trans_b)
        return attr

    def sizes(self) -> tuple[int, ...]:
        """Bytes of a, b, c, alpha, beta."""
        inputs, _ = self.descs()
        return tuple(desc.size() for desc in inputs)


def _trans(value: int, what: str) -> bool:
    if value not in (ACL_TRANS_N, ACL_TRANS_T):
        raise AclError(_INVALID, f"{what} {value}: only ACL_TRANS_N (0) and ACL_TRANS_T (1) are supported")
    return value == ACL_TRANS_T


def gemm(trans_a: int, trans_b: int, trans_c: int, m: int, n: int, k: int, dtypes: tuple, compute_type: int) -> Gemm:
    """Check a GEMM's shape, trans types, dtypes and compute type (not its pointers)."""
    if trans_c != ACL_TRANS_N:
        raise AclError(_INVALID, f"transC {trans_c}: only ACL_TRANS_N (0) is supported")
    ta, tb = _trans(trans_a, "transA"), _trans(trans_b, "transB")
    if min(m, n, k) <= 0:
        raise AclError(_INVALID, f"m {m}, n {n}, k {k}: each must be positive")
    if tuple(dtypes) not in DTYPES:
        raise AclError(
            AclCode.ACL_ERROR_UNSUPPORTED_DATA_TYPE,
            f"dtypes {tuple(dtypes)} (A, B, C): CANN takes (fp16, fp16, fp16|fp32) or (int8, int8, int32|fp32)",
        )
    if compute_type not in (ACL_COMPUTE_HIGH_PRECISION, ACL_COMPUTE_LOW_PRECISION):
        raise AclError(_INVALID, f"compute type {compute_type} is not ACL_COMPUTE_HIGH_PRECISION (0) or LOW (1)")
    return Gemm(ta, tb, m, n, k, tuple(dtypes))


def gemv(trans_a: int, m: int, n: int, dtypes: tuple, compute_type: int) -> Gemm:
    """A GEMV on A stored ``[m, n]`` as a GEMM: ``[rows of op(A), 1] = op(A) @ [cols of op(A), 1]``."""
    rows, cols = (n, m) if trans_a == ACL_TRANS_T else (m, n)
    return gemm(trans_a, ACL_TRANS_N, ACL_TRANS_N, rows, 1, cols, dtypes, compute_type)


def check_leading(value: int, dense: int, what: str) -> None:
    """A leading dimension or stride: -1 (CANN's reserved value) or the dense one."""
    if value not in (-1, dense):
        raise AclError(_INVALID, f"{what} {value}: only -1 or {dense} (dense row-major) is supported")


GEMM_NAMES = ("A", "B", "C", "alpha", "beta")
GEMV_NAMES = ("A", "x", "y", "alpha", "beta")


def run(op: Gemm, a: int, b: int, c: int, alpha: int, beta: int, stream: int, names: tuple = GEMM_NAMES) -> None:
    """Queue the GEMM on ``stream`` over the caller's memory; C is read and then overwritten in place.

    A pointer outside known memory, or too short for its matrix, is refused naming the argument (``names``)."""
    handles: list[int] = []
    try:
        for addr, size, name in zip((a, b, c, alpha, beta), op.sizes(), names, strict=True):
            try:
                handles.append(buffers.create_data_buffer(addr, size))
            except AclError as exc:
                raise AclError(exc.code, f"{name} ({size} bytes): {exc.detail}", level=exc.level) from None
        in_descs, out_descs = op.descs()
        _execute.execute_descs("GEMM", in_descs, handles, out_descs, [handles[2]], op.attr(), stream)
    finally:
        for handle in handles:  # the queued task holds the addresses it checked, not these handles
            buffers.destroy_data_buffer(handle)


def create_handle(op: Gemm) -> int:
    """An ``acl.op`` handle for the GEMM (see the module's docstring for its buffers)."""
    in_descs, out_descs = op.descs()
    return _execute.handle_for("GEMM", in_descs, out_descs, op.attr())
