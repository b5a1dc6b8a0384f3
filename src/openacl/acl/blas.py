"""``acl.blas``: GEMM and GEMV (``C = alpha * op(A) @ op(B) + beta * C``, ``y = alpha * op(A) x + beta * y``).

Each call queues one ``GEMM`` operator of the operator library on the stream (``openacl.op.blas``, which states
the shapes, dtypes and the decisions where CANN is silent); the result is in C (y) once the stream reaches it.
The ``create_handle_for_*`` functions return an ``acl.op`` handle for ``acl.op.execute_with_handle`` with data
buffers ``[a, b, c, alpha, beta]`` in, ``[c]`` out.

pyACL quirk kept: ``gemv_ex`` passes ``incy`` where ``incx`` belongs, so its ``incx`` is never read.
"""

from __future__ import annotations

from openacl.acl._args import VALUE, api
from openacl.op import blas as _blas

__all__ = [
    "create_handle_for_gemm_ex",
    "create_handle_for_gemv_ex",
    "create_handle_for_hgemm",
    "create_handle_for_hgemv",
    "create_handle_for_s8gemm",
    "create_handle_for_s8gemv",
    "gemm_ex",
    "gemv_ex",
    "hgemm",
    "hgemv",
    "s8gemm",
    "s8gemv",
]


def _gemv(trans_a, m, n, alpha, a, lda, x, incx, beta, y, incy, dtypes, compute_type, stream) -> None:
    op = _blas.gemv(trans_a, m, n, dtypes, compute_type)
    _blas.check_leading(lda, n, "lda")
    _blas.check_leading(incx, 1, "incx")
    _blas.check_leading(incy, 1, "incy")
    _blas.run(op, a, x, y, alpha, beta, stream, _blas.GEMV_NAMES)


def _gemm(ta, tb, tc, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, dtypes, compute_type, stream) -> None:
    op = _blas.gemm(ta, tb, tc, m, n, k, dtypes, compute_type)
    (_, cols_a), (_, cols_b), _ = op.shapes
    _blas.check_leading(lda, cols_a, "lda")
    _blas.check_leading(ldb, cols_b, "ldb")
    _blas.check_leading(ldc, n, "ldc")
    _blas.run(op, a, b, c, alpha, beta, stream)


# ----- GEMV -----


@api("iiikkiikiikkiiik")
def gemv_ex(trans_a, m, n, alpha, a, lda, dtype_a, x, incx, dtype_x, beta, y, incy, dtype_y, compute_type, stream):
    dtypes = (dtype_a, dtype_x, dtype_y)
    _gemv(trans_a, m, n, alpha, a, lda, x, incy, beta, y, incy, dtypes, compute_type, stream)  # incy: pyACL's


@api("iiiiiii", VALUE)
def create_handle_for_gemv_ex(trans_a, m, n, dtype_a, dtype_x, dtype_y, compute_type):
    return _blas.create_handle(_blas.gemv(trans_a, m, n, (dtype_a, dtype_x, dtype_y), compute_type))


@api("iiikkikikkiik")
def hgemv(trans_a, m, n, alpha, a, lda, x, incx, beta, y, incy, compute_type, stream):
    _gemv(trans_a, m, n, alpha, a, lda, x, incx, beta, y, incy, _blas.HALF, compute_type, stream)


@api("iiii", VALUE)
def create_handle_for_hgemv(trans_a, m, n, compute_type):
    return _blas.create_handle(_blas.gemv(trans_a, m, n, _blas.HALF, compute_type))


@api("iiikkikikkiik")
def s8gemv(trans_a, m, n, alpha, a, lda, x, incx, beta, y, incy, compute_type, stream):
    _gemv(trans_a, m, n, alpha, a, lda, x, incx, beta, y, incy, _blas.INT8, compute_type, stream)


@api("iiii", VALUE)
def create_handle_for_s8gemv(trans_a, m, n, compute_type):
    return _blas.create_handle(_blas.gemv(trans_a, m, n, _blas.INT8, compute_type))


# ----- GEMM -----


@api("iiiiiikkiikiikkiiik")
def gemm_ex(ta, tb, tc, m, n, k, alpha, a, lda, dtype_a, b, ldb, dtype_b, beta, c, ldc, dtype_c, compute_type, stream):
    dtypes = (dtype_a, dtype_b, dtype_c)
    _gemm(ta, tb, tc, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, dtypes, compute_type, stream)


@api("iiiiiiiiii", VALUE)
def create_handle_for_gemm_ex(ta, tb, tc, m, n, k, dtype_a, dtype_b, dtype_c, compute_type):
    return _blas.create_handle(_blas.gemm(ta, tb, tc, m, n, k, (dtype_a, dtype_b, dtype_c), compute_type))


@api("iiiiiikkikikkiik")
def hgemm(ta, tb, tc, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, compute_type, stream):
    _gemm(ta, tb, tc, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, _blas.HALF, compute_type, stream)


@api("iiiiiii", VALUE)
def create_handle_for_hgemm(ta, tb, tc, m, n, k, compute_type):
    return _blas.create_handle(_blas.gemm(ta, tb, tc, m, n, k, _blas.HALF, compute_type))


@api("iiiiiikkikikkiik")
def s8gemm(ta, tb, tc, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, compute_type, stream):
    _gemm(ta, tb, tc, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, _blas.INT8, compute_type, stream)


@api("iiiiiii", VALUE)
def create_handle_for_s8gemm(ta, tb, tc, m, n, k, compute_type):
    return _blas.create_handle(_blas.gemm(ta, tb, tc, m, n, k, _blas.INT8, compute_type))
